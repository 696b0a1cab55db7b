"""The name prompt of a workspace nobody has coded in yet, reached with a name already given."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from protocoder.tui.app import CoderApp
from protocoder.tui.screens import ReviewerModal

from .helpers import loaded


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[CoderApp]:
    """Apps the CLI builds, caught before they take over the terminal (a Pilot drives them)."""
    apps: list[CoderApp] = []
    monkeypatch.setattr(CoderApp, "run", lambda self, *a, **k: apps.append(self))
    monkeypatch.delenv("PROTOCODER_REVIEWER", raising=False)
    return apps


async def test_a_given_name_in_a_new_workspace_is_not_asked_for_again(tmp_path: Path, cli, launched) -> None:
    assert cli("init", tmp_path / "new").exit_code == 0
    assert cli("protocol", "add", "--workspace", tmp_path / "new", "--id", "swe-bench", "--name", "SWE-bench"
               ).exit_code == 0
    assert cli("code", "--workspace", tmp_path / "new", "--reviewer", "ada").exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal)
        assert prompt.query_one("#reviewer-name", Input).value == "ada"
        intro = str(prompt.query_one("#reviewer-intro").render())
        assert "'ada' (from --reviewer) is not a reviewer in this workspace yet" in intro
        assert "type your name" not in intro, "the name is filled in already"
        assert "enter starts it with this name" in intro
        await pilot.press("enter")
        await loaded(pilot)
        assert pilot.app.session.reviewer == "ada"
