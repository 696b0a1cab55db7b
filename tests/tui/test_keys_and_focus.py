"""Issue 14.2 and 14.3: tab order, no silently lost text, a help key that works, code keys as printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.command import CommandPalette
from textual.widgets import Input, OptionList, TextArea

from protocoder.model import Cell, Rubric
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review
from protocoder.tui.screens import ConfirmModal, KeysModal, ProtocolFormScreen, ProtocolListScreen
from protocoder.tui.widgets import code_keys

from .helpers import app_for, coding, loaded, notices, settle, shown, type_keys, type_text


def focus_name(pilot) -> str:
    """The focused widget's id, else its first class (source inputs have classes, not ids)."""
    focused = pilot.app.focused
    assert focused is not None
    return focused.id or sorted(c for c in focused.classes if not c.startswith("-"))[0]


async def test_protocol_form_tabs_in_reading_order(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f3")
        await pilot.pause()
        order = [focus_name(pilot)]
        for _ in range(10):
            await pilot.press("tab")
            order.append(focus_name(pilot))
        assert order == ["form-name", "form-id", "form-cites", "source-title", "source-url", "source-version",
                         "source-accessed", "source-remove", "form-add-source", "form-save", "form-cancel"]


async def test_forms_never_drop_typed_text_without_asking(workspace: Path, tree_bytes) -> None:
    before = tree_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await type_text(pilot, "Half-typed Bench")
        await pilot.press("tab", "tab", "tab")
        await type_text(pilot, "A title")
        await pilot.press("tab", "tab", "tab", "tab")
        assert focus_name(pilot) == "source-remove"
        await pilot.press("enter")  # Remove on a source with text: asks first
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, ProtocolFormScreen)
        assert form.query(".source-title").first(Input).value == "A title"
        await pilot.press("escape")  # leaving with typed text: asks first
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert pilot.app.screen is form
        assert form.query_one("#form-name", Input).value == "Half-typed Bench"
        await pilot.press("escape", "y")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        await pilot.press("f3")  # an untouched form leaves at once
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
    assert tree_bytes() == before


async def test_question_mark_opens_the_keys_on_the_list_and_is_text_in_inputs(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(pilot.app.screen, KeysModal), "? on the list opens the keys, not the filter"
        assert screen.query_one("#list-filter", Input).value == ""
        rows = pilot.app.screen.query_one("#keys-table")
        keys = [str(rows.get_row_at(i)[0]) for i in range(rows.row_count)]  # type: ignore[attr-defined]
        assert "f1 / ?" in keys
        await pilot.press("escape", "f1")
        await pilot.pause()
        assert isinstance(pilot.app.screen, KeysModal)
        await pilot.press("escape")
        await type_keys(pilot, "web")  # other keys still filter
        assert screen.table.row_count == 1

        await pilot.press("enter", "question_mark")  # on the coding screen's codes: the keys
        await pilot.pause()
        assert isinstance(pilot.app.screen, KeysModal)
        await pilot.press("escape", "tab", "question_mark")  # in the source location: a question mark
        await pilot.pause()
        assert coding(pilot).query_one("#cell-source", Input).value == "?"


async def test_entering_a_filled_input_puts_the_cursor_at_the_end(workspace: Path, sheet_of, store: Store,
                                                                  rubric: Rubric) -> None:
    store.save_cell(Cell("webarena", "open_work", "ada", "NR", "Sec. 3", "Silent on background work."), rubric)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "pageup")  # open_work is coded: focus the codes of it again
        await pilot.pause()
        screen = coding(pilot)
        assert screen.field.id == "open_work"
        await pilot.press("tab")
        await type_keys(pilot, ".2")  # appended, not typed over a selection of the whole text
        await pilot.press("tab")
        await type_keys(pilot, " Checked.")
        await pilot.press("shift+tab", "shift+tab", "tab", "tab")  # leave and come back: still the end
        assert isinstance(pilot.app.focused, TextArea)
        await type_keys(pilot, " Twice.")
        await pilot.press("ctrl+q")
        await settle(pilot)
    cell = sheet_of("webarena").cells["open_work"]
    assert (cell.source, cell.basis) == ("Sec. 3.2", "Silent on background work. Checked. Twice.")


