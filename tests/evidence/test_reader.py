"""The reader, driven with Pilot: search, select, quote; what reaches disk is checked in the YAML."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import OptionList, Static

from protocoder.evidence.locate import Haystack
from protocoder.evidence.reading import ReadingText, quote_text
from protocoder.model import Cell, Quote
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review
from protocoder.tui.screens.reader import ReaderScreen, ReaderText
from protocoder.tui.widgets.reader import Reader

from .docs import make_pdf

PAGES = [["1 Introduction", "Agents are scored on a fixed set of tasks.", "The harness caps each run",
          "at thirty minutes. Runs that exceed it fail."],
         ["2 Protocol", "Each episode ends after fifty steps. Scores average", "three seeds [bold red]always[/]."]]
REVIEWER = "ada"


class ReaderHost(App[None]):
    """The reader pushed directly, with callbacks that write through the store (as the coding
    screen does through its write queue)."""

    def __init__(self, workspace: Path, protocol_id: str = "webarena", field_id: str = "open_work") -> None:
        super().__init__()
        self.review = load_review(workspace)
        self.store = Store(self.review.paths)
        self.protocol_id, self.field_id = protocol_id, field_id

    def _cell(self) -> Cell:
        sheet, _ = self.store.read_sheet(self.protocol_id, REVIEWER, self.review.rubric)
        return sheet.cells.get(self.field_id) or Cell(self.protocol_id, self.field_id, REVIEWER, None)

    def add(self, quote: Quote) -> Cell:
        cell = self._cell()
        cell = replace(cell, quotes=(*cell.quotes, quote))
        self.store.save_cell(cell, self.review.require_valid())
        return cell

    def remove(self, index: int) -> Cell:
        cell = self._cell()
        cell = replace(cell, quotes=cell.quotes[:index] + cell.quotes[index + 1:])
        self.store.save_cell(cell, self.review.require_valid())
        return cell

    def on_mount(self) -> None:
        self.push_screen(ReaderScreen(self.review.paths, self.review.protocol(self.protocol_id), self._cell(),
                                      on_quote=self.add, on_remove=self.remove, field_label="Open work"))


@pytest.fixture
def with_paper(bundled: Path, tmp_path: Path, cli) -> Path:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(make_pdf(PAGES, outline=[("Introduction", 0), ("Protocol", 1)], title="The paper"))
    assert cli("source", "add", "webarena", paper, "--id", "paper", "--workspace", bundled).exit_code == 0
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nResets happen between attempts.\n", encoding="utf-8")
    assert cli("source", "add", "webarena", notes, "--id", "notes", "--workspace", bundled).exit_code == 0
    return bundled


async def _opened(pilot) -> Reader:  # noqa: ANN001 - Pilot's generic type
    """The reader of the full-screen ReaderScreen, once its text is loaded."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ReaderScreen)
    assert screen.reader.reading is not None
    return screen.reader


def sheet_quotes(workspace: Path) -> list[Quote]:
    cell = load_review(workspace).cells("webarena", "open_work").get(REVIEWER)
    return list(cell.quotes) if cell else []


async def test_reader_shows_pages_and_headings_and_quotes_a_search_match(with_paper: Path) -> None:
    app = ReaderHost(with_paper)
    async with app.run_test(size=(120, 36)) as pilot:
        reader = await _opened(pilot)
        area = reader.query_one(ReaderText)
        assert area.text.startswith("──── p. 1 ────\n1 Introduction\n")
        assert "──── p. 2 ────\n2 Protocol" in area.text
        assert len(area.marks["marker"]) == 2 and len(area.marks["heading"]) == 2
        # Document text is shown as it is: console markup in it is not interpreted.
        assert "three seeds [bold red]always[/]." in area.text
        await pilot.press("slash", *"thirty minutes", "enter")
        assert reader.matches and reader.match_index == 0
        assert area.selected_text == "thirty minutes"
        await pilot.press("q", "enter")
        await pilot.pause()
        (quote,) = sheet_quotes(with_paper)
        # The match widened to its sentence, across the line break of the PDF.
        assert quote.text == "The harness caps each run at thirty minutes."
        assert (quote.source, quote.page, quote.section) == ("paper", "1", "1 Introduction")
        assert "p. 1, Sec. 1" in str(reader.query_one("#reader-quotes", OptionList).get_option_at_index(0).prompt)
        assert area.marks["quote"], "the new quote is highlighted"


