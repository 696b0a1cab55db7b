"""Agreement coefficients as functions of sums over units, with a vectorised bootstrap.

The ratings are reduced once to a matrix ``S`` of per-unit statistics (one row per unit:
category counts, pair agreement, coincidence contributions, two-rater one-hots, evidence
pair counts). Every coefficient is a function of the column sums ``1ᵀS``. A bootstrap
resample of units is a vector of unit multiplicities ``w``, so the sums of B resamples
are the single product ``W @ S``; the same coefficient functions then run on all B rows
at once. There is no loop over units or over resamples beyond chunking ``W``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

CONFIDENCE = 0.95
# Bound on the cells of one chunk of the resample-weight matrix W (about 16 MB of float64).
_CHUNK_CELLS = 2_000_000
# Cells of the unit-count tally done at once (1 MB of int64: it stays in a core's cache).
_TALLY_CELLS = 131_072
# Most distinct statistics rows for which resamples are drawn as counts of each row.
_MAX_KINDS = 512

Conditions = list[tuple[BoolArray, str]]

# ----------------------------------------------------------------------------------------
# Column layout of the per-unit statistics matrix


class Layout:
    """Named column blocks of the per-unit statistics matrix ``S``."""

    def __init__(self) -> None:
        self.slices: dict[str, slice] = {}
        self._blocks: list[FloatArray] = []
        self._width = 0

    def add(self, name: str, block: FloatArray) -> None:
        if block.ndim == 1:
            block = block[:, None]
        self.slices[name] = slice(self._width, self._width + block.shape[1])
        self._width += block.shape[1]
        self._blocks.append(block)

    def matrix(self, n_units: int) -> FloatArray:
        if not self._blocks:
            return np.zeros((n_units, 0))
        return np.ascontiguousarray(np.hstack(self._blocks), dtype=np.float64)

    def __contains__(self, name: str) -> bool:
        return name in self.slices

    def get(self, sums: FloatArray, name: str) -> FloatArray:
        return sums[:, self.slices[name]]

    def col(self, sums: FloatArray, name: str) -> FloatArray:
        return sums[:, self.slices[name].start]


# ----------------------------------------------------------------------------------------
# Per-unit statistics


@dataclass
class Spec:
    """What one group's coefficient functions need besides the sums."""

    q: int
    qo: int
    ordered: bool
    ordinal_alpha: bool
    cohen_pair: tuple[int, int] | None
    n_raters: int
    has_evidence: bool
    has_source: bool
    has_cites: bool


def unit_stats(
    counts: FloatArray,
    ordinal_counts: FloatArray | None,
    pair_codes: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] | None,
    rank: IntArray,
    evidence: FloatArray | None,
) -> tuple[FloatArray, Layout]:
    """Each unit's sums every coefficient is a function of, as one matrix, with the layout naming its columns."""
    n_units, q = counts.shape
    lay = Layout()
    r = counts.sum(axis=1)
    paired = r >= 2
    nn1 = counts * (counts - 1.0)
    agree_pairs = nn1.sum(axis=1)
    safe_r = np.where(r > 0, r, 1.0)
    safe_rr = np.where(paired, r * (r - 1.0), 1.0)
    lay.add("one", np.ones(n_units))
    lay.add("paired", paired.astype(np.float64))
    # Gwet 2014 (irrCAC pa.coeff.raw): per-unit share of agreeing ordered rater pairs.
    lay.add("pa", np.where(paired, agree_pairs / safe_rr, 0.0))
    # Gwet 2014 (irrCAC fleiss.kappa.raw / gwet.ac1.raw): pi_k = mean over units of r_ik / r_i.
    lay.add("frac", counts / safe_r[:, None])
    # Krippendorff 2011: pairable values n_c and the diagonal of the coincidence matrix.
    lay.add("npair", counts * paired[:, None])
    lay.add("diag", np.where(paired, agree_pairs / np.where(paired, r - 1.0, 1.0), 0.0))
    # Proportion of specific agreement, Uebersax ("Statistical Methods for Rater Agreement",
    # many raters): p_s(k) = sum n_k(n_k-1) / sum n_k(r-1); for two raters this is
    # Cicchetti & Feinstein (1990) positive/negative agreement 2 n_kk / (n_k. + n_.k).
    lay.add("sa_num", nn1)
    lay.add("sa_den", counts * (r - 1.0)[:, None] * (r > 0)[:, None])

    if ordinal_counts is not None:
        m = ordinal_counts.sum(axis=1)
        opaired = m >= 2
        inv = np.where(opaired, 1.0 / np.where(opaired, m - 1.0, 1.0), 0.0)
        qo = ordinal_counts.shape[1]
        lay.add("opair", ordinal_counts * opaired[:, None])
        iu, ju = np.triu_indices(qo, k=1)
        # Krippendorff 2011: off-diagonal coincidences o_ck = sum_u n_uc n_uk / (m_u - 1).
        lay.add("ooff", ordinal_counts[:, iu] * ordinal_counts[:, ju] * inv[:, None])

    if pair_codes is not None:
        a, b = pair_codes
        both = (a >= 0) & (b >= 0)
        conf = np.zeros((n_units, q * q))
        rows = np.flatnonzero(both)
        conf[rows, a[rows] * q + b[rows]] = 1.0
        lay.add("conf", conf)
        qo = int((rank >= 0).sum())
        if qo:
            ra = np.where(a >= 0, rank[np.maximum(a, 0)], -1)
            rb = np.where(b >= 0, rank[np.maximum(b, 0)], -1)
            both_o = (ra >= 0) & (rb >= 0)
            oconf = np.zeros((n_units, qo * qo))
            rows = np.flatnonzero(both_o)
            oconf[rows, ra[rows] * qo + rb[rows]] = 1.0
            lay.add("oconf", oconf)

    if evidence is not None:
        lay.add("evidence", evidence)
    return lay.matrix(n_units), lay


