"""The adjudication app (``protocoder adjudicate``, and ``serve --app adjudicate``): one screen,
:class:`AdjudicationScreen`, with the app's keys and palette."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..screens import FOCUS_KEYS, ProgressScreen, show_keys
from ..screens.progress import team_progress
from ..terminal_keys import read_escape_tab_as_typed
from .screen import AdjudicationScreen

_TUI = Path(__file__).resolve().parent.parent
"""The coding app's folder, where the style sheets are."""


class AdjudicationApp(App[None]):
    """``protocoder adjudicate``: resolve every disagreement with a recorded reason."""

    CSS_PATH = [_TUI / "app.tcss", _TUI / "adjudicate.tcss"]
    TITLE = "protocoder adjudicate"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("f1", "show_keys", "Keys", id="app.keys"),
        Binding("f9", "show_progress", "Progress", show=False, id="adjudicate_app.progress",
                tooltip="The team's progress, as protocoder status shows it"),
        *FOCUS_KEYS,
    ]

    def __init__(self, workspace: Path, adjudicator: str) -> None:
        super().__init__()
        self.workspace = workspace
        self.adjudicator = adjudicator

    def on_mount(self) -> None:
        self.push_screen(AdjudicationScreen(self.workspace, self.adjudicator))

    def action_show_progress(self) -> None:
        """The team's progress (what ``protocoder status`` prints): the owner's and adjudicators' view."""
        if isinstance(self.screen, ProgressScreen):
            return
        self.push_screen(ProgressScreen("Team progress", team_progress(self.workspace)))

    def action_show_keys(self) -> None:
        """Show every key of the current screen."""
        self.push_screen(show_keys(self.screen, self.BINDINGS, self.get_key_display))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" (its help panel) would sit beside ours under the same name.
        yield from (command for command in super().get_system_commands(screen) if command.title != "Keys")
        yield SystemCommand("Keys", "Show every key of this screen", self.action_show_keys)
        if isinstance(screen, AdjudicationScreen):  # every key of the screen, for the mouse and the palette
            yield SystemCommand("Record decision", "Record the decision with its reason", screen.action_record)
            yield SystemCommand("Take a cell", "Take one reviewer's cell whole (again: the next reviewer, then none)",
                                screen.action_cycle_take)
            yield SystemCommand("Quotes", "Every reviewer's quotes of this cell, whole", screen.action_show_quotes)
            yield SystemCommand("Read a reviewer's cell", "One reviewer's whole cell at full width (f3; f2: the next)",
                                screen.action_read)
            yield SystemCommand("Evidence kept", "Whose evidence the decision keeps (f4)", screen.action_cycle_evidence)
        if isinstance(screen, AdjudicationScreen) and screen.current is not None:
            yield SystemCommand("Comment on this cell", "Add your comment to the shown cell's discussion",
                                screen.action_comment)
        yield SystemCommand("Team progress", "What protocoder status shows: progress per reviewer, cells to "
                            "decide, releases (f9)", self.action_show_progress)


def make_adjudication_app(workspace: Path, adjudicator: str) -> AdjudicationApp:
    """The one factory the CLI and the tests use."""
    return AdjudicationApp(workspace, adjudicator)


read_escape_tab_as_typed()
