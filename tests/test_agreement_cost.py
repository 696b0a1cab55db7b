"""What agreement costs (issue 15) and what the pooled row means (issue 13, item 4).

* Cost follows cells, not fields: every field of a rubric is analysed in one vectorised
  pass, and a field's result is exactly what it would be if analysed alone.
* Nothing computes agreement it does not print or store (export, status, validate).
* ``agree --ratings`` reads its CSV without pandas; a simple file is read straight into
  numbers, and reads as the ``csv`` module reads it.
* The pooled row ``all`` uses the codes of the fields it pools; when some field allows
  fewer, a note says so (AC1 and Brennan-Prediger depend on the number of codes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocoder.agreement import (
    AgreementInputError,
    _analysis,
    _compute,
    _formulas,
    agreement_of_columns,
    compute_agreement,
    read_ratings_csv,
    read_ratings_table,
)
from protocoder.agreement._csv import _read_plain, _read_text_columns
from protocoder.coding_agreement import review_agreement, review_columns
from protocoder.storage.workspace import load_review

REPO = Path(__file__).resolve().parent.parent



@pytest.fixture(scope="module")
def checklist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """43 checklist items (codes 1/0/NA) × 6 protocols × 2 reviewers, with disagreements."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    root = tmp_path_factory.mktemp("checklist") / "review"
    generate(root, protocols=6, fields=43, reviewers=2, seed=5, checklist=True)
    return root


# --------------------------------------------------------------------------------------
# Cost follows cells


