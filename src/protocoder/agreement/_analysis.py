"""Analysis: every group's coefficients and bootstrap intervals, computed batch by batch.

Groups that share their categories, order, number of raters and evidence data form one
batch. A batch's per-unit statistics are one matrix; the coefficient functions of
``_formulas`` then run once on the stacked column sums of every group in it, point
estimates and bootstrap resamples alike, and the percentile intervals of every group and
measure come from one sorted matrix. Cost therefore follows the number of units (cells),
not the number of groups (fields): a 43-field checklist is a handful of numpy calls, as a
3-field rubric is.

Each group keeps its own resamples, drawn from a generator seeded with the seed and the
group's name, so a group's interval does not depend on which other groups are analysed
with it (``agree --field X`` gives field X the interval of the full report).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import AgreementInputError
from ._formulas import (
    CONFIDENCE,
    Conditions,
    FloatArray,
    IntArray,
    Layout,
    Spec,
    coefficients_from_sums,
    evidence_from_sums,
    resampled_sums,
    specific_from_sums,
    unit_stats,
)
from ._prepare import POOLED_GROUP, Prepared
from ._report import Coefficient, ConfusionMatrix, Disagreement, GroupResult


@dataclass
class GroupPlan:
    """One group to analyse: its units and the categories its raters chose from."""

    name: str
    units: IntArray  # unit indices into the prepared ratings, in order of first appearance
    cats: IntArray  # the group's categories, as indices into the prepared categories, in its order
    rank: IntArray  # per category of the group: rank in its order, -1 outside the order
    order: tuple[str, ...] | None
    raters: IntArray  # raters who rated any unit of the group, in the ratings' rater order
    has_source: bool
    has_cites: bool

    def batch_key(self) -> tuple[Any, ...]:
        return (tuple(self.cats.tolist()), tuple(self.rank.tolist()), self.order is not None,
                len(self.raters), self.has_source, self.has_cites)


def plan_group(
    prep: Prepared,
    name: str,
    units: IntArray,
    categories: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
) -> GroupPlan:
    """A group over ``units`` with the prepared categories (or its own subset ``categories``,
    ordered by ``order``); a rating outside the group's categories is an error."""
    if categories is None:
        cats = np.arange(len(prep.categories), dtype=np.intp)
        rank = prep.rank
        group_order = prep.order
    else:
        where = {c: i for i, c in enumerate(prep.categories)}
        unknown = [c for c in categories if c not in where]
        if unknown:
            raise AgreementInputError(
                f"group {name!r} declares {', '.join(unknown)}, not among the categories "
                f"{', '.join(prep.categories)}"
            )
        cats = np.array([where[c] for c in categories], dtype=np.intp)
        group_order = tuple(order) if order is not None else None
        rank = np.full(len(cats), -1, dtype=np.intp)
        for r, code in enumerate(group_order or ()):
            rank[list(categories).index(code)] = r
        outside = np.ones(len(prep.categories), dtype=bool)
        outside[cats] = False
        codes = prep.codes[units]
        bad = (codes >= 0) & outside[np.maximum(codes, 0)]
        if bad.any():
            u, r = (int(x[0]) for x in np.nonzero(bad))
            unit, rater = str(prep.unit_names[units[u]]), prep.raters[r]
            raise AgreementInputError(
                f"unit {unit!r}, rater {rater!r}: code {prep.categories[codes[u, r]]!r} is not one of the "
                f"categories {', '.join(categories)}",
                unit=unit,
                rater=rater,
            )
    raters = np.flatnonzero((prep.codes[units] >= 0).any(axis=0)) if len(units) else np.empty(0, dtype=np.intp)
    has_source = bool(prep.unit_has_source[units].any()) if prep.unit_has_source is not None else False
    has_cites = bool(prep.unit_has_cites[units].any()) if prep.unit_has_cites is not None else False
    return GroupPlan(name, units, cats, rank, group_order, raters, has_source, has_cites)


# ----------------------------------------------------------------------------------------
# Per-unit statistics of a batch


@dataclass
class _Batch:
    plans: list[GroupPlan]
    stats: FloatArray  # units of every group, group after group
    lay: Layout
    spec: Spec
    offsets: list[int]  # first row of each group in ``stats``
    codes: list[np.ndarray]  # per group: units x its raters, local category index or -1


