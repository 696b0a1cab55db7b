"""Tests of the inter-rater agreement engine: published values, edge cases, CSV errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from protocoder.agreement import (
    COEFFICIENT_NAMES,
    AgreementInputError,
    AgreementReport,
    compute_agreement,
    read_ratings_csv,
)

DATA = Path(__file__).parent / "data" / "agreement"
RUBRIC = ["E", "P", "NR", "NA"]
RUBRIC_ORDER = ["NR", "P", "E"]


def pooled(report: AgreementReport):
    return report.group("all")


def coef(report: AgreementReport, name: str, group: str = "all") -> float | None:
    return report.group(group).coefficients[name].value


def frame(rows: list[tuple]) -> pd.DataFrame:
    cols = ["unit", "rater", "code", "group", "source", "cites"][: len(rows[0])]
    return pd.DataFrame(rows, columns=cols)


def wide(table: dict[str, list[str | None]], group: str | None = None) -> pd.DataFrame:
    """Long ratings from {rater: [code per unit]} (None = not rated)."""
    recs = []
    for rater, codes in table.items():
        for u, c in enumerate(codes):
            if c is not None:
                recs.append({"unit": f"u{u}", "rater": rater, "code": c})
    df = pd.DataFrame(recs)
    if group is not None:
        df["group"] = group
    return df


# --------------------------------------------------------------------------------------
# Core stays free of UI/CLI dependencies


def test_import_leaves_textual_and_click_out() -> None:
    code = (
        "import sys, protocoder.agreement; "
        "bad = [m for m in ('textual', 'click') if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# --------------------------------------------------------------------------------------
# Published worked examples


def test_krippendorff_2011_and_irrcac_cac_raw4raters() -> None:
    ratings = read_ratings_csv(DATA / "krippendorff2011_cac_raw4raters.csv")
    cats = ["1", "2", "3", "4", "5"]
    rep = compute_agreement(ratings, categories=cats, bootstrap=0)
    # Krippendorff (2011): nominal alpha = .743; irrCAC krippen.alpha.raw: 0.74342.
    assert round(coef(rep, "krippendorff_alpha"), 3) == 0.743
    assert round(coef(rep, "krippendorff_alpha"), 5) == 0.74342
    # irrCAC README on cac.raw4raters.
    assert round(coef(rep, "percent_agreement"), 7) == 0.8181818
    assert round(coef(rep, "fleiss_kappa"), 5) == 0.76117
    assert round(coef(rep, "gwet_ac1"), 5) == 0.77544
    assert round(coef(rep, "brennan_prediger"), 5) == 0.77273
    note = pooled(rep).coefficients["fleiss_kappa"].note
    assert "irrCAC fleiss.kappa.raw" in note
    g = pooled(rep)
    assert (g.n_units, g.n_raters, g.n_units_paired, g.n_ratings) == (12, 4, 11, 41)

    ordinal = compute_agreement(ratings, categories=cats, order=cats, level="ordinal", bootstrap=0)
    assert round(coef(ordinal, "krippendorff_alpha"), 3) == 0.815


def test_fleiss_1971_diagnoses() -> None:
    cats = ["Depression", "Personality Disorder", "Schizophrenia", "Neurosis", "Other"]
    ratings = read_ratings_csv(DATA / "fleiss1971_diagnoses.csv", categories=cats)
    rep = compute_agreement(ratings, categories=cats, bootstrap=0)
    assert round(coef(rep, "fleiss_kappa"), 3) == 0.430
    assert round(coef(rep, "fleiss_kappa"), 7) == 0.4302445
    # Complete data: no generalisation note.
    assert "irrCAC" not in pooled(rep).coefficients["fleiss_kappa"].note


def test_irr_kappa2_anxiety_weighted() -> None:
    ratings = read_ratings_csv(DATA / "irr_anxiety.csv")
    two = ratings[ratings["rater"].isin(["rater2", "rater3"])]
    levels = ["1", "2", "3", "4", "6"]  # irr weights use ranks of the observed levels
    rep = compute_agreement(two, categories=levels, order=levels, bootstrap=0)
    assert round(coef(rep, "cohen_kappa"), 9) == -0.006289308
    assert round(coef(rep, "cohen_kappa_linear"), 7) == 0.1459075
    assert round(coef(rep, "cohen_kappa_quadratic"), 7) == 0.2520325


def test_irrcac_cont3x3abstractors() -> None:
    cats = ["Ectopic", "AIU", "NIU"]
    ratings = read_ratings_csv(DATA / "irrcac_cont3x3abstractors.csv", categories=cats)
    rep = compute_agreement(ratings, categories=cats, bootstrap=0)
    assert round(coef(rep, "cohen_kappa"), 7) == 0.7964094
    assert round(coef(rep, "fleiss_kappa"), 7) == 0.7962397  # Scott's pi for two raters
    assert round(coef(rep, "gwet_ac1"), 7) == 0.8493305
    assert round(coef(rep, "brennan_prediger"), 3) == 0.835
    assert round(coef(rep, "krippendorff_alpha"), 7) == 0.7972585
    assert round(coef(rep, "percent_agreement"), 2) == 0.89
    # Unordered codes: no weighted kappas.
    assert coef(rep, "cohen_kappa_linear") is None
    assert pooled(rep).coefficients["cohen_kappa_linear"].note == "codes are not ordered"


# --------------------------------------------------------------------------------------
# Report shape, bootstrap, undefined cases


def two_rater_review() -> pd.DataFrame:
    a = ["E", "E", "P", "NR", "E", "NA", "E", "P", "NR", "E", "E", "P"]
    b = ["E", "P", "P", "NR", "E", "NA", "E", "E", "NR", "E", "NA", "P"]
    df = wide({"alice": a, "bob": b})
    df["group"] = ["open_work"] * 6 + ["reporting"] * 6 + ["open_work"] * 6 + ["reporting"] * 6
    return df


def test_report_shape_and_json() -> None:
    rep = compute_agreement(two_rater_review(), categories=RUBRIC, order=RUBRIC_ORDER, bootstrap=50)
    d = rep.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert "NaN" not in text
    assert [g["group"] for g in d["groups"]] == ["open_work", "reporting", "all"]
    for g in d["groups"]:
        assert set(COEFFICIENT_NAMES) <= set(g["coefficients"])
        for c in g["coefficients"].values():
            assert set(c) >= {"value", "ci_low", "ci_high", "note"}
        assert {"n_units", "n_raters", "n_units_paired"} <= set(g)
    assert d["settings"]["na"] == "category"
    assert d["settings"]["categories"] == RUBRIC
    assert d["groups"][-1]["n_units"] == 12
    rows = rep.to_rows()
    assert {"group", "coefficient", "value", "ci_low", "ci_high", "note"} <= set(rows[0])
    assert any(r["coefficient"] == "specific_agreement:E" for r in rows)


def test_bootstrap_reproducible_and_seeded() -> None:
    df = two_rater_review()
    a = compute_agreement(df, categories=RUBRIC, bootstrap=200, seed=7).to_dict()
    b = compute_agreement(df, categories=RUBRIC, bootstrap=200, seed=7).to_dict()
    c = compute_agreement(df, categories=RUBRIC, bootstrap=200, seed=8).to_dict()
    assert a == b
    cis = lambda d: [  # noqa: E731
        (x["ci_low"], x["ci_high"]) for g in d["groups"] for x in g["coefficients"].values()
    ]
    assert cis(a) != cis(c)
    pa = a["groups"][-1]["coefficients"]["percent_agreement"]
    assert pa["ci_low"] <= pa["value"] <= pa["ci_high"]


def test_bootstrap_zero_gives_no_intervals() -> None:
    rep = compute_agreement(two_rater_review(), categories=RUBRIC, bootstrap=0)
    for g in rep.groups:
        for c in [*g.coefficients.values(), *g.specific_agreement.values()]:
            assert c.ci_low is None and c.ci_high is None


def test_dropped_resamples_are_counted() -> None:
    # Two units only: many resamples draw one unit twice, where kappa-type statistics
    # that need two categories become undefined.
    df = wide({"a": ["E", "P"], "b": ["E", "P"]})
    rep = compute_agreement(df, categories=RUBRIC, bootstrap=400, seed=1)
    note = pooled(rep).coefficients["cohen_kappa"].note
    assert "of 400 bootstrap resamples dropped" in note
    json.dumps(rep.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("table", "expect"),
    [
        ({"a": ["E", "E", "E"], "b": ["E", "E", "E"]}, "only one"),
        ({"a": ["E", "P", "E"]}, "needs exactly two raters"),
        ({"a": ["E"], "b": ["P"]}, None),
    ],
)
def test_undefined_cases_give_none_with_reason(table: dict, expect: str | None) -> None:
    rep = compute_agreement(wide(table), categories=RUBRIC, bootstrap=100)
    json.dumps(rep.to_dict(), allow_nan=False)
    g = pooled(rep)
    for name, c in g.coefficients.items():
        if c.value is None:
            assert c.note, name
            assert c.ci_low is None and c.ci_high is None
        else:
            assert np.isfinite(c.value)
    if expect:
        assert expect in g.coefficients["cohen_kappa"].note
    assert g.coefficients["krippendorff_alpha"].value != 1.0


def test_one_category_only() -> None:
    rep = compute_agreement(wide({"a": ["E"] * 4, "b": ["E"] * 4}), categories=RUBRIC, bootstrap=0)
    g = pooled(rep)
    assert g.coefficients["percent_agreement"].value == 1.0
    for name in ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha"):
        assert g.coefficients[name].value is None
        assert "only one" in g.coefficients[name].note
    # AC1 and BP have a chance term below 1 whatever the data, so they stay defined.
    assert g.coefficients["gwet_ac1"].value == 1.0
    assert g.coefficients["brennan_prediger"].value == 1.0


def test_one_rater_and_no_pairs() -> None:
    rep = compute_agreement(wide({"a": ["E", "P", "NR"]}), categories=RUBRIC, bootstrap=10)
    g = pooled(rep)
    assert g.n_raters == 1 and g.n_units_paired == 0
    for name in COEFFICIENT_NAMES:
        assert g.coefficients[name].value is None, name
    assert "two or more" in g.coefficients["percent_agreement"].note
    assert rep.disagreements == []


def test_single_unit() -> None:
    rep = compute_agreement(wide({"a": ["E"], "b": ["P"], "c": ["E"]}), categories=RUBRIC)
    g = pooled(rep)
    assert g.coefficients["percent_agreement"].value == pytest.approx(1 / 3)
    json.dumps(rep.to_dict(), allow_nan=False)


def test_categories_declared_matter_for_ac1_and_bp() -> None:
    df = two_rater_review()
    few = compute_agreement(df, categories=RUBRIC, bootstrap=0)
    more = compute_agreement(df, categories=[*RUBRIC, "X", "Y"], bootstrap=0)
    assert coef(few, "brennan_prediger") < coef(more, "brennan_prediger")
    assert coef(few, "cohen_kappa") == coef(more, "cohen_kappa")
    inferred = compute_agreement(df, bootstrap=0)
    assert inferred.settings["categories"] == sorted(RUBRIC)
    assert inferred.settings["categories_declared"] is False
    assert any("not declared" in n for n in inferred.notes)


def test_na_exclude_versus_category() -> None:
    df = two_rater_review()
    cat = compute_agreement(df, categories=RUBRIC, na="category", bootstrap=0)
    exc = compute_agreement(df, categories=RUBRIC, na="exclude", bootstrap=0)
    assert cat.settings["na"] == "category" and exc.settings["na"] == "exclude"
    assert exc.settings["categories"] == ["E", "P", "NR"]
    assert pooled(cat).n_ratings == 24 and pooled(exc).n_ratings == 21
    assert "NA" not in pooled(exc).code_counts
    assert any("excluded" in n for n in exc.notes)
    # Hand check of BP with q = 3 after exclusion: p_a over the 11 paired units.
    # Units: u5 (NA, NA) disappears; u10 (E vs NA) keeps one rating only.
    pa = 8 / 10
    assert coef(exc, "percent_agreement") == pytest.approx(pa)
    assert coef(exc, "brennan_prediger") == pytest.approx((pa - 1 / 3) / (1 - 1 / 3))


def test_ordinal_with_unordered_code_treated_as_missing() -> None:
    import krippendorff

    df = two_rater_review()
    rep = compute_agreement(df, categories=RUBRIC, order=RUBRIC_ORDER, level="ordinal", bootstrap=0)
    g = pooled(rep)
    note = g.coefficients["krippendorff_alpha"].note
    assert "3 ratings with a code outside the order (NA) treated as missing" in note
    assert "2 units with a code outside the order (NA)" in g.coefficients["cohen_kappa_linear"].note
    # Reference: NA as missing, ordinal over NR < P < E.
    rank = {"NR": 0, "P": 1, "E": 2}
    mat = (
        df.assign(v=df["code"].map(rank))
        .pivot(index="unit", columns="rater", values="v")
        .to_numpy(dtype=float)
        .T
    )
    ref = krippendorff.alpha(mat, level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert g.coefficients["krippendorff_alpha"].value == pytest.approx(ref, abs=1e-12)


def test_ordinal_without_order_is_undefined() -> None:
    rep = compute_agreement(two_rater_review(), categories=RUBRIC, level="ordinal", bootstrap=0)
    c = pooled(rep).coefficients["krippendorff_alpha"]
    assert c.value is None and "not ordered" in c.note
    assert pooled(rep).coefficients["cohen_kappa_quadratic"].note == "codes are not ordered"


def test_groups_pooled_and_ordering() -> None:
    df = two_rater_review()
    rep = compute_agreement(df, categories=RUBRIC, bootstrap=0, groups=["reporting", "extra"])
    assert [g.group for g in rep.groups] == ["reporting", "extra", "open_work", "all"]
    assert rep.group("extra").n_units == 0
    assert rep.group("extra").coefficients["percent_agreement"].value is None
    assert rep.group("open_work").n_units + rep.group("reporting").n_units == 12
    no_group = compute_agreement(df.drop(columns="group"), categories=RUBRIC, bootstrap=0)
    assert [g.group for g in no_group.groups] == ["all"]


def test_same_unit_id_in_two_groups_is_two_units() -> None:
    df = frame(
        [
            ("webarena", "a", "E", "open_work"),
            ("webarena", "b", "E", "open_work"),
            ("webarena", "a", "P", "reporting"),
            ("webarena", "b", "NR", "reporting"),
        ]
    )
    rep = compute_agreement(df, categories=RUBRIC, bootstrap=0)
    assert pooled(rep).n_units == 2
    assert [(d.group, d.unit, d.codes) for d in rep.disagreements] == [
        ("reporting", "webarena", {"a": "P", "b": "NR"})
    ]


def test_disagreements_confusion_and_specific_agreement() -> None:
    df = two_rater_review()
    rep = compute_agreement(df, categories=RUBRIC, bootstrap=0)
    dis = [(d.group, d.unit, d.codes["alice"], d.codes["bob"]) for d in rep.disagreements]
    assert dis == [
        ("open_work", "u1", "E", "P"),
        ("reporting", "u7", "P", "E"),
        ("reporting", "u10", "E", "NA"),
    ]
    (conf,) = pooled(rep).confusion
    assert (conf.rater_a, conf.rater_b, conf.categories) == ("alice", "bob", tuple(RUBRIC))
    m = np.array(conf.counts)
    assert m.sum() == 12 and np.trace(m) == 9
    assert m[0, 1] == 1 and m[1, 0] == 1 and m[0, 3] == 1
    # Two raters: specific agreement = 2 n_kk / (row_k + col_k) (Cicchetti & Feinstein).
    for k, code in enumerate(RUBRIC):
        expect = 2 * m[k, k] / (m[k].sum() + m[:, k].sum())
        assert pooled(rep).specific_agreement[code].value == pytest.approx(expect)
    by_group = {g.group: g.confusion[0].n_units for g in rep.groups}
    assert by_group == {"open_work": 6, "reporting": 6, "all": 12}


def test_specific_agreement_many_raters() -> None:
    # Uebersax: ps(k) = sum_u n_uk (n_uk - 1) / sum_u n_uk (n_u - 1).
    df = wide({"a": ["E", "E", "P"], "b": ["E", "P", "P"], "c": ["P", "P", "P"]})
    g = pooled(compute_agreement(df, categories=RUBRIC, bootstrap=0))
    # unit counts (E, P): (2, 1), (1, 2), (0, 3)
    assert g.specific_agreement["E"].value == pytest.approx((2 * 1) / (2 * 2 + 1 * 2))
    assert g.specific_agreement["P"].value == pytest.approx((0 + 2 + 6) / (1 * 2 + 2 * 2 + 3 * 2))
    assert g.specific_agreement["NR"].value is None


def test_evidence_agreement() -> None:
    df = frame(
        [
            ("u1", "a", "E", "g", "Sec. 3.2 ", "smith2020;lee2021"),
            ("u1", "b", "E", "g", "sec.  3.2", "lee2021; smith2020"),
            ("u2", "a", "E", "g", "p. 4", "smith2020"),
            ("u2", "b", "E", "g", "appendix A", "smith2020"),
            ("u3", "a", "P", "g", "p. 1", "x"),
            ("u3", "b", "E", "g", "p. 1", "x"),
            ("u4", "a", "NR", "g", "", ""),
            ("u4", "b", "NR", "g", "", ""),
        ]
    )
    rep = compute_agreement(df, categories=RUBRIC, bootstrap=0)
    ev = pooled(rep).evidence
    assert ev["same_source"].value == pytest.approx(1 / 2)
    assert ev["same_cites"].value == pytest.approx(1.0)
    assert ev["same_source_and_cites"].value == pytest.approx(1 / 2)
    lists = df.assign(cites=[c.split(";") for c in df["cites"]])
    ev2 = pooled(compute_agreement(lists, categories=RUBRIC, bootstrap=0)).evidence
    assert ev2["same_cites"].value == pytest.approx(1.0)
    none = pooled(compute_agreement(two_rater_review(), categories=RUBRIC, bootstrap=0))
    assert none.evidence["same_source"].value is None
    assert "no source" in none.evidence["same_source"].note


def test_format_table_shows_skew_and_undefined() -> None:
    skewed = wide({"a": ["E"] * 9 + ["P"], "b": ["E"] * 8 + ["P", "E"]})
    rep = compute_agreement(skewed, categories=RUBRIC, bootstrap=100)
    text = rep.format_table()
    assert "E 18 · P 2 · NR 0 · NA 0" in text
    assert "undefined" in text
    assert "0.800" in text  # p_a
    assert "Notes" in text
    header = next(line for line in text.splitlines() if line.startswith("group"))
    assert header.index("codes") < header.index("Cohen")


# --------------------------------------------------------------------------------------
# DataFrame input errors


def test_code_outside_categories_names_unit_and_rater() -> None:
    df = frame([("u1", "alice", "E"), ("u1", "bob", "Q")])
    with pytest.raises(AgreementInputError, match=r"unit 'u1', rater 'bob'.*'Q'") as err:
        compute_agreement(df, categories=RUBRIC)
    assert isinstance(err.value, ValueError)
    assert (err.value.unit, err.value.rater) == ("u1", "bob")


def test_dataframe_errors() -> None:
    with pytest.raises(AgreementInputError, match="twice"):
        compute_agreement(frame([("u1", "a", "E"), ("u1", "a", "P")]), categories=RUBRIC)
    with pytest.raises(AgreementInputError, match="lack column"):
        compute_agreement(pd.DataFrame({"unit": ["u"], "code": ["E"]}))
    with pytest.raises(AgreementInputError, match="empty code"):
        compute_agreement(frame([("u1", "a", None)]), categories=RUBRIC)
    with pytest.raises(AgreementInputError, match="not among the categories"):
        compute_agreement(frame([("u1", "a", "E")]), categories=["E", "P"], order=["P", "Z"])


# --------------------------------------------------------------------------------------
# CSV reading


def write(tmp_path: Path, content: bytes | str, name: str = "r.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


def test_csv_bom_crlf_and_formula_text(tmp_path: Path) -> None:
    body = (
        "unit,rater,code,source\r\nu1,a,E,=HYPERLINK(1)\r\nu1,b,E,+3\r\nu2,a,P,-x\r\nu2,b,NA,@y\r\n"
    )
    p = write(tmp_path, b"\xef\xbb\xbf" + body.encode())
    df = read_ratings_csv(p, categories=RUBRIC)
    assert list(df.columns[:3]) == ["unit", "rater", "code"]
    assert df["source"].tolist() == ["=HYPERLINK(1)", "+3", "-x", "@y"]
    assert df["code"].tolist() == ["E", "E", "P", "NA"]  # "NA" is a code, not missing


def test_csv_blank_lines_skipped_rows_kept(tmp_path: Path) -> None:
    p = write(tmp_path, "unit,rater,code\nu1,a,E\n\nu1,b,Q\n")
    with pytest.raises(AgreementInputError, match=r"row 4\b"):
        read_ratings_csv(p, categories=RUBRIC)


@pytest.mark.parametrize(
    ("content", "pattern", "row"),
    [
        ("", r"row 1: the file is empty", 1),
        ("unit,code\nu1,E\n", r"row 1: missing column rater", 1),
        ("unit,rater,code\n", r"row 2: no ratings", 2),
        ("unit,rater,code\nu1,a,E\n,b,E\n", r"row 3: empty unit", 3),
        ("unit,rater,code\nu1,a,E\nu1, ,E\n", r"row 3: empty rater", 3),
        ("unit,rater,code\nu1,a,E\nu1,b,\n", r"row 3: empty code", 3),
        ("unit,rater,code\nu1,a,E\nu2,a,E\nu3,b,X\n", r"row 4: code 'X'", 4),
        (
            "unit,rater,code\nu1,a,E\nu2,a,E\nu1,a,P\n",
            r"rows 2 and 4: rater 'a' rated unit 'u1'",
            4,
        ),
        ("unit,rater,code\nu1,a,E\nu2,a,E,extra\n", r"row 3", 3),
    ],
)
def test_csv_errors_name_the_row(tmp_path: Path, content: str, pattern: str, row: int) -> None:
    p = write(tmp_path, content)
    with pytest.raises(AgreementInputError, match=pattern) as err:
        read_ratings_csv(p, categories=RUBRIC)
    assert str(p) in str(err.value)
    assert err.value.row == row


def test_csv_duplicate_allowed_across_groups(tmp_path: Path) -> None:
    p = write(tmp_path, "unit,rater,code,group\nu1,a,E,f1\nu1,a,P,f2\n")
    assert len(read_ratings_csv(p)) == 2
    p = write(tmp_path, "unit,rater,code,group\nu1,a,E,f1\nu1,b,P,f2\nu1,a,P,f1\n")
    with pytest.raises(AgreementInputError, match=r"rows 2 and 4.*in group 'f1'"):
        read_ratings_csv(p)


def test_csv_non_utf8_names_row_of_bad_byte(tmp_path: Path) -> None:
    content = b'unit,rater,code,source\nu1,a,E,"two\nlines"\nu1,b,E,caf\xe9\n'
    p = write(tmp_path, content)
    with pytest.raises(AgreementInputError, match=r"row 3: not valid UTF-8") as err:
        read_ratings_csv(p)
    assert err.value.row == 3
    p = write(tmp_path, b"unit,rater,code\xff\n")
    with pytest.raises(AgreementInputError, match=r"row 1: not valid UTF-8"):
        read_ratings_csv(p)


def test_csv_roundtrip_through_compute(tmp_path: Path) -> None:
    df = two_rater_review()
    p = tmp_path / "r.csv"
    df.to_csv(p, index=False)
    back = read_ratings_csv(p, categories=RUBRIC)
    a = compute_agreement(df, categories=RUBRIC, bootstrap=20).to_dict()
    b = compute_agreement(back, categories=RUBRIC, bootstrap=20).to_dict()
    assert a == b