def test_every_field_is_analysed_in_one_pass(checklist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = _analysis.coefficients_from_sums

    def counting(sums, lay, spec):  # noqa: ANN001, ANN202
        calls.append(sums.shape[0])
        return real(sums, lay, spec)

    monkeypatch.setattr(_analysis, "coefficients_from_sums", counting)
    report = review_agreement(load_review(checklist), bootstrap=100, seed=3)
    assert len(report.groups) == 44
    # The 43 fields (and the pooled row, with the same codes) share one category set: one
    # call evaluates every coefficient of every field, point estimates and resamples.
    assert len(calls) <= 2, calls
    assert sum(calls) == 44 * (1 + 100)


def test_a_field_gets_the_result_it_would_get_alone(checklist: Path) -> None:
    """The batched pass gives each field exactly (bit for bit) the values and intervals of
    analysing that field by itself with its own codes: same formulas, same resamples."""
    review = load_review(checklist)
    rubric = review.require_valid()
    full = review_agreement(review, bootstrap=200, seed=9)
    ratings = pd.DataFrame(review_columns(review))
    for fld in rubric.fields[:5] + rubric.fields[-3:]:
        alone = compute_agreement(ratings[ratings["group"] == fld.id], categories=list(fld.codes),
                                  order=[c for c in rubric.order or () if c in fld.codes] or None,
                                  bootstrap=200, seed=9, groups=[fld.id]).group(fld.id)
        mine, theirs = full.group(fld.id).to_dict(), alone.to_dict()
        # The workspace's report words its evidence notes for quoted sources; the numbers are the engine's.
        for measures in (mine["evidence"], theirs["evidence"]):
            for measure in measures.values():
                measure.pop("note")
        assert mine == theirs, fld.id
        assert review_agreement(review, field=fld.id, bootstrap=200, seed=9).group(fld.id) == full.group(fld.id)


def test_resamples_drawn_as_counts_of_each_kind_of_unit_give_the_same_intervals(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A resample's count of units of each kind (identical statistics rows) is multinomial;
    drawing those counts is the same bootstrap as drawing units, far cheaper when there
    are few kinds. Both ways, with many resamples, give the same intervals."""
    rng = __import__("random").Random(3)
    columns: dict[str, list[str]] = {"unit": [], "rater": [], "code": []}
    for unit in range(3000):
        truth = rng.choice("EPN")
        for rater in "abc":
            columns["unit"].append(f"u{unit}")
            columns["rater"].append(rater)
            columns["code"].append(truth if rng.random() < 0.7 else rng.choice("EPN"))
    by_kind = agreement_of_columns(columns, bootstrap=4000, seed=1, list_disagreements=False).group("all")
    monkeypatch.setattr(_formulas, "_MAX_KINDS", 0)  # force one draw per unit
    by_unit = agreement_of_columns(columns, bootstrap=4000, seed=1, list_disagreements=False).group("all")
    for name, c in by_kind.coefficients.items():
        other = by_unit.coefficients[name]
        assert c.value == other.value, name
        if c.ci_low is not None:
            assert (c.ci_low, c.ci_high) != (other.ci_low, other.ci_high), name  # two different draws...
            assert c.ci_low == pytest.approx(other.ci_low, abs=0.004), name  # ...of the same distribution
            assert c.ci_high == pytest.approx(other.ci_high, abs=0.004), name


# --------------------------------------------------------------------------------------
# Only what is printed is computed


@pytest.mark.parametrize("command", [
    ["export"],
    ["export", "--view", "final"],
    ["export", "--view", "final", "--format", "json"],
    ["status"],
    ["validate"],
])
def test_commands_that_print_no_agreement_do_not_compute_it(two: Path, cli, command: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("agreement was computed")

    monkeypatch.setattr(_compute, "_report", refuse)
    result = cli(*command, "--workspace", two)
    assert result.exit_code == 0, result.stderr
    with pytest.raises(AssertionError, match="agreement was computed"):  # the check can fail
        cli("agree", "--workspace", two, "--bootstrap", "0")


def test_agree_on_a_ratings_csv_never_imports_pandas(tmp_path: Path) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("unit,rater,code,group\nu1,a,E,g\nu1,b,P,g\nu2,a,E,g\nu2,b,E,g\n", encoding="utf-8")
    code = ("import sys\nfrom protocoder.cli import main\n"
            f"for fmt in ('table', 'json', 'csv', 'md'):\n"
            f"    main(['agree', '--ratings', {str(ratings)!r}, '--format', fmt, '--bootstrap', '20'],"
            " standalone_mode=False)\n"
            "print('pandas' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "False"
    assert "Inter-rater agreement" in result.stdout


# --------------------------------------------------------------------------------------
# The pooled row


def test_one_field_pooled_is_that_field(two: Path, cli) -> None:
    """reset_retention allows E, P, NR; the rubric also has NA. Pooled over that field
    alone, the 'all' row is computed over the same three codes, so it is the field's row."""
    result = cli("agree", "--workspace", two, "--field", "reset_retention", "--format", "json",
                 "--bootstrap", "200", "--seed", "4")
    report = json.loads(result.stdout)
    field, pooled = report["groups"]
    assert field["group"] == "reset_retention" and pooled["group"] == "all"
    assert report["settings"]["categories"] == ["E", "P", "NR"]
    assert pooled["coefficients"]["gwet_ac1"]["value"] is not None
    for key in ("coefficients", "specific_agreement", "code_counts", "n_units", "confusion"):
        assert pooled[key] == field[key], key
    assert not any("pooled row" in note for note in report["notes"])


def test_pooled_row_over_fields_with_fewer_codes_says_why_it_differs(two: Path, cli) -> None:
    report = json.loads(cli("agree", "--workspace", two, "--format", "json", "--bootstrap", "0").stdout)
    assert report["settings"]["categories"] == ["E", "P", "NR", "NA"]
    (note,) = [note for note in report["notes"] if "pooled row" in note]
    assert "(E, P, NR, NA; q = 4)" in note
    assert "reset_retention and separate_evidence allow only E, P, NR (q = 3)" in note
    assert "AC1" in note and "Brennan-Prediger" in note
    table = cli("agree", "--workspace", two, "--bootstrap", "0", "--format", "full").stdout
    assert "reset_retention and separate_evidence allow only E, P, NR" in table


def test_group_categories_in_the_library() -> None:
    columns = {"unit": ["u1", "u1", "u2", "u2", "u3", "u3", "v1", "v1"],
               "rater": ["a", "b"] * 4,
               "code": ["E", "E", "P", "E", "P", "P", "NA", "E"],
               "group": ["f"] * 6 + ["g"] * 2}
    report = agreement_of_columns(columns, categories=["E", "P", "NA"], bootstrap=0,
                                  group_categories={"f": (["E", "P"], None)})
    assert report.group("f").code_counts == {"E": 3, "P": 3}
    # With q = 2 on the field and q = 3 pooled, Brennan-Prediger differs; p_a does not.
    assert report.group("f").coefficients["brennan_prediger"].value == pytest.approx((2 / 3 - 1 / 2) / (1 - 1 / 2))
    assert any("f allows only E, P (q = 2)" in note for note in report.notes)
    with pytest.raises(AgreementInputError, match="code 'NA' is not one of the categories E, P"):
        agreement_of_columns(columns, categories=["E", "P", "NA"], bootstrap=0,
                             group_categories={"g": (["E", "P"], None)})


# --------------------------------------------------------------------------------------
# Reading ratings without pandas


def test_table_and_dataframe_give_the_same_report(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("Unit,RATER,code,group,source,cites\n"
                    + "".join(f"u{i}, r{j} ,{'EP'[(i * j) % 2]},g{i % 3},Sec. {i % 2},k{j};k0\n"
                              for i in range(30) for j in range(3)), encoding="utf-8")
    table = read_ratings_table(path)
    assert list(table.columns)[:3] == ["unit", "rater", "code"] and table.columns["rater"][0] == "r0"
    frame = read_ratings_csv(path)
    assert frame.to_dict("list") == table.columns
    a = agreement_of_columns(table.columns, categories=["E", "P"], bootstrap=50, seed=2).to_dict()
    b = compute_agreement(frame, categories=["E", "P"], bootstrap=50, seed=2).to_dict()
    assert a == b


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.text(alphabet="ab é\t,", max_size=3), min_size=4, max_size=4), min_size=1, max_size=8),
       st.sampled_from(["\n", "\r\n"]), st.booleans(), st.sampled_from(["", "\n", ",", "x"]))
