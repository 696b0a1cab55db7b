"""The edits the coding app writes: a cell, a note, or what was read of a snapshot, each with the
disk value it was based on (what the write queue compares before writing). No Textual here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Cell, SourceReading


def cell_content(cell: Cell | None) -> tuple[Any, ...]:
    """What a reviewer wrote in a cell, without the bookkeeping (version, time)."""
    if cell is None:
        return (None, "", "", (), ())
    return (cell.code, cell.source, cell.basis, tuple(cell.cites), tuple(cell.quotes))


@dataclass(frozen=True)
class CellEdit:
    """A reviewer's version of one cell, to be written."""

    cell: Cell
    base: tuple[Any, ...]
    """The cell's content on disk when the edit was made (see :func:`cell_content`)."""

    @property
    def protocol(self) -> str:
        return self.cell.protocol

    @property
    def key(self) -> tuple[str, str, str]:
        return ("cell", self.cell.protocol, self.cell.field)


@dataclass(frozen=True)
class NoteEdit:
    """A reviewer's version of one descriptive note, to be written."""

    protocol: str
    prompt: str
    text: str
    base: str
    """The note's text on disk when the edit was made."""

    @property
    def key(self) -> tuple[str, str, str]:
        return ("note", self.protocol, self.prompt)


@dataclass(frozen=True)
class ReadingEdit:
    """What the reviewer has had on screen of one snapshot, to be recorded in their codes file.

    Reading only grows: the store joins it with what the file records, so it never conflicts
    with another version of the file and never asks; a file changed on disk since the session
    read it is left alone (the next save, after the reviewer's own edits are settled, carries
    everything read so far)."""

    protocol: str
    sha256: str
    reading: SourceReading
    base: None = None
    """Always None: a reading edit has nothing to compare with (see :meth:`Session.disk_value`)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return ("reading", self.protocol, self.sha256)


Edit = CellEdit | NoteEdit | ReadingEdit

READING_NOT_WRITTEN = "reading-not-written"
"""What :meth:`Session.write` returns for a reading edit it left unwritten (the file changed on disk)."""
