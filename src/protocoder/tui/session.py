"""What the coding app knows about one workspace and one reviewer, with no UI in it.

The screens read protocols, sheets and progress from a :class:`Session` and hand it
edits; the session calls :class:`protocoder.storage.store.Store` for every write and keeps what
it last read or wrote (the *disk view*) together with each file's fingerprint, so that a
save never overwrites a file that changed on disk since (see :mod:`.saving`).

This module imports no Textual: it is plain Python that tests can drive directly.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, ProtocoderError, Rejected
from ..lifecycle.amend import record_change, removal_problem
from ..lifecycle.changes import blind_released, current_released_cells, released_cell_codes
from ..model import Cell, Protocol, Rubric, Sheet, Source, SourceReading
from ..storage.files import try_hold_lock
from ..storage.paths import Paths, open_workspace
from ..storage.store import SheetConflict, Store, coded_cell_count, now_iso
from ..storage.workspace import Review, load_review
from .edits import READING_NOT_WRITTEN, CellEdit, Edit, NoteEdit, ReadingEdit, cell_content

__all__ = ["BROKEN", "DONE", "IN_PROGRESS", "NOT_STARTED", "READING_NOT_WRITTEN", "CellEdit", "Edit", "LoadFailed",
           "NoteEdit", "Progress", "ReadingEdit", "Session", "cell_content", "split_cites"]

NOT_STARTED = "not started"
IN_PROGRESS = "in progress"
DONE = "done"
BROKEN = "file error"

CITE_SPLIT = re.compile(r"[\s,;]+")


def split_cites(text: str) -> tuple[str, ...]:
    """Citation keys typed as ``a, b c``: split on commas, semicolons and spaces, each key once."""
    seen: dict[str, None] = {}
    for key in CITE_SPLIT.split(text.strip()):
        if key:
            seen.setdefault(key, None)
    return tuple(seen)


@dataclass(frozen=True)
class Progress:
    """One protocol's progress for the session's reviewer."""

    coded: int
    """Fields with a code."""
    total: int
    """Fields in the rubric."""
    status: str
    """:data:`NOT_STARTED`, :data:`IN_PROGRESS`, :data:`DONE` or :data:`BROKEN`."""


class LoadFailed(Exception):
    """The workspace cannot be coded (no usable rubric); carries the problems."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