def test_numbers_read_from_bytes_are_the_text_the_csv_module_reads(
        records: list[list[str]], newline: str, final: bool, noise: str) -> None:
    """A simple file is read straight into numbers; whatever it reads, the general reader
    (the csv module) reads the same text, the same rows and the same errors."""
    text = newline.join(["unit,rater,code,note", *(",".join(r) for r in records)]) + (newline if final else "")
    text += noise
    path = Path("ratings.csv")

    def outcome(reader):  # noqa: ANN001, ANN202
        try:
            table = reader(text, path)
        except AgreementInputError as exc:
            return str(exc)
        return None if table is None else (table.columns, list(table.rows))

    plain = outcome(_read_plain)
    if plain is not None:
        assert plain == outcome(_read_text_columns)


def test_simple_and_general_files_read_alike(tmp_path: Path) -> None:
    simple = "unit,rater,code,note\nu1,a,E,x y\nu1,b,P,\nu2,a,E,z\n"
    quoted = 'unit,rater,code,note\n"u1",a,E,x y\nu1,b,P,\nu2,a,E,z\n'
    (tmp_path / "simple.csv").write_text(simple, encoding="utf-8")
    (tmp_path / "quoted.csv").write_text(quoted, encoding="utf-8")
    fast, general = read_ratings_table(tmp_path / "simple.csv"), read_ratings_table(tmp_path / "quoted.csv")
    assert fast.factor("unit") is not None and general.factor("unit") is None  # both paths taken
    assert fast.columns == general.columns and list(fast.rows) == list(general.rows)
    for path in (tmp_path / "simple.csv", tmp_path / "quoted.csv"):
        with pytest.raises(AgreementInputError, match=r"row 3: code 'P' \(unit 'u1', rater 'b'\)"):
            read_ratings_table(path, categories=["E"])
    (tmp_path / "dup.csv").write_text(simple + "u1,a,P,again\n", encoding="utf-8")
    with pytest.raises(AgreementInputError, match=r"rows 2 and 5: rater 'a' rated unit 'u1' twice"):
        read_ratings_table(tmp_path / "dup.csv")


def test_json_output_is_the_report(tmp_path: Path, cli) -> None:
    path = tmp_path / "r.csv"
    path.write_text("unit,rater,code\nu1,a,E\nu1,b,P\nu2,a,E\nu2,b,E\nu3,a,P\n", encoding="utf-8")
    table = read_ratings_table(path)
    expected = agreement_of_columns(table.columns, bootstrap=30, seed=1).to_dict()
    printed = cli("agree", "--ratings", path, "--format", "json", "--bootstrap", "30", "--seed", "1").stdout
    assert json.loads(printed) == expected
    assert '\n    {"group": "all", "unit": "u1", "codes": {"a": "E", "b": "P"}}\n' in printed
    none = agreement_of_columns({"unit": ["u"], "rater": ["a"], "code": ["E"]}, bootstrap=0)
    assert json.loads(none.to_json()) == none.to_dict()
