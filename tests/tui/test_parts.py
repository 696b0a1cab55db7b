"""The coding app's parts without a running app: session, write queue, completion, Markdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from protocoder.model import Cell
from protocoder.storage.store import Store
from protocoder.tui.saving import KEEP_MINE, TAKE_THEIRS, Saver, SaveState
from protocoder.tui.session import DONE, IN_PROGRESS, NOT_STARTED, Edit, Session, split_cites
from protocoder.tui.widgets import KeySuggester
from protocoder.tui.widgets.rubric_text import render_markdown


def test_split_cites_accepts_commas_semicolons_and_spaces_once_each() -> None:
    assert split_cites(" a, b;c  a ,") == ("a", "b", "c")
    assert split_cites("") == ()


def test_key_suggester_completes_the_last_key() -> None:
    suggester = KeySuggester(["liu2023agentbench", "zhou2024webarena", "zhu2025establishing"])
    suggest = suggester.get_suggestion
    assert asyncio.run(suggest("zh")) == "zhou2024webarena"
    assert asyncio.run(suggest("liu2023agentbench, zhu")) == "liu2023agentbench, zhu2025establishing"
    assert asyncio.run(suggest("zhou2024webarena")) is None  # complete already
    assert asyncio.run(suggest("nosuch")) is None
    assert asyncio.run(suggest("a, ")) is None


def test_rubric_markdown_keeps_list_items_hanging() -> None:
    text = "Look for a rule.\n\n- **E**: stated with its scope, naming every process queue and service it covers"
    console = Console(width=40, color_system=None, record=True)
    console.print(render_markdown(text, {"text-accent": "#ff0000", "text-primary": "#0000ff"}))
    lines = console.export_text().splitlines()
    assert lines[0] == "Look for a rule."
    assert lines[2].startswith("• E: stated")
    assert lines[3].startswith("  ")  # the wrapped line is indented under the text, not the bullet


def test_progress_follows_the_rubric_requirements(workspace: Path) -> None:
    session = Session(workspace, "ada")
    session.load()
    assert session.progress("webarena").status == NOT_STARTED
    rubric = session.rubric
    assert rubric is not None
    store = Store(session.paths)
    store.save_cell(Cell("webarena", "open_work", "ada", "NR"), rubric)
    session.read_sheet("webarena")
    assert (session.progress("webarena").coded, session.progress("webarena").status) == (1, IN_PROGRESS)
    for fid in rubric.field_ids:
        store.save_cell(Cell("webarena", fid, "ada", "NR", "Sec. 1", "Nothing."), rubric)
    session.read_sheet("webarena")
    assert session.progress("webarena").status == DONE
    assert session.totals() == (3, 30, 1)


def _saver(session: Session, choice: str, asked: list) -> Saver:
    async def resolve(edit: Edit, theirs: object) -> str:
        asked.append(theirs)
        return choice

    async def failed(edit: Edit, exc: Exception) -> None:
        raise AssertionError(exc)

    return Saver(session, resolve=resolve, failed=failed, changed=lambda edit: None, reloaded=lambda pid: None)


def test_saver_asks_before_overwriting_and_writes_in_order(workspace: Path) -> None:
    session = Session(workspace, "ada")
    session.load()
    rubric = session.rubric
    assert rubric is not None
    session.read_sheet("webarena")
    asked: list = []
    saver = _saver(session, KEEP_MINE, asked)

    async def run() -> None:
        saver.put(session.cell_edit(Cell("webarena", "open_work", "ada", "E", "S", "first")))
        saver.put(session.cell_edit(Cell("webarena", "open_work", "ada", "P", "S", "second")))  # replaces it
        assert len(saver.pending) == 1 and saver.claim()
        await saver.run()

    asyncio.run(run())
    assert asked == [] and saver.state is SaveState.SAVED
    cell = session.store.read_sheet("webarena", "ada", rubric)[0].cells["open_work"]
    assert (cell.code, cell.basis) == ("P", "second")

    # Someone else writes the file: the next save asks, and "mine" wins for this cell only.
    Store(session.paths).save_cell(Cell("webarena", "reset_retention", "ada", "NR", "x", "theirs"), rubric)
    saver.put(session.cell_edit(Cell("webarena", "open_work", "ada", "NR", "S", "third")))
    assert saver.claim()
    asyncio.run(saver.run())
    sheet = session.store.read_sheet("webarena", "ada", rubric)[0]
    assert [c.code for c in asked] == ["P"]  # what was on disk for the cell
    assert sheet.cells["open_work"].basis == "third" and sheet.cells["reset_retention"].basis == "theirs"


def test_saver_take_theirs_drops_the_edit(workspace: Path) -> None:
    session = Session(workspace, "ada")
    session.load()
    rubric = session.rubric
    assert rubric is not None
    session.read_sheet("webarena")
    Store(session.paths).save_cell(Cell("webarena", "open_work", "ada", "NR", "x", "theirs"), rubric)
    before = session.paths.sheet_file("webarena", "ada").read_bytes()
    asked: list = []
    saver = _saver(session, TAKE_THEIRS, asked)
    saver.put(session.cell_edit(Cell("webarena", "open_work", "ada", "E", "S", "mine")))
    assert saver.claim()
    asyncio.run(saver.run())
    assert asked[0].basis == "theirs" and not saver.pending
    assert session.paths.sheet_file("webarena", "ada").read_bytes() == before
    assert session.sheet("webarena").cells["open_work"].basis == "theirs"


def test_read_only_session_queues_nothing(workspace: Path) -> None:
    first, second = Session(workspace, "ada"), Session(workspace, "ada")
    assert first.hold_lock()
    try:
        assert not second.hold_lock() and second.read_only
        second.load()
        saver = _saver(second, KEEP_MINE, [])
        saver.put(second.cell_edit(Cell("webarena", "open_work", "ada", "E")))
        assert not saver.pending and not saver.claim()
        assert saver.state is SaveState.READ_ONLY
    finally:
        first.release_lock()
