"""Issue 31.5: my cells as a grid in the coding app (f8, and the palette): the reviewer's own codes,
protocol × field, with incomplete (!) and assisted (*) marks and a count per protocol; enter opens the
cell in the coding screen. Only the reviewer's own sheets are shown."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from protocoder.tui.screens import CodingScreen, GridScreen

from .helpers import app_for, loaded, screen_text
from .test_adjudicate import add_alice


async def test_the_grid_shows_my_codes_and_opens_a_cell(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    workarena = workspace / "protocols/workarena/codes/casheekar.yaml"  # E requires source and basis
    text = workarena.read_text(encoding="utf-8")
    workarena.write_text(text.replace("    source: Paper Sec. 4.2\n", "", 1), encoding="utf-8")
    sheet = workspace / "protocols/osworld/codes/casheekar.yaml"
    text = sheet.read_text(encoding="utf-8")
    start = text.index("  open_work:\n")
    sheet.write_text(text[:start] + "  open_work:\n    assisted: true\n" + text[start + len("  open_work:\n"):],
                     encoding="utf-8")
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f8")
        await pilot.pause()
        grid = pilot.app.screen
        assert isinstance(grid, GridScreen)
        lines = screen_text(pilot)
        assert "My cells · casheekar · 29 of 30 complete" in lines[0]
        webarena = next(line for line in lines if line.lstrip().startswith("WebArena"))
        assert webarena.split()[1] == "NR", "casheekar's own code, never alice's P"
        workarena = next(line for line in lines if line.lstrip().startswith("WorkArena"))
        assert "E!" in workarena and "2/3" in workarena
        osworld = next(line for line in lines if line.lstrip().startswith("OSWorld"))
        assert "NR*" in osworld
        table = grid.query_one("#grid-table", DataTable)
        assert table.cursor_coordinate == (0, 1)
        await pilot.press("down", "right", "enter")  # WorkArena, reset_retention
        await pilot.pause()
        coding = pilot.app.screen
        assert isinstance(coding, CodingScreen)
        assert any("Reset or retention · field 2/3" in line for line in screen_text(pilot))
