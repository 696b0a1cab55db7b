"""Drift: quotes moved to a source's new version or left anchored to the old one.

Drift depends on hashes only, so ``status`` counts it without reading any snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ...model import Protocol, Source
from ...storage.store import CellUpdate, Store
from ...storage.workspace import Review
from ..snapshots import Snapshots, snapshot_file
from .anchors import SNAPSHOT_REF_LENGTH, Anchor, QuoteRef, all_quotes, anchor
from .locating import locate_quote


def drifted(review: Review) -> list[QuoteRef]:
    """Every quote anchored to an earlier version of its source and not confirmed since."""
    return [ref for ref in all_quotes(review) if ref.source is not None and anchor(ref.quote, ref.source)
            is Anchor.DRIFTED]


def reanchor(review: Review, protocol: Protocol, source: Source, old_hashes: Iterable[str],
             snapshots: Snapshots) -> tuple[list[QuoteRef], list[QuoteRef]]:
    """After ``source`` got a new snapshot: move every quote of it that is still found to the new
    snapshot, and anchor the others to the version they came from. Returns (moved, drifted).

    ``old_hashes`` are the versions a quote without a ``snapshot`` key belonged to (the one
    just replaced). Writes each changed reviewer file once, through the store.
    """
    rubric = review.require_valid()
    old = next(iter(old_hashes), "")
    moved: list[QuoteRef] = []
    lost: list[QuoteRef] = []
    changed: list[CellUpdate] = []
    for cell in review.all_cells():
        if cell.protocol != protocol.id or not any(q.source == source.id for q in cell.quotes):
            continue
        quotes = []
        for index, quote in enumerate(cell.quotes):
            if quote.source != source.id:
                quotes.append(quote)
                continue
            if quote.snapshot and anchor(quote, source) in (Anchor.CURRENT, Anchor.UNKNOWN):
                quotes.append(quote)  # of the new version already, or for validate to report
                continue
            found = locate_quote(replace(quote, start=None, end=None), source, snapshots)
            if found is not None:
                moved.append(QuoteRef(cell, index, found, source))
                quotes.append(found)
            else:
                if not quote.snapshot and old:
                    quote = replace(quote, snapshot=old[:SNAPSHOT_REF_LENGTH])
                lost.append(QuoteRef(cell, index, quote, source))
                quotes.append(quote)
        if tuple(quotes) != cell.quotes:
            changed.append(CellUpdate(cell.protocol, cell.field, cell.reviewer, {"quotes": tuple(quotes)}))
    if changed:
        Store(review.paths).write_cells(changed, rubric)
    return moved, lost


def status_lines(review: Review) -> list[str]:
    """What ``status`` says about evidence: quotes, snapshots, and every cell with drifted evidence.

    Reads no snapshot (hashes only), so it costs nothing on a large review.
    """
    refs = list(all_quotes(review))
    pinned = [source for protocol in review.protocols for source in protocol.sources if source.has_snapshot]
    if not refs and not pinned:
        return []
    absent = sum(1 for source in pinned if not snapshot_file(review.paths, source.sha256, source.media_type).is_file())
    cells = {(ref.key, ref.cell.reviewer) for ref in refs}
    line = (f"Evidence: {len(refs)} quote{'s' if len(refs) != 1 else ''} in {len(cells)} cell"
            f"{'s' if len(cells) != 1 else ''}; {len(pinned)} source snapshot{'s' if len(pinned) != 1 else ''}")
    if absent:
        line += f" ({absent} not present here)"
    lines = ["", line]
    lost = [ref for ref in refs if ref.source is not None and anchor(ref.quote, ref.source) is Anchor.DRIFTED]
    by_cell: dict[tuple[str, str], list[QuoteRef]] = {}
    for ref in lost:
        by_cell.setdefault((ref.key, ref.cell.reviewer), []).append(ref)
    if by_cell:
        lines.append(f"Drifted evidence ({len(by_cell)} cell{'s' if len(by_cell) != 1 else ''}, {len(lost)} "
                     f"quote{'s' if len(lost) != 1 else ''}; re-quote or: protocoder quote confirm):")
        for (key, reviewer), group in by_cell.items():
            sources = ", ".join(sorted({ref.quote.source for ref in group}))
            lines.append(f"  {key} ({reviewer}): {len(group)} quote{'s' if len(group) != 1 else ''} of {sources} "
                         "not in the current version")
    return lines
