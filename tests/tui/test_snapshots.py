"""SVG baselines of every main screen at 80x24 and 120x40 (regenerate with --snapshot-update).

Look at them after regenerating (pytest-textual-snapshot's report shows them side by side):
they are what a reviewer sees.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from protocoder.model import Cell, Rubric
from protocoder.storage.store import Store
from protocoder.tui.adjudicate import make_adjudication_app

from .helpers import app_for, loaded, no_blink
from .test_adjudicate import add_alice

SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Saves show their time ("saved 14:02:11"): a fixed one, so that a save in a snapshot (the
    reader hands over what was read on a source's first view) draws the same every run."""
    from datetime import datetime

    from protocoder.tui import session

    original = session.Session.__init__

    def fixed(self: session.Session, *args: object, **kwargs: object) -> None:
        kwargs["clock"] = lambda: datetime(2026, 8, 15, 14, 2, 11)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(session.Session, "__init__", fixed)


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


def after(*keys: str) -> Callable[[Pilot], object]:
    """Wait for the workspace, press ``keys``, and stop the cursors blinking."""
    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        no_blink(pilot)
    return run_before


@SIZES
def test_protocol_list(coded: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    assert snap_compare(app_for(coded), run_before=after(), terminal_size=size)


@SIZES
def test_coding_screen(coded: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    assert snap_compare(app_for(coded), run_before=after("enter"), terminal_size=size)


@SIZES
def test_guided_mode(coded: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    assert snap_compare(app_for(coded), run_before=after("enter", "pagedown", "ctrl+g", "2"), terminal_size=size)


@SIZES
def test_protocol_form(coded: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    assert snap_compare(app_for(coded), run_before=after("ctrl+e"), terminal_size=size)


@SIZES
def test_error_screen(workspace: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    (workspace / "protocols/webarena/codes/ada.yaml").write_text("cells:\n  open_work:\n    code: E\n   source: x\n")
    assert snap_compare(app_for(workspace), run_before=after("enter"), terminal_size=size)


@SIZES
def test_adjudication(workspace: Path, cli, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                               ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")])

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        no_blink(pilot)

    assert snap_compare(make_adjudication_app(workspace, "carol"), run_before=run_before, terminal_size=size)


def pinned(workspace: Path, cli) -> None:
    """Pin the Markdown page of test_focus_model to webarena (the reader then has text)."""
    from .test_focus_model import pin

    pin(workspace, cli)


@SIZES
def test_keys_screen(coded: Path, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    """f1 on the coding screen: long descriptions wrap onto a second line."""
    assert snap_compare(app_for(coded), run_before=after("enter", "f1"), terminal_size=size)


@SIZES
def test_reader(coded: Path, cli, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    """The reader (its own screen at 80 columns, a pane at 120) after ] moved the cell from it."""
    pinned(coded, cli)
    assert snap_compare(app_for(coded), run_before=after("enter", "ctrl+l", "]"), terminal_size=size)


@SIZES
def test_adjudication_with_quotes(workspace: Path, cli, snap_compare: Callable[..., bool],
                                  size: tuple[int, int]) -> None:
    """Each reviewer's quotes are shown under their basis."""
    from dataclasses import replace

    from protocoder.evidence.quotes import locate_quote
    from protocoder.evidence.snapshots import Snapshots
    from protocoder.model import Quote
    from protocoder.storage.paths import Paths
    from protocoder.storage.workspace import load_review

    pinned(workspace, cli)
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    review = load_review(workspace)
    assert review.rubric is not None
    source = next(s for s in review.protocol("webarena").sources if s.has_snapshot)
    quote = locate_quote(Quote(source.id, "Each task is run in a fresh container."), source,
                         Snapshots(Paths(workspace)))
    assert quote is not None
    cell = review.cells("webarena", "open_work")["alice"]
    Store(Paths(workspace)).save_cell(replace(cell, quotes=(quote,)), review.rubric)

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()
        no_blink(pilot)

    assert snap_compare(make_adjudication_app(workspace, "carol"), run_before=run_before, terminal_size=size)


@SIZES
def test_reader_candidates(coded: Path, cli, snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    """The reader's candidate passages for the current field (c), grouped under source and heading."""
    pinned(coded, cli)

    async def run_before(pilot: Pilot) -> None:
        await loaded(pilot)
        for key in ("enter", "ctrl+l", "c"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        no_blink(pilot)

    assert snap_compare(app_for(coded), run_before=run_before, terminal_size=size)
