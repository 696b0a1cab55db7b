"""Issue 23: docs/keys.md and the f1 screen show the same table, made from the bindings; f1 wraps."""

from __future__ import annotations

from pathlib import Path

from protocoder.tui.keys_doc import keys_markdown
from protocoder.tui.screens import KeysModal

from .helpers import app_for, loaded, screen_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "keys.md"


def test_keys_page_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == keys_markdown(), \
        "docs/keys.md is stale: run python scripts/keys_doc.py"


async def test_f1_lists_the_rows_of_the_page_and_wraps_long_ones(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "f1")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, KeysModal)
        page = keys_markdown()
        section = page.split("## Coding a protocol")[1].split("\n## ")[0]
        for key, action in modal._keys:
            assert f"| {key} | {action} |" in section
        # A description longer than its column (the third row) is wrapped onto a second line, not cut off.
        long_row = modal._keys[2][1]
        assert long_row == "Next field (after the last one: the next protocol)"
        rows = screen_text(pilot)
        first = next(i for i, row in enumerate(rows) if "Next field (after the last" in row)
        assert rows[first + 1].split("█")[1].split()[0] == "protocol)", rows[first:first + 2]
