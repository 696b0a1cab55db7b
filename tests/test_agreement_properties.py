"""Property-based checks of the agreement engine against independent implementations.

References: ``krippendorff.alpha`` (nominal and ordinal, missing data),
``statsmodels.stats.inter_rater.fleiss_kappa`` (complete data) and
``sklearn.metrics.cohen_kappa_score`` (unweighted, linear, quadratic).
"""

from __future__ import annotations

import json
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from protocoder.agreement import compute_agreement
from protocoder.agreement._compute import group_stats, prepare
from protocoder.agreement._formulas import coefficients_from_sums

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rating_matrices(
    draw: st.DrawFn,
    *,
    min_raters: int = 2,
    max_raters: int = 5,
    missing: bool = True,
) -> tuple[np.ndarray, int]:
    """A units x raters matrix of category indices, -1 where a rating is missing."""
    q = draw(st.integers(2, 5))
    n_units = draw(st.integers(1, 18))
    n_raters = draw(st.integers(min_raters, max_raters))
    low = -1 if missing else 0
    # Skewed draws too: a small alphabet per example makes one-category cases common.
    alphabet = draw(st.lists(st.integers(0, q - 1), min_size=1, max_size=q, unique=True))
    cells = st.one_of(st.sampled_from(alphabet), st.integers(low, q - 1))
    flat = draw(st.lists(cells, min_size=n_units * n_raters, max_size=n_units * n_raters))
    return np.array(flat, dtype=int).reshape(n_units, n_raters), q


def to_frame(mat: np.ndarray) -> pd.DataFrame:
    recs = [
        {"unit": f"u{u}", "rater": f"r{r}", "code": f"c{mat[u, r]}"}
        for u in range(mat.shape[0])
        for r in range(mat.shape[1])
        if mat[u, r] >= 0
    ]
    return pd.DataFrame(recs, columns=["unit", "rater", "code"])


def categories(q: int) -> list[str]:
    return [f"c{k}" for k in range(q)]


def reference_alpha(mat: np.ndarray, q: int, level: str) -> float:
    data = np.where(mat >= 0, mat, np.nan).T.astype(float)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return float(
                krippendorff.alpha(data, level_of_measurement=level, value_domain=list(range(q)))
            )
    except ValueError:
        return float("nan")


def ours(mat: np.ndarray, q: int, name: str, **kw: object) -> float | None:
    df = to_frame(mat)
    if df.empty:
        return None
    rep = compute_agreement(df, categories=categories(q), bootstrap=0, **kw)
    return rep.group("all").coefficients[name].value


def agree(value: float | None, ref: float) -> None:
    if value is None:
        assert not np.isfinite(ref), ref
    else:
        assert np.isfinite(ref)
        assert value == pytest.approx(ref, abs=1e-9)


@FAST
@given(rating_matrices())
def test_alpha_nominal_matches_krippendorff(case: tuple[np.ndarray, int]) -> None:
    mat, q = case
    agree(ours(mat, q, "krippendorff_alpha"), reference_alpha(mat, q, "nominal"))


@FAST
@given(rating_matrices())
def test_alpha_ordinal_matches_krippendorff(case: tuple[np.ndarray, int]) -> None:
    mat, q = case
    value = ours(mat, q, "krippendorff_alpha", order=categories(q), level="ordinal")
    agree(value, reference_alpha(mat, q, "ordinal"))


@FAST
@given(rating_matrices(), st.data())
def test_alpha_ordinal_partial_order_treats_rest_as_missing(
    case: tuple[np.ndarray, int], data: st.DataObject
) -> None:
    mat, q = case
    ordered = data.draw(st.lists(st.integers(0, q - 1), min_size=1, max_size=q, unique=True))
    order = [f"c{k}" for k in ordered]
    value = ours(mat, q, "krippendorff_alpha", order=order, level="ordinal")
    rank = {k: i for i, k in enumerate(ordered)}
    remapped = np.vectorize(lambda v: rank.get(v, -1))(mat) if mat.size else mat
    if len(ordered) < 2:
        assert value is None
    else:
        agree(value, reference_alpha(remapped, len(ordered), "ordinal"))


