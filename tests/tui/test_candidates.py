"""Issue 22 in the app: the reader's candidate passages for the current field, the assisted flag,
and candidates: false."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import OptionList

from .helpers import app_for, coding, focused_id, settle
from .test_focus_model import open_webarena, pin


async def test_candidates_jump_quote_and_mark_the_cell_assisted(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace)  # ada: nothing coded yet
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = coding(pilot)
        listing = screen.query_one("#reader-candidates", OptionList)
        assert listing.display and listing.option_count >= 1
        assert focused_id(pilot) == "reader-candidates"
        first = screen._reader.candidates[0]
        await pilot.press("enter")  # jump there: the passage is selected in the text
        await pilot.pause()
        assert focused_id(pilot) == "reader-text"
        await pilot.press("q", "enter")
        await settle(pilot)
        await pilot.press("escape")  # back to the codes, then code the cell
        await pilot.press("3")
        await settle(pilot)
    cell = sheet_of("webarena").cells["open_work"]
    assert cell.code == "NR" and cell.assisted is True
    assert first.text.split()[0] in cell.quotes[0].text


async def test_a_cell_coded_without_candidates_is_not_assisted(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("escape", "]")  # candidates were for open_work; reset_retention is coded blind
        await pilot.pause()
        await pilot.press("1")
        await settle(pilot)
    assert sheet_of("webarena").cells["reset_retention"].assisted is False


async def test_candidates_false_hides_them_and_says_why(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    settings = workspace / "protocoder.yaml"
    settings.write_text(settings.read_text(encoding="utf-8") + "candidates: false\n", encoding="utf-8")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        reader = pilot.app.screen.reader
        assert not reader.query_one("#reader-candidates", OptionList).display
        assert "candidates: false" in reader.said  # on the reader's status line, not over its lists
        await pilot.press("escape", "3")
        await settle(pilot)
    assert sheet_of("webarena").cells["open_work"].assisted is False


async def test_at_80x24_several_candidates_show_with_heading_and_text_and_no_title(workspace: Path, cli) -> None:
    """Issue 29: at 80 columns the pane showed one candidate at a time, each under the document's title."""
    from protocoder.tui.screens.reader import ReaderScreen

    from .helpers import screen_text
    from .test_reader_fields import REAL_DOCS, pin_real

    pin_real(workspace, cli)
    pin_real(workspace, cli, REAL_DOCS / "openhands-ai" / "README.md", source_id="openhands")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReaderScreen)
        await pilot.press("c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        reader = pilot.app.screen.reader
        assert len(reader.candidates) >= 3
        side = [row[43:] for row in screen_text(pilot)]  # the column beside the text
        numbered = [i for i, row in enumerate(side) if re.match(r"\s*\d+\. ", row)]
        assert len(numbered) >= 3, "\n".join(side)
        for i in numbered[:3]:
            assert side[i + 1].strip() and not re.match(r"\s*\d+\. ", side[i + 1])  # the start of its text
        # The two documents' titles (as extracted); "Quickstart" is a section of the OpenHands README, not its title.
        titles = ("Language Model Evaluation Harness", "OpenHands")
        assert not any(title in side[i] for i in numbered for title in titles), "\n".join(side)


async def test_q_on_a_highlighted_candidate_quotes_that_candidate(workspace: Path, cli, sheet_of) -> None:
    """The list's heading says "q quotes": q with the list focused quotes the highlighted candidate
    (it used to ask for a selection in the text), through the same preview as any quote."""
    pin(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("c")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert focused_id(pilot) == "reader-candidates"
        reader = pilot.app.screen.reader  # at 80 columns the reader is a screen of its own
        listing = reader.query_one("#reader-candidates", OptionList)
        if listing.option_count > 1:
            await pilot.press("down")
            await pilot.pause()
        chosen = reader.candidates[listing.highlighted or 0]
        await pilot.press("q", "enter")  # the preview, then the current field
        await settle(pilot)
    quotes = sheet_of("webarena").cells["open_work"].quotes
    assert len(quotes) == 1 and quotes[0].start == chosen.start and quotes[0].end == chosen.end
