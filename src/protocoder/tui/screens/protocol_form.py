"""ProtocolFormScreen: add a protocol, or edit one's name, citations and pinned sources."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Static

from ...errors import InvalidInput, ProtocoderError
from ...model import Protocol, Source, is_slug, slugify
from ...storage.mappings import protocol_problems
from ..session import Session
from ..widgets import AppFooter, CitationsField, TextLine
from .bibtex import BibtexScreen
from .confirm import ConfirmModal
from .keys import FRONT_KEYS

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it


def _row(label: str, widget: Widget, *, row_id: str | None = None) -> Horizontal:
    """One labelled line of the form: the label on the left, the input on the right."""
    return Horizontal(Label(label, classes="form-label"), widget, classes="form-row", id=row_id)


class SourceEditor(Vertical):
    """The four inputs of one pinned source, then a button that removes it.

    In reading order, which is also the tab order: title, URL, version, date accessed,
    Remove. (The button used to come first, so a title typed after tab was lost on it.)
    """

    def __init__(self, number: int, source: Source | None) -> None:
        super().__init__(classes="source-editor")
        self.number = number
        self.source = source

    def compose(self) -> ComposeResult:
        source = self.source
        yield Static(f"Source {self.number}", classes="source-number")
        yield _row("Title", TextLine(source.title if source else "", placeholder="the paper, page or repository",
                                     classes="source-title", compact=True))
        yield _row("URL", TextLine(source.url if source else "", placeholder="https://…", classes="source-url",
                                   compact=True))
        with Horizontal(classes="form-row"):
            yield Label("Version", classes="form-label")
            yield TextLine(source.version if source else "", placeholder="arXiv v2, a commit…",
                           classes="source-version", compact=True)
            yield Label("Accessed", classes="form-label-inline")
            yield TextLine((source.accessed if source else date.today()).isoformat(), placeholder="YYYY-MM-DD",
                           classes="source-accessed", compact=True)
            yield Button("Remove", classes="source-remove", compact=True)

    def value(self, name: str) -> str:
        """The text of one input (``title``, ``version``, ``url`` or ``accessed``)."""
        return self.query_one(f".source-{name}", Input).value.strip()

    def values(self) -> tuple[str, ...]:
        """Every input's text, in order (to tell whether anything was typed)."""
        return tuple(self.value(name) for name in ("title", "url", "version", "accessed"))

    @property
    def is_blank(self) -> bool:
        """Nothing typed but the default date: an unused row, ignored on saving."""
        return not any(self.value(name) for name in ("title", "version", "url"))


