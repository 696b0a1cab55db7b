"""Issue 23's smaller points: guided answers in one order with y/n, the list filter cleared on
return, quote removal from the reader's list asks first, and the source location filled from a
quote never names a parameter's heading."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList

from protocoder.tui.screens import ConfirmModal, GuidedModal, ProtocolListScreen
from protocoder.tui.screens.coding_aside import parameter_heading
from protocoder.tui.widgets.reader import Reader

from .helpers import app_for, coding, loaded, notices, settle, type_text
from .test_focus_model import open_webarena, pin


def test_parameter_headings_are_told_from_sections() -> None:
    for heading in ("max_steps", "`sandbox_type`", "--limit", "sandbox.type", "max_steps (int)", "epochs: 5"):
        assert parameter_heading(heading), heading
    for heading in ("Overview", "Scoring", "3.2 Evaluation", "Task setup", "Parameters", ""):
        assert not parameter_heading(heading), heading


async def test_guided_answers_are_always_yes_then_no(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "ctrl+g")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, GuidedModal)
        seen = []
        answers = modal.query_one("#guided-answers", OptionList)
        for key in ("n", "y"):  # excluded? No → stated? (the rubric lists No first here) Yes
            seen.append([str(answers.get_option_at_index(i).prompt) for i in range(answers.option_count)])
            await pilot.press(key)
            await pilot.pause()
        seen.append([str(answers.get_option_at_index(i).prompt) for i in range(answers.option_count)])
        for prompts in seen:
            assert prompts[0].startswith("[1/y] Yes") and prompts[1].startswith("[2/n] No"), prompts
        await pilot.press("y", "y")  # covered? Yes → E; use it
        await settle(pilot)
    assert sheet_of("webarena").cells["open_work"].code == "E"


async def test_the_list_filter_is_cleared_on_return(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await type_text(pilot, "cyb")
        await pilot.press("enter")
        await pilot.pause()
        assert coding(pilot).protocol_id == "cybench"
        await pilot.press("escape")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert screen.query_one("#list-filter", Input).value == ""
        assert screen.selected_id == "cybench"
        await type_text(pilot, "osw")
        assert screen.query_one("#list-filter", Input).value == "osw"
        assert screen.selected_id == "osworld"


async def test_quote_fills_an_empty_source_but_not_from_a_parameter_heading(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace)  # ada: nothing coded, every source location empty
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("slash")
        await type_text(pilot, "episode ends")
        await pilot.press("enter", "q", "enter")
        await settle(pilot)
        # Said on the reader's status line, not in a toast over its quotes and candidates.
        assert "parameter's heading" in coding(pilot).query_one(Reader).said
        assert coding(pilot).query_one("#cell-source", Input).value == ""
        await pilot.press("slash")
        box = pilot.app.focused
        assert isinstance(box, Input)
        box.value = ""
        await type_text(pilot, "fresh container")
        await pilot.press("enter", "q", "enter")
        await settle(pilot)
        assert "Source location filled: Overview" in coding(pilot).query_one(Reader).said
        assert not any("quote" in n for n in notices(pilot))
    cell = sheet_of("webarena").cells["open_work"]
    assert cell.source == "Overview"
    assert [q.section for q in cell.quotes] == ["max_steps", "Overview"]


async def test_removing_a_quote_from_the_reader_list_asks_first(workspace: Path, cli, sheet_of) -> None:
    pin(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("slash")
        await type_text(pilot, "fresh container")
        await pilot.press("enter", "q", "enter")
        await settle(pilot)
        assert len(sheet_of("webarena").cells["open_work"].quotes) == 1
        quotes = coding(pilot).query_one("#reader-quotes", OptionList)
        quotes.focus()
        quotes.highlighted = 0
        await pilot.pause()
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmModal)
        await pilot.press("n")  # kept
        await settle(pilot)
        assert len(sheet_of("webarena").cells["open_work"].quotes) == 1
        await pilot.press("delete", "y")
        await settle(pilot)
        assert "removed (saved)" in coding(pilot).query_one(Reader).said
    assert sheet_of("webarena").cells["open_work"].quotes == ()
