"""CodingScreen: one protocol, field by field, with its sources, the rubric guide and descriptive notes.

The screen keeps what the reviewer typed in :attr:`CodingScreen.drafts` (and
``note_drafts``) and queues it for writing when a code is picked, ~0.5 s after typing
stops, when an input loses focus, and before moving to another field or protocol or
quitting. Showing a cell and reporting edits is the :class:`~..widgets.CellEditor`'s job.

Layout, from left to right: the fields and sources (``#coding-side``), the cell being
coded (``#cell-pane``), and a side pane (``#aside``) holding the rubric guide. The side
pane is open by default when the terminal is at least :data:`WIDE` columns wide; ``f2``
opens or closes it at any width (when narrow, it takes the place of the fields and
sources, so the cell stays in view). Other panes — a source reader, for instance — can
be mounted into ``#aside`` and shown with :meth:`CodingScreen.show_aside`.

``ctrl+l`` opens the reader on the protocol's pinned snapshots: from :data:`WIDE` columns on
as a pane in ``#aside`` in place of the rubric guide (escape returns to the cell and the
pane stays, following the cell from field to field; ``f2`` brings the rubric guide back);
narrower, on a screen of its own (:class:`~.reader.ReaderScreen`), since a pane there would
be a few words wide. The cell's quotes are listed under its source location either way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantBlur
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Input, Label, OptionList, Static, TextArea

from ...evidence.snapshots import location_text
from ...model import Cell, Field, Protocol, Quote, Rubric, Sheet
from ..browser import open_or_copy
from ..session import CellEdit, NoteEdit, Session, cell_content
from ..widgets import AppFooter, CellEditor, CodeChoice, FieldList, RubricGuide, SaveIndicator, SourceList, TextBox
from ..widgets.reader import Reader
from .guided import GuidedModal
from .keys import FRONT_KEYS
from .reason import ReasonModal
from .source import SourceModal

if TYPE_CHECKING:
    from ..app import CoderApp

DEBOUNCE_SECONDS = 0.5
"""Typing is written this long after the last keystroke (and at once on blur or moving on)."""

WIDE = 120
"""From this many columns on, the rubric guide is open beside the cell by default."""

MODE_CODING = "mode-coding"
MODE_NOTES = "mode-notes"


class CodingScreen(Screen[None]):
    """Code one protocol: pick a code per field, give its source location, basis and citations."""

    BINDINGS = [
        *FRONT_KEYS,
        # Priority: moving on must work from inside the text inputs too.
        Binding("pagedown", "next_field", "Next", priority=True, id="coding.next_field",
                tooltip="Next field (after the last one: the next protocol)"),
        Binding("pageup", "previous_field", "Prev", priority=True, id="coding.previous_field",
                tooltip="Previous field"),
        Binding("ctrl+g", "guided", "Guided", id="coding.guided",
                tooltip="Guided coding: the rubric's decision questions, one at a time"),
        Binding("f2", "toggle_aside", "Rubric", id="coding.rubric",
                tooltip="Show or hide the rubric guide: definition, guidance, every code"),
        Binding("ctrl+t", "toggle_notes", "Notes", id="coding.notes",
                tooltip="Switch between coding and the protocol's descriptive notes"),
        Binding("escape", "leave", "Back", id="coding.back",
                tooltip="Leave the text input; from the codes, back to the protocol list"),
        Binding("ctrl+pagedown", "next_protocol", "Next protocol", priority=True, show=False,
                id="coding.next_protocol"),
        Binding("ctrl+pageup", "previous_protocol", "Prev protocol", priority=True, show=False,
                id="coding.previous_protocol"),
        # Printable twins, for terminals that do not send ctrl+page or function keys (used when not typing).
        Binding("]", "next_field", "Next", show=False, tooltip="Next field (after the last one: the next protocol)"),
        Binding("[", "previous_field", "Prev", show=False, tooltip="Previous field"),
        Binding("}", "next_protocol", "Next protocol", show=False),
        Binding("{", "previous_protocol", "Prev protocol", show=False),
        Binding("r", "toggle_aside", "Rubric", show=False,
                tooltip="Show or hide the rubric guide: definition, guidance, every code"),
        Binding("ctrl+o", "open_source", "Open source", show=False, id="coding.open_source",
                tooltip="Open the highlighted source in a browser (or copy its URL)"),
        Binding("o", "open_source", "Open source", show=False,
                tooltip="Open the highlighted source in a browser (or copy its URL)"),
        Binding("u", "show_source", "Source URL", show=False, id="coding.source_url",
                tooltip="Show the highlighted source's whole URL"),
        Binding("ctrl+s", "save_now", "Save now", show=False, id="coding.save"),
        Binding("ctrl+l", "read_sources", "Read & quote", show=False, id="coding.reader",
                tooltip="Read the pinned snapshots and quote the passage behind the code"),
        Binding("question_mark", "app.show_keys", "Keys", show=False, tooltip=FRONT_KEYS[1].tooltip),
        *[Binding(key, f"pick_key('{key}')", show=False) for key in "1234567890"],
    ]

    EXTRA_KEYS = [
        ("[key] shown by a code", "pick that code (when not typing)"),
        ("enter (on codes)", "pick the highlighted code"),
        ("delete (on codes)", "clear the code of this field"),
        ("tab / shift+tab", "codes, source location, basis, citations, fields, sources"),
        ("→ (in citations)", "accept the completed citation key"),
        ("letters, digits, ? [ ]", "are keys only while no text input has the focus"),
        *((f"{keys} (reader)", what) for keys, what in Reader.KEYS),
    ]
    """Keys that are not bindings of this screen, for the keys table."""

    AUTO_FOCUS = "#code-choice"
    KEYS_TITLE = "coding a protocol"

    def __init__(self, protocol_id: str, sheet: Sheet, *, field_id: str | None = None) -> None:
        super().__init__()
        self._initial_field = field_id
        self.protocol_id = protocol_id
        self.field_index = 0
        self.drafts: dict[str, Cell] = {}
        """The reviewer's version of each cell of this protocol (what the inputs show)."""
        self.note_drafts: dict[str, str] = {}
        self._dirty: dict[tuple[str, str], None] = {}
        """Drafts changed but not yet queued for writing, oldest first."""
        self._debounce: Timer | None = None
        self._initial_sheet = sheet
        self.aside_open: bool | None = None
        """The reviewer's choice for the side pane; None: open when the terminal is wide."""
        # Kept here, not queried: check_action runs for every binding on every refresh.
        self._mode = MODE_CODING
        self._source_list: SourceList | None = None
        self._reader: Reader | None = None
        """The reader pane in ``#aside``, once opened (kept, hidden, when closed: it keeps its place)."""
        self._aside_before_reader: bool | None = None

    # ------------------------------------------------------------------ plumbing

    @property
    def coder_app(self) -> CoderApp:
        return cast("CoderApp", self.app)

    @property
    def session(self) -> Session:
        return self.coder_app.session

    @property
    def rubric(self) -> Rubric:
        rubric = self.session.rubric
        assert rubric is not None
        return rubric

    @property
    def protocol(self) -> Protocol:
        return self.session.protocol(self.protocol_id)

    @property
    def field(self) -> Field:
        return self.rubric.fields[self.field_index]

    @property
    def editor(self) -> CellEditor:
        return self.query_one("#cell-pane", CellEditor)

    @property
    def code_choice(self) -> CodeChoice:
        return self.editor.code_choice

    @property
    def sources(self) -> SourceList:
        return self.query_one("#sources", SourceList)

    @property
    def mode(self) -> str:
        """:data:`MODE_CODING` or :data:`MODE_NOTES`."""
        return self._mode

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        session = self.session
        read_only = session.read_only
        with Horizontal(classes="top-bar"):
            yield Static("", id="coding-title")
            yield Static(session.reviewer + (" (read-only)" if read_only else ""), id="coding-reviewer",
                         classes="reviewer-name", markup=False)
            yield SaveIndicator(self.coder_app.saver, id="save-indicator", classes="save-indicator")
        with ContentSwitcher(id="coding-modes", initial=MODE_CODING):
            with Horizontal(id=MODE_CODING):
                with Vertical(id="coding-side"):
                    yield Static("Fields", classes="side-heading")
                    yield FieldList(id="field-list")
                    yield Static("Sources", classes="side-heading")
                    yield SourceList(id="sources")
                yield CellEditor(session.bib_keys, read_only=read_only, id="cell-pane")
                with Vertical(id="aside"):
                    yield RubricGuide(id="rubric-guide")
            with VerticalScroll(id=MODE_NOTES):
                if not self.rubric.prompts:
                    yield Static("The rubric asks for no descriptive notes.", classes="note-help")
                for prompt in self.rubric.prompts:
                    yield Label(prompt.label, classes="note-label")
                    if prompt.help:
                        yield Static(prompt.help, classes="note-help")
                    yield TextBox(id=f"note-{prompt.id}", classes="note-input", read_only=read_only)
        yield AppFooter()

    def on_mount(self) -> None:
        self._source_list = self.query_one("#sources", SourceList)
        self.show_protocol(self.protocol_id, self._initial_sheet, field_id=self._initial_field)
        self._arrange()

    def on_resize(self, event: events.Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """Show or hide the side pane for the width; when narrow, it replaces the fields and sources."""
        wide = self.size.width >= WIDE
        shown = self.aside_open if self.aside_open is not None else wide
        self.query_one("#aside", Vertical).display = shown
        self.query_one("#coding-side", Vertical).display = wide or not shown
        self.set_class(wide, "-wide")

    def show_aside(self, shown: bool = True) -> None:
        """Open (or close) the side pane beside the cell, whatever the width."""
        self.aside_open = shown
        self._arrange()

    # ------------------------------------------------------------------ attributes down

    def show_protocol(self, protocol_id: str, sheet: Sheet, *, field_id: str | None = None) -> None:
        """Show a protocol (its sheet just read from disk) at ``field_id``, else its first field not coded."""
        self.flush_edits()
        self.protocol_id = protocol_id
        self.drafts = dict(sheet.cells)
        self.note_drafts = dict(sheet.notes)
        # Edits still queued are the reviewer's newest version: show those, not the file.
        for edit in self.coder_app.saver.pending.values():
            if isinstance(edit, CellEdit) and edit.protocol == protocol_id:
                self.drafts[edit.cell.field] = edit.cell
            elif isinstance(edit, NoteEdit) and edit.protocol == protocol_id:
                self.note_drafts[edit.prompt] = edit.text
        if field_id is not None and field_id in self.rubric.field_ids:
            self.field_index = self.rubric.field_ids.index(field_id)
        else:
            effective = replace(sheet, cells=self.drafts, notes=self.note_drafts)
            self.field_index = self.session.first_open_field(effective)
        self.sources.show(self.protocol.sources)
        self._follow_protocol()
        self._show_notes()
        self._show_field()
        self._set_mode(MODE_CODING)

    def refresh_protocol(self) -> None:
        """Show the protocol's name and sources again (after they were edited)."""
        self.sources.show(self.protocol.sources)
        self._follow_protocol()
        self._show_title()

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

    # ------------------------------------------------------------------ rendering

    def _draft(self, field_id: str) -> Cell:
        cell = self.drafts.get(field_id)
        return cell if cell is not None else Cell(self.protocol_id, field_id, self.session.reviewer, None)

    def _show_title(self) -> None:
        protocol = self.protocol
        session = self.session
        position = session.index_of(protocol.id) + 1
        coded = sum(1 for fld in self.rubric.fields if self._draft(fld.id).is_coded)
        mode = " · notes" if self.mode == MODE_NOTES else ""
        self.query_one("#coding-title", Static).update(
            Text.assemble((protocol.name, "bold"), f" {position}/{len(session.protocols)}{mode}",
                          (f" · {coded}/{len(self.rubric.fields)} coded", "dim")))

    def _show_notes(self) -> None:
        with self.prevent(TextArea.Changed):
            for prompt in self.rubric.prompts:
                area = self.query_one(f"#note-{prompt.id}", TextArea)
                text = self.note_drafts.get(prompt.id, "")
                if area.text != text:
                    area.load_text(text)

    def _show_field(self) -> None:
        fld = self.field
        rubric = self.rubric
        self._show_title()
        cell = self._draft(fld.id)
        self.editor.show(rubric, fld, self.field_index + 1, len(rubric.fields), cell)
        self.editor.show_quotes(cell, self.protocol.sources)
        self.query_one("#rubric-guide", RubricGuide).show(rubric, fld)
        if self._reader is not None:
            self._reader.show_cell(cell, fld.label)
        self.query_one("#field-list", FieldList).show(rubric, self.drafts, self.field_index)

    def _after_change(self, cell: Cell, before: Cell | None) -> None:
        # Called on every keystroke: repaint only what the change can alter.
        rubric = self.rubric
        was = (before is not None and before.is_coded, before is not None and before.is_complete(rubric),
               before.code if before is not None else None)
        now = (cell.is_coded, cell.is_complete(rubric), cell.code)
        if was != now or cell.missing(rubric) != (before.missing(rubric) if before is not None else ("code",)):
            self.editor.show_status(cell)
            self._show_title()
            self.query_one("#field-list", FieldList).update_marker(rubric, cell.field, cell)

    # ------------------------------------------------------------------ editing

    def _set_dirty_indicator(self, dirty: bool) -> None:
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

    def choose_code(self, code: str | None) -> None:
        """Set the current field's code (None clears it) and write it at once."""
        if self.session.read_only:
            self.notify("This session is read-only: another session is coding as this reviewer.",
                        severity="warning")
            return
        cell = replace(self.editor.cell_from_inputs(), code=code)
        before = self.drafts.get(cell.field)
        if cell_content(cell) == cell_content(before):
            return
        if self.session.needs_reason(cell):
            self._ask_reason(cell, before)
            return
        self._write_code(cell, before)

    def _ask_reason(self, cell: Cell, before: Cell | None) -> None:
        # A released cell changes only with a reason, kept in the corrections ledger.
        released = self.session.released.get((cell.protocol, cell.field))

        def answered(reason: str | None) -> None:
            if reason is None:
                self.code_choice.mark(before.code if before is not None else None)
                return
            self.session.reasons[(cell.protocol, cell.field)] = reason
            self._write_code(cell, before)

        self.app.push_screen(ReasonModal(
            f"{self.protocol.name} / {self.field.label} is in release {self.session.release}",
            f"You coded it {released or 'nothing'} in that release. Changing it to {cell.code or 'no code'} "
            "is a correction: give the reason. If the final code changes, the correction is recorded "
            "with your reason."), answered)

    def _write_code(self, cell: Cell, before: Cell | None) -> None:
        self.drafts[cell.field] = cell
        self.editor.mark(cell)
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        self._after_change(cell, before)

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

    @on(OptionList.OptionHighlighted, "#field-list")
    def field_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != self.field_index:
            self.go_to_field(event.option_index, focus_codes=False)

    @on(OptionList.OptionSelected, "#field-list")
    def field_selected(self) -> None:
        self.code_choice.focus()

    @on(OptionList.OptionSelected, "#source-list")
    def source_selected(self) -> None:
        self.action_show_source()

    # ------------------------------------------------------------------ navigation

    def go_to_field(self, index: int, *, focus_codes: bool = True) -> None:
        """Write what is pending and show field ``index``."""
        self.flush_edits()
        self.field_index = index
        self._show_field()
        if focus_codes:
            self.code_choice.focus()

    def action_next_field(self) -> None:
        if self.field_index + 1 < len(self.rubric.fields):
            self.go_to_field(self.field_index + 1)
        elif self.session.index_of(self.protocol_id) + 1 < len(self.session.protocols):
            self.action_next_protocol()
        else:
            self.notify("This is the last field of the last protocol.")

    def action_previous_field(self) -> None:
        if self.field_index > 0:
            self.go_to_field(self.field_index - 1)
        elif self.session.index_of(self.protocol_id) > 0:
            # Stepping back over the first field lands on the previous protocol's last one.
            self._step_protocol(-1, field_id=self.rubric.field_ids[-1])

    def action_next_protocol(self) -> None:
        self._step_protocol(+1)

    def action_previous_protocol(self) -> None:
        self._step_protocol(-1)

    def _step_protocol(self, delta: int, *, field_id: str | None = None) -> None:
        protocols = self.session.protocols
        index = self.session.index_of(self.protocol_id) + delta
        if 0 <= index < len(protocols):
            self.flush_edits()
            self.coder_app.open_protocol(protocols[index].id, field_id=field_id)

    def action_leave(self) -> None:
        if isinstance(self.focused, Input | TextArea):
            # First escape leaves the text input, the second leaves the protocol.
            self.flush_edits()
            if self.mode == MODE_CODING:
                self.code_choice.focus()
            else:
                self._set_mode(MODE_CODING)
            return
        if self.mode == MODE_NOTES:
            self._set_mode(MODE_CODING)
            return
        self.flush_edits()
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_coding = self.mode == MODE_CODING
        if action in ("pick_key", "guided"):
            return on_coding and not self.session.read_only
        if action in ("next_field", "previous_field"):
            # While the reader pane has the focus, pgdn/pgup page through its text.
            return on_coding and not self._reading()
        if action in ("toggle_aside", "read_sources"):
            return on_coding
        if action in ("open_source", "show_source"):
            source = self._source_list.selected if self._source_list is not None else None
            return source is not None and bool(source.url)
        return True

    def action_pick_key(self, key: str) -> None:
        if not self.code_choice.pick_key(key):
            self.notify(f"No code of {self.field.label} has the key {key}: "
                        f"the keys are {self.code_choice.key_hint}.", severity="warning")

    def action_clear_code(self) -> None:
        self.choose_code(None)

    def action_guided(self) -> None:
        fld = self.field
        if not fld.decision:
            self.notify(f"The rubric has no decision questions for {fld.label}.", severity="warning")
            return

        def use_code(code: str | None) -> None:
            if code is not None:
                self.choose_code(code)
            self.code_choice.focus()

        self.app.push_screen(GuidedModal(self.rubric, fld), use_code)

    def action_toggle_aside(self) -> None:
        if self.reader_open:
            self.close_reader()  # the rubric guide comes back in its place
            self.show_aside(True)
            return
        self.show_aside(not self.query_one("#aside", Vertical).display)

    # ------------------------------------------------------------------ reader

    @property
    def reader_open(self) -> bool:
        """The reader pane is showing in ``#aside``."""
        return self._reader is not None and self._reader.display

    def _reading(self) -> bool:
        focused = self.focused
        return self._reader is not None and focused is not None and self._reader in focused.ancestors_with_self

    def action_read_sources(self) -> None:
        """Open the reader on the protocol's snapshots: a pane beside the cell when wide, else a screen."""
        self.flush_edits()
        writable = not self.session.read_only
        on_quote = self._add_quote if writable else None
        on_remove = self._remove_quote if writable else None
        if self.size.width < WIDE:
            from .reader import ReaderScreen

            self.app.push_screen(ReaderScreen(self.session.paths, self.protocol, self._draft(self.field.id),
                                              on_quote=on_quote, on_remove=on_remove, field_label=self.field.label),
                                 lambda _: self._show_field())
            return
        reader = self._reader
        if reader is None:
            reader = Reader(self.session.paths, self.protocol, self._draft(self.field.id), on_quote=on_quote,
                            on_remove=on_remove, field_label=self.field.label, id="reader-pane", classes="-pane")
            self._reader = reader
            self.query_one("#aside", Vertical).mount(reader)
        if not self.reader_open or self._aside_before_reader is None:
            self._aside_before_reader = self.aside_open
        reader.display = True
        self.query_one("#rubric-guide", RubricGuide).display = False
        self.add_class("-reading")
        self.show_aside(True)
        self.call_after_refresh(reader.focus_text)

    def close_reader(self) -> None:
        """Hide the reader pane and bring back the rubric guide (and the side pane as it was)."""
        if not self.reader_open:
            return
        assert self._reader is not None
        self._reader.display = False
        self.query_one("#rubric-guide", RubricGuide).display = True
        self.remove_class("-reading")
        self.aside_open, self._aside_before_reader = self._aside_before_reader, None
        self._arrange()
        self.code_choice.focus()

    @on(Reader.Left)
    def _reader_left(self, event: Reader.Left) -> None:
        # The pane stays beside the cell and follows it from field to field; ctrl+l goes back in.
        event.stop()
        self.code_choice.focus()

    def _follow_protocol(self) -> None:
        reader = self._reader
        if reader is None:
            return
        protocol = self.protocol
        if reader.protocol.id != protocol.id or reader.protocol.sources != protocol.sources:
            reader.show_protocol(protocol, self._draft(self.field.id), self.field.label)

    def _add_quote(self, quote: Quote) -> Cell:
        # Whichever field is shown now: the reader pane stays open while the reviewer moves on.
        cell = self._draft(self.field.id)
        if not cell.source.strip():
            # The quote's position is the first proposal for the source location (editable).
            cell = replace(cell, source=location_text(quote.page, quote.section))
        return self._write_quotes(replace(cell, quotes=(*cell.quotes, quote)))

    def _remove_quote(self, index: int) -> Cell:
        cell = self._draft(self.field.id)
        return self._write_quotes(replace(cell, quotes=cell.quotes[:index] + cell.quotes[index + 1:]))

    def _write_quotes(self, cell: Cell) -> Cell:
        self.drafts[cell.field] = cell
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        self._show_field()  # the proposed source location, the list of quotes, the field's marker
        return cell

    def _set_mode(self, mode: str) -> None:
        self.flush_edits()
        if mode == self._mode:
            # Moving between protocols lands here: no switch, so no new bindings to show.
            if mode == MODE_CODING:
                self.code_choice.focus()
            return
        self._mode = mode
        self.query_one("#coding-modes", ContentSwitcher).current = mode
        if mode == MODE_NOTES:
            areas = self.query(".note-input")
            if areas:
                areas.first().focus()
        else:
            self.code_choice.focus()
        self._show_title()
        self.refresh_bindings()

    def action_toggle_notes(self) -> None:
        self._set_mode(MODE_NOTES if self.mode == MODE_CODING else MODE_CODING)

    def action_open_source(self) -> None:
        source = self.sources.selected
        if source is not None and source.url:
            open_or_copy(self.app, source.url)

    def action_show_source(self) -> None:
        source = self.sources.selected
        if source is not None:
            self.app.push_screen(SourceModal(self.protocol.sources.index(source) + 1, source))

    def action_save_now(self) -> None:
        self.flush_edits()
        self.coder_app.kick_saver()

    def on_unmount(self) -> None:
        self.flush_edits()
