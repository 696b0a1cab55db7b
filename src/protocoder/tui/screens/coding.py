"""CodingScreen: one protocol, field by field, with its sources, the rubric guide and descriptive notes.

Layout, from left to right: the fields and sources (``#coding-side``), the cell being
coded (``#cell-pane``), and a side pane (``#aside``) holding the rubric guide or the
source reader. The screen is made of three parts:

* :class:`CodingScreen` (here): the keys, the layout, moving between fields and
  protocols, coding and notes modes, and showing the cell;
* :class:`~.coding_drafts.CodingDrafts`: what the reviewer typed, and when it is queued
  for writing;
* :class:`~.coding_aside.CodingAside`: the side pane, the rubric guide or the reader on
  the protocol's pinned snapshots, and the quotes taken from it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, Input, Label, OptionList, Static, TextArea

from ...model import Cell, Field, Protocol, Rubric, Sheet
from ..browser import open_or_copy
from ..session import CellEdit, NoteEdit, Session
from ..widgets import AppFooter, CellEditor, CodeChoice, FieldList, RubricGuide, SaveIndicator, SourceList, TextBox
from ..widgets.reader import Reader
from .coding_aside import CodingAside
from .coding_drafts import CodingDrafts
from .guided import GuidedModal
from .keys import FRONT_KEYS
from .source import SourceModal

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it

MODE_CODING = "mode-coding"
MODE_NOTES = "mode-notes"


class CodingScreen(CodingAside, CodingDrafts):
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
        Binding("f3", "toggle_notes", "Notes", id="coding.notes",
                tooltip="Switch between coding and the protocol's descriptive notes"),
        Binding("escape", "leave", "Back", id="coding.back",
                tooltip="Leave the text input; from the codes, back to the protocol list"),
        Binding("ctrl+pagedown", "next_protocol", "Next protocol", priority=True, show=False,
                id="coding.next_protocol"),
        Binding("ctrl+pageup", "previous_protocol", "Prev protocol", priority=True, show=False,
                id="coding.previous_protocol"),
        # Printable twins, for terminals that do not send ctrl+page or function keys (used when not typing).
        # From every pane, the reader's included (there pgdn/pgup page through the text instead).
        Binding("]", "step_field(1)", "Next", show=False,
                tooltip="Next field (after the last one: the next protocol)"),
        Binding("[", "step_field(-1)", "Prev", show=False, tooltip="Previous field"),
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
        Binding("ctrl+z", "undo_code", "Undo code", show=False, id="coding.undo",
                tooltip="Undo the last change of a code on this screen (written as a new save)"),
        Binding("question_mark", "app.show_keys", "Keys", show=False, tooltip=FRONT_KEYS[1].tooltip),
        *[Binding(key, f"pick_key('{key}')", show=False) for key in "1234567890"],
    ]

    EXTRA_KEYS = [
        ("[key] shown by a code", "pick that code (only while the codes have the focus)"),
        ("enter (on codes)", "pick the highlighted code"),
        ("delete (on codes)", "clear the code of this field"),
        ("tab / shift+tab", "codes, source location, basis, citations, fields, sources"),
        ("→ (in citations)", "accept the completed citation key"),
        ("letters, digits, ? [ ]", "are keys only while no text input has the focus"),
        ("ctrl+z (in a text input)", "undo typing in that input"),
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
        self._initial_sheet = sheet
        # Kept here, not queried: check_action runs for every binding on every refresh.
        self._mode = MODE_CODING
        self._source_list: SourceList | None = None

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
        self.sources.show(self.protocol.sources, self.read_shares())
        self._follow_protocol()
        self._show_notes()
        self._show_field()
        self._set_mode(MODE_CODING)

    def refresh_protocol(self) -> None:
        """Show the protocol's name and sources again (after they were edited)."""
        self.sources.show(self.protocol.sources, self.read_shares())
        self._follow_protocol()
        self._show_title()

    # ------------------------------------------------------------------ rendering

    def _show_title(self) -> None:
        protocol = self.protocol
        session = self.session
        position = session.index_of(protocol.id) + 1
        coded = sum(1 for fld in self.rubric.fields if self._draft(fld.id).is_coded)
        mode = " · notes" if self.mode == MODE_NOTES else ""
        # layout=False: the title's size is the top bar's (1fr × 1), whatever it says; a layout of
        # the whole screen at each code pick was a large part of what a key cost (issue 32).
        self.query_one("#coding-title", Static).update(
            Text.assemble((protocol.name, "bold"), f" {position}/{len(session.protocols)}{mode}",
                          (f" · {coded}/{len(self.rubric.fields)} coded", "dim")), layout=False)

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
        self.editor.show_quotes(cell, self.protocol.sources, read=self.read_line())
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
            # While the reader pane has the focus, pgdn/pgup page through its text ([ and ] still move).
            return on_coding and not self._reading()
        if action in ("step_field", "undo_code"):
            return on_coding
        if action in ("toggle_aside", "read_sources"):
            return on_coding
        if action in ("open_source", "show_source"):
            source = self._source_list.selected if self._source_list is not None else None
            return source is not None and bool(source.url)
        return True

    def action_step_field(self, delta: int) -> None:
        """``]`` / ``[``: the next or previous field, from any pane. The focus stays in the reader
        when it is there (the reader follows the cell); elsewhere it goes to the codes."""
        reading = self._reading()
        index = self.field_index + delta
        if reading and 0 <= index < len(self.rubric.fields):
            self.go_to_field(index, focus_codes=False)  # the reader keeps the focus
            return
        if delta > 0:
            self.action_next_field()
        else:
            self.action_previous_field()
        if reading and self._reader is not None:
            # Into another protocol: queued after the codes' focus that the new protocol sets.
            self._reader.text_area.focus()

    def action_pick_key(self, key: str) -> None:
        # Code keys act on the cell only while its codes have the focus: a digit pressed in the
        # reader, the field list or the sources never changes a code behind the reviewer's back.
        if self.focused is not self.code_choice:
            self.notify(f"{key} picks a code only while the codes have the focus: escape goes back to them.",
                        severity="warning")
            return
        if key in self.code_choice.keys:
            # From the key on, not only from the save: the list's highlight moving is not drawn
            # on its own before the save either (issue 32). Released after the pick if nothing is saved.
            self.coder_app.hold_screen_for_save()
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
