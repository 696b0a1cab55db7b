"""Evidence agreement on quotes: when two reviewers agree on a code, do they quote the same passage?

For every cell and every pair of reviewers who gave it the same code and both quoted
something, the pair *overlaps* when a quote of one and a quote of the other share at least
one character of the same snapshot (same source, same version, intersecting spans: by their
raw offsets in the snapshot file when both quotes record them, else by their offsets in the
extracted text). The measure is the share of such pairs that overlap, per field and pooled,
with a percentile bootstrap interval over cells. It sits beside "same source", which
compares the pinned sources the two cells quote (by id).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np

from ..agreement import AgreementReport
from ..agreement._report import Coefficient
from ..errors import InvalidInput
from ..model import Cell, Protocol
from ..storage.workspace import Review
from .quotes import Anchor, anchor, pinned_source, place_quote
from .snapshots import Snapshots

MEASURE = "quote_overlap"
"""The measure's key in a group's ``evidence``."""

Span = tuple[str, int, int] | tuple[str, int, int, int | None, int | None]
"""(snapshot sha256, start, end) of one quote in the extracted text, and, where the quote records
them, (raw start, raw end) in the snapshot file's decoded text."""


def cell_spans(cell: Cell, protocol: Protocol, snapshots: Snapshots) -> list[Span]:
    """Where each of a cell's quotes lies. A quote without a recorded span is located in its
    snapshot when that is present; one that cannot be placed is left out."""
    spans = []
    for quote in cell.quotes:
        source = pinned_source(protocol, quote.source)
        if source is None or not source.has_snapshot:
            continue
        state = anchor(quote, source)
        if state is Anchor.UNKNOWN:
            continue
        snapshot = source.sha256 if state is Anchor.CURRENT else quote.snapshot
        if quote.start is not None and quote.end is not None:
            spans.append((snapshot, quote.start, quote.end, quote.raw_start, quote.raw_end))
        elif state is Anchor.CURRENT:
            try:
                found = place_quote(snapshots.haystack(source.sha256, source.media_type), quote)
            except InvalidInput:
                found = None
            if found is not None:
                spans.append((snapshot, found.start, found.end))
    return spans


def overlaps(a: Iterable[Span], b: Iterable[Span]) -> bool:
    """True when some span of ``a`` and some span of ``b`` share a character of the same snapshot.

    Snapshots are compared by the start of their hash, as quotes of earlier versions name them.
    """
    b = list(b)
    for span_a in a:
        for span_b in b:
            snap_a, start_a, end_a = span_a[:3]
            snap_b, start_b, end_b = span_b[:3]
            if len(span_a) == 5 and len(span_b) == 5 and None not in (*span_a[3:], *span_b[3:]):
                # Both quotes record where they lie in the raw file: the positions the reader saw.
                start_a, end_a, start_b, end_b = span_a[3], span_a[4], span_b[3], span_b[4]  # type: ignore[misc]
            same = snap_a.startswith(snap_b) or snap_b.startswith(snap_a)
            if same and start_a < end_b and start_b < end_a:  # type: ignore[operator]
                return True
    return False


def unit_counts(review: Review, fields: Iterable[str], exclude_codes: Iterable[str] = (),
                snapshots: Snapshots | None = None) -> dict[str, list[tuple[int, int]]]:
    """Per field: for every cell, (pairs agreeing on a code that both quoted, of them overlapping)."""
    snapshots = snapshots or Snapshots(review.paths)
    excluded = set(exclude_codes)
    result: dict[str, list[tuple[int, int]]] = {}
    for field_id in fields:
        rows = []
        for protocol in review.protocols:
            coded = [cell for cell in review.cells(protocol.id, field_id).values()
                     if cell.code is not None and cell.code not in excluded]
            if len(coded) < 2:
                continue
            spans = {cell.reviewer: cell_spans(cell, protocol, snapshots) for cell in coded}
            pairs = both = 0
            for a, b in combinations(sorted(coded, key=lambda c: c.reviewer), 2):
                if a.code != b.code or not spans[a.reviewer] or not spans[b.reviewer]:
                    continue
                pairs += 1
                both += overlaps(spans[a.reviewer], spans[b.reviewer])
            rows.append((pairs, both))
        result[field_id] = rows
    return result


def coefficient(rows: list[tuple[int, int]], *, bootstrap: int, seed: int | None) -> Coefficient:
    """The share of overlapping pairs, with a percentile bootstrap interval over cells."""
    counts = np.array(rows, dtype=float).reshape(-1, 2)
    pairs = counts[:, 0].sum() if len(counts) else 0.0
    if pairs == 0:
        return Coefficient(None, note="no pair of reviewers agreeing on a code both quoted a passage")
    value = float(counts[:, 1].sum() / pairs)
    if not bootstrap:
        return Coefficient(value)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(counts), size=(bootstrap, len(counts)))
    sums = counts[drawn].sum(axis=1)
    defined = sums[:, 0] > 0
    ratios = sums[defined, 1] / sums[defined, 0]
    if not len(ratios):
        return Coefficient(value)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return Coefficient(value, float(low), float(high))


def add_quote_overlap(report: AgreementReport, review: Review, *, exclude_codes: Iterable[str] = (),
                      bootstrap: int = 0, seed: int | None = None) -> None:
    """Add :data:`MEASURE` to every group of ``report`` (fields, then ``all``), when any cell has quotes.

    A review without quotes gets nothing, so its agreement report stays exactly as it was.
    """
    if not any(cell.quotes for cell in review.all_cells()):
        return
    fields = [group.group for group in report.groups if group.group != "all"]
    rows = unit_counts(review, fields, exclude_codes)
    for group in report.groups:
        chosen = [row for field_id in fields for row in rows[field_id]] if group.group == "all" \
            else rows.get(group.group, [])
        group.evidence[MEASURE] = coefficient(chosen, bootstrap=bootstrap, seed=seed)
