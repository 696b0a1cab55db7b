"""Coding end to end: key presses in, YAML files on disk out."""

from __future__ import annotations

import webbrowser
from pathlib import Path

from textual.widgets import Input, TextArea

from protocoder.model import Cell
from protocoder.tui.screens import ProtocolListScreen, ReviewerModal
from protocoder.tui.widgets import CodeChoice, FieldList

from .helpers import app_for, coding, focused_id, loaded, settle, type_keys, type_text


async def test_list_shows_only_this_reviewers_progress(workspace: Path) -> None:
    # casheekar has coded every cell; ada has coded none and must not see casheekar's codes.
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        table = screen.table
        assert table.row_count == 10
        assert [table.get_cell(row, "coded") for row in ("webarena", "agentcanary")] == ["0/3", "0/3"]
        await pilot.press("enter")
        await pilot.pause()
        assert coding(pilot).protocol_id == "webarena"
        assert coding(pilot).drafts == {}
        assert pilot.app.screen.query_one("#code-choice", CodeChoice).chosen is None


async def test_code_a_cell_with_keys_and_find_it_on_disk(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert focused_id(pilot) == "code-choice"
        await pilot.press("3")  # NR, the third code of open_work
        await settle(pilot)
        assert sheet_of("webarena").cells["open_work"].code == "NR"
        await pilot.press("tab")
        assert focused_id(pilot) == "cell-source"
        await type_keys(pilot, "Sec 3")
        await pilot.press("tab")
        assert focused_id(pilot) == "cell-basis"
        await type_keys(pilot, "Silent.\nOn all.")
        await pilot.press("tab")
        assert focused_id(pilot) == "cell-cites"
        await type_keys(pilot, "zhou")
        await pilot.press("right")  # accepts the completion
        await pilot.press("ctrl+q")
        await settle(pilot)
    cell = sheet_of("webarena").cells["open_work"]
    assert (cell.code, cell.source, cell.basis, cell.cites) == ("NR", "Sec 3", "Silent.\nOn all.",
                                                                ("zhou2024webarena",))
    assert cell.rubric_version == "1.0" and cell.coded_at
    text = (workspace / "protocols/webarena/codes/ada.yaml").read_text()
    assert "cites: [zhou2024webarena]" in text
    assert "basis: |-\n      Silent.\n      On all." in text


async def test_typing_is_written_after_a_pause_without_leaving_the_input(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "2", "tab")
        await type_text(pilot, "App A")
        assert focused_id(pilot) == "cell-source"
        await pilot.pause(0.8)  # longer than the 0.5 s debounce
        await settle(pilot)
        assert sheet_of("webarena").cells["open_work"].source == "App A"
        indicator = str(pilot.app.screen.query_one("#save-indicator").render())
        assert indicator.startswith("saved ")


async def test_text_typed_before_a_code_is_kept_as_a_draft(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "tab")
        await type_text(pilot, "Sec 9")
        await pilot.press("pagedown")  # moving on writes at once
        await settle(pilot)
        draft = sheet_of("webarena").cells["open_work"]
        assert draft.code is None and draft.source == "Sec 9"
        assert pilot.app.session.progress("webarena").coded == 0


async def test_quit_and_come_back_to_the_first_uncoded_cell(workspace: Path, sheet_of, store, rubric) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "1", "pagedown")  # open_work = E, then reset_retention
        await pilot.press("2", "ctrl+q")  # reset_retention = P, quit at once
        await settle(pilot)
    assert sheet_of("webarena").cells["reset_retention"].code == "P"
    for protocol_id in ("webarena", "workarena"):  # make two protocols done behind the app's back
        for field_id in rubric.field_ids:
            store.save_cell(Cell(protocol_id, field_id, "ada", "NR", "S", "B"), rubric)
    store.delete_cell("workarena", "ada", "reset_retention")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert screen.table.get_cell("webarena", "coded") == "3/3"
        assert screen.selected_id == "workarena"  # the first protocol not done
        await pilot.press("enter")
        await pilot.pause()
        assert coding(pilot).field.id == "reset_retention"
        assert focused_id(pilot) == "code-choice"


