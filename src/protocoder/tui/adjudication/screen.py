"""The adjudication screen: every unresolved cell, the reviewers' cells side by side, a decision with a reason.

Decisions go through the core (:func:`protocoder.lifecycle.adjudication.adjudicate`): appended to the
protocol's ``consensus.yaml``, never into a reviewer's file. When the cell was released and
its final code changes, the same reason is recorded as a correction.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from ...errors import Problem, ProtocoderError
from ...evidence.quotes import printable
from ...evidence.snapshots import location_text
from ...lifecycle import adjudicate
from ...lifecycle.adjudication import cells_needing_adjudication
from ...lifecycle.comments import add_comment
from ...lifecycle.consensus import FinalCell
from ...storage.workspace import Review, load_review
from ..screens import FRONT_KEYS, ErrorScreen
from ..widgets import AppFooter, CodeChoice, TextBox
from .comment import CommentModal
from .quotes import QuotesModal
from .record import discussion, evidence_choice, read_by, reviewer_record

NO_TAKE = "-"


class AdjudicationScreen(Screen[None]):
    """Lists unresolved cells; shows the selected one's reviewer cells; records a decision.

    The decision (code, cell taken, reason) sits at the bottom and never scrolls away; the
    reviewers' cells above it scroll. A reason typed for one cell stays with that cell
    while the adjudicator looks at others.
    """

    BINDINGS = [
        *FRONT_KEYS,
        Binding("ctrl+s", "record", "Record", id="adjudicate.record",
                tooltip="Record the decision with its reason"),
        Binding("f6", "cycle_take", "Take a cell", id="adjudicate.take",
                tooltip="Take one reviewer's cell whole (again: the next reviewer, then none)"),
        Binding("ctrl+o", "show_quotes", "Quotes", id="adjudicate.quotes",
                tooltip="Every reviewer's quotes of this cell, whole (the decision stays as it is)"),
        Binding("f3", "read", "Read", id="adjudicate.read",
                tooltip="Read one reviewer's cell whole, full width (again, or escape: back to the decision)"),
        Binding("f2", "next_reviewer", "Next reviewer", show=False, id="adjudicate.next_reviewer",
                tooltip="Read the next reviewer's cell whole"),
        Binding("f4", "cycle_evidence", "Evidence", show=False, id="adjudicate.evidence",
                tooltip="Whose evidence the decision keeps: each reviewer's, all of theirs, or your own "
                        "(the reason is the basis)"),
        Binding("pageup", "scroll_reading(-1)", "Scroll up", show=False, priority=True, id="adjudicate.page_up",
                tooltip="Scroll the reviewers' cells up (also while typing the reason)"),
        Binding("pagedown", "scroll_reading(1)", "Scroll down", show=False, priority=True,
                id="adjudicate.page_down", tooltip="Scroll the reviewers' cells down (also while typing the reason)"),
        Binding("escape", "stop_reading", "Back", show=False, id="adjudicate.stop_reading",
                tooltip="Leave the reading view"),
        *[Binding(key, f"pick_key('{key}')", show=False, id=f"adjudicate.code_{key}") for key in "1234567890"],
    ]

    EXTRA_KEYS = [("[key] shown by a code", "decide that code (when not typing the reason)"),
                  ("tab / shift+tab", "cells, codes, reason (f6 takes a cell: not a stop of tab)")]
    KEYS_TITLE = "adjudication"

    def __init__(self, workspace: Path, adjudicator: str) -> None:
        super().__init__()
        self.workspace = workspace
        self.adjudicator = adjudicator
        self.review: Review | None = None
        self.cells: list[FinalCell] = []
        self.current: FinalCell | None = None
        self.code: str | None = None
        self.take: str | None = None
        self.keep: tuple[str, ...] | None = None
        """Whose evidence the decision keeps (f4): reviewers, () for the adjudicator's own, None: those
        who chose the decided code (the command line's default), shown before it is recorded."""
        self.reasons: dict[str, str] = {}
        """Reasons typed and not yet recorded, by cell key."""
        self.reading = False
        self.discussion = Text()
        """The shown cell's comments, as the view prints them."""
        self.reader = 0
        """Which reviewer the reading view (f3, f2) shows, by position in the cell's codes."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="top-bar"):
            yield Static("", id="adj-title", markup=False)
            yield Static(self.adjudicator, classes="reviewer-name", markup=False)
        with Horizontal(id="adj-body"):
            with Vertical(id="adj-side"):
                yield Static("Unresolved cells", classes="side-heading")
                yield OptionList(id="adj-cells")
            with Vertical(id="adj-main"):
                yield Static("", id="adj-cell", markup=False)
                yield Static("", id="adj-question", markup=False)
                with VerticalScroll(id="adj-reviewers-scroll"):
                    yield Static("", id="adj-stale", markup=False)
                    yield Horizontal(id="adj-reviewers")
                    yield Static("", id="adj-comments", markup=False)
                yield Static("", id="adj-read-head", markup=False)
                with VerticalScroll(id="adj-read"):
                    yield Static("", id="adj-read-body", markup=False)
                with Vertical(id="adj-decision"):
                    yield Static("Decide: a code's key, or f6 takes a cell", id="adj-evidence",
                                 classes="adj-label", markup=False)
                    yield CodeChoice(id="adj-code")
                    take = Select([], prompt="no cell taken: the code above is decided", id="adj-take",
                                  allow_blank=True, compact=True)
                    # Not a stop of tab: tab after a code goes straight to the reason (f6 takes a
                    # cell), so nothing typed for the reason lands in a list that drops it.
                    take.can_focus = False
                    yield take
                    with Horizontal(id="adj-reason-row"):
                        yield Static("Reason", classes="adj-label")
                        yield TextBox(id="adj-reason", compact=True, placeholder="required: why this code")
                    yield Static("", id="adj-status", markup=False)
        yield AppFooter()

    def on_mount(self) -> None:
        self.reload()

    # ------------------------------------------------------------------ data

    def reload(self, *, keep: str | None = None) -> None:
        """Read the workspace again and show its unresolved cells."""
        try:
            review = load_review(self.workspace)
            review.require_valid()
        except ProtocoderError as exc:
            problems = getattr(exc, "problems", None) or [Problem(str(self.workspace), 0, 0, str(exc))]
            self.app.push_screen(ErrorScreen("The workspace cannot be adjudicated", problems, fatal=True,
                                             advice="Fix the files (protocoder validate lists them); ctrl+q quits."))
            return
        self.review = review
        self.cells = cells_needing_adjudication(review)
        labels = {f.id: f.label for f in review.rubric.fields} if review.rubric else {}
        names = {p.id: p.name for p in review.protocols}
        options = []
        for cell in self.cells:
            codes = " · ".join(f"{r} {c}" for r, c in cell.codes.items())
            stale = " (stale)" if cell.stale is not None else ""
            options.append(Option(Text.assemble((f"{names[cell.protocol]} · {labels[cell.field]}{stale}", "bold"),
                                                "\n  ", (codes, "dim")), id=cell.key))
        cell_list = self.query_one("#adj-cells", OptionList)
        cell_list.set_options(options)
        count = len(self.cells)
        self.query_one("#adj-title", Static).update(
            f"Adjudication · {count} unresolved cell{'s' if count != 1 else ''}")
        self.query_one("#adj-decision", Vertical).display = bool(self.cells)
        self.query_one("#adj-reviewers-scroll", VerticalScroll).display = bool(self.cells)
        if not self.cells:
            self._clear_decision()
            self.query_one("#adj-cell", Static).update("Nothing left to adjudicate: every coded cell is agreed, "
                                                       "single-coded or adjudicated. ctrl+q quits.")
            self.query_one("#adj-question", Static).update("")
            self.query_one("#adj-reviewers", Horizontal).remove_children()
            return
        keys = [cell.key for cell in self.cells]
        index = keys.index(keep) if keep in keys else 0
        cell_list.highlighted = index
        self.show_cell(self.cells[index])
        self.query_one("#adj-code", CodeChoice).focus()

    def action_show_quotes(self) -> None:
        """Show every reviewer's quotes of the cell whole, over the screen (nothing is changed)."""
        if self.current is None or self.review is None:
            self.notify("No cell is shown.")
            return
        cell = self.current
        reviewer_cells = self.review.cells(cell.protocol, cell.field)
        body = Text()
        for reviewer in cell.codes:
            coded = reviewer_cells[reviewer]
            if body:
                body.append("\n\n")
            body.append(f"{reviewer}: {coded.code}", style="bold")
            if not coded.quotes:
                body.append("\nno quotes", style="dim")
            for number, quote in enumerate(coded.quotes, 1):
                where = location_text(quote.page, quote.section)
                body.append(f"\n{number}. ", style="dim")
                body.append(f"“{' '.join(printable(quote.text).split())}”")
                body.append(f" ({quote.source}{', ' + where if where else ''})", style="dim")
        self.app.push_screen(QuotesModal(f"Quotes · {cell.key}", body))

    def show_cell(self, cell: FinalCell) -> None:
        """Show one unresolved cell and reset the decision."""
        assert self.review is not None and self.review.rubric is not None
        rubric = self.review.rubric
        self.current, self.code, self.take, self.keep = cell, None, None, None
        self.reader = 0
        field = rubric.field(cell.field)
        self.query_one("#adj-cell", Static).update(
            Text.assemble((f"{self.review.protocol(cell.protocol).name} — {field.label}", "bold"),
                          f"  ({cell.key})"))
        self.query_one("#adj-question", Static).update(field.question)
        panels = self.query_one("#adj-reviewers", Horizontal)
        panels.remove_children()
        reviewer_cells = self.review.cells(cell.protocol, cell.field)
        for reviewer in cell.codes:
            coded = reviewer_cells[reviewer]
            # Side by side: the code on its own line, so the codes line up across the columns;
            # then one line per quote (cut to the column), so the evidence is in view at 80x24
            # without scrolling the decision away; then the location, basis, and the quotes whole.
            parts: list[Static] = [Static(Text(f"{reviewer}: {coded.code}", style="bold"), markup=False)]
            for number, quote in enumerate(coded.quotes, 1):
                parts.append(Static(Text.assemble((f"{number} ", "dim"),
                                                  f"“{' '.join(printable(quote.text).split())}”",
                                                  (f" ({quote.source})", "dim")),
                                    classes="adj-quote-line", markup=False))
            body = Text.assemble(f"{coded.source or '(no source location)'}\n", coded.basis or "(no basis)")
            if coded.cites:
                body.append(f"\n[{', '.join(coded.cites)}]", style="dim")
            # Each reviewer's evidence as quoted, whole: the passage, then where it is.
            for number, quote in enumerate(coded.quotes, 1):
                where = location_text(quote.page, quote.section)
                body.append(f"\n{number}. ", style="dim")
                body.append(f"“{' '.join(printable(quote.text).split())}”")
                body.append(f" ({quote.source}{', ' + where if where else ''})", style="dim")
            parts.append(Static(body, markup=False))
            panels.mount(Vertical(*parts, classes="adj-reviewer"))
        self.discussion = discussion(self.review, cell)
        comments = self.query_one("#adj-comments", Static)
        comments.display = bool(self.discussion)
        comments.update(self.discussion)
        stale = self.query_one("#adj-stale", Static)
        stale.display = cell.stale is not None
        if cell.stale is not None:
            changed = [f"{r} {cell.stale.resolved.get(r, '-')} → {c}" for r, c in cell.codes.items()
                       if cell.stale.resolved.get(r) != c]
            stale.update(f"An earlier decision ({cell.stale.code}, by {cell.stale.by}: {cell.stale.reason}) "
                         f"went stale: {'; '.join(changed) or 'the reviewers changed their codes'}. To accept a "
                         "change, take that reviewer's cell (f6); to decline it, decide the earlier code again.")
        self.query_one("#adj-code", CodeChoice).show(tuple(rubric.code(c) for c in field.codes), None,
                                                     reserved=rubric.code_ids)
        take = self.query_one("#adj-take", Select)
        take.set_options([(f"take {reviewer}'s cell whole ({code})", reviewer)
                          for reviewer, code in cell.codes.items()])
        take.clear()
        with self.prevent(TextArea.Changed):
            self.query_one("#adj-reason", TextArea).load_text(self.reasons.get(cell.key, ""))
        self._status("")
        self._show_evidence()
        if self.reading:
            self._show_reading()

    def action_comment(self) -> None:
        """Add a comment to the shown cell (the adjudicator's own comments file)."""
        if self.current is None or self.review is None:
            return
        key = self.current.key

        def typed(text: str | None) -> None:
            if text is None or self.review is None:
                return
            try:
                add_comment(self.review.paths, key, text, by=self.adjudicator)
            except ProtocoderError as exc:
                self._status(f"Not added: {exc}", problem=True)
                return
            if self.current is not None and self.current.key == key:
                self.discussion = discussion(self.review, self.current)
                comments = self.query_one("#adj-comments", Static)
                comments.display = True
                comments.update(self.discussion)
                if self.reading:
                    self._show_reading()
            self.notify(f"{key}: comment added")

        self.app.push_screen(CommentModal(key), typed)

    def _clear_decision(self) -> None:
        """Nothing is being decided: no code marked, no cell taken, no reason, no message."""
        self.current, self.code, self.take, self.keep = None, None, None, None
        self._reading(False)
        self.query_one("#adj-code", CodeChoice).show((), None)
        take = self.query_one("#adj-take", Select)
        take.set_options([])
        take.clear()
        with self.prevent(TextArea.Changed):
            self.query_one("#adj-reason", TextArea).load_text("")
        self._status("")

    def _status(self, text: str, *, problem: bool = False) -> None:
        status = self.query_one("#adj-status", Static)
        status.update(text)
        status.set_class(problem, "-problem")
        if problem:
            # Also where the eye is, whatever has the focus: the line under the reason may be off-screen.
            self.notify(text, severity="error")

    @on(TextArea.Changed, "#adj-reason")
    def reason_typed(self, event: TextArea.Changed) -> None:
        if self.current is not None:
            self.reasons[self.current.key] = event.text_area.text

    # ------------------------------------------------------------------ events

    @on(OptionList.OptionHighlighted, "#adj-cells")
    def cell_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None and (self.current is None or event.option.id != self.current.key):
            self.show_cell(next(c for c in self.cells if c.key == event.option.id))

    @on(CodeChoice.Picked)
    def code_picked(self, event: CodeChoice.Picked) -> None:
        self._picked(event.code)

    def _picked(self, code: str | None) -> None:
        """The decided code is ``code`` (idempotent: a key picks at once, and its message follows)."""
        self.code = code
        self.query_one("#adj-code", CodeChoice).mark(code)
        if self.take is not None and self.current is not None and self.current.codes.get(self.take) != code:
            self.take = None
            self.query_one("#adj-take", Select).clear()
        self._show_evidence()

    @on(Select.Changed, "#adj-take")
    def take_changed(self, event: Select.Changed) -> None:
        if self.current is None:
            return
        self.take = event.value if isinstance(event.value, str) else None
        if self.take is not None:
            self.code = self.current.codes[self.take]
            self.keep = None
            self.query_one("#adj-code", CodeChoice).mark(self.code)
        self._show_evidence()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick_key" and isinstance(self.focused, TextArea):
            return False  # digits typed into the reason are text
        if action == "stop_reading":
            return self.reading  # escape does nothing else on this screen
        return not (action in ("record", "cycle_take", "read", "next_reviewer", "cycle_evidence")
                    and self.current is None)

    # ------------------------------------------------------------------ evidence and reading

    def evidence_choice(self) -> tuple[tuple[str, ...], str]:
        """Whose evidence the decision would keep now, and how the line under the cells says it."""
        assert self.current is not None
        return evidence_choice(self.current, self.code, self.take, self.keep)

    def _show_evidence(self) -> None:
        line = self.query_one("#adj-evidence", Static)
        if self.current is None or (self.code is None and self.take is None):
            line.update("Decide: a code's key, or f6 takes a cell")
            return
        line.update(f"Evidence: {self.evidence_choice()[1]} · f4 changes")

    def action_cycle_evidence(self) -> None:
        """The next choice of evidence: each reviewer's, all of theirs, the adjudicator's own."""
        if self.current is None:
            return
        reviewers = tuple(self.current.codes)
        choices: list[tuple[str, ...] | None] = [None, *((r,) for r in reviewers)]
        if len(reviewers) > 1:
            choices.append(reviewers)
        choices.append(())
        if self.take is not None:
            # A cell taken whole keeps its evidence; changing the evidence keeps its code only.
            self.take = None
            self.query_one("#adj-take", Select).clear()
        position = choices.index(self.keep) if self.keep in choices else 0
        self.keep = choices[(position + 1) % len(choices)]
        if self.code is None:
            self._status("Pick a code (its key) for this evidence.")
        self._show_evidence()

    def action_read(self) -> None:
        """Read one reviewer's cell whole at full width; again: back to the decision."""
        self._reading(not self.reading)

    def action_stop_reading(self) -> None:
        self._reading(False)

    def action_next_reviewer(self) -> None:
        """Read the next reviewer's cell whole."""
        if self.current is None:
            return
        if self.reading:
            self.reader = (self.reader + 1) % len(self.current.codes)
            self._show_reading()
        else:
            self._reading(True)

    def action_scroll_reading(self, direction: int) -> None:
        """Page through what is being read (the whole cell in the reading view, else the reviewers' cells)."""
        pane = self.query_one("#adj-read" if self.reading else "#adj-reviewers-scroll", VerticalScroll)
        pane.scroll_to(y=pane.scroll_y + direction * max(1, pane.size.height - 1), animate=False)

    def _reading(self, on: bool) -> None:
        self.reading = on and self.current is not None
        for selector in ("#adj-side", "#adj-question"):
            self.query_one(selector).display = not self.reading
        for selector in ("#adj-reviewers-scroll", "#adj-decision"):
            self.query_one(selector).display = not self.reading and bool(self.cells)
        self.query_one("#adj-read-head").display = self.reading
        self.query_one("#adj-read").display = self.reading
        if self.reading:
            self._show_reading()
            self.query_one("#adj-read", VerticalScroll).focus()
        elif self.current is not None:
            self.query_one("#adj-code", CodeChoice).focus()

    def _show_reading(self) -> None:
        """The reviewer being read: every reviewer's code in a strip, then this one's cell whole."""
        assert self.current is not None and self.review is not None
        cell = self.current
        reviewers = list(cell.codes)
        self.reader %= len(reviewers)
        head = Text()
        for index, reviewer in enumerate(reviewers):
            if index:
                head.append("  │  ", style="dim")
            head.append(f"{reviewer} {cell.codes[reviewer]}", style="reverse bold" if index == self.reader else "")
        head.append("   f2 next · pgup/pgdn scroll · f3 back", style="dim")
        self.query_one("#adj-read-head", Static).update(head)
        coded = self.review.cells(cell.protocol, cell.field)[reviewers[self.reader]]
        body = reviewer_record(coded, read=read_by(self.review, coded))
        if self.discussion:
            body.append("\n")
            body.append_text(self.discussion)
        self.query_one("#adj-read-body", Static).update(body)
        self.query_one("#adj-read", VerticalScroll).scroll_home(animate=False)

    def action_pick_key(self, key: str) -> None:
        # Decided at once, not when the Picked message comes back: a ctrl+s already queued behind
        # the key (keys arrive in bursts from a browser) must see the code.
        choice = self.query_one("#adj-code", CodeChoice)
        code = choice.keys.get(key)
        if choice.pick_key(key) and code is not None:
            self._picked(code)

    def action_cycle_take(self) -> None:
        if self.current is None:
            return
        reviewers = list(self.current.codes)
        following = reviewers[0] if self.take is None else (
            reviewers[reviewers.index(self.take) + 1] if reviewers.index(self.take) + 1 < len(reviewers) else None)
        take = self.query_one("#adj-take", Select)
        if following is None:
            take.clear()
            self.take = None
        else:
            take.value = following

    def action_record(self) -> None:
        if self.current is None:
            return
        reason = self.query_one("#adj-reason", TextArea).text.strip()
        if self.code is None:
            self._status("Pick a code or a reviewer's cell first.", problem=True)
            return
        if not reason:
            self._status("A reason is required: type it above, then ctrl+s.", problem=True)
            self.query_one("#adj-reason", TextArea).focus()
            return
        self._status("recording…")
        kept, _ = self.evidence_choice()
        self.record(self.current.key, self.code, self.take, reason, None if self.take else kept)

    @work(thread=True, exclusive=True, group="adjudicate", exit_on_error=False)
    def record(self, key: str, code: str, take: str | None, reason: str, kept: tuple[str, ...] | None) -> None:
        """Write the decision (and a correction, for a released cell) off the UI thread; ``kept``:
        the reviewers whose evidence it keeps, () for the adjudicator's own (the reason)."""
        assert self.review is not None
        try:
            decision = adjudicate(self.review.paths, key, reason=reason, by=self.adjudicator,
                                  code=None if take else code, take_from=take, keep=kept or None,
                                  basis=reason if kept == () else None)
        except ProtocoderError as exc:
            self.app.call_from_thread(self._status, f"Not recorded: {exc}", problem=True)
            return
        correction = decision.correction
        message = f"{key}: {decision.adjudication.code} recorded"
        if correction is not None:
            message += f"; release {correction.release} corrected {correction.old or '-'} → {correction.new}"
        self.app.call_from_thread(self._recorded, key, message)

    def _recorded(self, key: str, message: str) -> None:
        self.reasons.pop(key, None)
        keys = [cell.key for cell in self.cells]
        following = keys[keys.index(key) + 1] if key in keys and keys.index(key) + 1 < len(keys) else None
        self.notify(message)
        self.reload(keep=following)
