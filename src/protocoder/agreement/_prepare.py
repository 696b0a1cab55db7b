"""Input preparation: ratings validated, not-applicable codes handled, everything encoded as integers.

The core, :func:`prepare_columns`, takes plain columns (a CSV read with the ``csv`` module, a
workspace's cells) and needs numpy only. :func:`prepare` adapts a pandas DataFrame to it
(pandas is imported there, where the caller already holds a DataFrame), so a process that
never builds a DataFrame never pays for importing pandas.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._errors import AgreementInputError
from ._formulas import BoolArray, FloatArray, IntArray

if TYPE_CHECKING:
    import pandas as pd

POOLED_GROUP = "all"
NO_GROUP = "(no group)"

ObjectArray = npt.NDArray[np.object_]


@dataclass
class Prepared:
    """Ratings after validation, NA handling and integer encoding."""

    categories: tuple[str, ...]
    order: tuple[str, ...] | None
    rank: IntArray  # category index -> rank in the order, -1 if outside the order
    groups: list[str]  # group names in report order (without the pooled group)
    unit_names: ObjectArray
    unit_group: IntArray  # unit -> index into groups
    raters: list[str]
    codes: npt.NDArray[np.int32]  # units x raters, category index or -1 when not rated
    counts: FloatArray  # units x categories
    evidence: FloatArray | None  # units x 6 pair counts, None without source/cites data
    has_source: bool
    has_cites: bool
    n_na_excluded: int
    notes: list[str] = field(default_factory=list)
    # Per unit: whether any rating of it gave a source location / citation keys.
    unit_has_source: BoolArray | None = None
    unit_has_cites: BoolArray | None = None


# ----------------------------------------------------------------------------------------
# Small encoders (first-appearance order, as pandas.factorize gives it)


def _factorize(values: Sequence[Hashable], size: int) -> tuple[IntArray, list[Any]]:
    """Integer codes of ``values`` by order of first appearance, and the distinct values."""
    distinct = list(dict.fromkeys(values))  # first-appearance order, at the speed of C
    index = {v: i for i, v in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.intp, count=size)
    return codes, distinct


def _factorize_ints(keys: npt.NDArray[np.int64]) -> IntArray:
    """Integer codes of integer ``keys`` by order of first appearance."""
    if not len(keys):
        return np.empty(0, dtype=np.intp)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


@dataclass
class _Factor:
    """A column of text as integer ids into its distinct values (in order of first appearance)."""

    ids: IntArray
    values: list[str]

    @classmethod
    def of(cls, values: Sequence[str]) -> _Factor:
        return cls(*_factorize(values, len(values)))

    def __getitem__(self, i: int) -> str:
        return self.values[self.ids[i]]

    def __len__(self) -> int:
        return len(self.ids)

    def keep(self, mask: BoolArray) -> _Factor:
        """The values where ``mask`` is true, re-numbered by first appearance among them."""
        ids = self.ids[mask]
        if not len(ids):
            return _Factor(ids.astype(np.intp), [])
        uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.intp)
        rank[order] = np.arange(len(uniq))
        return _Factor(rank[inverse.reshape(-1)], [self.values[k] for k in uniq[order].tolist()])


def _ids_of_given(values: list[str] | None, size: int) -> IntArray:
    """Integer ids of the values, -1 where none was given ('')."""
    if values is None:
        return np.full(size, -1, dtype=np.intp)
    ids, distinct = _factorize(values, size)
    if "" in distinct:
        ids[ids == distinct.index("")] = -1
    return ids


def _describe(units: Any, raters: Any, i: int) -> str:
    return f"unit {units[i]!r}, rater {raters[i]!r}"


def _pair_counts(keys: list[IntArray], mask: BoolArray, n_units: int) -> FloatArray:
    """Per unit, the number of rater pairs sharing all ``keys`` (keys[0] is the unit)."""
    if not mask.any():
        return np.zeros(n_units)
    columns = [k[mask] for k in keys]
    lows = [int(column.min()) for column in columns]
    spans = [int(column.max()) - low + 1 for column, low in zip(columns, lows, strict=True)]
    inner = 1
    for span in spans[1:]:
        inner *= span
    if inner * spans[0] < 2**62:
        # Each row as one integer (mixed radix: sorted like the rows), found unique several
        # times faster than rows; the same groups in the same order, so the same sums.
        combined = np.zeros(len(columns[0]), dtype=np.int64)
        for column, low, span in zip(columns, lows, spans, strict=True):
            combined = combined * span + (column - low)
        uniq, cnt = np.unique(combined, return_counts=True)
        units = uniq // inner + lows[0]
    else:
        stacked = np.stack(columns, axis=1)
        rows, cnt = np.unique(stacked, axis=0, return_counts=True)
        units = rows[:, 0]
    pairs = cnt * (cnt - 1) / 2.0
    return np.bincount(units, weights=pairs, minlength=n_units)


def normalise_source(value: Any) -> str:
    """A source location compared case- and whitespace-insensitively; '' when absent."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return " ".join(str(value).split()).casefold()


