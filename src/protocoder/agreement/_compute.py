"""The agreement engine's entry points: ratings in, an :class:`AgreementReport` out.

Input preparation (validation, NA handling, integer encoding) lives in ``prepare``; the
per-group analysis and the bootstrap in ``_analysis``; the coefficient formulas in
``_formulas``. :func:`compute_agreement` takes a pandas DataFrame; :func:`agreement_of_columns`
takes plain columns and is what the command line and a workspace's agreement use, so that
neither has to import pandas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._analysis import analyse, disagreements, group_stats, plan_group, split_units
from ._csv import RatingsTable
from ._errors import AgreementInputError
from ._formulas import CONFIDENCE
from ._prepare import NO_GROUP, POOLED_GROUP, Prepared, clean_codes, prepare, prepare_columns
from ._report import MIN_INTERVAL_UNITS, AgreementReport

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_SEED = 20260815

__all__ = ["DEFAULT_SEED", "NO_GROUP", "POOLED_GROUP", "group_stats", "prepare", "agreement_of_columns",
           "compute_agreement"]


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
    level, bootstrap, na_codes = _options(level, bootstrap, na_code)
    prep = prepare(
        ratings,
        categories=categories,
        order=order,
        na=na,
        na_codes=na_codes,
        group_col=group_col,
        groups=groups,
    )
    return _report(prep, categories_declared=categories is not None, level=level, na=na, na_codes=na_codes,
                   bootstrap=bootstrap, seed=seed, group_col=group_col)


def agreement_of_columns(
    columns: Mapping[str, Sequence[Any]] | RatingsTable,
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
    group_categories: Mapping[str, tuple[Sequence[str], Sequence[str] | None]] | None = None,
    list_disagreements: bool = True,
) -> AgreementReport:
    """:func:`compute_agreement` on ratings given as columns (``unit``, ``rater``, ``code``,
    optionally the group column, ``source``, ``cites``), or as read by
    :func:`read_ratings_table`, without pandas.

    ``group_categories`` gives a group its own declared categories and order (a rubric
    field's allowed codes): that group's coefficients are computed over them, while the
    pooled group uses ``categories`` (which must hold every group's). When a group's
    categories differ from the pooled ones, a note says so, since Gwet's AC1 and
    Brennan-Prediger depend on the number of categories. ``list_disagreements=False``
    leaves the report's ``disagreements`` empty, for output that does not show them (one
    entry per disagreeing unit is most of the work on a large file of point estimates).
    """
    level, bootstrap, na_codes = _options(level, bootstrap, na_code)
    prep = prepare_columns(columns, categories=categories, order=order, na=na, na_codes=na_codes,
                           group_col=group_col, groups=groups)
    return _report(prep, categories_declared=categories is not None, level=level, na=na, na_codes=na_codes,
                   bootstrap=bootstrap, seed=seed, group_col=group_col, group_categories=group_categories,
                   list_disagreements=list_disagreements)


def _options(level: str, bootstrap: int, na_code: str | Sequence[str]) -> tuple[str, int, tuple[str, ...]]:
    if level not in ("nominal", "ordinal"):
        raise AgreementInputError(f"level must be 'nominal' or 'ordinal', not {level!r}")
    bootstrap = int(bootstrap)
    if bootstrap < 0:
        raise AgreementInputError(f"bootstrap must be 0 or more, not {bootstrap}")
    na_codes = (str(na_code),) if isinstance(na_code, str) else tuple(str(c) for c in na_code)
    return level, bootstrap, na_codes


def _report(
    prep: Prepared,
    *,
    categories_declared: bool,
    level: str,
    na: str,
    na_codes: tuple[str, ...],
    bootstrap: int,
    seed: int,
    group_col: str,
    group_categories: Mapping[str, tuple[Sequence[str], Sequence[str] | None]] | None = None,
    list_disagreements: bool = True,
) -> AgreementReport:
    notes = list(prep.notes)
    own = dict(group_categories or {})
    plans = []
    for name, units in zip(prep.groups, split_units(prep), strict=True):
        if name in own:
            cats, order = own[name]
            cats = clean_codes(cats, f"the categories of group {name!r}")
            order = clean_codes(order, f"the order of group {name!r}") if order is not None else None
            if na == "exclude":
                cats = [c for c in cats if c not in na_codes]
                order = [c for c in order if c not in na_codes] if order is not None else None
            plans.append(plan_group(prep, name, units, cats, order))
        else:
            plans.append(plan_group(prep, name, units))
    all_units = np.arange(len(prep.unit_names), dtype=np.intp)
    plans.append(plan_group(prep, POOLED_GROUP, all_units))
    if level == "ordinal" and any(plan.order is None for plan in plans):
        notes.append("level 'ordinal' was asked for but no order was given: alpha is undefined")
    narrower = _narrower_groups(plans, prep)
    if narrower:
        notes.append(narrower)

    settings: dict[str, Any] = {
        "categories": list(prep.categories),
        "categories_declared": categories_declared,
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
        # Below this many units coded by two or more, an interval is withheld or flagged (see _report).
        "min_interval_units": MIN_INTERVAL_UNITS,
    }
    pooled, only = plans[-1], plans[0]
    if len(plans) == 2 and only.batch_key() == pooled.batch_key() and only.order == pooled.order:
        # Pooled over one group with that group's codes: the pooled row is that group's
        # row, intervals included (the same cells, so the same resamples).
        (result,) = analyse([only], prep, level=level, bootstrap=bootstrap, seed=seed)
        results = [result, replace(result, group=POOLED_GROUP)]
    else:
        results = analyse(plans, prep, level=level, bootstrap=bootstrap, seed=seed)
    return AgreementReport(
        groups=results,
        disagreements=disagreements(prep) if list_disagreements else [],
        settings=settings,
        notes=notes,
    )


def _narrower_groups(plans: list[Any], prep: Prepared) -> str:
    """The note on a pooled row whose categories are more than some group's, or ''."""
    pooled = len(prep.categories)
    by_set: dict[tuple[str, ...], list[str]] = {}
    for plan in plans[:-1]:
        if len(plan.cats) != pooled:
            by_set.setdefault(tuple(prep.categories[c] for c in plan.cats), []).append(plan.name)
    if not by_set:
        return ""
    parts = []
    for codes, names in by_set.items():
        if len(names) > 4:
            who = f"{', '.join(names[:3])} and {len(names) - 3} more groups allow"
        else:
            who = (f"{', '.join(names[:-1])} and {names[-1]} allow" if len(names) > 1 else f"{names[0]} allows")
        parts.append(f"{who} only {', '.join(codes) or 'no codes'} (q = {len(codes)})")
    return (
        f"the pooled row '{POOLED_GROUP}' uses every code of the groups it pools "
        f"({', '.join(prep.categories)}; q = {pooled}); " + "; ".join(parts) + ". Gwet's AC1 and "
        "Brennan-Prediger depend on q, so on the pooled row they are not comparable with those "
        "groups' rows (the other coefficients do not depend on q)"
    )
