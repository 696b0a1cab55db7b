"""Issue 22 in the reader: search across all of a protocol's sources (hits by source and heading),
an outline to jump to a heading, and widening a selection to words and sentences."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList
from textual.widgets.text_area import Selection

from .helpers import app_for, coding, focused_id, type_text
from .test_focus_model import open_webarena, pin

SECOND_PAGE = """# WebArena harness notes

## Containers

A fresh container is started for every episode and removed after scoring.
"""


def pin_second(workspace: Path, cli) -> None:
    page = workspace / "notes.md"
    page.write_text(SECOND_PAGE, encoding="utf-8")
    result = cli("source", "add", "webarena", str(page), "--workspace", str(workspace), "--id", "notes")
    assert result.exit_code == 0, result.output
    page.unlink()


async def test_search_lists_hits_in_every_source_by_source_and_heading(workspace: Path, cli) -> None:
    pin(workspace, cli)
    pin_second(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("slash")
        await type_text(pilot, "fresh container")
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        reader = coding(pilot)._reader
        assert reader is not None
        listing = reader.query_one("#reader-candidates", OptionList)
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert prompts[0].startswith("WebArena") and "1 hit" in prompts[0]
        assert any(p.startswith("Overview") for p in prompts), prompts
        assert any("harness notes · 1 hit" in p for p in prompts), prompts
        assert any(p.startswith("Containers") for p in prompts), prompts
        # Jump to the hit in the other source: the reader switches to it and selects the match.
        listing.focus()
        listing.highlighted = next(i for i, p in enumerate(prompts) if p.startswith("Containers"))
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert reader.source is not None and reader.source.id == "notes"
        assert reader.text_area.selected_text.casefold() == "fresh container"
        assert focused_id(pilot) == "reader-text"


async def test_outline_jumps_to_a_heading_and_selections_widen(workspace: Path, cli) -> None:
    pin(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        reader = pilot.app.screen.reader
        listing = reader.query_one("#reader-candidates", OptionList)
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert prompts == ["WebArena", "  Overview", "  Parameters", "    max_steps", "  Scoring"]
        listing.highlighted = 3
        await pilot.press("enter")
        await pilot.pause()
        assert reader.text_area.selected_text == "max_steps"
        # Widen: a selection inside "episode" becomes the word, then its sentence.
        area = reader.text_area
        row = next(i for i in range(area.document.line_count) if "episode" in area.document.get_line(i))
        column = area.document.get_line(row).index("episode") + 2
        area.selection = Selection((row, column), (row, column + 3))
        await pilot.press("w")
        assert area.selected_text == "episode"
        await pilot.press("full_stop")
        assert area.selected_text == "The episode ends after 30 steps."