@FAST
@given(rating_matrices(missing=False))
def test_fleiss_matches_statsmodels_on_complete_data(case: tuple[np.ndarray, int]) -> None:
    mat, q = case
    table = np.stack([(mat == k).sum(axis=1) for k in range(q)], axis=1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = float(fleiss_kappa(table)) if mat.shape[1] >= 2 else float("nan")
    agree(ours(mat, q, "fleiss_kappa"), ref)


@FAST
@given(rating_matrices(min_raters=2, max_raters=2))
def test_cohen_matches_sklearn(case: tuple[np.ndarray, int]) -> None:
    mat, q = case
    df = to_frame(mat)
    if df["rater"].nunique() < 2:
        return
    cats = categories(q)
    rep = compute_agreement(df, categories=cats, order=cats, bootstrap=0)
    both = (mat[:, 0] >= 0) & (mat[:, 1] >= 0)
    y1 = [f"c{v}" for v in mat[both, 0]]
    y2 = [f"c{v}" for v in mat[both, 1]]
    for name, weights in (
        ("cohen_kappa", None),
        ("cohen_kappa_linear", "linear"),
        ("cohen_kappa_quadratic", "quadratic"),
    ):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ref = (
                float(cohen_kappa_score(y1, y2, labels=cats, weights=weights))
                if y1
                else float("nan")
            )
        agree(rep.group("all").coefficients[name].value, ref)


@FAST
@given(rating_matrices(), st.data())
def test_coefficients_are_functions_of_unit_sums(
    case: tuple[np.ndarray, int], data: st.DataObject
) -> None:
    """What the bootstrap relies on: weighting units by w equals duplicating them w times."""
    mat, q = case
    df = to_frame(mat)
    if df.empty:
        return
    cats = categories(q)
    level = data.draw(st.sampled_from(["nominal", "ordinal"]))
    kw = {"categories": cats, "order": cats, "na": "category"}
    prep = prepare(df, na_codes=("NA",), group_col="group", groups=None, **kw)
    n_units = len(prep.unit_names)
    w = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n_units, max_size=n_units)))
    if w.sum() == 0:
        return
    stats, lay, spec = group_stats(np.arange(n_units), prep, level)
    resampled = coefficients_from_sums((w @ stats)[None, :], lay, spec)

    copies = []
    for u, name in enumerate(prep.unit_names):
        for j in range(w[u]):
            part = df[df["unit"] == name].copy()
            part["unit"] = f"{name}#{j}"
            copies.append(part)
    dup = pd.concat(copies, ignore_index=True)
    direct = compute_agreement(dup, level=level, bootstrap=0, **kw).group("all")
    same_raters = direct.n_raters == spec.n_raters
    for name, (value, conds) in resampled.items():
        if name.startswith("cohen") and not same_raters:
            continue
        undefined = any(mask[0] for mask, _ in conds) or not np.isfinite(value[0])
        expect = direct.coefficients[name].value
        if undefined:
            assert expect is None, name
        else:
            assert expect == pytest.approx(float(value[0]), abs=1e-9), name


@settings(max_examples=25, deadline=None)
@given(rating_matrices(), st.integers(0, 2**31 - 1))
def test_reports_are_json_without_nan(case: tuple[np.ndarray, int], seed: int) -> None:
    mat, q = case
    df = to_frame(mat)
    if df.empty:
        return
    cats = categories(q)
    rep = compute_agreement(
        df, categories=cats, order=cats, level="ordinal", bootstrap=30, seed=seed
    )
    json.dumps(rep.to_dict(), allow_nan=False)
    for g in rep.groups:
        for c in g.coefficients.values():
            if c.value is None:
                assert c.note and c.ci_low is None and c.ci_high is None
            elif c.ci_low is not None:
                assert c.ci_low <= c.ci_high
    assert rep.format_table()
