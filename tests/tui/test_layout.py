"""Issue 14.1: at 80x24 the rubric stays on screen while a reviewer codes; guidance is one key away."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from protocoder.model import Rubric
from protocoder.tui.widgets import RubricText

from .helpers import app_for, coding, loaded, screen_text, settle, shown, type_keys, type_text

LONG_BASIS = ("The paper lists the stop actions and the checkers that inspect the final state. "
              "It says nothing about background processes, queued writes or timers that may "
              "still be running when the agent stops, nor whether the harness waits for them. "
              "Appendix A.9 describes the container but not what happens to its processes. "
              "The repository's README is silent on the point as well.")


def assert_cell_in_view(pilot: Pilot, rubric: Rubric, field_index: int, chosen: str | None) -> None:
    """Everything a reviewer needs for the cell is on one screen: nothing has scrolled away."""
    fld = rubric.fields[field_index]
    rows = screen_text(pilot)
    text = "\n".join(rows)
    assert f"{fld.label} · field {field_index + 1}/{len(rubric.fields)}" in text
    question = " ".join(fld.question.split())
    assert question[:30] in text and question.split()[-1] in text, "the question is on screen"
    for key, code_id in enumerate(fld.codes, 1):
        mark = "●" if code_id == chosen else "○"
        label = rubric.code(code_id).label
        assert any(f"[{key}] {mark} {code_id}" in row and label in row for row in rows), (code_id, rows)
    assert any(row.strip().startswith("^q Quit") for row in rows[-1:]), "the footer starts with Quit"
    assert "ada" in rows[0], "the reviewer is named in the header"


async def test_a_whole_protocol_is_coded_at_80x24_with_the_rubric_in_view(workspace: Path, rubric: Rubric,
                                                                          sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        for index, key in enumerate(("3", "2", "1")):
            code = rubric.fields[index].codes[int(key) - 1]
            assert_cell_in_view(pilot, rubric, index, None)
            await pilot.press(key)
            await pilot.pause()
            assert_cell_in_view(pilot, rubric, index, code)
            assert shown(pilot, f"{code} requires a source location, a basis")
            await pilot.press("tab")
            await type_text(pilot, f"Sec. {index + 1}")
            assert shown(pilot, f"Source  Sec. {index + 1}"), "the source input is in view while typed in"
            await pilot.press("tab")
            *sentences, last = LONG_BASIS.split(". ")
            for sentence in sentences:
                await type_text(pilot, sentence + ". ")
                assert_cell_in_view(pilot, rubric, index, code)
            await type_keys(pilot, last + ". ")  # key by key, as a reviewer types
            assert_cell_in_view(pilot, rubric, index, code)
            # The end of what is being typed is in view (the basis scrolls inside its own box).
            assert shown(pilot, "as well.")
            assert shown(pilot, f"✓ {code} is complete")
            await pilot.press("pagedown")
            await pilot.pause()
        await settle(pilot)
    cells = sheet_of("webarena").cells
    assert [cells[f.id].code for f in rubric.fields] == ["NR", "P", "E"]
    assert all(cells[f.id].is_complete(rubric) for f in rubric.fields)
    assert cells["open_work"].basis == LONG_BASIS + ". "


async def test_rubric_guide_is_one_key_away_and_beside_the_cell_when_wide(workspace: Path, rubric: Rubric) -> None:
    guidance_line = "Look for a rule"
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert not shown(pilot, guidance_line), "narrow: the guide waits for f2"
        assert shown(pilot, "Sources")
        await pilot.press("f2")
        await pilot.pause()
        assert shown(pilot, guidance_line), "f2 opens the guide beside the cell"
        assert_cell_in_view(pilot, rubric, 0, None)
        assert not shown(pilot, "Sources"), "narrow: the guide takes the fields' and sources' place"
        await pilot.press("tab")  # into the source location: f2 works from a text input too
        await pilot.press("f2")
        await pilot.pause()
        assert not shown(pilot, guidance_line) and shown(pilot, "Sources")
        await pilot.press("escape", "r")  # printable twin, when not typing
        await pilot.pause()
        assert shown(pilot, guidance_line)

    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = coding(pilot)
        assert shown(pilot, guidance_line) and shown(pilot, "Sources"), "wide: fields, cell and guide side by side"
        guide = screen.query_one("#field-guidance", RubricText).markdown
        assert all(rubric.code(code_id).definition in guide for code_id in rubric.fields[0].codes)
        await pilot.press("pagedown")
        await pilot.pause()
        assert screen.field.id == "reset_retention"
        assert shown(pilot, "Reset or retention"), "the guide follows the field"
        await pilot.press("f2")
        await pilot.pause()
        assert not shown(pilot, guidance_line)


async def test_header_and_footer_fit_at_80_columns_on_every_main_screen(workspace: Path) -> None:
    app = app_for(workspace, "a-reviewer-with-a-long-name")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        for keys in ((), ("enter",), ("f3",), ("escape", "escape", "f3")):
            await pilot.press(*keys)
            await pilot.pause()
            rows = screen_text(pilot)
            assert "a-reviewer-with-a-long-name" in rows[0], (keys, rows[0])
            footer = rows[-1]
            assert footer.lstrip().startswith("^q Quit  f1 Keys"), (keys, footer)
            # Keys that do not fit are left out whole, never cut in the middle of a word.
            before_palette = footer.split("▏")[0].rstrip()
            assert before_palette.split("  ")[-1].split(" ")[-1].isalpha()
