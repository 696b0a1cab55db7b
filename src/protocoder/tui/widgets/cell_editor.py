"""CellEditor: one cell of the rubric being coded — the question, the codes, what is missing, the inputs.

Laid out so that at 80×24 all of it is on screen at once: the question and the codes
never scroll away while the basis is typed (the basis takes the height that is left).
The editor only shows a cell and reports edits; the coding screen keeps the drafts and
writes them (attributes down: :meth:`CellEditor.show`; messages up: :class:`CellEditor.Edited`
and :class:`CodeChoice.Picked`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static, TextArea

from ...evidence.quotes import Anchor, anchor, printable
from ...evidence.snapshots import location_text
from ...model import Cell, Field, Rubric, Source
from .citations import CitationsField
from .code_choice import CodeChoice
from .rubric_guide import requirement_text
from .rubric_text import RubricText
from .text_inputs import TextBox, TextLine

QUOTE_LINES = 3
"""Most lines the cell's quotes take (one per quote, the last saying how many more there are)."""


def _update_line(status: Static, text: str) -> None:
    """Show ``text`` in ``status`` (height auto), laying the screen out again only when the number
    of lines it wraps to changes: a layout of the whole screen at each code pick was a large part
    of what a key cost in a served session (issue 32)."""
    from textual.content import Content

    width = status.content_size.width
    old = str(status.content) if width else None
    same = old is not None and len(Content(old).wrap(width)) == len(Content(text).wrap(width))
    status.update(text, layout=not same)


