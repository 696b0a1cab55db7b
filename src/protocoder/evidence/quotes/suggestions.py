"""The closest passage of a snapshot, offered when a quote is not found in it."""

from __future__ import annotations

from ...model import Quote, Source
from ..extract import Block, Extracted
from ..locate import CLOSEST_LENGTH, Closest, Haystack, normalise, sentence_around
from ..snapshots import Snapshots, location_text, position
from .anchors import printable


def closest_passage(extracted: Extracted, haystack: Haystack, text: str) -> Closest | None:
    """The passage of the text most like ``text``, aligned so that it can be quoted as it is.

    It starts and ends at whole words: a list item, table row or heading is taken whole, a
    paragraph from the start of the sentence to its end. A block the match only grazes (the
    end of the previous list item) is left out. None when nothing is alike.
    """
    closest = haystack.closest(text)
    if closest is None:
        return None
    start, end = closest.start, closest.end
    blocks = [b for b in extracted.blocks if b.start < end and b.end > start]
    if blocks:
        size = max(1, end - start)

        def grazed(block: Block) -> bool:
            # Little of the block is in the match, and little of the match in the block (a match
            # over many short list items keeps them all).
            overlap = min(end, block.end) - max(start, block.start)
            return overlap < 0.25 * min(size, block.end - block.start)

        while len(blocks) > 1 and grazed(blocks[0]):
            blocks.pop(0)
        while len(blocks) > 1 and grazed(blocks[-1]):
            blocks.pop()
        low, high = blocks[0].start, blocks[-1].end
        start, end = max(start, low), min(end, high)
        if blocks[0].kind in _WHOLE_BLOCKS:
            start = low
        if blocks[-1].kind in _WHOLE_BLOCKS:
            end = high
        sentence = sentence_around(extracted.text, start, max(start + 1, end))
        start, end = max(low, min(start, sentence.start)), min(high, max(end, sentence.end))
    else:
        sentence = sentence_around(extracted.text, start, end)
        start, end = sentence.start, sentence.end
    passage = extracted.text[start:end]
    if not passage.strip():
        return None
    # How alike the passage offered is, not the raw match it was widened from (both cut to the
    # length the search compares, so that a long quote costs no more than a short one).
    needle = normalise(text)[:CLOSEST_LENGTH]
    offered = normalise(passage)[:CLOSEST_LENGTH + CLOSEST_LENGTH // 4]
    from difflib import SequenceMatcher  # only a quote not found needs it (about 1 ms to load)

    ratio = SequenceMatcher(None, needle, offered, autojunk=False).ratio()
    return Closest(start, end, ratio)


_WHOLE_BLOCKS = frozenset({"list_item", "table_row", "heading"})
ALIKE = 0.3
"""How alike (0–1) a passage must be to be offered as the closest one."""


def closest_text(extracted: Extracted, closest: Closest) -> str:
    """A closest passage as it is shown and accepted: its text on one line, whole."""
    return printable(" ".join(extracted.text[closest.start:closest.end].split()))


def not_found_message(quote: Quote, source: Source, haystack: Haystack, snapshots: Snapshots) -> str:
    """Why a quote is refused, with the closest passage of the snapshot, whole."""
    file = snapshots.paths.show(snapshots.state(source.sha256, source.media_type).file)
    message = f"quote not found in source {source.id!r} ({file})"
    extracted = snapshots.text(source.sha256, source.media_type)
    closest = closest_passage(extracted, haystack, quote.text)
    if closest is None or closest.ratio < ALIKE:
        return message + "; no passage of it is alike"
    page, section = position(extracted, closest.start)
    where = location_text(page, section)
    return (message + f"; closest passage{f' ({where})' if where else ''}, {closest.ratio:.0%} alike: "
            f"\"{closest_text(extracted, closest)}\"")
