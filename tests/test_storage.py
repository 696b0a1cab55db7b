"""The storage layer: comment-preserving round trips, atomic saves, compare-and-swap."""

from __future__ import annotations

import difflib
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from protocoder.errors import InvalidInput
from protocoder.model import Cell
from protocoder.storage.store import SheetConflict, Store
from protocoder.storage.workspace import load_review

SHEET = "protocols/webarena/codes/casheekar.yaml"


def test_save_keeps_comments_key_order_and_quoting(bundled: Path) -> None:
    path = bundled / SHEET
    text = path.read_text(encoding="utf-8")
    text = text.replace("cells:\n", "cells:  # reviewed twice\n")
    text = text.replace("  reset_retention:\n", "  # the ABC audit settles this one\n  reset_retention:\n")
    text = text.replace("    source: Paper App. A.2 and ABC T.4\n", "    source: 'Paper App. A.2 and ABC T.4'\n", 1)
    path.write_text(text, encoding="utf-8")
    review = load_review(bundled)
    store = Store(review.paths)
    cell = review.cells("webarena", "open_work")["casheekar"]
    store.save_cell(replace(cell, code="P", basis="Changed *basis*."), review.rubric)

    after = path.read_text(encoding="utf-8")
    assert "cells:  # reviewed twice" in after
    assert "  # the ABC audit settles this one\n  reset_retention:" in after
    assert "    source: 'Paper App. A.2 and ABC T.4'" in after, "quoting of untouched values is kept"
    assert after.index("open_work:") < after.index("reset_retention:") < after.index("separate_evidence:")
    block = after[after.index("  open_work:"):after.index("  # the ABC")]
    keys = [line.split(":")[0].strip() for line in block.splitlines()[1:] if ":" in line]
    assert keys == ["code", "source", "basis", "cites", "rubric_version", "coded_at"]
    assert "coded_at: 2026-08-15" in block, "unchanged values are left alone"
    # Only the edited lines differ: the code, and the basis (still a folded ">-" block).
    diff = list(difflib.ndiff(text.splitlines(), after.splitlines()))
    added = [line[2:] for line in diff if line.startswith("+ ")]
    removed = [line[2:] for line in diff if line.startswith("- ")]
    assert added == ["    code: P", "      Changed *basis*."]
    assert removed[0] == "    code: NR" and all(line.startswith("      ") for line in removed[1:])
    reloaded = load_review(bundled).cells("webarena", "open_work")["casheekar"]
    assert (reloaded.code, reloaded.basis) == ("P", "Changed *basis*.")


def test_new_reviewer_file_and_multiline_text_round_trip(bundled: Path) -> None:
    review = load_review(bundled)
    store = Store(review.paths)
    basis = "First line with: colon, #hash, 'quotes' and \"double\".\nSecond line\tand a tab. τ ≤ 1"
    store.save_cell(Cell("cybench", "open_work", "alice", "P", source="Sec. 2", basis=basis,
                         cites=("zhang2024cybench",)), review.rubric, expected=None)
    store.save_note("cybench", "alice", "run_unit", "One container.\n\nTwo paragraphs.", review.rubric)
    again = load_review(bundled)
    cell = again.cells("cybench", "open_work")["alice"]
    assert cell.basis == basis
    assert cell.rubric_version == "1.0" and cell.coded_at.endswith("Z")
    assert again.sheet("cybench", "alice").notes["run_unit"] == "One container.\n\nTwo paragraphs."
    assert not again.problems