async def test_selection_is_quoted_exactly_and_next_previous_match(with_paper: Path) -> None:
    app = ReaderHost(with_paper)
    async with app.run_test(size=(120, 36)) as pilot:
        reader = await _opened(pilot)
        area = reader.query_one(ReaderText)
        await pilot.press("slash", *"Scores", "enter")
        await pilot.press("slash", *"s", "enter")  # many matches of "s"
        count, first = len(reader.matches), reader.match_index
        assert count > 5
        # The search starts at the cursor (on "Scores", page 2), not at the top.
        assert reader.matches[first].start >= reader.reading.extracted.text.index("Scores")
        await pilot.press("n", "n")
        assert reader.match_index == (first + 2) % count
        await pilot.press("N", "N", "N")
        assert reader.match_index == (first - 1) % count
        await pilot.press(*["n"] * (count - reader.match_index))
        assert reader.match_index == 0  # wraps around
        await pilot.press("slash", *"Each episode", "enter")
        start = area.selection.start
        area.selection = type(area.selection)(start, start)
        await pilot.press(*["shift+right"] * len("Each episode ends after fifty steps"))
        await pilot.press("q", "enter")
        await pilot.pause()
        (quote,) = sheet_quotes(with_paper)
        assert quote.text == "Each episode ends after fifty steps"
        assert (quote.page, quote.section) == ("2", "2 Protocol")


async def test_switching_source_removing_a_quote_and_missing_text(with_paper: Path) -> None:
    app = ReaderHost(with_paper)
    async with app.run_test(size=(120, 36)) as pilot:
        reader = await _opened(pilot)
        await pilot.press("s")
        reader = await _opened(pilot)
        assert reader.source is not None and reader.source.id == "notes"
        assert reader.query_one(ReaderText).text == "Notes\n\nResets happen between attempts."
        await pilot.press("slash", *"between", "enter", "q", "enter")
        await pilot.pause()
        assert [q.text for q in sheet_quotes(with_paper)] == ["Resets happen between attempts."]
        # tab to the list of the cell's quotes; delete asks, then removes the highlighted one.
        listing = reader.query_one("#reader-quotes", OptionList)
        listing.focus()
        listing.highlighted = 0
        await pilot.press("delete")
        await pilot.pause()
        assert [q.text for q in sheet_quotes(with_paper)] == ["Resets happen between attempts."]
        await pilot.press("y")
        await pilot.pause()
        await pilot.pause()
        assert sheet_quotes(with_paper) == []
        await pilot.press("slash", *"no such words", "enter")
        assert reader.matches == [] and "no match" in str(reader.query_one("#reader-position", Static).render())


async def test_a_snapshot_not_present_is_said_so(with_paper: Path) -> None:
    for path in (with_paper / "sources").glob("*.pdf"):
        path.unlink()
    app = ReaderHost(with_paper)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        title = str(pilot.app.screen.query_one("#reader-title", Static).render())
        assert "is not present here" in title


def test_reading_text_offsets_round_trip() -> None:
    from protocoder.evidence.extract import extract

    reading = ReadingText(extract(make_pdf(PAGES), "application/pdf"))
    text = reading.extracted.text
    for offset in range(0, len(text), 7):
        assert reading.to_extracted(reading.to_display(offset)) == offset
        assert reading.display[reading.to_display(offset)] == text[offset]
    raw = "an evalu-\nation of state-of-the-\nArt\u00ad\nwork,\n  done"
    assert quote_text(raw) == "an evaluation of state-of-the-Artwork, done"
    assert Haystack(raw).find(quote_text(raw)) is not None


async def _coding(pilot):  # noqa: ANN001, ANN202 - Pilot's generic type
    from protocoder.tui.screens import CodingScreen

    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("enter")  # webarena, the first protocol
    await pilot.pause()
    coding = pilot.app.screen
    assert isinstance(coding, CodingScreen) and coding.field.id == "open_work"
    return coding


async def _saved(pilot) -> None:  # noqa: ANN001 - Pilot's generic type
    while pilot.app.saver.running or pilot.app.saver.pending:
        await pilot.pause(0.05)


