"""Nothing typed is lost or silently overwritten: conflicts, read-only sessions, broken files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from protocoder.model import Cell
from protocoder.storage.files import try_hold_lock
from protocoder.tui.screens import ConflictModal, ErrorScreen, ProtocolListScreen
from protocoder.tui.session import Edit, Session

from .helpers import app_for, coding, loaded, settle

BROKEN = "cells:\n  open_work:\n    code: E\n   source: oops\n"
FIXED = "cells:\n  open_work:\n    code: E\n    source: S\n    basis: B\n    rubric_version: '1.0'\n"


async def test_conflict_keep_mine_writes_my_cell_and_keeps_their_other_edit(workspace: Path, store, rubric,
                                                                            sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "1")  # open_work = E, written; the app now knows the file
        await settle(pilot)
        # Another editor changes the same cell and another one behind the app's back.
        store.save_cell(Cell("webarena", "open_work", "ada", "NR", basis="theirs"), rubric)
        store.save_cell(Cell("webarena", "reset_retention", "ada", "P"), rubric)
        on_disk = (workspace / "protocols/webarena/codes/ada.yaml").read_bytes()
        await pilot.press("2")  # open_work = P: the file changed since it was read
        await settle(pilot)
        modal = pilot.app.screen
        assert isinstance(modal, ConflictModal)
        assert "NR" in str(modal.query_one("#conflict-theirs").render())
        assert "code: P" in str(modal.query_one("#conflict-mine").render())
        assert (workspace / "protocols/webarena/codes/ada.yaml").read_bytes() == on_disk  # not written yet
        await pilot.press("m")
        await settle(pilot)
        assert pilot.app.screen is coding(pilot)
        # Their edit of the other field now shows in the app.
        assert coding(pilot).drafts["reset_retention"].code == "P"
    sheet = sheet_of("webarena")
    assert sheet.cells["open_work"].code == "P"
    assert sheet.cells["reset_retention"].code == "P"


async def test_conflict_take_theirs_reloads_and_writes_nothing(workspace: Path, store, rubric, sheet_of) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "1")
        await settle(pilot)
        store.save_cell(Cell("webarena", "open_work", "ada", "NR", source="S", basis="theirs"), rubric)
        on_disk = (workspace / "protocols/webarena/codes/ada.yaml").read_bytes()
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConflictModal)
        await pilot.press("t")
        await settle(pilot)
        screen = coding(pilot)
        assert screen.drafts["open_work"].code == "NR"
        assert screen.code_choice.chosen == "NR"
        assert (workspace / "protocols/webarena/codes/ada.yaml").read_bytes() == on_disk
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert (workspace / "protocols/webarena/codes/ada.yaml").read_bytes() == on_disk


async def test_second_session_for_the_same_reviewer_is_read_only(workspace: Path, tree_bytes) -> None:
    handle = try_hold_lock(workspace / ".protocoder" / "session-ada.lock")
    assert handle is not None
    try:
        before = tree_bytes()
        app = app_for(workspace)
        async with app.run_test(size=(80, 24)) as pilot:
            await loaded(pilot)
            assert pilot.app.session.read_only
            assert str(pilot.app.screen.query_one("#list-reviewer").render()) == "ada (read-only)"
            await pilot.press("f3")  # adding protocols is disabled too
            assert isinstance(pilot.app.screen, ProtocolListScreen)
            await pilot.press("enter", "1", "tab", "x", "ctrl+q")
            await settle(pilot)
        assert tree_bytes() == before
        # Another reviewer is not affected by ada's lock.
        async with app_for(workspace, "bob").run_test(size=(80, 24)) as pilot:
            await loaded(pilot)
            assert not pilot.app.session.read_only
    finally:
        handle.close()


async def test_malformed_sheet_opens_error_screen_and_is_never_written(workspace: Path) -> None:
    path = workspace / "protocols/webarena/codes/ada.yaml"
    path.write_text(BROKEN)
    before = path.read_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert "file error" in str(screen.table.get_cell("webarena", "status"))
        await pilot.press("enter")
        await pilot.pause()
        error = pilot.app.screen
        assert isinstance(error, ErrorScreen)
        assert "protocols/webarena/codes/ada.yaml" in str(error.query_one("#error-title").render())
        problem = str(error.query_one(".error-problem").render())
        assert problem.startswith("protocols/webarena/codes/ada.yaml:4:")
        await pilot.press("1", "r")  # digits do nothing here; retrying fails again
        await pilot.pause()
        assert isinstance(pilot.app.screen, ErrorScreen)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        # Fixed in an editor: retrying from the list opens it.
        path.write_text(FIXED)
        await pilot.press("enter")
        await pilot.pause()
        assert coding(pilot).field.id == "reset_retention"
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert path.read_text() == FIXED
    assert before != path.read_bytes()


async def test_file_broken_between_saves_is_left_alone_and_the_edit_kept(workspace: Path) -> None:
    path = workspace / "protocols/webarena/codes/ada.yaml"
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "1")
        await settle(pilot)
        path.write_text(BROKEN)
        await pilot.press("2")
        await settle(pilot)
        error = pilot.app.screen
        assert isinstance(error, ErrorScreen)
        assert "Cannot save to protocols/webarena/codes/ada.yaml" in str(error.query_one("#error-title").render())
        assert path.read_text() == BROKEN
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        assert len(pilot.app.saver.pending) == 1  # the edit is kept, not dropped
        await pilot.press("ctrl+q")  # quitting retries the write: the file is still broken
        await settle(pilot)
        assert isinstance(pilot.app.screen, ErrorScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert "Quit without saving?" in str(pilot.app.screen.query_one(".dialog-title").render())
        await pilot.press("n")  # stay
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
    assert path.read_text() == BROKEN


async def test_broken_rubric_is_a_fatal_error_screen(workspace: Path, tree_bytes) -> None:
    rubric = workspace / "rubric/evaluation-boundary.yaml"
    rubric.write_text(rubric.read_text().replace("codes:\n  - id: E", "codes:\n  - id: E\n bad", 1))
    before = tree_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        error = pilot.app.screen
        assert isinstance(error, ErrorScreen) and error.fatal
        assert any(str(p).startswith("rubric/evaluation-boundary.yaml:") for p in error.problems)
        await pilot.press("escape")  # nowhere to go back to
        assert pilot.app.screen is error
    assert tree_bytes() == before


async def test_typing_is_written_when_the_app_ends_without_quitting(workspace: Path, sheet_of,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # A browser tab that closes, or `protocoder serve` stopping, ends the app without ctrl+q:
    # the text typed within the last half second (before the debounce) must still reach disk,
    # with the write done before the app has finished ending, not left to a worker that may
    # never run again. A slow disk (every write 0.3 s) makes a worker's write come too late.
    original = Session.write

    def slow_write(self: Session, edit: Edit) -> str:
        time.sleep(0.3)
        return original(self, edit)

    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "2")
        await settle(pilot)
        monkeypatch.setattr(Session, "write", slow_write)
        await pilot.press("tab", *"App. C")
        assert pilot.app.saver.pending == {}, "written before the debounce: this would test nothing"
    # The app has ended: nothing more runs for it, so what is on disk now is all there is.
    assert sheet_of("webarena").cells["open_work"].source == "App. C"
    assert pilot.app.saver.pending == {}
    lock = try_hold_lock(workspace / ".protocoder" / "session-ada.lock")
    assert lock is not None, "the session lock is given back"
    lock.close()
