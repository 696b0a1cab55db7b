"""CodingScreen: one protocol, field by field, with its sources and descriptive notes.

What the reviewer types lives in :attr:`CodingScreen.drafts` (and ``note_drafts``) and is
queued for writing when a code is picked, ~0.5 s after typing stops, when an input loses
focus, and before moving to another field or protocol or quitting.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantBlur
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import (
    Footer,
    Input,
    Label,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.widgets.option_list import Option

from ...evidence.quotes import Anchor, anchor
from ...evidence.snapshots import location_text
from ...model import Cell, Field, Protocol, Quote, Rubric, Sheet, Source
from ..session import CellEdit, NoteEdit, Session, cell_content
from ..widgets import CitationsField, CodeChoice, FieldList, RubricText, SaveIndicator
from .guided import GuidedModal
from .reason import ReasonModal

if TYPE_CHECKING:
    from ..app import CoderApp

DEBOUNCE_SECONDS = 0.5
"""Typing is written this long after the last keystroke (and at once on blur or moving on)."""

REQUIREMENT_LABELS = {"source": "a source location", "basis": "a basis", "cites": "citations"}


def _clip(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` characters with an ellipsis (the side column is narrow)."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


class CodingScreen(Screen[None]):
    """Code one protocol: pick a code per field, give its source location, basis and citations."""

    BINDINGS = [
        # Priority: moving on must work from inside the text inputs too.
        Binding("pagedown", "next_field", "Next field", priority=True, id="coding.next_field"),
        Binding("pageup", "previous_field", "Prev field", priority=True, id="coding.previous_field"),
        Binding("ctrl+g", "guided", "Guided", id="coding.guided"),
        Binding("ctrl+t", "toggle_notes", "Notes", id="coding.notes"),
        Binding("escape", "leave", "Back", id="coding.back"),
        Binding("ctrl+pagedown", "next_protocol", "Next protocol", priority=True, show=False,
                id="coding.next_protocol"),
        Binding("ctrl+pageup", "previous_protocol", "Prev protocol", priority=True, show=False,
                id="coding.previous_protocol"),
        # Printable twins, for terminals that do not send ctrl+page keys (used when not typing).
        Binding("]", "next_field", "Next field", show=False),
        Binding("[", "previous_field", "Prev field", show=False),
        Binding("}", "next_protocol", "Next protocol", show=False),
        Binding("{", "previous_protocol", "Prev protocol", show=False),
        Binding("ctrl+o", "open_source", "Open source", show=False, id="coding.open_source"),
        Binding("o", "open_source", "Open source", show=False),
        Binding("ctrl+s", "save_now", "Save now", show=False, id="coding.save"),
        Binding("ctrl+l", "read_sources", "Read & quote", show=False, id="coding.reader"),
        Binding("r", "read_sources", "Read & quote", show=False),
        Binding("question_mark", "app.show_keys", "Keys", show=False),
        *[Binding(str(n), f"pick_code({n})", show=False) for n in range(1, 10)],
    ]

    EXTRA_KEYS = [
        ("1 … 9", "pick the Nth code of the field (when not typing)"),
        ("tab / shift+tab", "source location, basis, citations and back"),
        ("→ (in citations)", "accept the completed citation key"),
        ("delete (on codes)", "clear the code of this field"),
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
    def code_choice(self) -> CodeChoice:
        return self.query_one("#code-choice", CodeChoice)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        read_only = self.session.read_only
        with Horizontal(classes="top-bar"):
            yield Static("", id="coding-title")
            yield SaveIndicator(self.coder_app.saver, id="save-indicator", classes="save-indicator")
        with TabbedContent(id="coding-tabs", initial="tab-coding"):
            with TabPane("Coding", id="tab-coding"), Horizontal(id="coding-body"):
                with Vertical(id="coding-side"):
                    yield Static("Fields", classes="side-heading")
                    yield FieldList(id="field-list")
                    yield Static("Sources", classes="side-heading")
                    yield OptionList(id="source-list")
                    yield Static("", id="source-detail")
                with VerticalScroll(id="cell-pane"):
                    yield Static("", id="field-title")
                    yield RubricText(id="field-question")
                    yield CodeChoice(id="code-choice")
                    yield Static("", id="cell-missing")
                    yield Label("Source location", classes="input-label")
                    yield Input(id="cell-source", placeholder="where in the sources: Sec. 3.2, App. A",
                                disabled=read_only)
                    yield Static("", id="cell-quotes")
                    yield Label("Basis", classes="input-label")
                    yield TextArea(id="cell-basis", soft_wrap=True, tab_behavior="focus", read_only=read_only)
                    yield Label("Citations (→ completes a key)", classes="input-label")
                    yield CitationsField(self.session.bib_keys, input_id="cell-cites", id="cell-cites-field",
                                         disabled=read_only)
                    yield RubricText(id="field-guidance")
            with TabPane("Notes", id="tab-notes"), VerticalScroll(id="notes-pane"):
                if not self.rubric.prompts:
                    yield Static("The rubric asks for no descriptive notes.", classes="note-help")
                for prompt in self.rubric.prompts:
                    yield Label(prompt.label, classes="note-label")
                    if prompt.help:
                        yield Static(prompt.help, classes="note-help")
                    yield TextArea(id=f"note-{prompt.id}", classes="note-input", soft_wrap=True,
                                   tab_behavior="focus", read_only=read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.show_protocol(self.protocol_id, self._initial_sheet, field_id=self._initial_field)

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
        self._show_sources()
        self._show_notes()
        self._show_field()
        self.query_one("#coding-tabs", TabbedContent).active = "tab-coding"
        self.code_choice.focus()

    def refresh_protocol(self) -> None:
        """Show the protocol's name and sources again (after they were edited)."""
        self._show_sources()
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
        self._show_field(keep_focus=True)

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
        self.query_one("#coding-title", Static).update(
            Text.assemble((protocol.name, "bold"), f" · {position}/{len(session.protocols)}"
                          f" · {coded}/{len(self.rubric.fields)} coded · {session.reviewer}"))

    def _show_sources(self) -> None:
        sources = self.query_one("#source-list", OptionList)
        protocol = self.protocol
        sources.set_options([Option(Text.assemble(_clip(source.title, 40), ("\n  " + _clip(source.version, 20), "dim")),
                                    id=str(i)) for i, source in enumerate(protocol.sources)])
        if protocol.sources:
            sources.highlighted = 0
        self._show_source_detail()

    def _show_source_detail(self) -> None:
        detail = self.query_one("#source-detail", Static)
        source = self._selected_source()
        if source is None:
            detail.update("no sources pinned" if not self.protocol.sources else "")
            return
        detail.update(Text.assemble((source.url or "(no URL)", "underline" if source.url else "dim"),
                                    f"\naccessed {source.accessed.isoformat()}",
                                    ("\no or ctrl+o opens it" if source.url else "", "dim")))

    def _selected_source(self) -> Source | None:
        sources = self.query_one("#source-list", OptionList)
        protocol = self.protocol
        if sources.highlighted is None or sources.highlighted >= len(protocol.sources):
            return None
        return protocol.sources[sources.highlighted]

    def _show_notes(self) -> None:
        with self.prevent(TextArea.Changed):
            for prompt in self.rubric.prompts:
                area = self.query_one(f"#note-{prompt.id}", TextArea)
                text = self.note_drafts.get(prompt.id, "")
                if area.text != text:
                    area.load_text(text)

    def _show_field(self, *, keep_focus: bool = False) -> None:
        fld = self.field
        cell = self._draft(fld.id)
        rubric = self.rubric
        self._show_title()
        self.query_one("#field-title", Static).update(
            Text.assemble((fld.label, "bold"), (f"  field {self.field_index + 1} of {len(rubric.fields)}", "dim")))
        self.query_one("#field-question", RubricText).show(fld.question or "*(no question given)*")
        self.code_choice.show(tuple(rubric.code(code_id) for code_id in fld.codes), cell.code)
        with self.prevent(Input.Changed, TextArea.Changed):
            source = self.query_one("#cell-source", Input)
            if source.value != cell.source:
                source.value = cell.source
            basis = self.query_one("#cell-basis", TextArea)
            if basis.text != cell.basis:
                basis.load_text(cell.basis)
            cites_field = self.query_one("#cell-cites-field", CitationsField)
            cites_text = ", ".join(cell.cites)
            if cites_field.input.value != cites_text:
                cites_field.input.value = cites_text
        cites_field.check()
        guidance = []
        if fld.definition:
            guidance.append(f"**Definition.** {fld.definition}")
        if fld.guidance:
            guidance.append(fld.guidance)
        self.query_one("#field-guidance", RubricText).show("\n\n".join(guidance))
        self._show_missing(cell)
        self._show_quotes(cell)
        field_list = self.query_one("#field-list", FieldList)
        field_list.show(rubric, self.drafts, self.field_index)
        if not keep_focus:
            # After the refresh: focusing the codes would otherwise scroll the question away.
            pane = self.query_one("#cell-pane", VerticalScroll)
            self.call_after_refresh(pane.scroll_home, animate=False)

    def _show_missing(self, cell: Cell) -> None:
        missing = self.query_one("#cell-missing", Static)
        if cell.code is None:
            missing.update(f"not coded: press 1–{len(self.field.codes)} to pick a code, or ctrl+g for guided")
            missing.set_classes("-uncoded")
            return
        lacking = cell.missing(self.rubric)
        if lacking:
            what = ", ".join(REQUIREMENT_LABELS.get(name, name) for name in lacking)
            missing.update(f"{cell.code} requires {what}")
            missing.set_classes("-missing")
        else:
            missing.update(f"✓ {cell.code} is complete")
            missing.set_classes("-complete")

    def _show_quotes(self, cell: Cell) -> None:
        quotes = self.query_one("#cell-quotes", Static)
        has_snapshots = any(s.has_snapshot for s in self.protocol.sources)
        quotes.display = bool(cell.quotes) or has_snapshots
        if not cell.quotes:
            quotes.update(Text("ctrl+l reads the pinned sources and quotes a passage", style="dim"))
            return
        lines = Text()
        sources = {s.id: s for s in self.protocol.sources if s.id}
        for number, quote in enumerate(cell.quotes, 1):
            where = location_text(quote.page, quote.section)
            text = " ".join(quote.text.split())
            lines.append(f"{number}. " + (f"{where}: " if where else ""), style="dim")
            lines.append(f"“{_clip(text, 110)}”")
            source = sources.get(quote.source)
            if source is not None and anchor(quote, source) is Anchor.DRIFTED:
                lines.append("  drifted: not in the current version", style="bold yellow")
            lines.append("\n")
        quotes.update(lines)

    def _after_change(self, cell: Cell, before: Cell | None) -> None:
        # Called on every keystroke: repaint only what the change can alter.
        rubric = self.rubric
        was = (before is not None and before.is_coded, before is not None and before.is_complete(rubric),
               before.code if before is not None else None)
        now = (cell.is_coded, cell.is_complete(rubric), cell.code)
        if was != now or cell.missing(rubric) != (before.missing(rubric) if before is not None else ("code",)):
            self._show_missing(cell)
            self._show_title()
            self.query_one("#field-list", FieldList).update_marker(rubric, cell.field, cell)

    # ------------------------------------------------------------------ editing

    def _cell_from_inputs(self) -> Cell:
        cell = self._draft(self.field.id)
        return replace(cell, source=self.query_one("#cell-source", Input).value,
                       basis=self.query_one("#cell-basis", TextArea).text,
                       cites=self.query_one("#cell-cites-field", CitationsField).cites)

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
        cell = replace(self._cell_from_inputs(), code=code)
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
        self.code_choice.mark(cell.code)
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        self._after_change(cell, before)

    @on(Input.Changed, "#cell-source")
    @on(Input.Changed, "#cell-cites")
    @on(TextArea.Changed, "#cell-basis")
    def cell_text_changed(self) -> None:
        cell = self._cell_from_inputs()
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

    @on(OptionList.OptionHighlighted, "#source-list")
    def source_highlighted(self) -> None:
        self._show_source_detail()

    # ------------------------------------------------------------------ navigation

    def go_to_field(self, index: int, *, focus_codes: bool = True) -> None:
        """Write what is pending and show field ``index``."""
        self.flush_edits()
        self.field_index = index
        self._show_field(keep_focus=not focus_codes)
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
        focused = self.focused
        if isinstance(focused, Input | TextArea):
            # First escape leaves the text input, the second leaves the protocol.
            self.flush_edits()
            if self.query_one("#coding-tabs", TabbedContent).active == "tab-coding":
                self.code_choice.focus()
            else:
                self.query_one("#coding-tabs", TabbedContent).query_one("Tabs").focus()
            return
        self.flush_edits()
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tabs = self.query("#coding-tabs").results(TabbedContent)
        on_coding_tab = next((t.active == "tab-coding" for t in tabs), True)
        if action in ("pick_code", "guided"):
            return on_coding_tab and not self.session.read_only
        if action in ("next_field", "previous_field", "read_sources"):
            return on_coding_tab
        if action == "open_source":
            source = self._selected_source()
            return source is not None and bool(source.url)
        return True

    def action_pick_code(self, number: int) -> None:
        if not self.code_choice.pick(number):
            self.notify(f"{self.field.label} has {len(self.field.codes)} codes.", severity="warning")

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

    def action_toggle_notes(self) -> None:
        tabs = self.query_one("#coding-tabs", TabbedContent)
        self.flush_edits()
        if tabs.active == "tab-coding":
            tabs.active = "tab-notes"
            areas = self.query(".note-input")
            if areas:
                areas.first().focus()
        else:
            tabs.active = "tab-coding"
            self.code_choice.focus()
        self.refresh_bindings()

    @on(TabbedContent.TabActivated)
    def tab_activated(self) -> None:
        self.flush_edits()
        self.refresh_bindings()

    def action_open_source(self) -> None:
        source = self._selected_source()
        if source is not None and source.url:
            self.app.open_url(source.url)
            self.notify(f"Opening {source.url}")

    def action_read_sources(self) -> None:
        """Open the reader on the protocol's snapshots; quotes it takes go into this field's cell."""
        from .reader import ReaderScreen

        self.flush_edits()
        field_id = self.field.id

        def add(quote: Quote) -> Cell:
            cell = self._draft(field_id)
            if not cell.source.strip():
                # The quote's position is the first proposal for the source location (editable).
                cell = replace(cell, source=location_text(quote.page, quote.section))
            return self._write_quotes(replace(cell, quotes=(*cell.quotes, quote)))

        def remove(index: int) -> Cell:
            cell = self._draft(field_id)
            return self._write_quotes(replace(cell, quotes=cell.quotes[:index] + cell.quotes[index + 1:]))

        writable = not self.session.read_only
        self.app.push_screen(ReaderScreen(self.session.paths, self.protocol, self._draft(field_id),
                                          on_quote=add if writable else None, on_remove=remove if writable else None,
                                          field_label=self.field.label),
                             lambda _: self._show_field(keep_focus=False))

    def _write_quotes(self, cell: Cell) -> Cell:
        self.drafts[cell.field] = cell
        self._dirty[("cell", cell.field)] = None
        self.flush_edits()
        return cell

    def action_save_now(self) -> None:
        self.flush_edits()
        self.coder_app.kick_saver()

    def on_unmount(self) -> None:
        self.flush_edits()
