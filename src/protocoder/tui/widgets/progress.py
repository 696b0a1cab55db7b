"""OverallProgress: cells coded over the whole review, as a label and a bar in the theme's colours."""

from __future__ import annotations

from rich.console import Group
from rich.progress_bar import ProgressBar as RichBar
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.color import Color
from textual.widgets import Static


class OverallProgress(Static):
    """``12/30 cells coded · 1/10 protocols done ━━━━━━──── 40%``.

    Drawn at render time for the widget's real width (Textual's ``ProgressBar`` rounds
    to the width it had when the value was set, which made screenshots differ).
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self._values = (0, 0, 0, 0)

    def show(self, coded: int, total: int, done: int, protocols: int) -> None:
        """Show new totals."""
        self._values = (coded, total, done, protocols)
        self.update(self._renderable())

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _: self.update(self._renderable()), init=False)

    def _renderable(self) -> Group:
        coded, total, done, protocols = self._values
        variables = self.app.get_css_variables()

        def colour(name: str) -> Style:
            return Style(color=Color.parse(variables[name]).hex) if name in variables else Style()

        percent = round(100 * coded / total) if total else 0
        grid = Table.grid(expand=True, padding=(0, 1, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_column(no_wrap=True, justify="right")
        grid.add_row(Text(f"{coded}/{total} cells coded · {done}/{protocols} protocols done"),
                     RichBar(total=max(total, 1), completed=coded, style=colour("panel"),
                             complete_style=colour("primary"), finished_style=colour("success")),
                     Text(f"{percent:>3}%"))
        return Group(grid)