class ProtocolFormScreen(Screen[Protocol | None]):
    """Create (``protocol`` None) or edit a protocol; ctrl+s writes it through the store.

    Every check runs before anything is written; problems are listed in the form and the
    reviewer can fix them. The id of an existing protocol is its folder name and cannot
    change here.
    """

    BINDINGS = [
        *FRONT_KEYS,
        Binding("ctrl+s", "save", "Save", priority=True, id="form.save",
                tooltip="Check and write the protocol"),
        Binding("escape", "cancel", "Cancel", id="form.cancel",
                tooltip="Leave the form (asks first when something was typed)"),
        Binding("f3", "add_source", "Source", id="form.add_source", tooltip="Add a source"),
        Binding("ctrl+r", "add_reference", "Reference", id="form.reference",
                tooltip="Paste a BibTeX entry into references.bib"),
    ]

    KEYS_TITLE = "protocol form"

    DEFAULT_CSS = """
    ProtocolFormScreen #form-pin-button { margin-left: 1; }
    """

    def __init__(self, protocol: Protocol | None) -> None:
        super().__init__()
        self.protocol = protocol
        self._id_edited = protocol is not None
        """True once the reviewer typed an id: the name then stops proposing one."""
        self._sources = 0
        self._initial: tuple[object, ...] = ()
        """What the form held when it opened (see :meth:`_typed`)."""

    @property
    def session(self) -> Session:
        return cast("CoderApp", self.app).session

    def compose(self) -> ComposeResult:
        protocol = self.protocol
        with Horizontal(classes="top-bar"):
            title = "New protocol" if protocol is None else f"Edit protocol · {protocol.name}"
            yield Static(title, id="form-title", markup=False)
            yield Static(self.session.reviewer, classes="reviewer-name", markup=False)
        with VerticalScroll(id="form-body"):
            yield _row("Display name", TextLine(protocol.name if protocol else "", id="form-name", compact=True,
                                                placeholder="τ-bench, WebArena, …"))
            yield _row("Id", TextLine(protocol.id if protocol else "", id="form-id", compact=True,
                                      disabled=protocol is not None,
                                      placeholder="the folder name: lowercase letters, digits, single - _ ."))
            yield Static("", id="form-id-hint", classes="form-hint")
            yield _row("Citation keys", CitationsField(self.session.bib_keys, input_id="form-cites",
                                                       id="form-cites-field", compact=True,
                                                       placeholder="keys (→ completes; ctrl+r adds an entry)"))
            yield Static("Sources", classes="side-heading")
            yield Vertical(id="form-sources")
            yield Button("+ Add source (f3)", id="form-add-source", compact=True)
            if protocol is not None:
                # Pinning writes protocol.yaml at once, so it needs a protocol that is saved already.
                with Horizontal(classes="form-row", id="form-pin-row"):
                    yield Label("Pin a copy", classes="form-label")
                    yield TextLine("", id="form-pin", compact=True,
                                   placeholder="a file path or https://… (stored under sources/)")
                    yield Button("Pin", id="form-pin-button", compact=True)
                yield Static("", id="form-pin-hint", classes="form-hint")
            yield Static("", id="form-problems")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (ctrl+s)", id="form-save", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="form-cancel", compact=True)
        yield AppFooter()

    async def on_mount(self) -> None:
        protocol = self.protocol
        if protocol is not None:
            cites = self.query_one("#form-cites-field", CitationsField)
            cites.input.value = ", ".join(protocol.cites)
            for source in protocol.sources:
                await self._add_source(source)
        if protocol is None or not protocol.sources:
            await self._add_source(None)
        self._initial = self._typed()
        self.query_one("#form-name", Input).focus()

    def _typed(self) -> tuple[object, ...]:
        """Everything typed in the form, to tell whether leaving it would lose something."""
        return (self.query_one("#form-name", Input).value, self.query_one("#form-id", Input).value,
                self.query_one("#form-cites", Input).value,
                tuple(editor.values() for editor in self.query(SourceEditor) if not editor.is_blank))

    async def _add_source(self, source: Source | None) -> SourceEditor:
        self._sources += 1
        editor = SourceEditor(self._sources, source)
        await self.query_one("#form-sources", Vertical).mount(editor)
        return editor

    def _renumber(self) -> None:
        for number, editor in enumerate(self.query(SourceEditor), 1):
            editor.number = number
            editor.query_one(".source-number", Static).update(f"Source {number}")
        self._sources = len(self.query(SourceEditor))

    # ------------------------------------------------------------------ id proposal and checks

    @on(Input.Changed, "#form-name")
    def propose_id(self, event: Input.Changed) -> None:
        if not self._id_edited:
            with self.prevent(Input.Changed):
                self.query_one("#form-id", Input).value = slugify(event.value)
            self._check_id()

    @on(Input.Changed, "#form-id")
    def id_typed(self) -> None:
        self._id_edited = True
        self._check_id()

    def _id_problem(self, protocol_id: str) -> str | None:
        if self.protocol is not None:
            return None
        if not protocol_id:
            return "the protocol needs an id"
        if not is_slug(protocol_id):
            return (f"{protocol_id!r} is not a safe id: use lowercase letters and digits, joined by single "
                    "'-', '_' or '.'")
        if protocol_id in self.session.protocol_ids:
            return f"a protocol with id {protocol_id!r} exists already"
        return None

    def _check_id(self) -> None:
        protocol_id = self.query_one("#form-id", Input).value.strip()
        problem = self._id_problem(protocol_id)
        hint = self.query_one("#form-id-hint", Static)
        hint.update(problem or (f"protocols/{protocol_id}/protocol.yaml" if protocol_id else ""))
        hint.set_class(problem is not None and bool(protocol_id), "-invalid")

    def _collect(self) -> tuple[Protocol, list[str]]:
        problems: list[str] = []
        name = self.query_one("#form-name", Input).value.strip()
        protocol_id = self.query_one("#form-id", Input).value.strip()
        if problem := self._id_problem(protocol_id):
            problems.append(problem)
        sources = []
        for editor in self.query(SourceEditor):
            if editor.is_blank:
                continue
            accessed_text = editor.value("accessed")
            try:
                accessed = date.fromisoformat(accessed_text) if accessed_text else date.today()
            except ValueError:
                problems.append(f"source {editor.number}: date accessed {accessed_text!r} is not YYYY-MM-DD")
                accessed = date.today()
            typed = Source(editor.value("title"), editor.value("url"), editor.value("version"), accessed)
            # A pinned snapshot (id, hash, earlier versions) is not edited here: keep it.
            sources.append(replace(editor.source, title=typed.title, url=typed.url, version=typed.version,
                                   accessed=accessed) if editor.source is not None else typed)
        if not sources:
            problems.append("add at least one source: the title, URL and version of what was reviewed")
        cites = self.query_one("#form-cites-field", CitationsField).cites
        protocol = Protocol(protocol_id, name, cites, tuple(sources))
        problems += protocol_problems(protocol, self.session.bib_keys)
        return protocol, problems

    def _show_problems(self, problems: list[str]) -> None:
        box = self.query_one("#form-problems", Static)
        box.update("\n".join(f"• {p}" for p in problems))
        box.set_class(bool(problems), "-shown")
        if problems:
            box.scroll_visible()

    # ------------------------------------------------------------------ actions

    def action_save(self) -> None:
        protocol, problems = self._collect()
        if problems:
            self._show_problems(problems)
            return
        session = self.session
        try:
            if self.protocol is None:
                session.add_protocol(protocol)
            else:
                session.update_protocol(protocol)
        except InvalidInput as exc:
            self._show_problems([str(p) for p in exc.problems])
            return
        except ProtocoderError as exc:
            self._show_problems(str(exc).split("; "))
            return
        self.dismiss(protocol)

    @work(exclusive=True, group="form-cancel", exit_on_error=False)
    async def action_cancel(self) -> None:
        """Leave the form; when something was typed, only after the reviewer says to discard it."""
        if self._typed() != self._initial and not await self.app.push_screen_wait(ConfirmModal(
                "Discard what you typed?", "The protocol has not been saved: leaving now loses the changes in "
                "this form. ctrl+s saves them instead.", yes="Discard", no="Keep editing", danger=True)):
            return
        self.dismiss(None)

    async def action_add_source(self) -> None:
        editor = await self._add_source(None)
        editor.query_one(".source-title", Input).focus()
        editor.scroll_visible()

    def action_add_reference(self) -> None:
        def added(keys: list[str] | None) -> None:
            if keys:
                field = self.query_one("#form-cites-field", CitationsField)
                present = list(field.cites)
                field.input.value = ", ".join(present + [k for k in keys if k not in present])
                self.notify(f"Added to references.bib: {', '.join(keys)}")

        self.app.push_screen(BibtexScreen(), added)

    @on(Button.Pressed, "#form-save")
    def save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#form-cancel")
    def cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#form-add-source")
    async def add_source_pressed(self) -> None:
        await self.action_add_source()

    @on(Button.Pressed, "#form-pin-button")
    @on(Input.Submitted, "#form-pin")
    def pin_pressed(self) -> None:
        target = self.query_one("#form-pin", Input).value.strip()
        hint = self.query_one("#form-pin-hint", Static)
        if not target:
            hint.update("type a file path or a URL to pin a copy of it")
            return
        assert self.protocol is not None  # the row is shown only when editing a saved protocol
        hint.set_class(False, "-invalid")
        hint.update(f"Reading {target} …")
        self.pin(self.protocol.id, target)

    @work(thread=True, exclusive=True, group="form-pin", exit_on_error=False)
    def pin(self, protocol_id: str, target: str) -> None:
        """Pin ``target`` (a file or a URL) in a thread: a fetch may take seconds."""
        try:
            source = self.session.pin_source(protocol_id, target)
        except ProtocoderError as exc:
            message = "; ".join(str(p) for p in exc.problems) if isinstance(exc, InvalidInput) else str(exc)
            self.app.call_from_thread(self._pin_failed, message)
            return
        self.app.call_from_thread(self._pinned, source)

    def _pin_failed(self, message: str) -> None:
        hint = self.query_one("#form-pin-hint", Static)
        hint.update(f"Not pinned: {message}")
        hint.set_class(True, "-invalid")

    async def _pinned(self, source: Source) -> None:
        """Show a just-pinned source among the others; it is on disk already, so leaving the form keeps it."""
        blank = [editor for editor in self.query(SourceEditor) if editor.is_blank]
        for editor in blank:
            await editor.remove()
        editor = await self._add_source(source)
        self._renumber()
        initial = self._initial
        self._initial = (*initial[:3], (*initial[3], editor.values())) if len(initial) == 4 else initial
        self.query_one("#form-pin", Input).value = ""
        hint = self.query_one("#form-pin-hint", Static)
        hint.set_class(False, "-invalid")
        hint.update(f"Pinned source {source.id} (sha256 {source.sha256[:12]}…, {source.media_type})")
        self.notify(f"Pinned {source.title} as source {source.id}", markup=False)

    @on(Button.Pressed, ".source-remove")
    def remove_pressed(self, event: Button.Pressed) -> None:
        self.remove_source(next(a for a in event.button.ancestors if isinstance(a, SourceEditor)))

    @work(exclusive=True, group="form-remove", exit_on_error=False)
    async def remove_source(self, editor: SourceEditor) -> None:
        """Remove a source's inputs; when they hold text, only after the reviewer confirms."""
        if not editor.is_blank and not await self.app.push_screen_wait(ConfirmModal(
                f"Remove source {editor.number}?", f"“{editor.value('title') or editor.value('url')}” and what "
                "was typed for it leave the form.", yes="Remove", no="Keep it", danger=True)):
            return
        await editor.remove()
        self._renumber()