# ----------------------------------------------------------------------------------------
# Coefficients as functions of sums (rows of ``sums`` are the point estimate or resamples)


def _div(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(num / den, dtype=np.float64)


def _corrected(pa: FloatArray, pe: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((pa - pe) / (1.0 - pe), dtype=np.float64)


def _always(n: int) -> BoolArray:
    return np.ones(n, dtype=bool)


_NO_PAIRED = "no unit has ratings from two or more raters"
_ONE_CATEGORY = "only one category was used, so chance agreement p_e = 1 (0/0)"
_NOT_ORDERED = "codes are not ordered"


def _cohen(conf: FloatArray, k: int, weights: FloatArray | None) -> tuple[FloatArray, Conditions]:
    """Cohen 1960 (unweighted) / Cohen 1968 (weighted) kappa from summed confusion cells."""
    b = conf.shape[0]
    c = conf.reshape(b, k, k)
    n = c.sum(axis=(1, 2))
    rows = c.sum(axis=2)
    cols = c.sum(axis=1)
    w = np.eye(k) if weights is None else weights
    po = _div(np.einsum("bij,ij->b", c, w), n)
    pe = _div(np.einsum("bi,bj,ij->b", rows, cols, w), n * n)
    used = ((rows + cols) > 0).sum(axis=1)
    conds: Conditions = [
        (n == 0, "no unit was rated by both raters"),
        (used <= 1, "only one category was used by either rater, so p_e = 1 (0/0)"),
    ]
    return _corrected(po, pe), conds


def coefficients_from_sums(
    sums: FloatArray, lay: Layout, spec: Spec
) -> dict[str, tuple[FloatArray, Conditions]]:
    """Every coefficient (and why it is undefined where it is) from column sums of the unit statistics."""
    b = sums.shape[0]
    q = spec.q
    out: dict[str, tuple[FloatArray, Conditions]] = {}
    n1 = lay.col(sums, "one")
    n2 = lay.col(sums, "paired")
    no_paired = n2 == 0

    # Gwet 2014, eq. for p_a (irrCAC pa.coeff.raw): mean over units with >= 2 ratings.
    pa = _div(lay.col(sums, "pa"), n2)
    out["percent_agreement"] = (pa, [(no_paired, _NO_PAIRED)])

    if spec.cohen_pair is None:
        why = f"Cohen's kappa needs exactly two raters; this group has {spec.n_raters}"
        for name in ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"):
            out[name] = (np.full(b, np.nan), [(_always(b), why)])
    else:
        out["cohen_kappa"] = _cohen(lay.get(sums, "conf"), q, None)
        for name, power in (("cohen_kappa_linear", 1), ("cohen_kappa_quadratic", 2)):
            if not spec.ordered:
                out[name] = (np.full(b, np.nan), [(_always(b), _NOT_ORDERED)])
            elif spec.qo < 2:
                out[name] = (np.full(b, np.nan), [(_always(b), "fewer than two ordered codes")])
            else:
                # Cohen 1968: agreement weights 1 - (|i-j|/(q-1))^p on ranks of the order.
                idx = np.arange(spec.qo)
                dist = np.abs(idx[:, None] - idx[None, :]) / (spec.qo - 1)
                out[name] = _cohen(lay.get(sums, "oconf"), spec.qo, 1.0 - dist**power)

    frac = lay.get(sums, "frac")
    pi = _div(frac, n1[:, None])
    used = (frac > 0).sum(axis=1)
    # Fleiss 1971, generalised to missing ratings as in Gwet's irrCAC fleiss.kappa.raw.
    pe_fleiss = (pi * pi).sum(axis=1)
    out["fleiss_kappa"] = (
        _corrected(pa, pe_fleiss),
        [(no_paired, _NO_PAIRED), (used <= 1, _ONE_CATEGORY)],
    )

    if spec.ordinal_alpha:
        out["krippendorff_alpha"] = _alpha_ordinal(sums, lay, spec)
    else:
        # Krippendorff 2011, nominal: alpha = 1 - (n-1) (n - sum_c o_cc) / (n^2 - sum_c n_c^2).
        npair = lay.get(sums, "npair")
        n = npair.sum(axis=1)
        de = n * n - (npair * npair).sum(axis=1)
        do = n - lay.col(sums, "diag")
        alpha = 1.0 - _div((n - 1.0) * do, de)
        out["krippendorff_alpha"] = (
            alpha,
            [
                (n == 0, _NO_PAIRED),
                (
                    de <= 0,
                    "only one category among units with two or more ratings, "
                    "so expected disagreement D_e = 0 (0/0)",
                ),
            ],
        )

    few = np.full(b, q < 2)
    few_msg = f"needs at least two categories; {q} declared"
    # Gwet 2008/2014 (irrCAC gwet.ac1.raw): p_e = sum_k pi_k (1 - pi_k) / (q - 1).
    pe_ac1 = _div((pi * (1.0 - pi)).sum(axis=1), np.full(b, max(q - 1, 1), dtype=np.float64))
    out["gwet_ac1"] = (_corrected(pa, pe_ac1), [(few, few_msg), (no_paired, _NO_PAIRED)])
    # Brennan & Prediger 1981 (irrCAC bp.coeff.raw): p_e = 1/q.
    pe_bp = np.full(b, 1.0 / q if q else np.nan)
    out["brennan_prediger"] = (_corrected(pa, pe_bp), [(few, few_msg), (no_paired, _NO_PAIRED)])
    return out


def _alpha_ordinal(sums: FloatArray, lay: Layout, spec: Spec) -> tuple[FloatArray, Conditions]:
    b = sums.shape[0]
    if not spec.ordered:
        return np.full(b, np.nan), [(_always(b), _NOT_ORDERED + " (level 'ordinal' needs one)")]
    if spec.qo < 2:
        return np.full(b, np.nan), [(_always(b), "fewer than two ordered codes")]
    nc = lay.get(sums, "opair")
    off = lay.get(sums, "ooff")
    n = nc.sum(axis=1)
    cum = np.cumsum(nc, axis=1)
    iu, ju = np.triu_indices(spec.qo, k=1)
    # Krippendorff 2011, ordinal metric: delta_ck = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2,
    # with n_g the coincidence marginals of this very sample.
    delta = (cum[:, ju] - cum[:, iu] + (nc[:, iu] - nc[:, ju]) / 2.0) ** 2
    do = (off * delta).sum(axis=1)
    de = (nc[:, iu] * nc[:, ju] * delta).sum(axis=1)
    alpha = 1.0 - _div((n - 1.0) * do, de)
    return alpha, [
        (n == 0, "no unit has two or more ratings with ordered codes"),
        (
            de <= 0,
            "only one ordered code among units with two or more ratings, "
            "so expected disagreement D_e = 0 (0/0)",
        ),
    ]


def specific_from_sums(sums: FloatArray, lay: Layout, k: int) -> tuple[FloatArray, Conditions]:
    """Specific agreement of code ``k`` from the column sums, and where it is undefined."""
    num = lay.get(sums, "sa_num")[:, k]
    den = lay.get(sums, "sa_den")[:, k]
    return _div(num, den), [(den == 0, "code not used on any unit with two or more ratings")]


def evidence_from_sums(
    sums: FloatArray, lay: Layout, spec: Spec
) -> dict[str, tuple[FloatArray, Conditions]]:
    """Agreement on the evidence (same source, same citations) from the column sums, and where it is undefined."""
    b = sums.shape[0]
    out: dict[str, tuple[FloatArray, Conditions]] = {}
    labels = {
        "same_source": (0, spec.has_source, "no source locations were given"),
        "same_cites": (2, spec.has_cites, "no citation keys were given"),
        "same_source_and_cites": (
            4,
            spec.has_source and spec.has_cites,
            "source locations and citation keys were not both given",
        ),
    }
    for name, (start, present, missing_msg) in labels.items():
        if not spec.has_evidence or not present:
            out[name] = (np.full(b, np.nan), [(_always(b), missing_msg)])
            continue
        ev = lay.get(sums, "evidence")
        den, num = ev[:, start], ev[:, start + 1]
        what = {0: "a source", 2: "citation keys", 4: "a source and citation keys"}[start]
        out[name] = (
            _div(num, den),
            [(den == 0, f"no pair of raters agreeing on a code both gave {what}")],
        )
    return out


# ----------------------------------------------------------------------------------------
# Bootstrap


def _distinct_rows(stats: FloatArray) -> tuple[IntArray, IntArray]:
    """The first row of each distinct row of ``stats`` (bit for bit), and each row's kind."""
    bits = np.ascontiguousarray(stats).view(np.uint64)
    key = np.zeros(len(bits), dtype=np.uint64)
    for column in bits.T:  # a 64-bit hash of the row's bits (wrapping arithmetic)
        key = (key ^ (key >> np.uint64(31))) * np.uint64(0x9E3779B97F4A7C15) + column
    _, first, kind = np.unique(key, return_index=True, return_inverse=True)
    kind = kind.reshape(-1)
    if not (bits == bits[first[kind]]).all():  # two kinds of row share a hash: compare whole rows
        _, first, kind = np.unique(bits, axis=0, return_index=True, return_inverse=True)
        kind = kind.reshape(-1)
    return first, kind


def resampled_sums(stats: FloatArray, n_boot: int, rng: np.random.Generator) -> FloatArray:
    """Column sums of ``n_boot`` resamples of the rows of ``stats`` (with replacement).

    Units with identical statistics rows are interchangeable: how many units of each
    distinct row a resample holds is multinomial (n units, each row's share), so when there
    are few distinct rows (codes from a small set, a handful of raters: the usual case) the
    resamples are drawn as those counts, a few numbers per resample instead of one per unit,
    and summed in a fixed order (the same bits on any machine, whatever BLAS does).
    Otherwise each resample draws its units and the unit counts multiply ``stats``.
    """
    n_units = stats.shape[0]
    first, kind = _distinct_rows(stats)
    if len(first) <= min(_MAX_KINDS, n_units // 4):
        shares = np.bincount(kind, minlength=len(first)) / n_units
        counts = rng.multinomial(n_units, shares, size=n_boot).astype(np.float64)
        return np.einsum("bt,tk->bk", counts, stats[first])
    out = np.empty((n_boot, stats.shape[1]))
    # Unit counts are tallied a few resamples at a time, so the tally stays in cache.
    chunk = max(1, min(n_boot, _CHUNK_CELLS // max(n_units, 1)))
    tally = max(1, min(chunk, _TALLY_CELLS // max(n_units, 1)))
    offsets = (np.arange(tally, dtype=np.int64) * n_units)[:, None]
    weights = np.empty((chunk, n_units))
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        drawn = rng.integers(0, n_units, size=(size, n_units), dtype=np.int64)
        for first in range(0, size, tally):
            rows_now = min(tally, size - first)
            keys = drawn[first : first + rows_now] + offsets[:rows_now]
            weights[first : first + rows_now] = np.bincount(keys.ravel(), minlength=rows_now * n_units).reshape(
                rows_now, n_units)
        out[start : start + size] = weights[:size] @ stats
    return out
