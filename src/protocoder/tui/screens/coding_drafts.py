"""What the reviewer typed on the coding screen, and when it is queued for writing.

:class:`CodingDrafts` keeps what the reviewer typed in :attr:`CodingDrafts.drafts` (and
``note_drafts``) and queues it for writing when a code is picked, ~0.5 s after typing
stops, when an input loses focus, and before moving to another field or protocol or
quitting. Showing a cell and reporting edits is the :class:`~..widgets.CellEditor`'s job;
writing the queued edits is the app's saver's, through the session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual import on
from textual.events import DescendantBlur
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, TextArea

from ...model import Cell, Field, Protocol, Rubric
from ..session import Session, cell_content
from ..widgets import CellEditor, CodeChoice, SaveIndicator
from .reason import ReasonModal

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it

DEBOUNCE_SECONDS = 0.5
"""Typing is written this long after the last keystroke (and at once on blur or moving on)."""


class CodingDrafts(Screen[None]):
    """The drafts of :class:`~.coding.CodingScreen`: the reviewer's version of the protocol
    shown, the edits not yet queued for writing, and the handlers that change them.

    A part of the coding screen, not a screen of its own. It is a ``Screen`` rather than a
    plain mixin because Textual registers ``@on`` handlers only on its own classes.
    """

    def __init__(self) -> None:
        super().__init__()
        self.drafts: dict[str, Cell] = {}
        """The reviewer's version of each cell of this protocol (what the inputs show)."""
        self.note_drafts: dict[str, str] = {}
        self._dirty: dict[tuple[str, str], None] = {}
        """Drafts changed but not yet queued for writing, oldest first."""
        self._debounce: Timer | None = None
        self._shows_dirty = False
        """The save indicator was told that typed text waits (``dirty``)."""
        self.code_history: list[tuple[str, str, str | None, str | None]] = []
        """Code changes made on this screen, oldest first: (protocol, field, code before, code after).
        ``ctrl+z`` takes back the newest one of the protocol shown."""

    if TYPE_CHECKING:
        # The coding screen's members the drafts use.
        protocol_id: str
        candidates_shown: set[tuple[str, str]]

        @property
        def coder_app(self) -> CoderApp: ...
        @property
        def session(self) -> Session: ...
        @property
        def rubric(self) -> Rubric: ...
        @property
        def protocol(self) -> Protocol: ...
        @property
        def field(self) -> Field: ...
        @property
        def editor(self) -> CellEditor: ...
        @property
        def code_choice(self) -> CodeChoice: ...
        def _show_field(self) -> None: ...
        def go_to_field(self, index: int, *, focus_codes: bool = True) -> None: ...
        def _show_notes(self) -> None: ...
        def _after_change(self, cell: Cell, before: Cell | None) -> None: ...

    def adopt_disk(self, protocol_id: str) -> None:
        """Show the disk view wherever the reviewer has nothing waiting to be written.

        Called after a conflict was resolved (the file on disk had changed).
        """
        if protocol_id != self.protocol_id:
            return
        sheet = self.session.sheet(protocol_id)
        pending = set(self.coder_app.saver.pending)
        for fld in self.rubric.fields:
            if ("cell", protocol_id, fld.id) not in pending and ("cell", fld.id) not in self._dirty:
                cell = sheet.cells.get(fld.id)
                if cell is None:
                    self.drafts.pop(fld.id, None)
                else:
                    self.drafts[fld.id] = cell
        for prompt in self.rubric.prompts:
            if ("note", protocol_id, prompt.id) not in pending and ("note", prompt.id) not in self._dirty:
                self.note_drafts[prompt.id] = sheet.notes.get(prompt.id, "")
        self._show_notes()
        self._show_field()

    def flush_edits(self) -> None:
        """Queue every changed draft for writing now."""
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if not self._dirty:
            return
        dirty, self._dirty = list(self._dirty), {}
        for kind, key in dirty:
            if kind == "cell":
                self.coder_app.queue_edit(self.session.cell_edit(self.drafts[key]))
            else:
                self.coder_app.queue_edit(self.session.note_edit(self.protocol_id, key, self.note_drafts[key]))
        self._set_dirty_indicator(False)

    def _draft(self, field_id: str) -> Cell:
        cell = self.drafts.get(field_id)
        return cell if cell is not None else Cell(self.protocol_id, field_id, self.session.reviewer, None)

    # ------------------------------------------------------------------ editing

    def _set_dirty_indicator(self, dirty: bool) -> None:
        if not dirty and not self._shows_dirty:
            return  # a code pick: nothing typed was shown as unsaved (the query costs more than its save's wait)
        self._shows_dirty = dirty
        # The screen may be half torn down when its last edits are flushed on unmount.
        for indicator in self.query("#save-indicator").results(SaveIndicator):
            indicator.dirty = dirty

    def _mark_dirty(self, key: tuple[str, str]) -> None:
        self._dirty.pop(key, None)
        self._dirty[key] = None
        self._set_dirty_indicator(True)
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE_SECONDS, self.flush_edits)

    @on(CodeChoice.Picked)
    def code_picked(self, event: CodeChoice.Picked) -> None:
        self.choose_code(event.code)
        self.coder_app.draw_unless_saving()  # the same code again, a read-only session, a reason asked

    def choose_code(self, code: str | None, *, undoable: bool = True) -> None:
        """Set the current field's code (None clears it) and write it at once.

        ``undoable``: kept in :attr:`code_history` for ``ctrl+z`` (an undo itself is not)."""
        if self.session.read_only:
            self.notify("This session is read-only: another session is coding as this reviewer.",
                        severity="warning")
            return
        cell = replace(self.editor.cell_from_inputs(), code=code)
        before = self.drafts.get(cell.field)
        if cell_content(cell) == cell_content(before):
            return
        if self.session.needs_reason(cell):
            self._ask_reason(cell, before, undoable)
            return
        self._write_code(cell, before, undoable)

    def _ask_reason(self, cell: Cell, before: Cell | None, undoable: bool) -> None:
        # A released cell changes only with a reason, kept in the corrections ledger.
        released = self.session.released.get((cell.protocol, cell.field))

        def answered(reason: str | None) -> None:
            if reason is None:
                self.code_choice.mark(before.code if before is not None else None)
                return
            self.session.reasons[(cell.protocol, cell.field)] = reason
            self._write_code(cell, before, undoable)

        self.app.push_screen(ReasonModal(
            f"{self.protocol.name} / {self.field.label} is in release {self.session.release}",
            f"You coded it {released or 'nothing'} in that release. Changing it to {cell.code or 'no code'} "
            "is a correction: give the reason. If the final code changes, the correction is recorded "
            "with your reason."), answered)

    def _write_code(self, cell: Cell, before: Cell | None, undoable: bool = True) -> None:
        was = before.code if before is not None else None
        if undoable and was != cell.code:
            self.code_history.append((cell.protocol, cell.field, was, cell.code))
        if cell.code is not None and (cell.protocol, cell.field) in self.candidates_shown and not cell.assisted:
            # Candidate passages were listed for this cell before this code was chosen: recorded, so
            # that agreement can be reported for assisted and unassisted cells apart.
            cell = replace(cell, assisted=True)
        self.coder_app.hold_screen_for_save()  # written first, then drawn once (issue 32)
        self.drafts[cell.field] = cell
        self.editor.mark(cell)
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        self._after_change(cell, before)

    def action_undo_code(self) -> None:
        """``ctrl+z``: put back the code the newest code change of this protocol replaced.

        The field is shown first, so the change is seen; the old code is written as a new save
        (like any pick, through the write queue), never by rewriting the file as it was.
        """
        entries = [i for i, entry in enumerate(self.code_history) if entry[0] == self.protocol_id]
        if not entries:
            self.notify("No code change to undo on this protocol.")
            return
        _, field_id, was, now = self.code_history.pop(entries[-1])
        if field_id != self.field.id:
            self.go_to_field(self.rubric.field_ids.index(field_id), focus_codes=False)
        current = self._draft(field_id).code
        label = self.rubric.field(field_id).label
        if current != now:
            self.notify(f"{label} changed again since ({current or 'no code'}): nothing undone.", severity="warning")
            return
        self.choose_code(was, undoable=False)
        if self._draft(field_id).code == was:
            self.notify(f"Undone: {label} is {was or 'not coded'} again (was {now or 'not coded'}).")

    @on(CellEditor.Edited)
    def cell_text_changed(self, event: CellEditor.Edited) -> None:
        cell = event.cell
        if cell.protocol != self.protocol_id or cell.field != self.field.id:
            return
        before = self.drafts.get(cell.field)
        if cell_content(cell) == cell_content(before):
            return
        self.drafts[cell.field] = cell
        self._mark_dirty(("cell", cell.field))
        self._after_change(cell, before)

    @on(TextArea.Changed, ".note-input")
    def note_changed(self, event: TextArea.Changed) -> None:
        prompt_id = (event.text_area.id or "").removeprefix("note-")
        text = event.text_area.text
        if text == self.note_drafts.get(prompt_id, ""):
            return
        self.note_drafts[prompt_id] = text
        self._mark_dirty(("note", prompt_id))

    def on_descendant_blur(self, event: DescendantBlur) -> None:
        if isinstance(event.widget, Input | TextArea):
            self.flush_edits()

    def _write_quotes(self, cell: Cell) -> Cell:
        self.drafts[cell.field] = cell
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        self._show_field()  # the proposed source location, the list of quotes, the field's marker
        return cell

    def action_save_now(self) -> None:
        self.flush_edits()
        self.coder_app.kick_saver()

    def on_unmount(self) -> None:
        self.flush_edits()