async def test_coding_screen_at_120_columns_reads_in_a_pane_beside_the_cell(with_paper: Path) -> None:
    from protocoder.tui.app import make_app
    from protocoder.tui.widgets import RubricGuide

    app = make_app(with_paper, REVIEWER)
    async with app.run_test(size=(120, 36)) as pilot:
        coding = await _coding(pilot)
        await pilot.press("1")  # a code, so that the cell exists
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        # The reader is a pane in #aside, in place of the rubric guide; the fields and the cell stay.
        assert pilot.app.screen is coding
        reader = coding.query_one("#aside Reader", Reader)
        assert reader.display and reader.reading is not None and not coding.query_one(RubricGuide).display
        assert coding.query_one("#coding-side").display and coding.query_one("#cell-pane").region.width >= 40
        assert reader.region.right <= 120 and reader.text_area.region.width >= 40
        assert reader in coding.focused.ancestors_with_self
        await pilot.press("slash", *"fifty steps", "enter", "q", "enter")
        await _saved(pilot)
        cell = load_review(with_paper).cells("webarena", "open_work")[REVIEWER]
        (quote,) = cell.quotes
        assert quote.text == "Each episode ends after fifty steps." and quote.page == "2"
        assert cell.source == "p. 2, Sec. 2" and cell.code is not None
        # Listed at once on the coding screen, and the source location proposed in its input.
        assert "p. 2, Sec. 2: “Each episode ends after fifty steps.”" in str(
            coding.query_one("#cell-quotes", Static).render())
        assert coding.query_one("#cell-source").value == "p. 2, Sec. 2"
        # pgdn pages through the text while reading; escape returns to the cell, the pane stays.
        await pilot.press("pagedown")
        assert coding.field.id == "open_work"
        await pilot.press("escape")
        assert coding.focused is coding.code_choice and reader.display
        # The pane follows the cell to the next field: a quote taken there goes into that cell.
        await pilot.press("]")
        assert coding.field.id == "reset_retention" and reader.cell.field == "reset_retention"
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("slash", *"fixed set", "enter", "q", "enter")
        await _saved(pilot)
        review = load_review(with_paper)
        assert [q.text for q in review.cells("webarena", "reset_retention")[REVIEWER].quotes] == [
            "Agents are scored on a fixed set of tasks."]
        assert len(review.cells("webarena", "open_work")[REVIEWER].quotes) == 1
        # f2 brings the rubric guide back in the reader's place.
        await pilot.press("f2")
        await pilot.pause()
        assert not reader.display and coding.query_one(RubricGuide).display and coding.query_one("#aside").display


async def test_coding_screen_at_80x24_reads_full_screen_and_keeps_the_cell_in_view(with_paper: Path) -> None:
    from protocoder.tui.app import make_app

    app = make_app(with_paper, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        coding = await _coding(pilot)
        await pilot.press("1")
        await pilot.press("ctrl+l")
        reader = await _opened(pilot)  # a pane would leave the text a few words a line: a screen of its own
        await pilot.press("slash", *"fifty steps", "enter", "q", "enter")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is coding
        await _saved(pilot)
        # On disk: the code, the quote with its position, and the source location proposed from it.
        cell = load_review(with_paper).cells("webarena", "open_work")[REVIEWER]
        assert cell.code is not None
        (quote,) = cell.quotes
        assert quote.text == "Each episode ends after fifty steps." and quote.page == "2"
        assert cell.source == "p. 2, Sec. 2"
        assert reader.cell.quotes == (quote,)
        listing = coding.query_one("#cell-quotes", Static)
        assert "p. 2, Sec. 2: “Each episode ends after fifty steps.”" in str(listing.render())
        # The quotes take a line; the question, the codes and every input are still on screen.
        for selector in ("#field-question", "#code-choice", "#cell-quotes", "#cell-source", "#cell-basis",
                         "#cell-cites"):
            region = coding.query_one(selector).region
            assert region.height >= 1 and region.bottom <= 23, selector  # the footer is row 23
        assert coding.query_one("#cell-basis").region.height >= 3


async def test_coding_screen_marks_drifted_quotes(with_paper: Path, tmp_path: Path, cli) -> None:
    from protocoder.tui.app import make_app

    args = ["--cell", "webarena/open_work", "--reviewer", REVIEWER, "--workspace", with_paper]
    assert cli("quote", "add", *args, "--source", "paper", "Each episode ends after fifty steps.").exit_code == 0
    assert cli("quote", "add", *args, "--source", "paper", "Agents are scored on a fixed set of tasks.").exit_code == 0
    revised = tmp_path / "paper-v2.pdf"
    revised.write_bytes(make_pdf([PAGES[0], ["2 Protocol", "Each episode ends after ten steps."]]))
    assert cli("source", "update", "webarena", "paper", revised, "--workspace", with_paper).exit_code == 0
    app = make_app(with_paper, REVIEWER)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        app.open_protocol("webarena", field_id="open_work")
        await pilot.pause()
        shown = str(pilot.app.screen.query_one("#cell-quotes", Static).render())
        lines = [line for line in shown.splitlines() if line.strip()]
        assert "fifty steps" in lines[0] and "drifted: not in the current version" in lines[0]
        assert "fixed set of tasks" in lines[1] and "drifted" not in lines[1]
