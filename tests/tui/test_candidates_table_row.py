"""A table candidate points at its best row in the reader: the list shows that row (not the table's header),
enter selects it and q quotes it, and the quote of a real README's table row is found again by validate."""

from __future__ import annotations

from pathlib import Path

from .helpers import app_for, screen_text, settle
from .test_focus_model import open_webarena
from .test_reader_fields import pin_real

CUA_BENCH = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout7" / "cua-bench" / "README.md"
HEADER = "Flag\tMeaning"


async def reset_retention_candidates(pilot):  # noqa: ANN001, ANN201
    """Open webarena's cell for reset or retention, its reader (a screen of its own at 80 columns) and the
    candidates (``c``); the reader."""
    await open_webarena(pilot)
    await pilot.press("]")  # open_work -> reset_retention
    await pilot.press("ctrl+l")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    reader = pilot.app.screen.reader
    assert reader.cell.field == "reset_retention"
    await pilot.press("c")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return reader


async def test_enter_on_a_table_candidate_selects_its_best_row_and_q_quotes_it(workspace: Path, cli,
                                                                               sheet_of) -> None:
    pin_real(workspace, cli, CUA_BENCH, source_id="cua-bench")
    app = app_for(workspace)  # ada: nothing coded yet
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await reset_retention_candidates(pilot)
        place = next(i for i, c in enumerate(reader.candidates) if c.focus_start is not None and not c.step)
        table = reader.candidates[place]
        assert table.text.startswith(HEADER)
        row = table.focus_text
        flag = row.split("\t")[0]
        assert "\t" in row and "\n" not in row and flag.startswith("--")
        # The list shows the row after its heading line, not the table's header.
        listing = "\n".join(line[43:] for line in screen_text(pilot))
        assert f"{flag} · " in listing and "Flag · Meaning" not in listing and "Flag Meaning" not in listing, listing
        for _ in range(place):
            await pilot.press("down")
        await pilot.press("enter")  # jump: the row is selected, not the whole table
        await pilot.pause()
        reading = reader.reading
        selection = reader.text_area.selection
        first, last = sorted((selection.start, selection.end))
        start, end = (reading.to_extracted(reading.offset(*point)) for point in (first, last))
        assert (start, end) == (table.focus_start, table.focus_end)
        await pilot.press("q")  # the preview shows the row
        await pilot.pause()
        preview = "\n".join(screen_text(pilot))
        meaning = row.split("\t")[1].split()[0]
        assert f"“{flag} {meaning}" in preview and "“Flag" not in preview, preview  # the row, as a quote, opens
        await pilot.press("enter")  # into the current field
        await settle(pilot)
    quotes = sheet_of("webarena").cells["reset_retention"].quotes
    assert len(quotes) == 1
    assert (quotes[0].start, quotes[0].end) == (table.focus_start, table.focus_end)
    assert flag in quotes[0].text and HEADER not in quotes[0].text and "Meaning" not in quotes[0].text
    # Quoted as written (the raw Markdown row's cells), and found again in the snapshot.
    assert quotes[0].exact is not None and quotes[0].exact.startswith(f"`{flag.split()[0]}")
    result = cli("validate", "--workspace", str(workspace))
    assert result.exit_code == 0 and "1 of 1 quotes found in their snapshots" in result.output, result.output


async def test_q_on_a_highlighted_table_candidate_quotes_its_best_row(workspace: Path, cli, sheet_of) -> None:
    """q in the list (no jump first) quotes what enter would select: the row, not the whole table."""
    pin_real(workspace, cli, CUA_BENCH, source_id="cua-bench")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await reset_retention_candidates(pilot)
        place = next(i for i, c in enumerate(reader.candidates) if c.focus_start is not None and not c.step)
        table = reader.candidates[place]
        for _ in range(place):
            await pilot.press("down")
        await pilot.press("q", "enter")
        await settle(pilot)
    quotes = sheet_of("webarena").cells["reset_retention"].quotes
    assert [(q.start, q.end) for q in quotes] == [(table.focus_start, table.focus_end)]
