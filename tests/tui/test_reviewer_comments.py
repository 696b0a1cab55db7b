"""Issue 31.2: a reviewer comments on a cell from the coding app (the browser serves the same app), once
the cell is ready for adjudication; before that the app refuses and says why, writing nothing."""

from __future__ import annotations

from pathlib import Path

from .helpers import app_for, settle, type_text
from .test_adjudicate import add_alice
from .test_focus_model import open_webarena
from conftest import tree_digest


async def _comment(pilot, app, text: str) -> None:  # noqa: ANN001 - Pilot's and the app's generic types
    app.comment_on("webarena/open_work")  # what the palette's "Comment on this cell" runs
    await pilot.pause()
    await type_text(pilot, text)
    await pilot.press("enter")
    await settle(pilot)


async def test_a_reviewer_comments_from_the_coding_app_once_the_cell_is_ready(workspace: Path, cli) -> None:
    before = tree_digest(workspace)
    app = app_for(workspace, "casheekar")  # the only reviewer: not ready for adjudication
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        commands = [command.title for command in app.get_system_commands(app.screen)]
        assert "Comment on this cell" in commands
        await _comment(pilot, app, "Sec. 3.2 is about stop actions only.")
    assert tree_digest(workspace) == before  # refused: nothing written
    assert not (workspace / "protocols/webarena/comments").exists()

    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    app = app_for(workspace, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await _comment(pilot, app, "Sec. 3.2 is about stop actions only.")
    written = (workspace / "protocols/webarena/comments/alice.yaml").read_text(encoding="utf-8")
    assert "Sec. 3.2 is about stop actions only." in written
