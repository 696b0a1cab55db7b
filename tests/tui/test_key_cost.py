"""Issue 32: what one key costs the app, which every browser session of ``protocoder serve`` pays.

Picking a code used to repaint the whole coding screen twice (Textual counted the protocol list
underneath as visible, and each save updates it) and to lay the whole screen out again about
seven times (the save indicator, the title and the status line asked for a layout at every
change of their text, whether or not their size changed). Counted here with Textual's own
compositor, so the count does not depend on the machine's speed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual._compositor import Compositor
from textual.screen import Screen

from protocoder.tui.screens import CodingScreen

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
