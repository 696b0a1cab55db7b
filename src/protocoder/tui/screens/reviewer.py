"""ReviewerModal: who is coding — the reviewers of the workspace to pick from, or a new name.

Shown when nothing said who is coding (``protocoder serve`` opens every browser session
here), and when the name given (``--reviewer``, ``$PROTOCODER_REVIEWER``, git's user.name)
is not a reviewer of this workspace yet: then it is filled in, and the closest existing
reviewer is offered, so a typo never silently starts an empty reviewer.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...identity import FROM_GIT, closest_reviewer, id_problem, reviewer_id
from ..widgets import TextLine


def typed_reviewer(text: str) -> tuple[str | None, str]:
    """The reviewer id for what was typed, and what is wrong when there is none.

    A person's name becomes an id the reviewer sees before accepting it (``Ada Lovelace``
    → ``ada-lovelace``); a path (``../ada``) is refused, never shortened to a name.
    """
    name = text.strip()
    if not name:
        return None, ""
    problem = id_problem(name)
    if problem is None:
        return name, ""
    if "/" in name or "\\" in name or name.startswith("."):
        return None, f"{name!r} cannot be a reviewer id: {problem}"
    candidate = reviewer_id(name)
    if candidate is None:
        return None, f"{name!r} cannot be made into a reviewer id: use letters or digits"
    return candidate, ""


class ReviewerModal(ModalScreen[str]):
    """Pick an existing reviewer or type a new name; returns the reviewer id."""

    QUESTION = "Who is coding?"
    NEXT_TIME: str | None = "Next time: --reviewer ID or $PROTOCODER_REVIEWER."
    """How to skip this prompt, or None where there is no command line (a browser tab)."""
    NEW_ID = "new reviewer id: {id} — enter starts it"

    BINDINGS = [
        Binding("escape", "app.quit", "Quit", id="reviewer.quit"),
        Binding("down", "to_list", "Reviewers", show=False),
    ]

    def __init__(self, existing: Mapping[str, int] | None = None, *, proposed: str | None = None,
                 origin: str = "", given_as: str = "") -> None:
        super().__init__()
        self.existing = dict(existing or {})
        """Reviewer id → number of protocols they have a file for."""
        self.proposed = proposed
        self.origin = origin
        self.given_as = given_as

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="reviewer-dialog"):
            yield Static(self.QUESTION, classes="dialog-title")
            yield Static(self._intro(), classes="dialog-body", id="reviewer-intro", markup=False)
            if self.existing:
                yield Static("Reviewers in this workspace", classes="side-heading")
                yield OptionList(*[Option(Text.assemble((rid, "bold"), (f"  {n} protocol{'s' if n != 1 else ''}",
                                                                        "dim")), id=rid)
                                   for rid, n in self.existing.items()], id="reviewer-list")
            yield Static("Or type your name" if self.existing else "Your name", classes="side-heading")
            yield TextLine(self.proposed or "", id="reviewer-name", placeholder="your name, or a reviewer id")
            yield Static("", id="reviewer-id", markup=False)

    def _intro(self) -> str:
        lines = []
        if self.proposed is not None:
            source = self.origin or "the command line"
            if self.origin == FROM_GIT and self.given_as and self.given_as != self.proposed:
                source = f"made from {FROM_GIT} {self.given_as!r}"
            else:
                source = f"from {source}"
            lines.append(f"{self.proposed!r} ({source}) is not a reviewer in this workspace yet.")
        if self.existing:
            lines.append("Pick yourself from the list (↓, enter), or type a name for a new reviewer.")
        else:  # the name given is filled in below: say so, rather than ask for it again
            lines.append("Nobody has coded in this workspace yet: " + (
                "type your name." if self.proposed is None else "enter starts it with this name, or type another."))
        if self.NEXT_TIME:
            lines.append(self.NEXT_TIME)
        return "\n".join(lines)

    def on_mount(self) -> None:
        self.query_one("#reviewer-name", TextLine).focus()
        self.show_proposed_id()

    @on(TextLine.Changed, "#reviewer-name")
    def show_proposed_id(self) -> None:
        candidate, problem = typed_reviewer(self.query_one("#reviewer-name", TextLine).value)
        label = self.query_one("#reviewer-id", Static)
        label.set_class(bool(problem), "-invalid")
        if problem:
            label.update(problem)
            return
        if candidate is None:
            label.update("")
            return
        if candidate in self.existing:
            label.update(f"{candidate}: a reviewer here already — enter continues as {candidate}")
            self._highlight(candidate)
            return
        text = self.NEW_ID.format(id=candidate)
        closest = closest_reviewer(candidate, self.existing)
        if closest is not None:
            text += f"\ndid you mean {closest}? ↓ then enter picks {closest}"
            self._highlight(closest)
        label.update(text)

    def _highlight(self, reviewer: str) -> None:
        for options in self.query("#reviewer-list").results(OptionList):
            options.highlighted = list(self.existing).index(reviewer)

    @on(TextLine.Submitted, "#reviewer-name")
    def accept(self) -> None:
        candidate, _ = typed_reviewer(self.query_one("#reviewer-name", TextLine).value)
        if candidate:
            self.dismiss(candidate)
        else:
            self.show_proposed_id()

    @on(OptionList.OptionSelected, "#reviewer-list")
    def picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(event.option.id)

    def action_to_list(self) -> None:
        for options in self.query("#reviewer-list").results(OptionList):
            options.focus()
