"""Keys typed in a burst right after the first ctrl+l, while the reader is still loading a large
snapshot: escape, tab and the text typed next reach the cell's source location (and disk),
never the reader's search box.

Pilot's ``press`` waits for the app to be idle after each key, which hides the race; a terminal
hands the app every key of a burst at once. ``burst`` posts them the same way, with no pause.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from .helpers import app_for, coding, loaded, settle

SECTION = """## Section {i}

Paragraph {i} says *what* the task runs with, in `container {i}`, see [the page](https://example.org/{i}).

- a step
  - a nested step

| run | steps |
| --- | ----- |
| {i} | 30 |

"""


def pin_large_page(workspace: Path, cli, sections: int = 3000) -> None:
    """Pin a Markdown page of ``sections`` sections (some 400 kB) to webarena via the CLI: large
    enough that showing it the first time keeps the app busy while keys arrive."""
    page = workspace / "large.md"
    page.write_text("# WebArena\n\n" + "".join(SECTION.format(i=i) for i in range(sections)), encoding="utf-8")
    result = cli("source", "add", "webarena", str(page), "--title", "Large page", "--workspace", str(workspace))
    assert result.exit_code == 0, result.output
    page.unlink()


def burst(pilot: Pilot, *keys: str) -> None:
    """Hand the app these keys at once, as a terminal's driver does for fast typing."""
    for key in keys:
        character = key if len(key) == 1 else {"tab": "\t", "escape": "\x1b"}.get(key)
        pilot.app.post_message(events.Key(key, character))


async def test_burst_after_first_ctrl_l_types_into_the_source_location(workspace: Path, cli, sheet_of) -> None:
    pin_large_page(workspace, cli)
    before = sheet_of("webarena", "casheekar").cells["open_work"].source
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")  # the list opens on webarena
        await pilot.pause()
        screen = coding(pilot)
        burst(pilot, "ctrl+l", "escape", "tab", "end", *" QZ")
        await pilot.app.workers.wait_for_complete()  # the snapshot is shown...
        await pilot.pause(0.2)  # ...and whatever it would do once shown is done
        await pilot.press("tab")  # leaving the input saves it
        await settle(pilot)
        assert screen.reader_open
        search = pilot.app.screen.query_one("#reader-search", Input)
        assert search.value == "", f"typed into the reader's search: {search.value!r}"
    assert sheet_of("webarena", "casheekar").cells["open_work"].source == before + " QZ"


async def test_burst_while_the_text_is_shown_goes_to_the_cell(workspace: Path, cli, sheet_of) -> None:
    """ctrl+l handled, then escape and tab arrive while the reader is showing the snapshot."""
    pin_large_page(workspace, cli)
    before = sheet_of("webarena", "casheekar").cells["open_work"].source
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        burst(pilot, "ctrl+l")
        reader = None
        while reader is None or reader.reading is None:  # keys arrive as soon as the text is there
            await pilot.pause(0)  # (not pilot.press: it would wait for the app to be idle)
            reader = coding(pilot)._reader
        burst(pilot, "escape", "tab", "end", *" QZ")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.2)
        await pilot.press("tab")
        await settle(pilot)
        search = pilot.app.screen.query_one("#reader-search", Input)
        assert search.value == "", f"typed into the reader's search: {search.value!r}"
    assert sheet_of("webarena", "casheekar").cells["open_work"].source == before + " QZ"


async def test_a_digit_on_the_reader_screen_says_where_codes_are_picked(workspace: Path, cli, sheet_of) -> None:
    """At 80 columns the reader is a screen: a digit there changes nothing and says so, as the
    pane does; typed into the search box it is text."""
    from protocoder.tui.screens.reader import ReaderScreen

    from .helpers import notices

    pin_large_page(workspace, cli, sections=3)
    before = sheet_of("webarena", "casheekar").cells["open_work"]
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReaderScreen)
        await pilot.press("2")
        await pilot.pause()
        assert any("picks a code only while the codes have the focus" in n for n in notices(pilot))
        await pilot.press("slash", "2")
        await pilot.pause()
        assert pilot.app.screen.query_one("#reader-search", Input).value == "2"
        await pilot.press("escape", "escape")
        await settle(pilot)
    assert sheet_of("webarena", "casheekar").cells["open_work"] == before
