"""Issue 29 item 2: what a reviewer has had on screen of each pinned source is recorded in their own
codes file, in batches, and shown: in the reader's title, beside each source, on a cell without
quotes, by ``status --reading`` and ``cell show``. A real README (tests/data/real-docs), the app
through Pilot at 80×24 and 120×40."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import jsonschema
from ruamel.yaml import YAML
from textual.widgets import Static

from protocoder.schemas import load_schema
from protocoder.storage.store import Store
from protocoder.tui.widgets.reader import SAVE_EVERY, Reader

from .helpers import app_for, coding, settle
from .test_focus_model import open_webarena
from .test_reader_fields import LM_EVAL, pin_real

SHA = hashlib.sha256(LM_EVAL.read_bytes()).hexdigest()


def codes_file(workspace: Path, reviewer: str = "ada") -> dict:
    path = workspace / "protocols" / "webarena" / "codes" / f"{reviewer}.yaml"
    return YAML(typ="safe").load(path.read_text(encoding="utf-8")) if path.exists() else {}


async def _read_to_the_end(pilot, reader: Reader) -> int:  # noqa: ANN001 - Pilot's generic type
    """Page down through the whole text as a reader would; the number of pages."""
    area = reader.text_area
    pages = 0
    while area.scroll_y < area.max_scroll_y and pages < 400:
        await pilot.press("pagedown")
        pages += 1
    await pilot.pause()
    return pages


async def test_reading_a_readme_to_the_end_records_it_in_batches_at_80x24(workspace: Path, cli,
                                                                            monkeypatch) -> None:
    pin_real(workspace, cli)
    writes: list[str] = []
    original = Store.save_reading

    def counted(self, protocol_id, reviewer, sha256, reading, **kwargs):  # noqa: ANN001, ANN202
        writes.append(sha256)
        return original(self, protocol_id, reviewer, sha256, reading, **kwargs)

    monkeypatch.setattr(Store, "save_reading", counted)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_webarena(pilot)
        await pilot.press("3")  # NR: not reported, a code that rests on what was read
        await settle(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        reader = pilot.app.screen.query_one(Reader)
        assert "0%" in str(reader.query_one("#reader-title", Static).render()) or \
            "read" in str(reader.query_one("#reader-title", Static).render())
        began = time.monotonic()
        pages = await _read_to_the_end(pilot, reader)
        elapsed = time.monotonic() - began
        assert pages > 20  # a long README: many screens
        # Scrolling does not write on every page: at most one save per SAVE_EVERY seconds.
        assert len(writes) <= 1 + elapsed / SAVE_EVERY and len(writes) < pages / 5, (len(writes), pages, elapsed)
        before = len(writes)
        title = str(reader.query_one("#reader-title", Static).render())
        assert "100% read" in title
        await pilot.press("escape")  # leaving hands over what was not handed yet: one save at most
        await settle(pilot)
        # (none when the last batch's timer already fired: on a loaded machine the reading outlasts it;
        # the codes file below must hold every block either way)
        assert writes[before:] in ([], [SHA])
        # Beside the source in the coding screen, and on the cell (no quotes yet) as what was read.
        screen = coding(pilot)
        assert "100% read" in str(screen.query_one("#source-list").render_line(1).text) or \
            screen.read_shares() == {"lm-eval": "100%"}
        assert "read: lm-eval 100%" in str(screen.query_one("#cell-quotes", Static).render())
    data = codes_file(workspace)
    entry = data["reading"][SHA]
    assert entry["read"] == f"0-{entry['blocks'] - 1}" and entry["blocks"] > 50
    # status --reading and cell show say it.
    out = cli("status", "--reading", "--workspace", str(workspace))
    assert out.exit_code == 0, out.output
    assert "ada" in out.output and "webarena" in out.output and "lm-eval 100%" in out.output
    shown = cli("cell", "show", "--cell", "webarena/open_work", "--workspace", str(workspace))
    assert "code: NR" in shown.output
    assert "# ada read: lm-eval 100%" in shown.output and "# casheekar read: lm-eval 0%" in shown.output
    mine = cli("cell", "show", "--cell", "webarena/open_work", "--reviewer", "ada", "--workspace", str(workspace))
    assert mine.output.rstrip().endswith("# ada read: lm-eval 100%") and "casheekar" not in mine.output
    # Valid by validate and against the JSON schema an editor checks the file with.
    assert cli("validate", "--workspace", str(workspace)).exit_code == 0
    schema = load_schema("codes")
    jsonschema.validators.validator_for(schema)(schema).validate(json.loads(json.dumps(data, default=str)))
    wrong = {**data, "reading": {SHA: {"blocks": 3, "read": "two"}}}
    assert list(jsonschema.validators.validator_for(schema)(schema).iter_errors(
        json.loads(json.dumps(wrong, default=str))))


async def test_part_of_a_source_read_in_the_pane_at_120x40_is_kept_and_joined(workspace: Path, cli) -> None:
    pin_real(workspace, cli)
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for _ in range(3):
            await pilot.press("pagedown")
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
    first = codes_file(workspace)["reading"][SHA]
    start, _, end = first["read"].partition("-")
    assert start == "0" and 0 < int(end) < first["blocks"] - 1
    # A second session goes on from there: the first blocks stay, the last ones join them.
    app = app_for(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_webarena(pilot)
        await pilot.press("ctrl+l")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("slash", *"zenodo.12608602", "enter")  # the citation at the very end
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
    second = codes_file(workspace)["reading"][SHA]
    assert second["read"].startswith(first["read"].split(",")[0]) and "," in second["read"]
    assert second["blocks"] == first["blocks"]
    # Blind to other reviewers: nothing of ada's reading is in casheekar's file.
    assert "reading" not in codes_file(workspace, "casheekar")


def test_a_malformed_reading_section_is_one_located_line_and_nothing_is_written(workspace: Path, cli) -> None:
    path = workspace / "protocols" / "webarena" / "codes" / "casheekar.yaml"
    text = path.read_text(encoding="utf-8")
    for bad, said in ((f"reading:\n  {SHA}:\n    blocks: 10\n    read: 0-12\n", "has 10 blocks"),
                      (f"reading:\n  {SHA}:\n    blocks: 10\n    read: five\n", "read must be block numbers"),
                      ("reading:\n  abc:\n    blocks: 10\n    read: 0-3\n", "SHA-256")):
        path.write_text(text + bad, encoding="utf-8")
        out = cli("validate", "--workspace", str(workspace))
        assert out.exit_code != 0
        line = next(line for line in out.output.splitlines() if said in line)
        assert "casheekar.yaml:" in line
    path.write_text(text, encoding="utf-8")
