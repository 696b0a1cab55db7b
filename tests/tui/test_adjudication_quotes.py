"""Each reviewer's quotes in the adjudication app at 80x24: a line each in view beside the
decision without scrolling, and ctrl+o shows them whole; the decision is kept throughout."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.containers import VerticalScroll
from textual.widgets import Static

from protocoder.evidence.quotes import locate_quote
from protocoder.evidence.snapshots import Snapshots
from protocoder.model import Quote
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review
from protocoder.tui.adjudicate import AdjudicationScreen, QuotesModal, make_adjudication_app

from .test_adjudicate import add_alice
from .test_focus_model import pin

PASSAGE = "Each task is run in a fresh container."


def quoted_disagreement(workspace: Path, cli) -> None:
    """alice codes webarena/open_work P (casheekar has NR) with one quote of the pinned page."""
    pin(workspace, cli)
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    review = load_review(workspace)
    assert review.rubric is not None
    source = next(s for s in review.protocol("webarena").sources if s.has_snapshot)
    quote = locate_quote(Quote(source.id, PASSAGE), source, Snapshots(Paths(workspace)))
    assert quote is not None
    cell = review.cells("webarena", "open_work")["alice"]
    Store(Paths(workspace)).save_cell(replace(cell, quotes=(quote,)), review.rubric)


async def test_quotes_in_view_at_80x24_and_whole_on_ctrl_o(workspace: Path, cli) -> None:
    quoted_disagreement(workspace, cli)
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        await pilot.press("3")  # a decision, kept while the quotes are looked at
        await pilot.pause()
        line = screen.query_one(".adj-quote-line", Static)
        scroll = screen.query_one("#adj-reviewers-scroll", VerticalScroll)
        assert scroll.scroll_y == 0
        visible = scroll.region
        assert visible.contains_region(line.region), (line.region, visible)
        assert "Each task is run" in str(line.render())
        decision = screen.query_one("#adj-decision")
        assert decision.region.bottom <= pilot.app.size.height - 1, "the decision stays on screen"
        await pilot.press("ctrl+o")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, QuotesModal)
        shown = " ".join(str(w.render()) for w in modal.query(Static))
        assert f"“{PASSAGE}”" in shown and "casheekar: NR" in shown and "no quotes" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is screen
        assert screen.code == "NR"