def cites_key(value: Any) -> str:
    """A canonical key for a set of citation keys ('' when none were given).

    Keys are compared as a set, case-insensitively, so ``a; B`` and ``b;a`` agree.
    """
    if isinstance(value, str):
        items = value.split(";")
    elif isinstance(value, list | tuple | set | frozenset | np.ndarray):
        items = [str(v) for v in value]
    elif value is None or (isinstance(value, float) and value != value):
        return ""
    else:
        import pandas as pd  # a missing-value marker of pandas' own (pd.NA, NaT) can only come from pandas

        if pd.isna(value):
            return ""
        items = [str(value)]
    keys = sorted({k.strip().casefold() for k in items if k.strip()})
    return "\x1f".join(keys)


# ----------------------------------------------------------------------------------------
# DataFrame input


def _strings(frame: pd.DataFrame, col: str) -> tuple[ObjectArray, BoolArray]:
    """Column as stripped strings, plus a mask of empty/missing cells."""
    s = frame[col]
    missing = s.isna().to_numpy()
    values = s.astype(str).str.strip().to_numpy(dtype=object)
    empty = missing | (values == "")
    return values, empty


def _normalise_source_series(values: pd.Series) -> ObjectArray:
    text = values.astype(object).where(values.notna(), "")
    norm = text.astype(str).str.split().str.join(" ").str.casefold()
    return norm.fillna("").to_numpy(dtype=object)


