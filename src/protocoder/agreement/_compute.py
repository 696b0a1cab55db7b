"""Input preparation and per-group orchestration of the agreement engine.

Ratings are validated and encoded once (units x raters code matrix, units x categories
counts); each group then gets its per-unit statistics matrix from ``_formulas`` and is
evaluated at the point estimate and, in one matrix product, at every bootstrap resample.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ._errors import AgreementInputError
from ._formulas import (
    CONFIDENCE,
    BoolArray,
    FloatArray,
    IntArray,
    _coefficients,
    _evidence,
    _finish,
    _Layout,
    _resampled_sums,
    _Spec,
    _specific,
    _unit_stats,
)
from ._report import (
    AgreementReport,
    ConfusionMatrix,
    Disagreement,
    GroupResult,
)

DEFAULT_SEED = 20260815
POOLED_GROUP = "all"
NO_GROUP = "(no group)"

# ----------------------------------------------------------------------------------------
# Input preparation


@dataclass
class _Prepared:
    """Ratings after validation, NA handling and integer encoding."""

    categories: tuple[str, ...]
    order: tuple[str, ...] | None
    rank: IntArray  # category index -> rank in the order, -1 if outside the order
    groups: list[str]  # group names in report order (without the pooled group)
    unit_names: npt.NDArray[np.object_]
    unit_group: IntArray  # unit -> index into groups
    raters: list[str]
    codes: npt.NDArray[np.int32]  # units x raters, category index or -1 when not rated
    counts: FloatArray  # units x categories
    evidence: FloatArray | None  # units x 6 pair counts, None without source/cites data
    has_source: bool
    has_cites: bool
    n_na_excluded: int
    notes: list[str] = field(default_factory=list)


def _strings(frame: pd.DataFrame, col: str) -> tuple[npt.NDArray[np.object_], BoolArray]:
    """Column as stripped strings, plus a mask of empty/missing cells."""
    s = frame[col]
    missing = s.isna().to_numpy()
    values = s.astype(str).str.strip().to_numpy(dtype=object)
    empty = missing | (values == "")
    return values, empty


def _describe(units: npt.NDArray[np.object_], raters: npt.NDArray[np.object_], i: int) -> str:
    return f"unit {units[i]!r}, rater {raters[i]!r}"


def _normalise_source(values: pd.Series) -> npt.NDArray[np.object_]:
    """Source locations compared case- and whitespace-insensitively; '' when absent."""
    text = values.astype(object).where(values.notna(), "")
    norm = text.astype(str).str.split().str.join(" ").str.casefold()
    return norm.fillna("").to_numpy(dtype=object)


def _cites_key(value: Any) -> str:
    """A canonical key for a set of citation keys ('' when none were given).

    Keys are compared as a set, case-insensitively, so ``a; B`` and ``b;a`` agree.
    """
    if isinstance(value, str):
        items = value.split(";")
    elif isinstance(value, list | tuple | set | frozenset | np.ndarray):
        items = [str(v) for v in value]
    elif value is None or pd.isna(value):
        return ""
    else:
        items = [str(value)]
    keys = sorted({k.strip().casefold() for k in items if k.strip()})
    return "\x1f".join(keys)


def _pair_counts(keys: list[IntArray], mask: BoolArray, n_units: int) -> FloatArray:
    """Per unit, the number of rater pairs sharing all ``keys`` (keys[0] is the unit)."""
    if not mask.any():
        return np.zeros(n_units)
    stacked = np.stack([k[mask] for k in keys], axis=1)
    uniq, cnt = np.unique(stacked, axis=0, return_counts=True)
    pairs = cnt * (cnt - 1) / 2.0
    return np.bincount(uniq[:, 0], weights=pairs, minlength=n_units)


def _prepare(
    ratings: pd.DataFrame,
    *,
    categories: Sequence[str] | None,
    order: Sequence[str] | None,
    na: str,
    na_codes: tuple[str, ...],
    group_col: str,
    groups: Sequence[str] | None,
) -> _Prepared:
    if not isinstance(ratings, pd.DataFrame):
        raise AgreementInputError("ratings must be a pandas DataFrame in long format")
    missing = [c for c in ("unit", "rater", "code") if c not in ratings.columns]
    if missing:
        raise AgreementInputError(
            f"ratings lack column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        )
    if group_col not in ratings.columns and group_col != "group":
        raise AgreementInputError(f"ratings lack the group column {group_col!r}")
    if na not in ("category", "exclude"):
        raise AgreementInputError(f"na must be 'category' or 'exclude', not {na!r}")
    notes: list[str] = []

    units, unit_empty = _strings(ratings, "unit")
    raters, rater_empty = _strings(ratings, "rater")
    codes, code_empty = _strings(ratings, "code")
    for what, empty in (("unit", unit_empty), ("rater", rater_empty), ("code", code_empty)):
        if empty.any():
            i = int(empty.argmax())
            raise AgreementInputError(
                f"rating {i + 1} (index {ratings.index[i]!r}; {_describe(units, raters, i)}): "
                f"empty {what}",
                unit=None if unit_empty[i] else str(units[i]),
                rater=None if rater_empty[i] else str(raters[i]),
            )
    if group_col in ratings.columns:
        group_vals, group_empty = _strings(ratings, group_col)
        group_vals = np.where(group_empty, NO_GROUP, group_vals).astype(object)
        has_groups = True
    else:
        group_vals = np.full(len(ratings), POOLED_GROUP, dtype=object)
        has_groups = False

    keep = np.ones(len(ratings), dtype=bool)
    n_na = 0
    if na == "exclude":
        keep = ~np.isin(codes, np.array(na_codes, dtype=object))
        n_na = int((~keep).sum())
        if n_na:
            notes.append(f"{n_na} ratings with the not-applicable code{'s' if len(na_codes) > 1 else ''} "
                         f"{', '.join(na_codes)} excluded before analysis")

    source_all = ratings["source"] if "source" in ratings.columns else None
    cites_all = ratings["cites"] if "cites" in ratings.columns else None
    if not keep.all():
        units, raters, codes, group_vals = units[keep], raters[keep], codes[keep], group_vals[keep]
        if source_all is not None:
            source_all = source_all[keep]
        if cites_all is not None:
            cites_all = cites_all[keep]

    # Declared categories and order
    def _clean(seq: Sequence[str], what: str) -> list[str]:
        out = [str(c).strip() for c in seq]
        dup = sorted({c for c in out if out.count(c) > 1})
        if dup:
            raise AgreementInputError(f"{what} lists {', '.join(dup)} more than once")
        return out

    order_list = _clean(order, "order") if order is not None else None
    if categories is not None:
        cats = _clean(categories, "categories")
        if order_list is not None:
            outside = [c for c in order_list if c not in cats]
            if outside:
                raise AgreementInputError(
                    f"order names {', '.join(outside)}, not among the categories {', '.join(cats)}"
                )
    else:
        observed = sorted(set(codes.tolist()))
        head = order_list or []
        cats = head + [c for c in observed if c not in head]
        notes.append(
            "categories were not declared: using the observed codes "
            f"({', '.join(cats) or 'none'}); the number of categories q, on which Gwet's AC1 "
            "and Brennan-Prediger depend, is therefore the number observed"
        )
    if na == "exclude":
        cats = [c for c in cats if c not in na_codes]
        if order_list is not None:
            order_list = [c for c in order_list if c not in na_codes]

    cat_index = pd.Index(cats, dtype=object).get_indexer(codes).astype(np.intp)
    bad = cat_index < 0
    if bad.any():
        i = int(bad.argmax())
        raise AgreementInputError(
            f"{_describe(units, raters, i)}: code {codes[i]!r} is not one of the categories "
            f"{', '.join(cats)}",
            unit=str(units[i]),
            rater=str(raters[i]),
        )
    q = len(cats)
    rank = np.full(q, -1, dtype=np.intp)
    if order_list is not None:
        for r, code in enumerate(order_list):
            rank[cats.index(code)] = r

    # Integer encoding; a unit is identified by (group, unit) so the same unit id may
    # appear in several groups (e.g. one benchmark coded on several rubric fields).
    g_idx, g_names = pd.factorize(pd.Series(group_vals, dtype=object))
    u0, _ = pd.factorize(pd.Series(units, dtype=object))
    n_u0 = int(u0.max()) + 1 if len(u0) else 0
    u_idx, _ = pd.factorize(g_idx.astype(np.int64) * max(n_u0, 1) + u0)
    r_idx, r_names = pd.factorize(pd.Series(raters, dtype=object))
    u_idx = u_idx.astype(np.intp)
    r_idx = r_idx.astype(np.intp)
    n_units = int(u_idx.max()) + 1 if len(u_idx) else 0
    n_raters = len(r_names)

    pair_key = pd.Series(u_idx.astype(np.int64) * max(n_raters, 1) + r_idx)
    dup = pair_key.duplicated(keep="first").to_numpy()
    if dup.any():
        j = int(dup.argmax())
        i = int((pair_key.to_numpy() == pair_key.iloc[j]).argmax())
        in_group = f" in group {group_vals[j]!r}" if has_groups else ""
        raise AgreementInputError(
            f"rater {raters[j]!r} rated unit {units[j]!r}{in_group} twice "
            f"(ratings {i + 1} and {j + 1}, codes {codes[i]!r} and {codes[j]!r})",
            unit=str(units[j]),
            rater=str(raters[j]),
        )

    first = np.full(n_units, -1, dtype=np.intp)
    first[u_idx[::-1]] = np.arange(len(u_idx))[::-1]
    unit_names = units[first] if n_units else np.empty(0, dtype=object)
    unit_group = g_idx[first].astype(np.intp) if n_units else np.empty(0, dtype=np.intp)

    code_mat = np.full((n_units, n_raters), -1, dtype=np.int32)
    code_mat[u_idx, r_idx] = cat_index
    counts = np.bincount(u_idx * q + cat_index, minlength=n_units * q).reshape(n_units, q)

    # Report order of groups: the caller's list first, then the rest by first appearance.
    names = [str(g) for g in g_names] if has_groups else []
    if groups is not None and has_groups:
        wanted = [str(g) for g in groups]
        ordered = wanted + [g for g in names if g not in wanted]
    else:
        ordered = names
    remap = np.array([ordered.index(g) for g in names], dtype=np.intp)
    unit_group = remap[unit_group] if has_groups and n_units else unit_group
    if POOLED_GROUP in ordered:
        notes.append(
            f"a group is itself named {POOLED_GROUP!r}; the pooled result is the last "
            f"entry named {POOLED_GROUP!r}"
        )

    has_source = has_cites = False
    evidence = None
    if source_all is not None or cites_all is not None:
        src = (
            _normalise_source(source_all)
            if source_all is not None
            else np.full(len(u_idx), "", dtype=object)
        )
        cit = (
            np.array([_cites_key(v) for v in cites_all.tolist()], dtype=object)
            if cites_all is not None
            else np.full(len(u_idx), "", dtype=object)
        )
        s_id, _ = pd.factorize(pd.Series(src, dtype=object))
        c_id, _ = pd.factorize(pd.Series(cit, dtype=object))
        s_id = np.where(src == "", -1, s_id).astype(np.intp)
        c_id = np.where(cit == "", -1, c_id).astype(np.intp)
        has_source = bool((s_id >= 0).any())
        has_cites = bool((c_id >= 0).any())
        ms, mc = s_id >= 0, c_id >= 0
        mb = ms & mc
        evidence = np.column_stack(
            [
                _pair_counts([u_idx, cat_index], ms, n_units),
                _pair_counts([u_idx, cat_index, s_id], ms, n_units),
                _pair_counts([u_idx, cat_index], mc, n_units),
                _pair_counts([u_idx, cat_index, c_id], mc, n_units),
                _pair_counts([u_idx, cat_index], mb, n_units),
                _pair_counts([u_idx, cat_index, s_id, c_id], mb, n_units),
            ]
        )

    return _Prepared(
        categories=tuple(cats),
        order=tuple(order_list) if order_list is not None else None,
        rank=rank,
        groups=ordered,
        unit_names=unit_names,
        unit_group=unit_group,
        raters=[str(r) for r in r_names],
        codes=code_mat,
        counts=counts.astype(np.float64),
        evidence=evidence,
        has_source=has_source,
        has_cites=has_cites,
        n_na_excluded=n_na,
        notes=notes,
    )


# ----------------------------------------------------------------------------------------
# Per-group analysis


def _group_stats(
    unit_ids: IntArray, prep: _Prepared, level: str
) -> tuple[FloatArray, _Layout, _Spec]:
    """Per-unit statistics matrix of one group, its column layout and coefficient spec."""
    codes = prep.codes[unit_ids]
    counts = prep.counts[unit_ids]
    present = np.flatnonzero((codes >= 0).any(axis=0))
    qo = len(prep.order) if prep.order is not None else 0
    ordered_cols = np.flatnonzero(prep.rank >= 0)
    ordered_cols = ordered_cols[np.argsort(prep.rank[ordered_cols])]
    cohen_pair = (int(present[0]), int(present[1])) if len(present) == 2 else None
    pair_codes = (codes[:, cohen_pair[0]], codes[:, cohen_pair[1]]) if cohen_pair else None
    stats, lay = _unit_stats(
        counts,
        counts[:, ordered_cols] if level == "ordinal" and qo >= 2 else None,
        pair_codes,
        prep.rank,
        prep.evidence[unit_ids] if prep.evidence is not None else None,
    )
    spec = _Spec(
        q=len(prep.categories),
        qo=qo,
        ordered=prep.order is not None,
        ordinal_alpha=level == "ordinal",
        cohen_pair=cohen_pair,
        n_raters=len(present),
        has_evidence=prep.evidence is not None,
        has_source=prep.has_source,
        has_cites=prep.has_cites,
    )
    return stats, lay, spec


def _analyse(
    name: str,
    unit_ids: IntArray,
    prep: _Prepared,
    *,
    level: str,
    bootstrap: int,
    seed: int,
) -> GroupResult:
    cats = prep.categories
    q = len(cats)
    codes = prep.codes[unit_ids]
    counts = prep.counts[unit_ids]
    present = np.flatnonzero((codes >= 0).any(axis=0))
    raters = tuple(prep.raters[i] for i in present)
    r = counts.sum(axis=1)
    n_units = len(unit_ids)
    n_paired = int((r >= 2).sum())
    code_counts = {c: int(v) for c, v in zip(cats, counts.sum(axis=0), strict=True)}

    ordered = prep.order is not None
    qo = len(prep.order) if prep.order is not None else 0
    ordinal_alpha = level == "ordinal"
    unordered = [c for c, rk in zip(cats, prep.rank, strict=True) if rk < 0]
    n_unordered = int(counts[:, prep.rank < 0].sum()) if ordered else 0
    stats, lay, spec = _group_stats(unit_ids, prep, level)
    cohen_pair = spec.cohen_pair
    pair_codes = (codes[:, cohen_pair[0]], codes[:, cohen_pair[1]]) if cohen_pair else None

    point_sums = stats.sum(axis=0, keepdims=True)
    boot_sums = None
    if bootstrap > 0 and n_units > 0:
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
        boot_sums = _resampled_sums(stats, bootstrap, rng)

    def both(fn: Any, *args: Any) -> tuple[Any, Any]:
        return fn(point_sums, *args), (fn(boot_sums, *args) if boot_sums is not None else None)

    point, boot = both(_coefficients, lay, spec)

    static: dict[str, list[tuple[str, bool]]] = {k: [] for k in point}
    if n_paired and (r[r >= 1] < len(present)).any():
        static["fleiss_kappa"].append(
            (
                "ratings are missing: Gwet's generalisation as in irrCAC fleiss.kappa.raw "
                "(p_a over units with two or more ratings; pi_k averaged over units with at "
                "least one rating)",
                False,
            )
        )
    if pair_codes is not None:
        a, b = pair_codes
        one_only = int(((a >= 0) ^ (b >= 0)).sum())
        if one_only:
            static["cohen_kappa"].append(
                (f"{one_only} units rated by only one of the two raters left out", True)
            )
        if ordered and unordered:
            both_rated = (a >= 0) & (b >= 0)
            outside = both_rated & (
                (prep.rank[np.maximum(a, 0)] < 0) | (prep.rank[np.maximum(b, 0)] < 0)
            )
            k = int(outside.sum())
            if k:
                for nm in ("cohen_kappa_linear", "cohen_kappa_quadratic"):
                    static[nm].append(
                        (
                            f"{k} units with a code outside the order "
                            f"({', '.join(unordered)}) treated as missing",
                            True,
                        )
                    )
    if ordered and qo >= 2:
        for nm in ("cohen_kappa_linear", "cohen_kappa_quadratic"):
            static[nm].append(
                (f"weights on ranks of the order {' < '.join(prep.order or ())}", False)
            )
    if ordinal_alpha and ordered and qo >= 2:
        static["krippendorff_alpha"].append(
            (f"ordinal metric over the order {' < '.join(prep.order or ())}", False)
        )
        if n_unordered:
            static["krippendorff_alpha"].append(
                (
                    f"{n_unordered} ratings with a code outside the order "
                    f"({', '.join(unordered)}) treated as missing",
                    True,
                )
            )

    coefficients = {
        k: _finish(point[k], boot[k] if boot is not None else None, static[k]) for k in point
    }
    specific = {}
    for k, code in enumerate(cats):
        p, bt = both(_specific, lay, k)
        specific[code] = _finish(p, bt, [])
    ev_point, ev_boot = both(_evidence, lay, spec)
    evidence = {
        k: _finish(ev_point[k], ev_boot[k] if ev_boot is not None else None, []) for k in ev_point
    }

    confusion = []
    for i, ai in enumerate(present):
        for bi in present[i + 1 :]:
            a, b = codes[:, ai], codes[:, bi]
            m = (a >= 0) & (b >= 0)
            mat = np.bincount(a[m] * q + b[m], minlength=q * q).reshape(q, q)
            confusion.append(
                ConfusionMatrix(
                    rater_a=prep.raters[ai],
                    rater_b=prep.raters[bi],
                    categories=cats,
                    counts=tuple(tuple(int(x) for x in row) for row in mat),
                    n_units=int(m.sum()),
                )
            )

    return GroupResult(
        group=name,
        n_units=n_units,
        n_raters=len(present),
        n_units_paired=n_paired,
        n_ratings=int(r.sum()),
        raters=raters,
        code_counts=code_counts,
        coefficients=coefficients,
        specific_agreement=specific,
        evidence=evidence,
        confusion=tuple(confusion),
    )


def _disagreements(prep: _Prepared) -> list[Disagreement]:
    codes = prep.codes
    if codes.size == 0:
        return []
    rated = codes >= 0
    hi = np.where(rated, codes, -1).max(axis=1)
    lo = np.where(rated, codes, np.iinfo(np.int32).max).min(axis=1)
    differ = (rated.sum(axis=1) >= 2) & (hi != lo)
    idx = np.flatnonzero(differ)
    # Listed group by group in report order, units in order of first appearance.
    idx = idx[np.argsort(prep.unit_group[idx], kind="stable")]
    out = []
    names = prep.groups or [POOLED_GROUP]
    cats = prep.categories
    raters = prep.raters
    for u in idx.tolist():
        row = codes[u]
        out.append(
            Disagreement(
                group=names[prep.unit_group[u]],
                unit=str(prep.unit_names[u]),
                codes={raters[j]: cats[c] for j, c in enumerate(row.tolist()) if c >= 0},
            )
        )
    return out


def compute_agreement(
    ratings: pd.DataFrame,
    *,
    categories: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    level: Literal["nominal", "ordinal"] = "nominal",
    na: Literal["category", "exclude"] = "category",
    na_code: str | Sequence[str] = "NA",
    bootstrap: int = 1000,
    seed: int = DEFAULT_SEED,
    group_col: str = "group",
    groups: Sequence[str] | None = None,
) -> AgreementReport:
    """Inter-rater agreement per group and pooled over all groups (named ``all``).

    ``ratings`` is long format: one row per rating with columns ``unit``, ``rater``,
    ``code``, optionally ``group_col`` (default ``group``), ``source`` (free text) and
    ``cites`` (``;``-separated keys or a list/tuple) for evidence agreement. A unit is
    identified by its group and unit id together.

    ``categories`` is the declared code set in display order (None: the codes of ``order``
    followed by the other observed codes, sorted, and a note says so). ``order`` lists
    ordered codes lowest to highest; codes outside it count as missing for the weighted
    kappas and ordinal alpha. ``level`` selects Krippendorff's nominal or ordinal metric.
    ``na="exclude"`` drops ratings with ``na_code`` first (one code, or several: the codes
    whose rubric role is not applicable). ``bootstrap`` resamples of
    units (within each group) give 95% percentile intervals, reproducible for a given
    ``seed``; 0 gives point estimates only.
    ``groups`` fixes the order of groups in the report.

    Undefined coefficients are None with a note saying why; the result never holds NaN.
    Raises :class:`AgreementInputError` for missing columns, empty values, a code
    outside ``categories``, ``order`` naming an undeclared code, or a rater rating the same
    unit twice.
    """
    if level not in ("nominal", "ordinal"):
        raise AgreementInputError(f"level must be 'nominal' or 'ordinal', not {level!r}")
    bootstrap = int(bootstrap)
    if bootstrap < 0:
        raise AgreementInputError(f"bootstrap must be 0 or more, not {bootstrap}")
    na_codes = (str(na_code),) if isinstance(na_code, str) else tuple(str(c) for c in na_code)
    prep = _prepare(
        ratings,
        categories=categories,
        order=order,
        na=na,
        na_codes=na_codes,
        group_col=group_col,
        groups=groups,
    )
    notes = list(prep.notes)
    if level == "ordinal" and prep.order is None:
        notes.append("level 'ordinal' was asked for but no order was given: alpha is undefined")

    results = []
    all_units = np.arange(len(prep.unit_names), dtype=np.intp)
    for gi, name in enumerate(prep.groups):
        unit_ids = all_units[prep.unit_group == gi]
        results.append(_analyse(name, unit_ids, prep, level=level, bootstrap=bootstrap, seed=seed))
    results.append(
        _analyse(POOLED_GROUP, all_units, prep, level=level, bootstrap=bootstrap, seed=seed)
    )

    settings: dict[str, Any] = {
        "categories": list(prep.categories),
        "categories_declared": categories is not None,
        "order": list(prep.order) if prep.order is not None else None,
        "level": level,
        "na": na,
        "na_code": ", ".join(na_codes),
        "na_excluded": prep.n_na_excluded,
        "bootstrap": bootstrap,
        "seed": int(seed),
        "confidence": CONFIDENCE,
        "interval": "percentile bootstrap over units, resampled within each group",
        "group_col": group_col,
        "groups": list(prep.groups),
        "raters": list(prep.raters),
        "evidence_data": {"source": prep.has_source, "cites": prep.has_cites},
    }
    return AgreementReport(
        groups=results,
        disagreements=_disagreements(prep),
        settings=settings,
        notes=notes,
    )
