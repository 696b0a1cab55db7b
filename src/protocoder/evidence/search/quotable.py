"""Whether a passage can be quoted as it stands, decided for many passages in about one pass over the text.

The reader quotes a candidate's range as :func:`~protocoder.evidence.reading.quote_text` makes it and
looks it up with :class:`~protocoder.evidence.locate.Haystack` (what ``quote add`` and ``validate``
use): a passage can be quoted when that quote is found at its own place or anywhere else in the text.
Nearly every passage is found at its own place. One that is not (a table or a list whose lines the
quote joins) was looked for in the whole text, one search each: a plain-text source of 12 MB had 2,500
of them, 9 ms each, 23 s of a 31 s cold ``find``. :func:`unquotable` answers the same question for
all the passages of one step at once; :func:`occurring` looks for all the quotes in one walk
over the text's spaces.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from ..locate import Haystack, normalise
from ..reading import quote_text

ANCHOR_CHARS = 16
"""How many characters from a quote's first space (the space included) are looked up at each space of the text."""

FEW_QUOTES = 32
"""Up to this many quotes are each looked for alone (one search of the text in C each); past it,
one walk over the text's spaces in Python (30 to 60 times one search) is cheaper."""


class LazyHaystack(Haystack):
    """The locate code's :class:`Haystack` of one text, prepared only when a search needs it.

    Nearly every passage is found at its own place (``matches_at`` reads the text alone); the
    comparison form and its offset maps, several bytes for every character of the text (hundreds of
    MB for a million-line source), are made on the first search of the whole text.
    """

    def __init__(self, text: str) -> None:  # noqa: D107 - the rest is made by __getattr__ when first read
        self.text = text

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute not set yet: Haystack's own are made all at once, as Haystack makes them.
        if name.startswith("__") or self.__dict__.get("_prepared"):
            raise AttributeError(name)
        self._prepared = True
        Haystack.__init__(self, self.text)
        return getattr(self, name)


def unquotable(text: str, haystack: Haystack, spans: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """The ranges of ``spans`` whose quote the reader could not find, decided together.

    A range ``(start, end)`` is quotable when ``haystack.matches_at(quote, start, end) or
    haystack.find(quote) is not None`` for ``quote = quote_text(text[start:end])`` (an empty quote is
    not). Those not found at their own place are looked for in the whole text in one walk
    (:func:`occurring`). Only the few ranges not found are kept, not an answer for every range (a
    12 MB source has 100,000 of them).
    """
    missing: set[tuple[int, int]] = set()
    elsewhere: dict[str, list[tuple[int, int]]] = {}
    for span in spans:
        start, end = span
        body = text[start:end]
        quote = quote_text(body)
        if not quote:
            missing.add(span)
        elif quote == body and 0 <= start < end <= len(text):
            continue  # what matches_at says, without normalising the same text twice (7 in 10)
        elif haystack.matches_at(quote, start, end):
            continue
        elif needle := normalise(quote):
            elsewhere.setdefault(needle, []).append(span)
        else:
            missing.add(span)  # Haystack.find finds nothing for a quote with no comparison form
    if elsewhere:  # else the comparison form of the whole text is not made at all
        found = occurring(haystack.norm, elsewhere)
        missing.update(span for needle, needle_spans in elsewhere.items() if needle not in found
                       for span in needle_spans)
    return missing


def occurring(norm: str, needles: Collection[str]) -> set[str]:
    """The ``needles`` that occur in ``norm``: for each, what ``needle in norm`` says.

    Past :data:`FEW_QUOTES` needles, ``norm`` is walked once: a needle with a space in it occurs at
    ``p`` only if its first space lands on a space of ``norm`` followed by the same characters, so
    each space of ``norm`` is looked up in a table of those anchors, and the needles whose anchor is
    there are compared in full at that place. A needle with no space is searched for alone.
    """
    if len(needles) <= FEW_QUOTES:
        return {needle for needle in needles if needle in norm}
    found: set[str] = set()
    # anchor length -> anchor -> the needles with that anchor, each with the offset of its first space
    anchors: dict[int, dict[str, list[tuple[str, int]]]] = {}
    for needle in needles:
        space = needle.find(" ")
        if space < 0:
            if needle in norm:
                found.add(needle)
            continue
        anchor = needle[space:space + ANCHOR_CHARS]
        anchors.setdefault(len(anchor), {}).setdefault(anchor, []).append((needle, space))
    by_length = sorted(anchors.items())
    position = norm.find(" ")
    while position >= 0 and by_length:
        for length, table in by_length:
            waiting = table.get(norm[position:position + length])
            if waiting is None:
                continue
            for needle, space in waiting:
                if position >= space and needle not in found and norm.startswith(needle, position - space):
                    found.add(needle)
        position = norm.find(" ", position + 1)
    return found
