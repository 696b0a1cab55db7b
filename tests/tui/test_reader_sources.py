"""Issue 33 items 3 and 5 in the reader: a code or configuration source keeps its lines and shows
line numbers; the protocol's many sources are switched through a list with a filter (``l``).
Real files from tests/data/real-docs, pinned with the CLI; Pilot at 80×24 and 120×40."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from protocoder.tui.screens.reader import ReaderScreen
from protocoder.tui.screens.source_picker import SourcePickerModal
from protocoder.tui.widgets.reader import Reader

from .helpers import app_for, coding, screen_text, type_text
from .test_focus_model import open_webarena
from .test_reader_fields import REAL_DOCS, pin_real

SCRIPT = REAL_DOCS / "fetch.sh"


def pin_three(workspace: Path, cli) -> None:
    pin_real(workspace, cli)
    pin_real(workspace, cli, REAL_DOCS / "openhands-ai" / "README.md", source_id="openhands")
    pin_real(workspace, cli, SCRIPT, source_id="fetch-script")


async def _pick(pilot, words: str) -> None:  # noqa: ANN001 - Pilot's generic type
    await pilot.press("l")
    await pilot.pause()
    assert isinstance(pilot.app.screen, SourcePickerModal)
    await type_text(pilot, words)
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_source_list_filters_and_a_script_shows_its_line_numbers_at_80x24(workspace: Path, cli) -> None:
    pin_three(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReaderScreen)
        reader = pilot.app.screen.reader
        assert reader.source is not None and reader.source.id == "lm-eval"
        assert not reader.text_area.show_line_numbers  # Markdown reads as running text
        # The list: every pinned snapshot; typing narrows it.
        await pilot.press("l")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, SourcePickerModal)
        rows = "\n".join(screen_text(pilot))
        assert "lm-eval" in rows and "openhands" in rows and "fetch-script" in rows
        await type_text(pilot, "fetch")
        rows = "\n".join(screen_text(pilot))
        assert "fetch-script" in rows and "openhands" not in rows and "1 match" in rows
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReaderScreen)
        assert reader.source is not None and reader.source.id == "fetch-script"
        area = reader.text_area
        assert area.show_line_numbers
        lines = SCRIPT.read_text(encoding="utf-8").splitlines()
        assert area.document.get_line(0) == lines[0]  # the script keeps its lines
        assert any(row.lstrip().startswith("1 ") and "#!/usr/bin/env bash" in row for row in screen_text(pilot))
        # Down into the script (long lines wrap: a few rows a line): the position says which line.
        await pilot.press(*["down"] * 5)
        await pilot.pause()
        line = area.selection.end[0] + 1
        assert line > 1 and f"at line {line}" in str(reader.query_one("#reader-position", Static).render())
        # escape in the list keeps the source shown.
        await pilot.press("l")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert reader.source.id == "fetch-script"


async def test_the_source_list_in_the_pane_at_120x40(workspace: Path, cli) -> None:
    pin_three(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        reader = coding(pilot).query_one(Reader)
        await _pick(pilot, "openhands")
        assert reader.source is not None and reader.source.id == "openhands"
        assert not reader.text_area.show_line_numbers
        await _pick(pilot, "script")
        assert reader.source.id == "fetch-script" and reader.text_area.show_line_numbers
