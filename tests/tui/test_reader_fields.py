"""Issue 29 item 1: one pass through a source codes every field.

In the reader, ``q`` shows the exact passage (source, heading, text) with the protocol's fields;
a field's key quotes into that field, whichever cell is being coded; ``u`` undoes it right
after; other fields' quotes are marked in the text; no code is ever set; what happened is said
on the reader's status line, not in toasts over its quotes and candidates. Real documentation
(``tests/data/real-docs``), pinned with the CLI, at 80×24 (the reader on its own screen) and
120×40 (the reader as a pane).
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from protocoder.tui.screens.quote_into import QuoteIntoModal, field_key
from protocoder.tui.screens.reader import ReaderScreen
from protocoder.tui.widgets.reader import Reader

from .helpers import app_for, coding, notices, screen_text, settle, type_text
from .test_focus_model import open_webarena

REAL_DOCS = Path(__file__).resolve().parents[1] / "data" / "real-docs"
LM_EVAL = REAL_DOCS / "lm-eval" / "README.md"
PASSAGE = "Use `--use_cache <DIR>` to cache evaluation results"


def pin_real(workspace: Path, cli, document: Path = LM_EVAL, protocol: str = "webarena",
             source_id: str = "lm-eval") -> None:
    """Pin a real README (byte for byte) to ``protocol`` through the CLI."""
    result = cli("source", "add", protocol, str(document), "--id", source_id, "--workspace", str(workspace))
    assert result.exit_code == 0, result.output


def field_ids(pilot) -> list[str]:  # noqa: ANN001 - Pilot's generic type
    rubric = pilot.app.session.rubric
    assert rubric is not None
    return [field.id for field in rubric.fields]


async def _search(pilot, words: str) -> None:  # noqa: ANN001
    await pilot.press("slash")
    box = pilot.app.focused
    box.value = ""
    await type_text(pilot, words)
    await pilot.press("enter")
    await pilot.pause()


async def test_one_pass_quotes_into_any_field_with_a_preview_and_an_undo_at_80x24(workspace: Path, cli,
                                                                                   sheet_of) -> None:
    pin_real(workspace, cli)
    app = app_for(workspace)  # ada: nothing coded yet
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReaderScreen)
        fields = field_ids(pilot)
        current, other = fields[0], fields[2]
        await _search(pilot, "cache evaluation results")
        await pilot.press("q")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, QuoteIntoModal)
        # The preview names the source and its heading and shows the passage before anything is saved.
        rows = "\n".join(screen_text(pilot))
        assert "lm-eval" in rows or "Language Model Evaluation Harness" in rows
        assert "cache evaluation results" in rows
        assert "this cell" in rows
        assert sheet_of("webarena").cells.get(current) is None
        await pilot.press(field_key(2))  # the third field's key: quote there, not into the current cell
        await settle(pilot)
        assert isinstance(pilot.app.screen, ReaderScreen)
        sheet = sheet_of("webarena")
        (quote,) = sheet.cells[other].quotes
        assert PASSAGE.replace("`", "") in quote.text.replace("`", "")
        assert sheet.cells[other].code is None  # quoting never sets a code
        assert sheet.cells[other].source == "Saving & Caching Results"  # the empty location, filled
        assert current not in sheet.cells or not sheet.cells[current].quotes
        reader = pilot.app.screen.query_one(Reader)
        assert reader.said.startswith("Quoted into ")
        assert "u undoes" in str(reader.query_one("#reader-status", Static).render())
        assert not notices(pilot)  # nothing covers the quotes and candidates
        # The passage is marked as quoted for that field; the position says which field.
        assert [field_id for field_id, _ in reader.field_spans] == [other]
        assert "quoted for" in str(reader.query_one("#reader-position", Static).render())
        # u: undone at once, saved.
        await pilot.press("u")
        await settle(pilot)
        undone = sheet_of("webarena").cells[other]
        assert undone.quotes == () and undone.source == ""  # the location it filled goes with it
        assert reader.field_spans == []
        assert reader.said.startswith("Undone")
        # enter in the preview: the cell being coded; escape there saves nothing.
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert reader.said == "Nothing quoted."
        await pilot.press("q", "enter")
        await settle(pilot)
        assert len(sheet_of("webarena").cells[current].quotes) == 1
        # The same passage again: the field that has it is shown as such and cannot take it twice.
        await pilot.press("q")
        await pilot.pause()
        await pilot.press(field_key(0))
        await pilot.pause()
        assert isinstance(pilot.app.screen, QuoteIntoModal)
        await pilot.press("escape")
    assert len(sheet_of("webarena").cells[current].quotes) == 1


async def test_the_pane_quotes_into_another_field_and_marks_it_at_120x40(workspace: Path, cli, sheet_of) -> None:
    pin_real(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = coding(pilot)
        fields = field_ids(pilot)
        await _search(pilot, "cache evaluation results")
        await pilot.press("q", field_key(1))
        await settle(pilot)
        reader = screen.query_one(Reader)
        assert reader.said.startswith("Quoted into ")
        assert not notices(pilot)
        assert sheet_of("webarena").cells[fields[1]].quotes
        assert sheet_of("webarena").cells[fields[1]].code is None
        # The cell on screen did not change: its quotes are still none.
        assert reader.cell.field == fields[0] and reader.cell.quotes == ()
        assert [field_id for field_id, _ in reader.field_spans] == [fields[1]]
        # Moving to that field, its quote is the cell's own mark.
        await pilot.press("]")
        await settle(pilot)
        assert reader.cell.field == fields[1] and len(reader.quote_spans) == 1 and reader.field_spans == []
