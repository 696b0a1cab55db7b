"""My cells as a grid: the reviewer's own codes, protocol × field, like an extraction sheet.

Only this reviewer's sheets are read (never another reviewer's: blinding). Each cell shows
its code, ``!`` when it lacks what the rubric requires for that code, ``*`` when it is
assisted (candidate passages were shown before the code was chosen), ``…`` for a draft
(text without a code) and ``·`` when not coded; each row ends with how many of the fields are
complete. Enter opens the cell in the coding screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ...model import Cell, Rubric, Sheet
from ..widgets import AppFooter
from .keys import FRONT_KEYS

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it

LEGEND = "! lacks what the rubric requires · * assisted · … draft · · not coded · enter opens the cell · escape back"


def grid_mark(cell: Cell | None, rubric: Rubric) -> Text:
    """What the grid prints for one of the reviewer's cells."""
    if cell is None:
        return Text("·", style="dim")
    if cell.code is None:
        return Text("…", style="dim")
    text = Text(cell.code, style="bold")
    if not cell.is_complete(rubric):
        text.append("!", style="bold red")
    if cell.assisted:
        text.append("*", style="cyan")
    return text


def complete_count(sheet: Sheet, rubric: Rubric) -> int:
    """How many of the rubric's fields the reviewer has coded completely in this sheet."""
    return sum(1 for field_id in rubric.field_ids
               if (cell := sheet.cells.get(field_id)) is not None and cell.is_complete(rubric))


class GridScreen(Screen[tuple[str, str] | None]):
    """The reviewer's own cells, protocol × field; dismissed with the (protocol, field) to open."""

    BINDINGS = [
        *FRONT_KEYS,
        Binding("enter", "open_cell", "Open", id="grid.open", tooltip="Code the highlighted cell"),
        Binding("escape", "back", "Back", id="grid.back", tooltip="Back to where you were"),
    ]
    KEYS_TITLE = "my cells"

    def compose(self) -> ComposeResult:
        yield Static("", id="grid-title", classes="top-bar", markup=False)
        yield Static(LEGEND, id="grid-legend", markup=False)
        yield DataTable(id="grid-table", cursor_type="cell", zebra_stripes=True)
        yield AppFooter()

    @property
    def coder(self) -> CoderApp:
        return self.app  # type: ignore[return-value]

    def on_mount(self) -> None:
        session = self.coder.session
        rubric = session.rubric
        assert rubric is not None
        table = self.query_one("#grid-table", DataTable)
        self.fields = list(rubric.field_ids)
        self.protocols = [p.id for p in session.protocols]
        table.add_column("Protocol", key="protocol")
        for fld in rubric.fields:
            table.add_column(fld.short or fld.id, key=fld.id)
        table.add_column("Done", key="done")
        total = done = 0
        for protocol in session.protocols:
            sheet = session.sheet(protocol.id)
            complete = complete_count(sheet, rubric)
            total += len(self.fields)
            done += complete
            table.add_row(Text(protocol.name), *(grid_mark(sheet.cells.get(f), rubric) for f in self.fields),
                          Text(f"{complete}/{len(self.fields)}", style="dim"), key=protocol.id)
        self.query_one("#grid-title", Static).update(
            f"My cells · {session.reviewer} · {done} of {total} complete")
        table.cursor_coordinate = table.cursor_coordinate._replace(column=1) if self.fields else table.cursor_coordinate
        table.focus()

    def selected(self) -> tuple[str, str] | None:
        """The (protocol, field) under the cursor (the first field on the protocol's name or count)."""
        table = self.query_one("#grid-table", DataTable)
        if not self.protocols or not self.fields:
            return None
        row, column = table.cursor_coordinate
        field_index = min(max(column - 1, 0), len(self.fields) - 1)
        return self.protocols[row], self.fields[field_index]

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_open_cell()

    def action_open_cell(self) -> None:
        self.dismiss(self.selected())

    def action_back(self) -> None:
        self.dismiss(None)