def _local_codes(prep: Prepared, plan: GroupPlan) -> np.ndarray:
    """The group's code matrix (units x its raters) with category indices of the group."""
    local_of = np.full(len(prep.categories), -1, dtype=np.int32)
    local_of[plan.cats] = np.arange(len(plan.cats), dtype=np.int32)
    codes = prep.codes[plan.units][:, plan.raters]
    return np.where(codes >= 0, local_of[np.maximum(codes, 0)], -1).astype(np.int32)


def _batch(plans: list[GroupPlan], prep: Prepared, level: str) -> _Batch:
    first = plans[0]
    units = np.concatenate([p.units for p in plans])
    counts = prep.counts[np.ix_(units, first.cats)]
    qo = len(first.order) if first.order is not None else 0
    ordered_cols = np.flatnonzero(first.rank >= 0)
    ordered_cols = ordered_cols[np.argsort(first.rank[ordered_cols])]
    codes = [_local_codes(prep, p) for p in plans]
    two = len(first.raters) == 2
    pair_codes = (
        (np.concatenate([c[:, 0] for c in codes]), np.concatenate([c[:, 1] for c in codes])) if two else None
    )
    stats, lay = unit_stats(
        counts,
        counts[:, ordered_cols] if level == "ordinal" and qo >= 2 else None,
        pair_codes,
        first.rank,
        prep.evidence[units] if prep.evidence is not None else None,
    )
    spec = Spec(
        q=len(first.cats),
        qo=qo,
        ordered=first.order is not None,
        ordinal_alpha=level == "ordinal",
        cohen_pair=(int(first.raters[0]), int(first.raters[1])) if two else None,
        n_raters=len(first.raters),
        has_evidence=prep.evidence is not None,
        has_source=first.has_source,
        has_cites=first.has_cites,
    )
    offsets = np.concatenate([[0], np.cumsum([len(p.units) for p in plans])]).tolist()
    return _Batch(plans, stats, lay, spec, offsets, codes)


# ----------------------------------------------------------------------------------------
# Intervals


