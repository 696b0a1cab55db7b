"""SVG baselines of the list, coding and error screens at 80x24 (regenerate with --snapshot-update)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from protocoder.model import Cell, Rubric
from protocoder.storage.store import Store

from .helpers import app_for, loaded, no_blink


@pytest.fixture
def coded(workspace: Path, store: Store, rubric: Rubric) -> Path:
    """ada has coded WebArena's first field and all of τ-bench; the time stamps are fixed."""
    cells = [Cell("webarena", "open_work", "ada", "NR", "Sec. 3.2", "Silent on background work.",
                  ("zhou2024webarena",), "1.0", "2026-08-15T10:00:00Z")]
    cells += [Cell("tau-bench", fid, "ada", code, "Sec. 3", "Stated.", (), "1.0", "2026-08-15T10:00:00Z")
              for fid, code in (("open_work", "NA"), ("reset_retention", "E"), ("separate_evidence", "E"))]
    cells.append(Cell("osworld", "open_work", "ada", "E", "", "", (), "1.0", "2026-08-15T10:00:00Z"))
    for cell in cells:
        store.save_cell(cell, rubric)
    return workspace


def test_protocol_list(coded: Path, snap_compare: Callable[..., bool]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot)
        no_blink(pilot)

    assert snap_compare(app_for(coded), run_before=run_before, terminal_size=(80, 24))


def test_coding_screen(coded: Path, snap_compare: Callable[..., bool]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        no_blink(pilot)

    assert snap_compare(app_for(coded), run_before=run_before, terminal_size=(80, 24))


def test_error_screen(workspace: Path, snap_compare: Callable[..., bool]) -> None:
    (workspace / "protocols/webarena/codes/ada.yaml").write_text("cells:\n  open_work:\n    code: E\n   source: x\n")

    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app_for(workspace), run_before=run_before, terminal_size=(80, 24))
