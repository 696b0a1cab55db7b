"""TextLine and TextBox: inputs that never lose what is already in them when focus arrives.

Textual's ``Input`` selects all of its text on focus, so the first key typed after tab
replaced a whole source location or citation list; ``TextArea`` keeps its cursor where it
last was, so text typed after tabbing into a basis landed in front of it. Both put the
cursor at the end instead (a click still places it where the click was: the click is
handled after the focus). Textual calls the ``_on_focus`` of every class in the MRO, so
these handlers add to the base class's rather than replace it.

Both also follow a browser's habit for ctrl+a, which selects all of the text (Textual's
default moves to the start of the line, so text typed next in a browser tab was put in
front of an auto-filled location instead of replacing it). home still goes to the start.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.events import Focus
from textual.widgets import Input, TextArea

SELECT_ALL = Binding("ctrl+a", "select_all", "Select all", show=False)
"""ctrl+a selects all, as in a browser's text fields (it replaces Textual's "go to start")."""


class TextLine(Input):
    """A one-line input whose cursor goes to the end of its text on focus; ctrl+a selects all."""

    BINDINGS = [SELECT_ALL]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)

    def _on_focus(self, event: Focus) -> None:
        if not event.from_app_focus:
            self.cursor_position = len(self.value)


class TextBox(TextArea):
    """A multi-line input whose cursor goes to the end of its text on focus; ctrl+a selects all."""

    BINDINGS = [SELECT_ALL]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("soft_wrap", True)
        kwargs.setdefault("tab_behavior", "focus")
        super().__init__(*args, **kwargs)

    def _on_focus(self, event: Focus) -> None:
        if not event.from_app_focus:
            self.move_cursor(self.document.end)
