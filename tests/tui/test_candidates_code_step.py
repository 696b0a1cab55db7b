"""A step of a code block (its commands written without a blank line between them, round 13) is one candidate
that points at its best command: the list shows that command, enter selects it, q quotes it, and validate finds
the quote again. The README is swebench's (tests/data/real-docs-heldout, unmodified): its ``Other commands``
block is one step of four commands, and the third, ``swebench images clean --run-id <run_id>  # remove leftover
containers``, is what a reviewer cites for reset or retention."""

from __future__ import annotations

from pathlib import Path

from .helpers import app_for, screen_text, settle
from .test_candidates_table_row import reset_retention_candidates
from .test_reader_fields import pin_real

SWEBENCH = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout" / "swebench" / "README.md"
COMMAND = "swebench images clean --run-id <run_id>       # remove leftover containers"


async def test_enter_on_a_step_selects_its_best_command_and_q_quotes_it(workspace: Path, cli, sheet_of) -> None:
    pin_real(workspace, cli, SWEBENCH, source_id="swebench")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await reset_retention_candidates(pilot)
        place = next(i for i, c in enumerate(reader.candidates) if c.step and COMMAND in c.text)
        step = reader.candidates[place]
        assert step.text.startswith("swebench images build verified") and step.focus_text == COMMAND
        for _ in range(place):
            await pilot.press("down")
        listing = "\n".join(line[43:] for line in screen_text(pilot))
        assert "command 3 of 4" in listing, listing
        await pilot.press("enter")  # jump: the command is selected, not the whole step
        await pilot.pause()
        reading = reader.reading
        selection = reader.text_area.selection
        first, last = sorted((selection.start, selection.end))
        start, end = (reading.to_extracted(reading.offset(*point)) for point in (first, last))
        assert (start, end) == (step.focus_start, step.focus_end)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("enter")  # into the current field
        await settle(pilot)
    quotes = sheet_of("webarena").cells["reset_retention"].quotes
    assert len(quotes) == 1 and (quotes[0].start, quotes[0].end) == (step.focus_start, step.focus_end)
    assert quotes[0].text.split() == COMMAND.split() and "images build" not in quotes[0].text
    assert quotes[0].exact == COMMAND  # as written in the raw file
    result = cli("validate", "--workspace", str(workspace))
    assert result.exit_code == 0 and "1 of 1 quotes found in their snapshots" in result.output, result.output
