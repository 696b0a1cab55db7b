"""Progress, in the app (and so in the browser under ``protocoder serve``).

The adjudication app (the owner's and adjudicators') shows the team's progress as ``status``
prints it; the coding app shows a reviewer their own progress only, counted from their own
sheets (never another reviewer's: blinding).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ...model import Rubric, Sheet
from ..widgets import AppFooter
from .keys import FRONT_KEYS


def own_progress(reviewer: str, rubric: Rubric, sheets: Sequence[Sheet], protocols: int) -> list[str]:
    """A reviewer's own progress over ``protocols`` protocols, from their sheets alone."""
    total = protocols * len(rubric.fields)
    cells = [cell for sheet in sheets for field_id, cell in sheet.cells.items() if field_id in rubric.field_ids]
    coded = [cell for cell in cells if cell.code is not None]
    complete = sum(1 for cell in coded if cell.is_complete(rubric))
    assisted = sum(1 for cell in coded if cell.assisted)
    lines = [f"{reviewer}: {len(coded)} of {total} cells coded, {complete} complete",
             f"  {len(cells) - len(coded)} drafts (text without a code)",
             f"  {len(coded) - complete} coded without what the rubric requires" if len(coded) > complete else "",
             f"  {assisted} assisted (candidate passages shown before the code)" if assisted else "",
             "", "Other reviewers' progress is shown to the owner and adjudicators only."]
    return [line for index, line in enumerate(lines) if line or index == 4]


def team_progress(workspace_root: object) -> list[str]:
    """The team's progress as ``protocoder status`` prints it (a problem, said in a line)."""
    from pathlib import Path

    from ...errors import ProtocoderError
    from ...publish import status_report
    from ...storage.workspace import load_review
    from ...team.members import load_team
    from ...team.progress import status_lines

    root = Path(str(workspace_root))
    try:
        review = load_review(root)
        review.require_valid()
        team = load_team(root)
        lines, _ = status_report(review)
        if team is not None and team.members:
            lines += ["", *status_lines(review, team)]
    except ProtocoderError as exc:
        return [f"The progress cannot be read: {exc}"]
    return lines


class ProgressScreen(Screen[None]):
    """Lines of progress, to read; escape goes back."""

    BINDINGS = [*FRONT_KEYS, Binding("escape", "back", "Back", id="progress.back", tooltip="Back to where you were")]
    KEYS_TITLE = "progress"

    def __init__(self, title: str, lines: Sequence[str]) -> None:
        super().__init__()
        self._title = title
        self._lines = list(lines)

    def compose(self) -> ComposeResult:
        yield Static(self._title, id="progress-title", classes="top-bar", markup=False)
        with VerticalScroll(id="progress-scroll"):
            yield Static("\n".join(self._lines), id="progress-body", markup=False)
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#progress-scroll", VerticalScroll).focus()

    def action_back(self) -> None:
        self.dismiss(None)
