"""Issue 32: what one key costs the app, which every browser session of ``protocoder serve`` pays.

Picking a code used to repaint the whole coding screen twice (Textual counted the protocol list
underneath as visible, and each save updates it) and to lay the whole screen out again about
seven times (the save indicator, the title and the status line asked for a layout at every
change of their text, whether or not their size changed). Counted here with Textual's own
compositor, so the count does not depend on the machine's speed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual._compositor import Compositor
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen

from protocoder.tui.screens import CodingScreen
from protocoder.tui.screens.protocol_list import ProtocolListScreen
from protocoder.tui.session import Edit, Session
from protocoder.tui.widgets import SaveIndicator

from .helpers import app_for, loaded


async def test_a_code_pick_repaints_only_what_changed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"full": 0, "layout": 0}
    full, layout = Compositor.render_full_update, Screen._refresh_layout

    def counting_full(self: Compositor, *args: object, **kwargs: object) -> object:
        counts["full"] += 1
        return full(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_layout(self: Screen, *args: object, **kwargs: object) -> None:
        counts["layout"] += 1
        layout(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Compositor, "render_full_update", counting_full)
    monkeypatch.setattr(Screen, "_refresh_layout", counting_layout)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        await pilot.press("1")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        assert app._background_screens == [], "the list under the opaque coding screen is not drawn"
        counts.update(full=0, layout=0)
        for key in "2121":
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
    assert counts["full"] == 0, counts
    assert counts["layout"] <= 4, counts  # was about seven a key (28 for these four)


async def test_a_code_pick_changes_no_style_and_no_layout(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first save, a code pick re-applies no stylesheet, lays nothing out and leaves the
    protocol list under the coding screen alone until it is back on top: the save
    indicator goes from "saved …" to "saved …" without showing "saving…" in between (each change of
    its colour class re-applied its styles, twice: a class removed, a class added), and keeps its
    width (it asked for a layout of the whole screen at each save, measuring the padded text)."""
    counts = {"styles": 0, "layout": 0, "list": 0, "queries": 0}
    update_styles, layout, list_overall = App.update_styles, Screen._refresh_layout, ProtocolListScreen._update_overall

    def counting_list(self: ProtocolListScreen) -> None:
        counts["list"] += 1
        list_overall(self)

    query = DOMNode.query

    def counting_query(self: DOMNode, selector: object = None) -> object:
        if selector == "#save-indicator":  # a walk of the whole screen, before each save
            counts["queries"] += 1
        return query(self, selector)  # type: ignore[arg-type]

    def counting_styles(self: App[None], *args: object, **kwargs: object) -> None:
        counts["styles"] += 1
        update_styles(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_layout(self: Screen, *args: object, **kwargs: object) -> None:
        counts["layout"] += 1
        layout(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(App, "update_styles", counting_styles)
    monkeypatch.setattr(Screen, "_refresh_layout", counting_layout)
    monkeypatch.setattr(ProtocolListScreen, "_update_overall", counting_list)
    monkeypatch.setattr(DOMNode, "query", counting_query)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        await pilot.press("1")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        counts.update(styles=0, layout=0, list=0, queries=0)
        for key in "2121":
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
        indicator = app.screen.query_one(SaveIndicator)
        assert str(indicator.render()).strip().startswith("saved "), indicator.render()
        assert indicator.has_class("-saved")
        # Were 32 style updates (two indicators), 4 layouts, the list under the screen refreshed
        # twice a save (as it started and once written) although nobody saw it, and 4 queries.
        assert counts == {"styles": 0, "layout": 0, "list": 0, "queries": 0}
        coding = app.screen
        assert isinstance(coding, CodingScreen)
        coded = sum(1 for cell in coding.drafts.values() if cell.is_coded)
        await pilot.press("escape")
        await pilot.pause()
        assert counts["list"] == 1, "refreshed once it is back on top"
        shown = app.list_screen.table.get_cell(coding.protocol_id, "coded")
        assert str(shown).startswith(f"{coded}/"), shown


async def test_a_code_pick_is_written_before_it_is_drawn(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: a served session drew the pick (the list's highlight, then the mark and "saving…")
    while its save waited and ran, and on a busy machine the drawing took the CPU the save needed.
    The screen now draws nothing from the key until the save is done, then draws once, with the
    code marked and the indicator saying saved. A slow write (a loaded machine, a slow disk) is
    simulated; frames are counted, not timed."""
    frames: list[str] = []
    before_saved: list[int] = []
    pressed = [0]
    display, write = App._display, Session.write

    def counting_display(self: App[None], *args: object, **kwargs: object) -> None:
        frames.append("frame")
        display(self, *args, **kwargs)  # type: ignore[arg-type]

    def slow_write(self: Session, edit: Edit) -> str:
        time.sleep(0.15)  # in the saving thread: the app's loop runs meanwhile
        written = write(self, edit)
        before_saved.append(len(frames) - pressed[0])
        return written

    monkeypatch.setattr(App, "_display", counting_display)
    monkeypatch.setattr(Session, "write", slow_write)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CodingScreen)
        for key in "212":
            pressed[0] = len(frames)
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            assert screen.code_choice.chosen == screen.code_choice.keys[key]
            assert screen.code_choice.get_option(screen.code_choice.chosen).prompt.plain.split()[1] == "●"
            assert len(frames) > pressed[0], "drawn once saved"
        assert str(screen.query_one(SaveIndicator).render()).strip().startswith("saved ")
        # The same code again saves nothing: the screen is not held for a save that never comes.
        await pilot.press("2")
        await pilot.pause()
        assert app._batch_count == 0
    # Frames drawn from the key until it was saved (1 each while the hold began at the save, not the key).
    assert before_saved == [0, 0, 0], before_saved


async def test_the_save_indicator_keeps_its_width_through_a_save_and_gives_back_a_failures() -> None:
    """A save's "saving…" is padded to the width of "saved …" (no layout of the screen), but the
    long message of a failure does not keep the indicator wide once the file is saved again."""
    from datetime import datetime
    from types import SimpleNamespace

    from protocoder.tui.saving import SaveState

    saver = SimpleNamespace(state=SaveState.SAVED, saved_at=datetime(2026, 12, 3, 14, 2, 11), error="",
                            pending={}, running=False)

    import protocoder.tui

    class Holder(App[None]):
        CSS_PATH = Path(protocoder.tui.__file__).parent / "app.tcss"  # the indicator's width: auto, 10 to 40

        def compose(self):  # type: ignore[no-untyped-def]
            yield SaveIndicator(saver, classes="save-indicator")  # type: ignore[arg-type]

    app = Holder()
    async with app.run_test(size=(80, 5)) as pilot:
        indicator = app.query_one(SaveIndicator)
        await pilot.pause()
        widths = []
        for state, running, error in ((SaveState.SAVING, True, ""), (SaveState.SAVED, False, ""),
                                      (SaveState.FAILED, False, "the disk is full, and that is a long story"),
                                      (SaveState.SAVED, False, "")):
            saver.state, saver.running, saver.error = state, running, error
            indicator.tick += 1
            await pilot.pause()
            widths.append(indicator.size.width)
    assert widths == [14, 14, 40, 14], widths