async def test_keys_typed_right_after_tab_go_to_the_next_input(workspace: Path, sheet_of) -> None:
    # Keys that arrive together (typing fast while the app is busy, or a browser tab under
    # `protocoder serve`, whose keys come over the network in bursts) are all handed out as
    # they arrive: without tab acting at once, the keys after it went to the widget tab was
    # leaving, so the codes took "Sec 3" (its "3" picking NR) and the source got nothing.
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "2")  # P
        await settle(pilot)
        assert pilot.app.focused is not None and pilot.app.focused.id == "code-choice"
        for key, character in [("tab", "\t"), ("S", "S"), ("e", "e"), ("c", "c"), ("space", " "), ("3", "3")]:
            pilot.app.post_message(events.Key(key, character))  # in one go, as the driver does
        await pilot.pause()
        assert focus_name(pilot) == "cell-source"
        assert coding(pilot).query_one("#cell-source", Input).value == "Sec 3"
        await pilot.press("shift+tab")
        for key, character in [("shift+tab", None), ("tab", "\t"), ("tab", "\t"), ("x", "x")]:
            pilot.app.post_message(events.Key(key, character))
        await pilot.pause()
        assert focus_name(pilot) == "cell-source"
        await pilot.press("ctrl+q")
        await settle(pilot)
    cell = sheet_of("webarena").cells["open_work"]
    assert (cell.code, cell.source) == ("P", "Sec 3x")


async def test_the_command_palette_lists_keys_once(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        titles = [command.title for command in pilot.app.get_system_commands(pilot.app.screen)]
        assert titles.count("Keys") == 1 and titles.count("Quit") == 1
        await pilot.press("ctrl+p")
        await type_text(pilot, "Keys")
        await pilot.pause(0.5)  # the palette searches in the background
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        found = palette.query_one("CommandList", OptionList)
        prompts = [str(found.get_option_at_index(i).prompt) for i in range(found.option_count)]
        assert sum(1 for prompt in prompts if prompt.startswith("Keys")) == 1, prompts


# --------------------------------------------------------------------------- code keys


def test_code_keys_follow_digit_ids_and_otherwise_positions() -> None:
    assert code_keys(["E", "P", "NR", "NA"]) == {"1": "E", "2": "P", "3": "NR", "4": "NA"}
    assert code_keys(["2", "1", "0"]) == {"1": "1", "2": "2", "0": "0"}
    # Mixed: digit codes keep their digit, the others take digits no code of the rubric has.
    assert code_keys(["1", "0", "NA"], reserved=["2", "1", "0", "NA"]) == {"1": "1", "3": "NA", "0": "0"}
    assert len(code_keys([f"c{n}" for n in range(12)])) == 10


SCORES_RUBRIC = """\
id: evaluation-boundary
title: Scores
version: "1.0"
codes:
  - {id: 2, label: Met, definition: Every part is documented., requires: [basis]}
  - {id: 1, label: Partly met, definition: Some parts are documented., requires: [basis]}
  - {id: 0, label: Not met, definition: Nothing is documented., requires: []}
  - {id: NA, label: Not applicable, definition: Does not apply., requires: [], role: not-applicable}
order: [0, 1, 2]
fields:
  - id: reset
    label: Reset
    question: Is the reset documented?
    codes: [2, 1, 0]
  - id: logging
    label: Logging
    question: Are the logs documented?
    codes: [1, 0, NA]
"""


@pytest.fixture
def scores(tmp_path: Path, cli) -> Path:
    """A workspace whose rubric scores cells 2, 1, 0 (ids written as YAML numbers)."""
    root = tmp_path / "scores"
    assert cli("init", root).exit_code == 0
    (root / "rubric/evaluation-boundary.yaml").write_text(SCORES_RUBRIC, encoding="utf-8")
    assert cli("protocol", "add", "--workspace", root, "--id", "demo", "--name", "Demo",
               "--source", "Paper|https://example.org/p|v1|2026-01-01").exit_code == 0
    return root


async def test_digit_codes_are_picked_by_their_own_digit(scores: Path) -> None:
    def codes_on_disk() -> dict[str, str | None]:
        review = load_review(scores)
        return {f: cell.code for f in ("reset", "logging") if (cell := review.cells("demo", f).get("ada"))}

    app = app_for(scores)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert shown(pilot, "[2] ○ 2  Met") and shown(pilot, "[1] ○ 1  Partly met")
        assert shown(pilot, "[0] ○ 0  Not met")
        assert shown(pilot, "not coded: press 2, 1, 0")
        for key in ("1", "0", "2"):
            await pilot.press(key)
            await settle(pilot)
            assert codes_on_disk()["reset"] == key, f"key {key} picks code {key}"
            assert shown(pilot, f"[{key}] ● {key}")
        await pilot.press("pagedown")
        await pilot.pause()
        # Logging allows 1, 0 and NA: NA takes a digit that is no code of the rubric.
        assert shown(pilot, "[3] ○ NA")
        await pilot.press("2")  # code 2 is not allowed here, and 2 is not NA's key either
        await settle(pilot)
        assert "logging" not in codes_on_disk()
        assert "No code of Logging has the key 2: the keys are 1, 0, 3." in notices(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert codes_on_disk()["logging"] == "NA"
        await pilot.press("1")
        await settle(pilot)
        assert codes_on_disk()["logging"] == "1"
    assert codes_on_disk() == {"reset": "2", "logging": "1"}