def test_conflict_when_file_changed_since_read(bundled: Path) -> None:
    review = load_review(bundled)
    store = Store(review.paths)
    sheet, fingerprint = store.read_sheet("webarena", "casheekar", review.rubric)
    cell = sheet.cells["open_work"]
    path = bundled / SHEET
    path.write_text(path.read_text(encoding="utf-8").replace("code: NR", "code: P", 1), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(SheetConflict) as caught:
        store.save_cell(replace(cell, code="E"), review.rubric, expected=fingerprint)
    assert caught.value.theirs is not None and caught.value.theirs.cells["open_work"].code == "P"
    assert path.read_bytes() == before, "a conflicting save writes nothing"
    store.save_cell(replace(cell, code="E"), review.rubric, expected=caught.value.fingerprint)
    assert load_review(bundled).cells("webarena", "open_work")["casheekar"].code == "E"


def test_malformed_file_is_never_overwritten(bundled: Path) -> None:
    path = bundled / SHEET
    path.write_text("cells:\n  open_work: [unclosed\n", encoding="utf-8")
    before = path.read_bytes()
    review = load_review(bundled)
    with pytest.raises(InvalidInput) as caught:
        Store(review.paths).save_cell(Cell("webarena", "open_work", "casheekar", "P", "s", "b"), review.rubric)
    assert str(caught.value).startswith(f"{SHEET}:")
    assert path.read_bytes() == before


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from protocoder.storage.files import atomic_write_bytes
    path = Path(sys.argv[1])
    payloads = [b"A" * 3_000_000 + b"\\n", b"B" * 3_000_000 + b"\\n"]
    print("ready", flush=True)
    i = 0
    while True:
        atomic_write_bytes(path, payloads[i % 2])
        i += 1
""")


def kill_writer_mid_save(tmp_path: Path, kills: int) -> None:
    target = tmp_path / "target.txt"
    target.write_bytes(b"A" * 3_000_000 + b"\n")
    valid = {b"A" * 3_000_000 + b"\n", b"B" * 3_000_000 + b"\n"}
    for attempt in range(kills):
        with subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE) as process:
            assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
            time.sleep(0.01 + (attempt % 7) * 0.013)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        assert target.read_bytes() in valid, f"torn file after kill {attempt}"
    leftovers = [p for p in tmp_path.iterdir() if p.name != "target.txt"]
    # A killed writer may leave its temporary file behind; it never replaces the target.
    assert all(p.name.startswith(".target.txt.") and p.name.endswith(".tmp") for p in leftovers)


def test_killed_writer_leaves_old_or_new_file(tmp_path: Path) -> None:
    kill_writer_mid_save(tmp_path, kills=5)


def test_reading_tolerates_cell_problems_but_not_a_wrong_shape(bundled: Path) -> None:
    review = load_review(bundled)
    store = Store(review.paths)
    path = bundled / SHEET
    # A hand-written cell without rubric_version or basis: the app must still open it.
    path.write_text("cells:\n  open_work:\n    code: NR\n", encoding="utf-8")
    sheet, _ = store.read_sheet("webarena", "casheekar", review.rubric)
    assert sheet.cells["open_work"].code == "NR"
    # A file whose cells are a list cannot be edited without destroying it: refused, untouched.
    path.write_text("cells:\n  - open_work\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(InvalidInput) as caught:
        store.read_sheet("webarena", "casheekar", review.rubric)
    assert str(caught.value).startswith(f"{SHEET}:2:")
    with pytest.raises(InvalidInput):
        store.save_cell(Cell("webarena", "open_work", "casheekar", "P", "s", "b"), review.rubric)
    assert path.read_bytes() == before


def test_a_value_held_twice_is_written_out_twice_never_as_an_alias(tmp_path: Path) -> None:
    """protocoder's readers refuse anchors and aliases, so its writer never makes them (the
    benchmark generator's 43-field rubric shared one list of codes and became unreadable)."""
    from protocoder.storage import yamlio

    shared = yamlio.flow_list(["E", "P"])
    document = yamlio.Document(tmp_path / "x.yaml", yamlio.new_mapping(
        [("a", yamlio.new_mapping([("codes", shared)])), ("b", yamlio.new_mapping([("codes", shared)]))]))
    document.save()
    text = (tmp_path / "x.yaml").read_text()
    assert "&" not in text and "*" not in text
    assert yamlio.load_yaml(tmp_path / "x.yaml", "x.yaml") == {"a": {"codes": ["E", "P"]}, "b": {"codes": ["E", "P"]}}


def test_the_round_trip_readers_check_of_characters_is_ruamels() -> None:
    """yamlio gives ruamel's reader its non-printable class written as the complement (it compiles at
    once, where ruamel's negated class took milliseconds): the same code points, every one of them."""
    import re
    import sys

    from ruamel.yaml.reader import Reader

    from protocoder.storage.yamlio import RUAMEL_NON_PRINTABLE

    ours = Reader.NON_PRINTABLE
    assert isinstance(ours, re.Pattern)
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert [m.start() for m in ours.finditer(every)] == [m.start() for m in RUAMEL_NON_PRINTABLE.finditer(every)]


def test_an_atomic_writes_temporary_is_named_as_debris_is_recognised(tmp_path: Path) -> None:
    """files.new_temporary makes ``.NAME.xxxxxxxx.tmp`` beside the file (exclusively, mode 0600), the
    naming by which the next command finds a killed writer's leftovers."""
    import os
    import stat

    from protocoder.storage.files import new_temporary, temporary_target

    target = tmp_path / "consensus.yaml"
    made = set()
    for _ in range(50):
        fd, path = new_temporary(target)
        os.close(fd)
        assert path.parent == tmp_path and path.is_absolute() and path not in made
        assert temporary_target(path.name) == "consensus.yaml"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        made.add(path)
