"""ErrorScreen: a file that cannot be read, named with line and column; it is left untouched."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ...errors import Problem
from ..widgets import AppFooter
from .keys import FRONT_KEYS

RETRY = "retry"


class ErrorScreen(Screen[str | None]):
    """Shows the problems of an unreadable file; ``r`` retries, escape goes back.

    With ``fatal`` (the workspace itself cannot be coded) there is nowhere to go back to,
    so the only way out is quitting.
    """

    BINDINGS = [
        *FRONT_KEYS,
        Binding("r", "retry", "Retry", id="error.retry"),
        Binding("escape", "back", "Back", id="error.back"),
    ]

    def __init__(self, title: str, problems: Sequence[Problem], *, fatal: bool = False,
                 advice: str = "") -> None:
        super().__init__()
        self._title = title
        self.problems = list(problems)
        self.fatal = fatal
        self._advice = advice or (
            "The file has not been changed and will not be written while it is broken. "
            "Fix it in an editor, then press r to retry.")

    def compose(self) -> ComposeResult:
        who = getattr(self.app, "reviewer", None) or getattr(self.app, "adjudicator", None) or ""
        with Horizontal(classes="top-bar"):
            yield Static(self.app.title, markup=False)
            yield Static(who, classes="reviewer-name", markup=False)
        with Vertical(id="error-box"):
            yield Static(self._title, id="error-title")
            with VerticalScroll(id="error-problems"):
                for problem in self.problems:
                    yield Static(str(problem), classes="error-problem", markup=False)
            yield Static(self._advice, id="error-advice")
        yield AppFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "back" and self.fatal)

    def action_retry(self) -> None:
        self.dismiss(RETRY)

    def action_back(self) -> None:
        self.dismiss(None)