class Session:
    """One reviewer coding one workspace: the loaded review and the disk view of their sheets."""

    def __init__(self, root: Path, reviewer: str, *, clock: Callable[[], datetime] = datetime.now) -> None:
        self.paths: Paths = open_workspace(root)
        self.store = Store(self.paths)
        self.reviewer = reviewer
        self.clock = clock
        """What "now" is for the saved indicator (tests freeze it)."""
        self.review: Review | None = None
        self.rubric: Rubric | None = None
        self.protocols: list[Protocol] = []
        self.sheets: dict[str, Sheet] = {}
        """The disk view: each sheet as last read or written by this session."""
        self.fingerprints: dict[str, str | None] = {}
        """Fingerprint of each sheet file as last read or written (only sheets opened for coding)."""
        self.broken: dict[str, list[Problem]] = {}
        """Sheets that could not be read, by protocol id."""
        self.bib_keys: list[str] = []
        """Citation keys of ``references.bib``, sorted."""
        self.read_only = False
        self._lock: Any = None
        self.release: str | None = None
        """Label of the latest release, when the review has one."""
        self.released: dict[tuple[str, str], str | None] = {}
        """This reviewer's code of each released cell, as released."""
        self.reasons: dict[tuple[str, str], str] = {}
        """Reasons given for changing released cells, until the change is written."""
        self._noted: set[str] = set()
        self.current: dict[str, dict[str, Any]] = {}
        """Each released cell as the current view shows it (release + corrections), by ``protocol/field``."""
        self.messages: list[str] = []
        """What writing a released change did (a correction recorded, or why not), for the UI."""

    # ------------------------------------------------------------------ start-up

    def hold_lock(self) -> bool:
        """Take this reviewer's session lock; False (and read-only) when another session holds it.

        The handle is kept for the life of the session: the lock dies with the process.
        """
        if self._lock is None:
            self._lock = try_hold_lock(self.paths.state_dir / f"session-{self.reviewer}.lock")
        self.read_only = self._lock is None
        return not self.read_only

    def release_lock(self) -> None:
        """Give the session lock back (the app does so on exit)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def load(self) -> None:
        """Read the workspace (slow for large reviews: the app calls it in a thread).

        Raises :class:`LoadFailed` when there is no usable rubric.
        """
        review = load_review(self.paths.root, reviewer=self.reviewer)
        if review.rubric is None:
            rubric_errors = [p for p in review.errors if "rubric" in p.path or "rubric" in p.message
                             or p.path.endswith("protocoder.yaml")]
            raise LoadFailed(rubric_errors or review.errors or
                             [Problem(self.paths.show(self.paths.rubric_dir), 0, 0, "no usable rubric")])
        self.review = review
        self.rubric = review.rubric
        released = released_cell_codes(review, self.reviewer)
        self.release, self.released = released if released is not None else (None, {})
        self.current = blind_released(current_released_cells(self.paths)) if released is not None else {}
        self.protocols = list(review.protocols)
        self.sheets = {sheet.protocol: sheet for sheet in review.sheets}
        self.bib_keys = sorted(review.bibliography.entries)
        self.broken = {}
        for protocol in self.protocols:
            if protocol.id in self.sheets:
                continue
            path = self.paths.sheet_file(protocol.id, self.reviewer)
            shown = self.paths.show(path)
            problems = [p for p in review.errors if p.path == shown]
            if problems:
                self.broken[protocol.id] = problems

    @property
    def workspace_problems(self) -> list[Problem]:
        """Problems found on loading (any severity)."""
        return list(self.review.problems) if self.review else []

    # ------------------------------------------------------------------ reading

    def protocol(self, protocol_id: str) -> Protocol:
        """The protocol with this id (KeyError if none)."""
        for protocol in self.protocols:
            if protocol.id == protocol_id:
                return protocol
        raise KeyError(protocol_id)

    def index_of(self, protocol_id: str) -> int:
        """Position of a protocol in display order."""
        return [p.id for p in self.protocols].index(protocol_id)

    def sheet(self, protocol_id: str) -> Sheet:
        """The disk view of this reviewer's sheet for a protocol (empty when there is none)."""
        sheet = self.sheets.get(protocol_id)
        if sheet is None:
            sheet = Sheet(protocol_id, self.reviewer, self.paths.sheet_file(protocol_id, self.reviewer))
        return sheet

    def read_sheet(self, protocol_id: str) -> Sheet:
        """Read a sheet from disk for coding and remember its fingerprint.

        Raises :class:`InvalidInput` (file and line) for a malformed file; the protocol
        is then marked broken and nothing is ever written to it.
        """
        try:
            sheet, fingerprint = self.store.read_sheet(protocol_id, self.reviewer, self.rubric)
        except InvalidInput as exc:
            self.broken[protocol_id] = list(exc.problems)
            raise
        self.broken.pop(protocol_id, None)
        self.sheets[protocol_id] = sheet
        self.fingerprints[protocol_id] = fingerprint
        return sheet

    def progress(self, protocol_id: str) -> Progress:
        """Cells coded, fields in the rubric and status of one protocol."""
        assert self.rubric is not None
        total = len(self.rubric.fields)
        if protocol_id in self.broken:
            return Progress(0, total, BROKEN)
        sheet = self.sheets.get(protocol_id)
        cells = sheet.cells if sheet else {}
        field_ids = self.rubric.field_ids
        coded = sum(1 for fid in field_ids if fid in cells and cells[fid].is_coded)
        complete = sum(1 for fid in field_ids if fid in cells and cells[fid].is_complete(self.rubric))
        if complete == total:
            status = DONE
        elif coded or (sheet is not None and (sheet.notes or any(cells.values()))):
            status = IN_PROGRESS
        else:
            status = NOT_STARTED
        return Progress(coded, total, status)

    def totals(self) -> tuple[int, int, int]:
        """(cells coded, cells in the review, protocols done) over every protocol."""
        coded = total = done = 0
        for protocol in self.protocols:
            progress = self.progress(protocol.id)
            coded += progress.coded
            total += progress.total
            done += progress.status == DONE
        return coded, total, done

    def first_open_field(self, sheet: Sheet) -> int:
        """Index of the first field not coded; else the first incomplete; else 0."""
        assert self.rubric is not None
        fields = self.rubric.field_ids
        for index, fid in enumerate(fields):
            cell = sheet.cells.get(fid)
            if cell is None or not cell.is_coded:
                return index
        for index, fid in enumerate(fields):
            if not sheet.cells[fid].is_complete(self.rubric):
                return index
        return 0

    # ------------------------------------------------------------------ writing cells and notes

    def cell_edit(self, cell: Cell) -> CellEdit:
        """An edit of ``cell``, based on the disk view of it."""
        return CellEdit(cell, cell_content(self.sheet(cell.protocol).cells.get(cell.field)))

    def note_edit(self, protocol_id: str, prompt_id: str, text: str) -> NoteEdit:
        """An edit of a note, based on the disk view of it."""
        return NoteEdit(protocol_id, prompt_id, text, self.sheet(protocol_id).notes.get(prompt_id, ""))

    def reading_edit(self, protocol_id: str, sha256: str, blocks: int, seen: Iterable[int]) -> ReadingEdit:
        """An edit recording that the blocks ``seen`` of snapshot ``sha256`` (``blocks`` in all) were on
        screen, joined with what the disk view records."""
        reading = SourceReading(blocks).with_blocks(seen)
        known = self.sheet(protocol_id).reading.get(sha256)
        return ReadingEdit(protocol_id, sha256, reading.union(known) if known is not None else reading)

    def reading_of(self, protocol_id: str, sha256: str) -> SourceReading | None:
        """What this reviewer has read of a snapshot, as the disk view records it."""
        return self.sheet(protocol_id).reading.get(sha256)

    def disk_value(self, edit: Edit) -> Any:
        """The disk view of what ``edit`` changes, comparable with ``edit.base``."""
        if isinstance(edit, ReadingEdit):
            return None
        sheet = self.sheet(edit.protocol)
        if isinstance(edit, CellEdit):
            return cell_content(sheet.cells.get(edit.cell.field))
        return sheet.notes.get(edit.prompt, "")

    def other_version(self, edit: Edit, sheet: Sheet | None) -> Cell | str | None:
        """What ``sheet`` holds where ``edit`` writes: a cell (None when absent) or note text."""
        if isinstance(edit, ReadingEdit):
            return None
        if isinstance(edit, CellEdit):
            return sheet.cells.get(edit.cell.field) if sheet is not None else None
        return sheet.notes.get(edit.prompt, "") if sheet is not None else ""

    def stamp(self, edit: Edit) -> Edit:
        """Fill in the rubric version and time of a coded cell, as the store would.

        Stamping here keeps the disk view equal to what is written. Every save of a coded
        cell re-stamps it: the reviewer has looked at it again under the current rubric.
        """
        assert self.rubric is not None
        if isinstance(edit, CellEdit):
            cell = edit.cell
            if cell.code is None:
                cell = replace(cell, rubric_version="", coded_at="")
            else:
                cell = replace(cell, rubric_version=self.rubric.version, coded_at=now_iso())
            return replace(edit, cell=cell)
        return edit

    def write(self, edit: Edit) -> str:
        """Write one edit with the fingerprint last seen (thread-safe: touches no session state).

        Raises :class:`protocoder.storage.store.SheetConflict` when the file changed on disk.
        """
        assert self.rubric is not None
        expected = self.fingerprints.get(edit.protocol)
        if isinstance(edit, CellEdit):
            fingerprint = self.store.save_cell(edit.cell, self.rubric, expected=expected)
            reason = self.reasons.get((edit.protocol, edit.cell.field))
            key = f"{edit.protocol}/{edit.cell.field}"
            if self.decided(key):
                self._note_proposal(key)
            elif reason is not None:
                self._record_correction(edit.cell, reason)
            elif key in self.current:
                self._note_unsettled(edit.cell)
            return fingerprint
        if isinstance(edit, ReadingEdit):
            try:
                return self.store.save_reading(edit.protocol, self.reviewer, edit.sha256, edit.reading,
                                               expected=expected)
            except SheetConflict:
                # Someone else's change is on disk: never asked about for a reading; the reviewer's
                # next save settles the file and a later reading save carries this one.
                return READING_NOT_WRITTEN
        return self.store.save_note(edit.protocol, self.reviewer, edit.prompt, edit.text, self.rubric,
                                    expected=expected)

    def needs_reason(self, cell: Cell) -> bool:
        """True when saving ``cell`` changes the reviewer's own cell of a released cell (code or
        evidence) and no reason was given yet: a correction may follow, recorded with the reason.

        Decided only from what this reviewer may see (the published record in :attr:`current` and
        their own file): whether the change settles the cell depends on the other reviewers, whose
        files a reviewer's process never reads, so the question is asked for every such change.
        """
        key = f"{cell.protocol}/{cell.field}"
        if key not in self.current or (cell.protocol, cell.field) in self.reasons or self.decided(key):
            return False
        return cell_content(cell) != cell_content(self.sheet(cell.protocol).cells.get(cell.field))

    def decided(self, key: str) -> bool:
        """True when the released cell ``key`` is adjudicated or corrected in the current view: a
        reviewer's session never changes it alone (an adjudicator decides)."""
        current = self.current.get(key)
        return current is not None and (current.get("status") == "adjudicated" or bool(current.get("corrected")))

    def _note_proposal(self, key: str) -> None:
        if key in self._noted:
            return
        self._noted.add(key)  # once per cell and session: typing saves often
        self.messages.append(f"{key} was decided by an adjudicator in release {self.release}: your change is saved in "
                             "your file as a proposal, and the tables keep the decision until an adjudicator "
                             f"accepts it (protocoder adjudicate --cell {key} --take {self.reviewer} --reason ...) "
                             "or declines it (they leave the decision as it is)")

    def _record_correction(self, cell: Cell, reason: str) -> None:
        key = f"{cell.protocol}/{cell.field}"
        try:
            correction = record_change(self.paths, key, reason=reason, by=self.reviewer)
        except ProtocoderError:
            # The error may quote another reviewer's file (it checks the whole workspace): not shown here.
            self.messages.append(f"{key}: saved in your file, but no correction was recorded: the workspace does "
                                 "not check as a whole (protocoder validate names the problem)")
            return
        if correction is not None:
            self.current = blind_released(current_released_cells(self.paths))
            self.messages.append(f"{key}: correction recorded in release {correction.release} "
                                 f"({correction.old or '-'} → {correction.new}) with your reason")
        else:
            # Whether nothing was due (unsettled, or already the released code) depends on the other
            # reviewers: one message for both, naming only the published record.
            self._note_unsettled(cell, asked=True)

    def _note_unsettled(self, cell: Cell, *, asked: bool = False) -> None:
        key = f"{cell.protocol}/{cell.field}"
        if not asked and key in self._noted:
            return
        self._noted.add(key)  # once per cell and session: typing saves often
        released = (self.current.get(key) or {}).get("code") or "no code"
        self.messages.append(f"{key}: saved in your file; release {self.release} keeps {released} until the "
                             "reviewers' codes settle on another code or an adjudicator decides"
                             + (" (no correction recorded now, so your reason is not kept)" if asked else ""))

    def written(self, edit: Edit, fingerprint: str) -> None:
        """Record a successful write in the disk view."""
        sheet = self.sheet(edit.protocol)
        if isinstance(edit, ReadingEdit):
            if fingerprint == READING_NOT_WRITTEN:
                return  # the file changed on disk: the disk view stays as it was
            reading = dict(sheet.reading)
            known = reading.get(edit.sha256)
            reading[edit.sha256] = edit.reading.union(known) if known is not None else edit.reading
            self.sheets[edit.protocol] = replace(sheet, reading=reading)
            self.fingerprints[edit.protocol] = fingerprint
            return
        if isinstance(edit, CellEdit):
            cells = dict(sheet.cells)
            cells[edit.cell.field] = edit.cell
            sheet = replace(sheet, cells=cells)
        else:
            notes = dict(sheet.notes)
            if edit.text.strip():
                notes[edit.prompt] = edit.text
            else:
                notes.pop(edit.prompt, None)
            sheet = replace(sheet, notes=notes)
        self.sheets[edit.protocol] = sheet
        self.fingerprints[edit.protocol] = fingerprint
        if isinstance(edit, CellEdit):
            self.reasons.pop((edit.protocol, edit.cell.field), None)

    def take_theirs(self, protocol_id: str, theirs: Sheet | None, fingerprint: str | None) -> None:
        """Adopt what is on disk as the disk view (the reviewer chose the other version)."""
        self.sheets[protocol_id] = theirs if theirs is not None else Sheet(
            protocol_id, self.reviewer, self.paths.sheet_file(protocol_id, self.reviewer))
        self.fingerprints[protocol_id] = fingerprint

    # ------------------------------------------------------------------ protocols and references

    @property
    def protocol_ids(self) -> set[str]:
        """Ids of every protocol folder (loaded or not), for uniqueness checks."""
        ids = {p.id for p in self.protocols}
        folder = self.paths.protocols_dir
        if folder.is_dir():
            ids |= {entry.name for entry in folder.iterdir()}
        return ids

    def add_protocol(self, protocol: Protocol) -> None:
        """Create a protocol through the store and show it at once."""
        self.store.add_protocol(protocol, self.bib_keys)
        order = self.review.settings.order if self.review else ()
        if order:
            self.protocols.append(protocol)
        else:
            # Without an explicit order, protocols are listed by id (as load_review does).
            ids = [p.id for p in self.protocols]
            self.protocols.insert(bisect.bisect(ids, protocol.id), protocol)

    def update_protocol(self, protocol: Protocol) -> None:
        """Rewrite a protocol's name, citations and sources through the store."""
        self.store.update_protocol(protocol, self.bib_keys)
        self.protocols[self.index_of(protocol.id)] = protocol

    def coded_cells(self, protocol_id: str) -> int:
        """Coded cells, by any reviewer, that removing the protocol would delete."""
        return coded_cell_count(self.paths, protocol_id)

    def removal_refusal(self, protocol_id: str) -> str | None:
        """Why the protocol may not be removed (it is in the latest release), naming the way out."""
        return removal_problem(self.paths, protocol_id)

    def remove_protocol(self, protocol_id: str) -> int:
        """Delete a protocol's folder through the store; return the coded cells removed."""
        if (refusal := self.removal_refusal(protocol_id)) is not None:
            raise Rejected(refusal)
        count = self.store.remove_protocol(protocol_id)
        self.protocols = [p for p in self.protocols if p.id != protocol_id]
        self.sheets.pop(protocol_id, None)
        self.fingerprints.pop(protocol_id, None)
        self.broken.pop(protocol_id, None)
        return count

    def add_bibtex(self, text: str) -> list[str]:
        """Append pasted BibTeX through the store; return the keys added."""
        entries = self.store.add_bibtex(text)
        for entry in entries:
            if entry.key not in self.bib_keys:
                bisect.insort(self.bib_keys, entry.key)
        return [entry.key for entry in entries]

    def unknown_keys(self, keys: Iterable[str]) -> list[str]:
        """The keys that are not in the bibliography."""
        known = set(self.bib_keys)
        return [key for key in keys if key not in known]

    # ------------------------------------------------------------------ pinning sources

    def pin_source(self, protocol_id: str, target: str) -> Source:
        """Pin a local file or a URL as a new source of a saved protocol, as ``source add`` does
        (the snapshot under ``sources/``, then ``protocol.yaml``); returns the source pinned.

        Fetching a URL takes time: the app calls this in a thread. Raises
        :class:`ProtocoderError` (one line, nothing written) when it cannot be pinned.
        """
        from ..evidence.fetch import is_url
        from ..evidence.sources import add_source, add_url_source

        review = load_review(self.paths.root)
        if is_url(target):
            pinned = add_url_source(review, protocol_id, target)
        else:
            pinned = add_source(review, protocol_id, Path(target.strip()).expanduser())
        index = self.index_of(protocol_id)
        self.protocols[index] = replace(self.protocols[index], sources=(*self.protocols[index].sources,
                                                                        pinned.source))
        return pinned.source