def _intervals(values: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """Per row of resampled values: the percentile interval of its finite values (NaN when
    there are none) and the number of values dropped as undefined.

    Rows are batched by their number of finite values; ``np.percentile`` along an axis picks
    the same order statistics and interpolates them as on each row alone.
    """
    n_rows, n_boot = values.shape
    finite = np.isfinite(values)
    n_ok = finite.sum(axis=1)
    lo = np.full(n_rows, np.nan)
    hi = np.full(n_rows, np.nan)
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    quantiles = [tail, 100.0 - tail]
    full = n_ok == n_boot
    if full.any():
        lo[full], hi[full] = np.percentile(values[full], quantiles, axis=1)
    partial = np.flatnonzero((n_ok > 0) & ~full)
    if len(partial):
        ranked = np.sort(np.where(finite[partial], values[partial], np.inf), axis=1)
        for k in np.unique(n_ok[partial]).tolist():
            rows = n_ok[partial] == k
            lo[partial[rows]], hi[partial[rows]] = np.percentile(ranked[rows, :k], quantiles, axis=1)
    return lo, hi, n_boot - n_ok


def _coefficient(
    value: float,
    reason: str | None,
    static: list[tuple[str, bool]],
    interval: tuple[float, float, int] | None,
    n_boot: int,
) -> Coefficient:
    """Point value, percentile interval and note; ``static`` holds (note, keep-if-undefined)."""
    if reason is not None or not np.isfinite(value):
        # Method remarks mean nothing without a value; remarks on the data still explain it.
        kept = [text for text, keep in static if keep]
        return Coefficient(None, None, None, "; ".join([reason or "undefined", *kept]))
    notes = [text for text, _ in static]
    lo = hi = None
    if interval is not None:
        lo_v, hi_v, dropped = interval
        some = dropped < n_boot
        if some:
            lo, hi = float(lo_v), float(hi_v)
        if dropped and some:
            notes.append(
                f"{dropped} of {n_boot} bootstrap resamples dropped because the coefficient "
                "is undefined in them"
            )
        elif dropped:
            notes.append(f"undefined in all {n_boot} bootstrap resamples: no interval")
    return Coefficient(value, lo, hi, "; ".join(notes))


# ----------------------------------------------------------------------------------------
# Analysis


def analyse(
    plans: list[GroupPlan], prep: Prepared, *, level: str, bootstrap: int, seed: int
) -> list[GroupResult]:
    """Every group's result, in the order of ``plans``."""
    batches: dict[tuple[Any, ...], list[int]] = {}
    for i, plan in enumerate(plans):
        batches.setdefault(plan.batch_key(), []).append(i)
    results: list[GroupResult | None] = [None] * len(plans)
    for members in batches.values():
        batch = _batch([plans[i] for i in members], prep, level)
        for i, result in zip(members, _analyse_batch(batch, prep, level, bootstrap, seed), strict=True):
            results[i] = result
    return [r for r in results if r is not None]


def _analyse_batch(batch: _Batch, prep: Prepared, level: str, bootstrap: int, seed: int) -> list[GroupResult]:
    plans, stats, lay, spec = batch.plans, batch.stats, batch.lay, batch.spec
    n_groups = len(plans)
    rows = [stats[batch.offsets[g] : batch.offsets[g + 1]] for g in range(n_groups)]
    sums = [part.sum(axis=0, keepdims=True) for part in rows]
    resampled = [g for g in range(n_groups) if bootstrap > 0 and len(plans[g].units) > 0]
    for g in resampled:
        rng = np.random.default_rng([seed, zlib.crc32(plans[g].name.encode("utf-8"))])
        sums.append(resampled_sums(rows[g], bootstrap, rng))
    every = np.vstack(sums) if sums else np.zeros((0, stats.shape[1]))

    # Every measure of every group at once: rows 0..G-1 are the point estimates, then B
    # rows per resampled group.
    measures: list[tuple[str, str, tuple[FloatArray, Conditions]]] = []
    measures += [("coefficients", name, out) for name, out in coefficients_from_sums(every, lay, spec).items()]
    measures += [("specific", str(k), specific_from_sums(every, lay, k)) for k in range(spec.q)]
    measures += [("evidence", name, out) for name, out in evidence_from_sums(every, lay, spec).items()]

    intervals: list[tuple[FloatArray, FloatArray, IntArray]] = []
    if resampled:
        blocks = []
        for _, _, (values, conds) in measures:
            boot = values[n_groups:].copy()
            for mask, _ in conds:
                boot[mask[n_groups:]] = np.nan
            blocks.append(boot.reshape(len(resampled), bootstrap))
        lo, hi, dropped = _intervals(np.vstack(blocks))
        shape = (len(measures), len(resampled))
        intervals = [lo.reshape(shape), hi.reshape(shape), dropped.reshape(shape)]
    slot = {g: j for j, g in enumerate(resampled)}

    out = []
    for g, plan in enumerate(plans):
        static = _static_notes(plan, batch.codes[g], prep.counts[np.ix_(plan.units, plan.cats)], prep, level)
        found: dict[str, dict[str, Coefficient]] = {"coefficients": {}, "specific": {}, "evidence": {}}
        for m, (kind, name, (values, conds)) in enumerate(measures):
            reason = next((msg for mask, msg in conds if mask[g]), None)
            interval = None
            if g in slot:
                j = slot[g]
                interval = (intervals[0][m, j], intervals[1][m, j], int(intervals[2][m, j]))
            found[kind][name] = _coefficient(float(values[g]), reason, static.get(name, []) if kind == "coefficients"
                                             else [], interval, bootstrap)
        out.append(_result(plan, batch.codes[g], prep, found))
    return out


def _static_notes(
    plan: GroupPlan, codes: np.ndarray, counts: FloatArray, prep: Prepared, level: str
) -> dict[str, list[tuple[str, bool]]]:
    """Remarks on a group's coefficients that do not depend on the resample: (text, keep-if-undefined)."""
    names = [prep.categories[c] for c in plan.cats]
    ordered = plan.order is not None
    qo = len(plan.order) if plan.order is not None else 0
    unordered = [c for c, rk in zip(names, plan.rank, strict=True) if rk < 0]
    n_unordered = int(counts[:, plan.rank < 0].sum()) if ordered else 0
    r = counts.sum(axis=1)
    n_paired = int((r >= 2).sum())
    static: dict[str, list[tuple[str, bool]]] = {}

    def add(name: str, text: str, keep: bool) -> None:
        static.setdefault(name, []).append((text, keep))

    if n_paired and (r[r >= 1] < len(plan.raters)).any():
        add("fleiss_kappa", "ratings are missing: Gwet's generalisation as in irrCAC fleiss.kappa.raw "
            "(p_a over units with two or more ratings; pi_k averaged over units with at "
            "least one rating)", False)
    if len(plan.raters) == 2:
        a, b = codes[:, 0], codes[:, 1]
        one_only = int(((a >= 0) ^ (b >= 0)).sum())
        if one_only:
            add("cohen_kappa", f"{one_only} units rated by only one of the two raters left out", True)
        if ordered and unordered:
            both_rated = (a >= 0) & (b >= 0)
            outside = both_rated & ((plan.rank[np.maximum(a, 0)] < 0) | (plan.rank[np.maximum(b, 0)] < 0))
            k = int(outside.sum())
            if k:
                for nm in ("cohen_kappa_linear", "cohen_kappa_quadratic"):
                    add(nm, f"{k} units with a code outside the order ({', '.join(unordered)}) treated as missing",
                        True)
    if ordered and qo >= 2:
        for nm in ("cohen_kappa_linear", "cohen_kappa_quadratic"):
            add(nm, f"weights on ranks of the order {' < '.join(plan.order or ())}", False)
    if level == "ordinal" and ordered and qo >= 2:
        add("krippendorff_alpha", f"ordinal metric over the order {' < '.join(plan.order or ())}", False)
        if n_unordered:
            add("krippendorff_alpha", f"{n_unordered} ratings with a code outside the order "
                f"({', '.join(unordered)}) treated as missing", True)
    return static


def _result(
    plan: GroupPlan, codes: np.ndarray, prep: Prepared, found: dict[str, dict[str, Coefficient]]
) -> GroupResult:
    names = tuple(prep.categories[c] for c in plan.cats)
    q = len(names)
    counts = prep.counts[np.ix_(plan.units, plan.cats)]
    r = counts.sum(axis=1)
    raters = [prep.raters[i] for i in plan.raters]
    confusion = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            a, b = codes[:, i], codes[:, j]
            m = (a >= 0) & (b >= 0)
            mat = np.bincount(a[m] * q + b[m], minlength=q * q).reshape(q, q)
            confusion.append(
                ConfusionMatrix(
                    rater_a=raters[i],
                    rater_b=raters[j],
                    categories=names,
                    counts=tuple(tuple(int(x) for x in row) for row in mat),
                    n_units=int(m.sum()),
                )
            )
    return GroupResult(
        group=plan.name,
        n_units=len(plan.units),
        n_raters=len(raters),
        n_units_paired=int((r >= 2).sum()),
        n_ratings=int(r.sum()),
        raters=tuple(raters),
        code_counts={c: int(v) for c, v in zip(names, counts.sum(axis=0), strict=True)},
        coefficients=found["coefficients"],
        specific_agreement={code: found["specific"][str(k)] for k, code in enumerate(names)},
        evidence=found["evidence"],
        confusion=tuple(confusion),
    )


def group_stats(unit_ids: IntArray, prep: Prepared, level: str) -> tuple[FloatArray, Layout, Spec]:
    """Per-unit statistics matrix of one group (all categories), its column layout and spec."""
    batch = _batch([plan_group(prep, "", unit_ids)], prep, level)
    return batch.stats, batch.lay, batch.spec


def split_units(prep: Prepared) -> list[IntArray]:
    """The units of each group, in report order (units in order of first appearance)."""
    order = np.argsort(prep.unit_group, kind="stable")
    sizes = np.bincount(prep.unit_group, minlength=len(prep.groups)) if len(order) else np.zeros(
        len(prep.groups), dtype=np.intp)
    return np.split(order.astype(np.intp), np.cumsum(sizes)[:-1]) if len(prep.groups) else []


def disagreements(prep: Prepared) -> list[Disagreement]:
    """Every unit whose raters did not all give the same code, group by group."""
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
    names = prep.groups or [POOLED_GROUP]
    raters = prep.raters
    unit_names = prep.unit_names[idx].tolist()
    groups = [names[g] for g in prep.unit_group[idx].tolist()]
    # Category names per rating, None where the rater did not rate the unit.
    labels = np.array([*prep.categories, None], dtype=object)[codes[idx]].tolist()
    complete = rated[idx].all(axis=1).tolist()
    return [
        Disagreement(
            group=group,
            unit=str(unit),
            codes=dict(zip(raters, row, strict=True)) if full
            else {rater: code for rater, code in zip(raters, row, strict=True) if code is not None},
        )
        for group, unit, row, full in zip(groups, unit_names, labels, complete, strict=True)
    ]
