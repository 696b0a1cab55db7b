"""Issue 23: one focus model. Code keys act only on the codes, ``]``/``[`` move from every pane,
ctrl+z undoes a code change as a new save, the reader never takes the focus late, and the
adjudication app's tab goes from the codes to the reason."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from protocoder.tui.adjudicate import AdjudicationScreen, make_adjudication_app
from protocoder.tui.screens.reader import ReaderScreen

from .helpers import app_for, coding, focused_id, loaded, notices, settle, type_text
from .test_adjudicate import add_alice

WEB_PAGE = """# WebArena

## Overview

WebArena is a benchmark of web tasks. Each task is run in a fresh container.

## Parameters

### max_steps

The episode ends after 30 steps.

## Scoring

Tasks are scored by functional checks on the final state of the site.
"""


def pin(workspace: Path, cli, protocol: str = "webarena") -> None:
    """Pin a Markdown snapshot to ``protocol`` through the real CLI."""
    page = workspace / "page.md"
    page.write_text(WEB_PAGE, encoding="utf-8")
    result = cli("source", "add", protocol, str(page), "--workspace", str(workspace))
    assert result.exit_code == 0, result.output
    page.unlink()


async def open_webarena(pilot) -> None:
    await loaded(pilot)
    await pilot.press("enter")  # the list opens on webarena
    await pilot.pause()


async def test_digits_in_the_reader_pane_never_change_the_code(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    before = sheet_of("webarena", "casheekar").cells["open_work"].code
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        screen = coding(pilot)
        assert focused_id(pilot) == "reader-text"
        await pilot.press("2")
        await settle(pilot)
        assert any("only while the codes have the focus" in n for n in notices(pilot))
        await pilot.press("]")  # moves from the reader, which keeps the focus and follows the cell
        await pilot.pause()
        assert screen.field.id == "reset_retention"
        assert focused_id(pilot) == "reader-text"
        assert screen._reader is not None and screen._reader.cell.field == "reset_retention"
        await pilot.press("2", "[")
        await settle(pilot)
        assert screen.field.id == "open_work"
    assert sheet_of("webarena", "casheekar").cells["open_work"].code == before
    assert sheet_of("webarena", "casheekar").cells["reset_retention"].code == "E"


async def test_brackets_move_the_cell_from_the_reader_screen(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        screen = coding(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        reader_screen = pilot.app.screen
        assert isinstance(reader_screen, ReaderScreen)
        await pilot.press("]", "]")
        await pilot.pause()
        assert screen.field.id == "separate_evidence"
        assert reader_screen.reader.cell.field == "separate_evidence"
        await pilot.press("3")  # a digit in the reader's text: nothing
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is screen
        assert screen.field.id == "separate_evidence"
    assert sheet_of("webarena", "casheekar").cells["separate_evidence"].code == "P"


async def test_escape_right_after_ctrl_l_keeps_the_focus_on_the_cell(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        # ctrl+l, escape and tab before the reader is laid out: the next keys belong to the source input.
        await pilot.press("ctrl+l", "escape", "tab")
        await pilot.pause()
        await pilot.pause()
        assert focused_id(pilot) == "cell-source"
        await pilot.press("end")
        await type_text(pilot, " · Sec 9")
        await pilot.press("tab")
        await settle(pilot)
    assert sheet_of("webarena", "casheekar").cells["open_work"].source.endswith(" · Sec 9")


async def test_ctrl_z_undoes_the_last_code_change_as_a_new_save(workspace: Path, sheet_of) -> None:
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        screen = coding(pilot)
        assert screen.field.id == "open_work"
        await pilot.press("2")  # NR → P
        await settle(pilot)
        assert sheet_of("webarena", "casheekar").cells["open_work"].code == "P"
        await pilot.press("]")
        await pilot.pause()
        await pilot.press("ctrl+z")  # goes back to open_work, shows it, writes NR again
        await settle(pilot)
        assert screen.field.id == "open_work"
        assert sheet_of("webarena", "casheekar").cells["open_work"].code == "NR"
        assert any("Undone" in n for n in notices(pilot))
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert any("No code change to undo" in n for n in notices(pilot))
    assert sheet_of("webarena", "casheekar").cells["open_work"].code == "NR"


async def test_search_text_typed_and_not_searched_stays(workspace: Path, cli) -> None:
    pin(workspace, cli)
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("slash")
        await type_text(pilot, "fresh cont")
        await pilot.press("tab", "shift+tab", "shift+tab")  # away and back to the text
        await pilot.press("slash")
        await pilot.pause()
        box = pilot.app.focused
        assert isinstance(box, Input) and box.value == "fresh cont"


async def test_adjudication_tab_goes_from_the_codes_to_the_reason(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(pilot.app.screen, AdjudicationScreen)
        await pilot.press("3", "tab")
        await pilot.pause()
        assert isinstance(pilot.app.focused, TextArea) and pilot.app.focused.id == "adj-reason"


async def test_keys_typed_right_after_ctrl_l_on_a_narrow_terminal(workspace: Path, cli, sheet_of) -> None:
    """At 80 columns the reader is a screen: escape and tab typed before it is laid out still
    return to the cell, and what is typed next goes into the source location."""
    pin(workspace, cli)
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l", "escape", "tab", "end", *" and Overview", "tab")
        await settle(pilot)
        assert not isinstance(pilot.app.screen, ReaderScreen)
    assert sheet_of("webarena", "casheekar").cells["open_work"].source.endswith(" and Overview")


def test_escape_then_tab_read_together_is_escape_then_tab() -> None:
    """Pressed while the app is busy, escape and tab reach the parser as one read: they stay two keys."""
    from textual._xterm_parser import XTermParser

    import protocoder.tui.app  # noqa: F401  (the apps set the reading up when imported)

    keys = [event.key for event in XTermParser().feed("\x1b\tSec") if hasattr(event, "key")]
    assert keys == ["escape", "tab", "S", "e", "c"]
    assert [event.key for event in XTermParser().feed("\x1b[Z") if hasattr(event, "key")] == ["shift+tab"]
