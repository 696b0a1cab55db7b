"""A candidate passage as ``find`` and the reader list it, and the row of a table candidate that matches the
query best (a table is one passage: a row a line, its cells separated by tabs, in the extracted text)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .kinds import code_units
from .query import words


@dataclass(frozen=True)
class Candidate:
    """A passage ranked for one field: where it is, its text and its score (higher is better)."""

    source: str
    heading: str
    start: int
    end: int
    raw_start: int | None
    raw_end: int | None
    text: str
    score: float
    focus_start: int | None = None
    focus_end: int | None = None
    """When the passage is a table (a reference table too): the row that matches the query best
    (:func:`best_row`), as extracted-text offsets inside ``start``..``end``; None for other passages. A table is
    one passage, and what a reviewer looks for and quotes in it is one row (one flag, one option).
    A file listing (``listing``) is read the same way, a line of it a row."""
    listing: bool = False
    """Whether the passage is a file listing (its rows are lines of a code block) rather than a table."""
    step: bool = False
    """Whether the passage is a step of a code block: commands written without a blank line between them
    (``kinds.code_groups``), read together; its focus is the command that matches the query best."""

    @property
    def row_name(self) -> str:
        """What a row of this candidate is called where it is shown: ``line`` of a listing, ``command`` of a step
        of a code block, ``row`` of a table."""
        return "line" if self.listing else "command" if self.step else "row"

    @property
    def whole_name(self) -> str:
        """What the candidate's passage is called where its row is placed: ``listing``, ``step``, ``table``."""
        return "listing" if self.listing else "step" if self.step else "table"

    @property
    def focus(self) -> tuple[int, int]:
        """What jumping to the candidate selects and quoting it quotes: its best row, else the whole passage."""
        if self.focus_start is not None and self.focus_end is not None:
            return self.focus_start, self.focus_end
        return self.start, self.end

    @property
    def focus_text(self) -> str:
        """The text of :attr:`focus` (the best row of a table, as extracted: cells separated by tabs)."""
        start, end = self.focus
        return self.text[start - self.start:end - self.start]

    @property
    def shown_text(self) -> str:
        """What a list of candidates shows of it: its best row with the cells joined by `` · `` (a table), else
        its text."""
        if self.focus_start is None:
            return self.text
        if self.step:
            return self.focus_text
        return " · ".join(cell.strip() for cell in self.focus_text.split("\t"))

    def focus_place(self) -> tuple[int, int] | None:
        """(the best row's number, the number of rows) counting the rows under the header (the header as row 1
        of 1 when it is the table's only row); None when the candidate has no best row."""
        if self.focus_start is None:
            return None
        rows = table_rows(self.text)
        body = [(start, end) for start, end, _ in unit_words(self.text)] if self.step else rows[1:] or rows
        here = self.focus_start - self.start
        number = next((n for n, (start, end) in enumerate(body, 1) if start <= here < end), None)
        return (number, len(body)) if number is not None else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``protocoder find --format json``)."""
        return {"source": self.source, "heading": self.heading, "start": self.start, "end": self.end,
                "raw_start": self.raw_start, "raw_end": self.raw_end, "score": self.score, "text": self.text,
                "focus_start": self.focus_start, "focus_end": self.focus_end, "listing": self.listing,
                "step": self.step}


def table_rows(text: str) -> list[tuple[int, int]]:
    """The rows of a table passage's ``text`` (a row a line, as the extraction writes them): each non-blank
    line's offsets in ``text``, without the spaces around it; the header first."""
    rows = []
    for line in re.finditer(r"[^\n]+", text):
        start, end = line.span()
        row = line.group()
        if row.strip():
            rows.append((start + len(row) - len(row.lstrip()), end - (len(row) - len(row.rstrip()))))
    return rows


def row_words(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """The rows of a table passage's ``text`` that :func:`best_row` chooses from, with their distinct words
    (``query.words``, sorted): the rows under the header, or the header when it is the only row."""
    rows = table_rows(text)
    return [(start, end, tuple(sorted(set(words(text[start:end]))))) for start, end in (rows[1:] or rows)]


def unit_words(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """The commands of a code passage's ``text`` (``kinds.code_units``: a command with its comment, a comment, a
    continued line) with their distinct words, as :func:`row_words` gives a table's rows."""
    return [(start, end, tuple(sorted(set(words(text[start:end]))))) for start, end, _ in
            code_units(text, 0, len(text))]


def best_row(rows: Sequence[tuple[int, int, tuple[str, ...]]], weighted: dict[str, float]) -> tuple[int, int] | None:
    """Of a table's ``rows`` (:func:`row_words`), the one that matches a query best, as offsets in the passage's
    text: the row whose distinct words weigh most in ``weighted`` (the query's words weighed by their weight and
    their rarity, ``PassageIndex._rarity_weighted``); ties go to the first. None when there is no row."""
    best, best_weight = None, -1.0
    for start, end, distinct in rows:
        # Summed in the words' sorted order: the same sum, to the bit, on every run.
        weight = sum(weighted.get(word, 0.0) for word in distinct)
        if weight > best_weight:
            best, best_weight = (start, end), weight
    return best