class CellEditor(Vertical):
    """The field's heading and question, its codes with their keys, the requirement line and the inputs."""

    @dataclass
    class Edited(Message):
        """The reviewer typed in the source location, basis or citations: ``cell`` is the new version."""

        editor: CellEditor
        cell: Cell

    def __init__(self, bib_keys: list[str], *, read_only: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._bib_keys = bib_keys
        self._read_only = read_only
        self.cell: Cell | None = None
        """The cell shown, as last set or edited."""
        self._rubric: Rubric | None = None

    def compose(self) -> ComposeResult:
        read_only = self._read_only
        yield Static("", id="field-title")
        yield RubricText(id="field-question")
        yield CodeChoice(id="code-choice")
        yield Static("", id="cell-missing")
        with Horizontal(classes="cell-row"):
            yield Label("Source", classes="cell-label")
            yield TextLine(id="cell-source", placeholder="where in the sources: Sec. 3.2, App. A", compact=True,
                           disabled=read_only)
        with Horizontal(classes="cell-row", id="cell-quotes-row"):
            yield Label("Quotes", classes="cell-label")
            yield Static("", id="cell-quotes")
        with Horizontal(classes="cell-row", id="cell-basis-row"):
            yield Label("Basis", classes="cell-label")
            yield TextBox(id="cell-basis", compact=True, read_only=read_only,
                          placeholder="what the sources say, in a sentence or more")
        with Horizontal(classes="cell-row", id="cell-cites-row"):
            yield Label("Cites", classes="cell-label")
            yield CitationsField(self._bib_keys, input_id="cell-cites", id="cell-cites-field", compact=True,
                                 placeholder="keys from references.bib (→ completes)", disabled=read_only)

    # ------------------------------------------------------------------ parts

    @property
    def code_choice(self) -> CodeChoice:
        return self.query_one("#code-choice", CodeChoice)

    @property
    def citations(self) -> CitationsField:
        return self.query_one("#cell-cites-field", CitationsField)

    # ------------------------------------------------------------------ attributes down

    def show(self, rubric: Rubric, fld: Field, position: int, count: int, cell: Cell) -> None:
        """Show ``cell`` of field ``fld`` (the ``position``-th of ``count``, from 1)."""
        self._rubric = rubric
        self.cell = cell
        self.query_one("#field-title", Static).update(
            Text.assemble((fld.label, "bold"), (f" · field {position}/{count}", "dim")))
        self.query_one("#field-question", RubricText).show(fld.question or "*(no question given)*")
        self.code_choice.show(tuple(rubric.code(code_id) for code_id in fld.codes), cell.code,
                              reserved=rubric.code_ids)
        with self.prevent(Input.Changed, TextArea.Changed):
            source = self.query_one("#cell-source", Input)
            if source.value != cell.source:
                source.value = cell.source
            basis = self.query_one("#cell-basis", TextArea)
            if basis.text != cell.basis:
                basis.load_text(cell.basis)
            cites_text = ", ".join(cell.cites)
            if self.citations.input.value != cites_text:
                self.citations.input.value = cites_text
        self.citations.check()
        self.show_status(cell)

    def show_quotes(self, cell: Cell, sources: tuple[Source, ...], *, read: str = "") -> None:
        """List the cell's quotes, one line each (a drifted one says so first); shown only when the
        cell has quotes or the protocol has pinned snapshots to quote from. A cell without quotes
        shows ``read`` instead: what its reviewer read of each source (what an NR rests on)."""
        row = self.query_one("#cell-quotes-row")
        row.display = bool(cell.quotes) or any(source.has_snapshot for source in sources)
        if not row.display:
            return
        listing = self.query_one("#cell-quotes", Static)
        if not cell.quotes:
            listing.update(Text(f"none{f' · {read}' if read else ''}: ctrl+l reads the pinned snapshots to quote",
                                style="dim"))
            return
        by_id = {source.id: source for source in sources if source.id}
        lines = []
        # At most QUOTE_LINES lines, so the question, codes and inputs keep their place at 80×24.
        shown = cell.quotes if len(cell.quotes) <= QUOTE_LINES else cell.quotes[:QUOTE_LINES - 1]
        for number, quote in enumerate(shown, 1):
            line = Text(f"{number}. ", style="dim")
            source = by_id.get(quote.source)
            if source is not None and anchor(quote, source) is Anchor.DRIFTED:
                line.append("drifted: not in the current version · ", style="bold yellow")
            where = location_text(quote.page, quote.section)
            if where:
                line.append(f"{where}: ", style="dim")
            line.append(f"“{' '.join(printable(quote.text).split())}”")
            lines.append(line)
        if len(shown) < len(cell.quotes):
            lines.append(Text(f"and {len(cell.quotes) - len(shown)} more: ctrl+l lists them all", style="dim"))
        listing.update(Text("\n").join(lines))

    def mark(self, cell: Cell) -> None:
        """Show a new code for the same cell (the inputs already hold its text)."""
        self.cell = cell
        self.code_choice.mark(cell.code)
        self.show_status(cell)

    def show_status(self, cell: Cell) -> None:
        """The line under the codes: not coded, what the code still requires, or complete."""
        status = self.query_one("#cell-missing", Static)
        if cell.code is None:
            _update_line(status, f"not coded: press {self.code_choice.key_hint}, or ctrl+g for guided")
            status.set_classes("-uncoded")
            return
        assert self._rubric is not None
        lacking = cell.missing(self._rubric)
        if lacking:
            _update_line(status, f"{cell.code} requires {requirement_text(lacking)}")
            status.set_classes("-missing")
        else:
            _update_line(status, f"✓ {cell.code} is complete")
            status.set_classes("-complete")

    def cell_from_inputs(self) -> Cell:
        """The shown cell with the text now in the inputs."""
        assert self.cell is not None
        return replace(self.cell, source=self.query_one("#cell-source", Input).value,
                       basis=self.query_one("#cell-basis", TextArea).text, cites=self.citations.cites)

    # ------------------------------------------------------------------ messages up

    @on(Input.Changed, "#cell-source")
    @on(Input.Changed, "#cell-cites")
    @on(TextArea.Changed, "#cell-basis")
    def _text_changed(self, event: Input.Changed | TextArea.Changed) -> None:
        event.stop()
        if self.cell is None:
            return
        self.cell = self.cell_from_inputs()
        self.post_message(self.Edited(self, self.cell))
