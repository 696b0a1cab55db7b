"""Reading coverage through the session and the store, without the UI: joined with what is on file,
never a conflict, never written over someone else's change, refused when malformed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from protocoder.errors import Rejected
from protocoder.model import SourceReading, parse_ranges, ranges_text
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store
from protocoder.tui.session import READING_NOT_WRITTEN, Session

from .test_reader_fields import LM_EVAL, pin_real

SHA = hashlib.sha256(LM_EVAL.read_bytes()).hexdigest()


def test_ranges_round_trip_and_merge() -> None:
    assert parse_ranges("0-3, 5,4 ,9-9") == ((0, 5), (9, 9))
    assert ranges_text(((0, 5), (9, 9))) == "0-5,9"
    assert parse_ranges("") == ()
    assert parse_ranges("3-1") is None and parse_ranges("a-b") is None
    reading = SourceReading(10).with_blocks([0, 1, 2, 7, 42])
    assert reading.read == ((0, 2), (7, 7)) and reading.percent == "40%"
    assert SourceReading(3, ((0, 2),)).percent == "100%"
    assert SourceReading(1000, ((0, 998),)).percent == "99%"  # never 100 % before the last block


def test_the_store_joins_reading_with_the_file(workspace: Path, cli) -> None:
    pin_real(workspace, cli)
    store = Store(Paths(workspace))
    store.save_reading("webarena", "ada", SHA, SourceReading(20, ((0, 4),)))
    store.save_reading("webarena", "ada", SHA, SourceReading(20, ((10, 12),)))
    sheet, _ = store.read_sheet("webarena", "ada", None)
    assert sheet.reading[SHA] == SourceReading(20, ((0, 4), (10, 12)))
    with pytest.raises(Rejected):
        store.save_reading("webarena", "ada", "abc", SourceReading(20, ((0, 4),)))
    with pytest.raises(Rejected):
        store.save_reading("webarena", "ada", SHA, SourceReading(20, ((0, 40),)))


def test_a_reading_edit_never_writes_over_a_change_on_disk(workspace: Path, cli) -> None:
    pin_real(workspace, cli)
    session = Session(workspace, "casheekar")
    session.load()
    session.read_sheet("webarena")
    path = workspace / "protocols" / "webarena" / "codes" / "casheekar.yaml"
    edit = session.reading_edit("webarena", SHA, 20, [0, 1, 2])
    assert edit.reading == SourceReading(20, ((0, 2),)) and session.disk_value(edit) == edit.base
    # Someone changes the file (an editor, a git pull): the reading save leaves it alone, asks nothing.
    changed = path.read_text(encoding="utf-8") + "# edited by hand\n"
    path.write_text(changed, encoding="utf-8")
    assert session.write(edit) == READING_NOT_WRITTEN
    session.written(edit, READING_NOT_WRITTEN)
    assert path.read_text(encoding="utf-8") == changed
    assert SHA not in session.sheet("webarena").reading
    # Once the session has the file as it is, the next save carries everything read.
    session.read_sheet("webarena")
    later = session.reading_edit("webarena", SHA, 20, [0, 1, 2, 3])
    fingerprint = session.write(later)
    session.written(later, fingerprint)
    assert "# edited by hand" in path.read_text(encoding="utf-8")
    assert session.sheet("webarena").reading[SHA] == SourceReading(20, ((0, 3),))
    assert "0-3" in path.read_text(encoding="utf-8")