def prepare(
    ratings: pd.DataFrame,
    *,
    categories: Sequence[str] | None,
    order: Sequence[str] | None,
    na: str,
    na_codes: tuple[str, ...],
    group_col: str,
    groups: Sequence[str] | None,
) -> Prepared:
    """Validate and encode a long DataFrame of ratings (see ``compute_agreement``)."""
    import pandas as pd

    if not isinstance(ratings, pd.DataFrame):
        raise AgreementInputError("ratings must be a pandas DataFrame in long format")
    missing = [c for c in ("unit", "rater", "code") if c not in ratings.columns]
    if missing:
        raise AgreementInputError(
            f"ratings lack column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        )
    if group_col not in ratings.columns and group_col != "group":
        raise AgreementInputError(f"ratings lack the group column {group_col!r}")
    _check_na(na)

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
    group_vals = None
    if group_col in ratings.columns:
        values, group_empty = _strings(ratings, group_col)
        group_vals = np.where(group_empty, NO_GROUP, values).tolist()
    source = _normalise_source_series(ratings["source"]).tolist() if "source" in ratings.columns else None
    cites = [cites_key(v) for v in ratings["cites"].tolist()] if "cites" in ratings.columns else None
    return _encode(_Factor.of(units.tolist()), _Factor.of(raters.tolist()), _Factor.of(codes.tolist()),
                   _Factor.of(group_vals) if group_vals is not None else None, source, cites,
                   categories=categories, order=order, na=na, na_codes=na_codes, groups=groups)


# ----------------------------------------------------------------------------------------
# Plain columns


def prepare_columns(
    columns: Mapping[str, Sequence[Any]] | Any,
    *,
    categories: Sequence[str] | None,
    order: Sequence[str] | None,
    na: str,
    na_codes: tuple[str, ...],
    group_col: str = "group",
    groups: Sequence[str] | None = None,
) -> Prepared:
    """Validate and encode ratings given as columns of equal length (``unit``, ``rater``,
    ``code``, optionally the group column, ``source`` and ``cites``): the same checks,
    encoding and errors as for a DataFrame, without pandas.

    ``columns`` is a mapping of names to values, or a :class:`~._csv.RatingsTable`, whose
    checked columns may come already numbered (``factor``), read straight from the file.
    """
    names = columns.names if hasattr(columns, "factor") else list(columns)
    get = columns.column if hasattr(columns, "factor") else columns.__getitem__
    missing = [c for c in ("unit", "rater", "code") if c not in names]
    if missing:
        raise AgreementInputError(
            f"ratings lack column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        )
    if group_col not in names and group_col != "group":
        raise AgreementInputError(f"ratings lack the group column {group_col!r}")
    _check_na(na)

    def text(name: str) -> list[str]:
        values = get(name)
        try:
            return list(map(str.strip, values))  # the usual case: every value is a str
        except TypeError:
            return [("" if v is None else str(v).strip()) for v in values]

    def factor(name: str) -> _Factor | None:
        found = columns.factor(name) if hasattr(columns, "factor") else None
        return _Factor(*found) if found is not None else None

    keys = [factor(name) for name in ("unit", "rater", "code")]
    if None in keys:
        units, raters, codes = text("unit"), text("rater"), text("code")
        for what, values in (("unit", units), ("rater", raters), ("code", codes)):
            if "" in values:
                i = values.index("")
                raise AgreementInputError(
                    f"rating {i + 1} ({_describe(units, raters, i)}): empty {what}",
                    unit=units[i] or None,
                    rater=raters[i] or None,
                )
        keys = [_Factor.of(units), _Factor.of(raters), _Factor.of(codes)]
    group = None
    if group_col in names:
        group = factor(group_col) or _Factor.of([value or NO_GROUP for value in text(group_col)])
    source = list(map(normalise_source, get("source"))) if "source" in names else None
    cites = list(map(cites_key, get("cites"))) if "cites" in names else None
    unit, rater, code = keys
    assert unit is not None and rater is not None and code is not None
    return _encode(unit, rater, code, group, source, cites, categories=categories, order=order, na=na,
                   na_codes=na_codes, groups=groups)


def _check_na(na: str) -> None:
    if na not in ("category", "exclude"):
        raise AgreementInputError(f"na must be 'category' or 'exclude', not {na!r}")


def clean_codes(seq: Sequence[Any], what: str) -> list[str]:
    """Declared codes as stripped strings; a code listed twice is an error."""
    out = [str(c).strip() for c in seq]
    dup = sorted({c for c in out if out.count(c) > 1})
    if dup:
        raise AgreementInputError(f"{what} lists {', '.join(dup)} more than once")
    return out


def _encode(
    units: _Factor,
    raters: _Factor,
    codes: _Factor,
    group_vals: _Factor | None,
    source: list[str] | None,
    cites: list[str] | None,
    *,
    categories: Sequence[str] | None,
    order: Sequence[str] | None,
    na: str,
    na_codes: tuple[str, ...],
    groups: Sequence[str] | None,
) -> Prepared:
    """Checked, stripped, non-empty columns -> integer encoding (see :class:`Prepared`)."""
    notes: list[str] = []
    has_groups = group_vals is not None

    n_na = 0
    if na == "exclude":
        excluded = [i for i, value in enumerate(codes.values) if value in set(na_codes)]
        keep = ~np.isin(codes.ids, excluded)
        n_na = len(keep) - int(keep.sum())
        if n_na:
            notes.append(f"{n_na} ratings with the not-applicable code{'s' if len(na_codes) > 1 else ''} "
                         f"{', '.join(na_codes)} excluded before analysis")
            units, raters, codes = units.keep(keep), raters.keep(keep), codes.keep(keep)
            group_vals = group_vals.keep(keep) if group_vals is not None else None
            kept = keep.tolist()
            source = list(compress(source, kept)) if source is not None else None
            cites = list(compress(cites, kept)) if cites is not None else None

    order_list = clean_codes(order, "order") if order is not None else None
    if categories is not None:
        cats = clean_codes(categories, "categories")
        if order_list is not None:
            outside = [c for c in order_list if c not in cats]
            if outside:
                raise AgreementInputError(
                    f"order names {', '.join(outside)}, not among the categories {', '.join(cats)}"
                )
    else:
        observed = sorted(codes.values)
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

    n = len(codes)
    position = {c: i for i, c in enumerate(cats)}
    cat_of_code = np.array([position.get(c, -1) for c in codes.values], dtype=np.intp)
    cat_index = cat_of_code[codes.ids] if n else np.empty(0, dtype=np.intp)
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
    if group_vals is not None:
        g_idx, g_names = group_vals.ids, group_vals.values
    else:
        g_idx, g_names = np.zeros(n, dtype=np.intp), [POOLED_GROUP]
    u0, unit_values = units.ids, units.values
    # With one group a unit is its id alone; otherwise the pair (group, id).
    u_idx = _factorize_ints(g_idx.astype(np.int64) * max(len(unit_values), 1) + u0) if len(g_names) > 1 else u0
    r_idx, r_names = raters.ids, raters.values
    n_units = int(u_idx.max()) + 1 if n else 0
    n_raters = len(r_names)

    pair_key = u_idx.astype(np.int64) * max(n_raters, 1) + r_idx
    _, first_pos = np.unique(pair_key, return_index=True)
    if len(first_pos) < n:
        later = np.ones(n, dtype=bool)
        later[first_pos] = False
        j = int(later.argmax())
        i = int((pair_key == pair_key[j]).argmax())
        in_group = f" in group {group_vals[j]!r}" if group_vals is not None else ""
        raise AgreementInputError(
            f"rater {raters[j]!r} rated unit {units[j]!r}{in_group} twice "
            f"(ratings {i + 1} and {j + 1}, codes {codes[i]!r} and {codes[j]!r})",
            unit=str(units[j]),
            rater=str(raters[j]),
        )

    first = np.full(n_units, -1, dtype=np.intp)
    first[u_idx[::-1]] = np.arange(n)[::-1]
    if u_idx is u0:
        unit_names = np.array(unit_values, dtype=object)
    else:
        unit_names = np.array(unit_values, dtype=object)[u0[first]] if n_units else np.empty(0, dtype=object)
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
    where = {g: i for i, g in enumerate(ordered)}
    remap = np.array([where[g] for g in names], dtype=np.intp)
    unit_group = remap[unit_group] if has_groups and n_units else unit_group
    if POOLED_GROUP in ordered:
        notes.append(
            f"a group is itself named {POOLED_GROUP!r}; the pooled result is the last "
            f"entry named {POOLED_GROUP!r}"
        )

    has_source = has_cites = False
    evidence = unit_has_source = unit_has_cites = None
    if source is not None or cites is not None:
        s_id = _ids_of_given(source, n)
        c_id = _ids_of_given(cites, n)
        ms, mc = s_id >= 0, c_id >= 0
        has_source = bool(ms.any())
        has_cites = bool(mc.any())
        unit_has_source = np.bincount(u_idx[ms], minlength=n_units) > 0
        unit_has_cites = np.bincount(u_idx[mc], minlength=n_units) > 0
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

    return Prepared(
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
        unit_has_source=unit_has_source,
        unit_has_cites=unit_has_cites,
    )

