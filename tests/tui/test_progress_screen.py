"""Issue 31.6: progress in the app (so in the browser): the adjudication app (owner, adjudicators)
shows the team's progress as status prints it; the coding app shows a reviewer their own only."""

from __future__ import annotations

from pathlib import Path

from protocoder.tui.adjudicate import make_adjudication_app
from protocoder.tui.screens import ProgressScreen

from .helpers import app_for, loaded, screen_text
from .test_adjudicate import add_alice


async def test_the_adjudicator_sees_the_team_and_a_reviewer_only_themself(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProgressScreen)
        text = "\n".join(screen_text(pilot))
        assert "Team progress" in text and "alice" in text and "casheekar" in text and "30/30 coded" in text
        assert "Unresolved (1):" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ProgressScreen)

    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProgressScreen)
        text = "\n".join(screen_text(pilot))
        assert "casheekar: 30 of 30 cells coded, 30 complete" in text
        assert "alice" not in text, "another reviewer's progress is not a reviewer's to see"