async def test_requirements_shown_and_done_only_when_complete(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("down", "down", "down", "down", "enter")  # tau-bench
        await pilot.pause()
        screen = coding(pilot)
        assert screen.protocol_id == "tau-bench"
        await pilot.press("4")  # NA requires a basis
        await pilot.pause()
        assert str(screen.query_one("#cell-missing").render()) == "NA requires a basis"
        field_list = screen.query_one("#field-list", FieldList)
        assert str(field_list.get_option("open_work").prompt).startswith("!")
        await pilot.press("tab", "tab")
        await type_text(pilot, "Sync.")
        assert str(screen.query_one("#cell-missing").render()) == "✓ NA is complete"
        assert str(field_list.get_option("open_work").prompt).startswith("✓")
        for code in ("3", "3"):  # NR for the other two fields, with source and basis
            await pilot.press("pagedown", code, "tab")
            await type_text(pilot, "S")
            await pilot.press("tab")
            await type_text(pilot, "B")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert pilot.app.session.progress("tau-bench").status == "done"
        await pilot.press("escape", "escape")  # leave the basis, then the protocol
        await pilot.pause()
        table = pilot.app.screen.table  # type: ignore[attr-defined]
        assert table.get_cell("tau-bench", "coded") == "3/3"
        assert "done" in str(table.get_cell("tau-bench", "status"))
    assert all(cell.is_complete(pilot.app.session.rubric) for cell in sheet_of("tau-bench").cells.values())


async def test_guided_mode_proposes_a_code_from_the_rubric(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "ctrl+g")
        await pilot.pause()
        # open_work: excluded? No → stated? Yes → covered? "No, only part of it" → P
        # (answers always in the order [1] yes, [2] no, whatever order the rubric lists them)
        await pilot.press("2")
        await pilot.press("2")  # stated? No: proposes NR
        await pilot.press("backspace")  # back to "stated?"
        await pilot.press("1", "2")
        assert "Proposed code" in str(pilot.app.screen.query_one("#guided-step").render())
        await pilot.press("1")  # use it
        await settle(pilot)
    assert sheet_of("webarena").cells["open_work"].code == "P"


async def test_notes_tab_writes_descriptive_notes(workspace: Path, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "f3")
        await pilot.pause()
        assert focused_id(pilot) == "note-run_unit"
        await type_text(pilot, "One task.")
        await pilot.press("tab")
        await type_text(pilot, "Stop action.")
        await pilot.press("ctrl+q")
        await settle(pilot)
    notes = sheet_of("webarena").notes
    assert notes == {"run_unit": "One task.", "stop_rule": "Stop action."}


async def test_reviewer_is_asked_for_when_unknown(workspace: Path, sheet_of) -> None:
    app = app_for(workspace, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReviewerModal)
        await type_text(pilot, "Ada Lovelace")
        assert "ada-lovelace" in str(pilot.app.screen.query_one("#reviewer-id").render())
        await pilot.press("enter")
        await loaded(pilot)
        assert pilot.app.session.reviewer == "ada-lovelace"
        await pilot.press("enter", "1")
        await settle(pilot)
    assert sheet_of("webarena", "ada-lovelace").cells["open_work"].code == "E"


async def test_inputs_take_text_not_codes_flag_unknown_keys_and_sources_open(workspace: Path, sheet_of,
                                                                             monkeypatch) -> None:
    app = app_for(workspace)
    opened: list[str] = []
    monkeypatch.setenv("DISPLAY", ":0")  # a desktop, whose browser is asked to open the URL
    monkeypatch.setattr(webbrowser, "open", lambda url, **_: opened.append(url) or True)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "ctrl+o", "tab")
        assert opened == ["https://arxiv.org/abs/2307.13854"]
        await type_keys(pilot, "3")  # a digit in an input is text, not a code
        assert pilot.app.screen.query_one("#cell-source", Input).value == "3"
        await pilot.press("tab")
        await type_keys(pilot, "12")
        assert pilot.app.screen.query_one("#cell-basis", TextArea).text == "12"
        await pilot.press("tab")
        await type_text(pilot, "nosuch2099")
        assert str(pilot.app.screen.query_one(".cite-hint").render()) == "not in references.bib: nosuch2099"
        await pilot.press("ctrl+q")
        await settle(pilot)
    cell = sheet_of("webarena").cells["open_work"]
    assert (cell.code, cell.source, cell.basis, cell.cites) == (None, "3", "12", ("nosuch2099",))


async def test_moving_between_protocols_digit_limits_and_the_keys_table(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "ctrl+pagedown")
        assert coding(pilot).protocol_id == "workarena"
        await pilot.press("}", "}", "{")
        assert coding(pilot).protocol_id == "osworld"
        await pilot.press("ctrl+pageup", "pageup")  # before the first field: the previous protocol
        assert (coding(pilot).protocol_id, coding(pilot).field.id) == ("webarena", "separate_evidence")
        await pilot.press("4")  # separate_evidence allows E, P, NR only
        await settle(pilot)
        assert not (workspace / "protocols/webarena/codes/ada.yaml").exists()
        await pilot.press("question_mark")
        table = pilot.app.screen.query_one("#keys-table")
        rows = [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]  # type: ignore[attr-defined]
        assert ("pgdn / ]", "Next field (after the last one: the next protocol)") in rows
        assert rows[0] == ("^q", "Quit (every edit is written first)")
        assert ("[key] shown by a code", "pick that code (only while the codes have the focus)") in rows
        await pilot.press("escape")
        assert focused_id(pilot) == "code-choice"
