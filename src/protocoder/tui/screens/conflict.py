"""ConflictModal: the reviewer's version of a cell or note next to the one on disk."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ...model import Cell
from ..saving import KEEP_MINE, TAKE_THEIRS
from ..session import CellEdit, Edit


def describe(value: Cell | str | None) -> Text:
    """A cell or note as plain text for side-by-side comparison."""
    if isinstance(value, str):
        return Text(value or "(empty)")
    if value is None:
        return Text("(not coded)", style="italic")
    text = Text()
    text.append("code: ", style="bold").append(f"{value.code or '(none)'}\n")
    text.append("source: ", style="bold").append(f"{value.source or '-'}\n")
    text.append("basis: ", style="bold").append(f"{value.basis or '-'}\n")
    text.append("cites: ", style="bold").append(", ".join(value.cites) or "-")
    return text


class ConflictModal(ModalScreen[str]):
    """The file changed on disk since it was read: keep mine (``m``) or take theirs (``t``).

    Keeping mine writes only this cell (or note) into the file as it is now; taking
    theirs reloads what is on disk. Nothing is written until the reviewer chooses.
    """

    BINDINGS = [
        Binding("m", "choose('mine')", "Keep mine", id="conflict.mine"),
        Binding("t", "choose('theirs')", "Take theirs", id="conflict.theirs"),
    ]

    def __init__(self, where: str, what: str, edit: Edit, theirs: Cell | str | None) -> None:
        super().__init__()
        self._where = where
        self._what = what
        self.edit = edit
        self.theirs = theirs

    def compose(self) -> ComposeResult:
        mine = self.edit.cell if isinstance(self.edit, CellEdit) else self.edit.text
        with Vertical(classes="dialog", id="conflict-dialog"):
            yield Static(f"{self._where} changed on disk", classes="dialog-title")
            yield Static(f"Someone (another editor or another session) changed it since it was read. "
                         f"Which version of {self._what} should the file keep?", classes="dialog-body")
            with Horizontal(id="conflict-versions"):
                with VerticalScroll(classes="conflict-version"):
                    yield Static("Mine", classes="conflict-heading")
                    yield Static(describe(mine), id="conflict-mine")
                with VerticalScroll(classes="conflict-version"):
                    yield Static("On disk", classes="conflict-heading")
                    yield Static(describe(self.theirs), id="conflict-theirs")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Keep mine (m)", id="conflict-keep", variant="primary")
                yield Button("Take theirs (t)", id="conflict-take")

    def action_choose(self, choice: str) -> None:
        self.dismiss(KEEP_MINE if choice == "mine" else TAKE_THEIRS)

    @on(Button.Pressed)
    def choose_from_button(self, event: Button.Pressed) -> None:
        self.dismiss(KEEP_MINE if event.button.id == "conflict-keep" else TAKE_THEIRS)
