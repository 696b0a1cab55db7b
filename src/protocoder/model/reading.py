"""What a reviewer has had on screen of a pinned snapshot: block ranges and their share.

Part of the model (no I/O); importable from :mod:`protocoder.model`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

_RANGES_PATTERN = re.compile(r"^\s*(\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*)?\s*$")


def parse_ranges(text: str) -> tuple[tuple[int, int], ...] | None:
    """``"0-12,15,18-40"`` → ((0, 12), (15, 15), (18, 40)), sorted and merged; None when malformed
    (not numbers and ranges joined by commas, or a range that ends before it starts)."""
    if not _RANGES_PATTERN.match(text):
        return None
    ranges = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, _, last = part.partition("-")
        start, end = int(first), int(last or first)
        if end < start:
            return None
        ranges.append((start, end))
    return merge_ranges(ranges)


def merge_ranges(ranges: Any) -> tuple[tuple[int, int], ...]:
    """Inclusive ranges sorted, with overlapping and touching ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def ranges_text(ranges: tuple[tuple[int, int], ...]) -> str:
    """The compact form of :func:`parse_ranges`: ``"0-12,15,18-40"``."""
    return ",".join(str(start) if start == end else f"{start}-{end}" for start, end in ranges)


@dataclass(frozen=True)
class SourceReading:
    """What one reviewer has had on screen of one pinned snapshot: which of its blocks.

    ``blocks`` is how many blocks (paragraphs, headings, list items, code blocks, table rows)
    the snapshot's text has; ``read`` holds the block numbers seen (0-based), as inclusive
    ranges. Kept in the reviewer's own codes file, keyed by the snapshot's SHA-256, so it
    travels with their codes and says nothing of other reviewers.
    """

    blocks: int
    read: tuple[tuple[int, int], ...] = ()

    @property
    def count(self) -> int:
        """How many blocks were on screen."""
        return sum(end - start + 1 for start, end in self.read)

    @property
    def share(self) -> float:
        """The share of the blocks read, 0 to 1."""
        return min(self.count / self.blocks, 1.0) if self.blocks else 0.0

    @property
    def percent(self) -> str:
        """The share as a whole percentage, never rounded up to 100 % before every block is read."""
        share = self.share
        return "100%" if self.count >= self.blocks else f"{min(int(share * 100 + 0.5), 99)}%"

    def with_blocks(self, blocks: Any) -> SourceReading:
        """This reading with more block numbers seen (the block count stays)."""
        added = [(b, b) for b in blocks if 0 <= b < self.blocks]
        return replace(self, read=merge_ranges([*self.read, *added]))

    def union(self, other: SourceReading) -> SourceReading:
        """Both readings of the same snapshot joined (a larger block count wins: the same text counted
        by a newer extractor)."""
        blocks = max(self.blocks, other.blocks)
        return SourceReading(blocks, tuple((s, min(e, blocks - 1)) for s, e in
                                           merge_ranges([*self.read, *other.read]) if s < blocks))
