"""Concurrent writers, as real processes: no update is ever lost, and the loser is told why.

Every write takes the workspace lock (``.protocoder/write.lock``, flock) and re-reads the
file under it; the coding app's saves also compare the file's fingerprint with the one it
read (``Store.save_cell(..., expected=fingerprint)``). So:

* two imports into one workspace at once both land, each as a whole (they serialise);
* a process that cannot get the lock in time exits with a clear message and writes nothing;
* a save with a fingerprint from before an import raises ``SheetConflict`` (carrying what
  is on disk now), writes nothing, and succeeds once merged; saves racing an import never
  lose the import's cells or their own.
"""

from __future__ import annotations

import csv
import io
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from protocoder.storage.paths import Paths
from protocoder.storage.workspace import load_review

from conftest import REPO, tree_digest

PROTOCOLS = 40

# Runs the CLI once "go" arrives on standard input, with the lock timeout given first.
CLI = textwrap.dedent("""
    import sys
    import protocoder.storage.store, protocoder.cli, protocoder.exchange, protocoder.storage.workspace
    protocoder.storage.store.Store.__init__.__kwdefaults__["lock_timeout"] = float(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()
    protocoder.cli.main(sys.argv[2:], prog_name="protocoder")
""")

# Saves as the coding app does: read the sheet and its fingerprint, then (on "go") save one
# cell with that fingerprint; on a conflict, merge (keep theirs, apply ours) and save again.
SAVER = textwrap.dedent("""
    import sys
    from dataclasses import replace
    from pathlib import Path
    from protocoder.errors import LockedError
    from protocoder.storage.store import SheetConflict, Store
    from protocoder.storage.workspace import load_review

    root, protocol, timeout, text = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
    review = load_review(root, reviewer="alice")
    store = Store(review.paths, lock_timeout=timeout)
    sheet, fingerprint = store.read_sheet(protocol, "alice", review.rubric)
    print("read", flush=True)
    sys.stdin.readline()
    cell = replace(sheet.cells["separate_evidence"], basis=text)
    for attempt in range(50):
        try:
            store.save_cell(cell, review.rubric, expected=fingerprint)
            print("saved", flush=True)
            break
        except SheetConflict as conflict:
            print(f"conflict: {conflict}", flush=True)
            print(f"theirs: {conflict.theirs.cells['open_work'].basis[:60]}", flush=True)
            fingerprint = conflict.fingerprint
        except LockedError as locked:
            print(f"locked: {locked}", flush=True)
            fingerprint = store.read_sheet(protocol, "alice", review.rubric)[1]
""")


@pytest.fixture
def review(tmp_path: Path) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    root = tmp_path / "review"
    generate(root, protocols=PROTOCOLS, reviewers=("alice",), seed=7)
    return root


def write_csv(path: Path, rows: list[tuple[str, ...]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["protocol", "field", "reviewer", "code", "source", "basis", "cites"])
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def cells_csv(root: Path, path: Path, reviewer: str, fields: tuple[str, ...], basis: str) -> Path:
    data = load_review(root)
    rows = [(c.protocol, c.field, reviewer, c.code or "", c.source, f"{basis} ({c.protocol})", ";".join(c.cites))
            for c in data.all_cells() if c.field in fields and c.reviewer == "alice"]
    return write_csv(path, rows)


def start(argv: list[str], expect: str = "ready") -> subprocess.Popen[str]:
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line == expect, (line, process.stderr.read() if process.stderr else "")
    return process


def go(*processes: subprocess.Popen[str]) -> None:
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def import_process(root: Path, csv_path: Path, timeout: float = 10.0) -> subprocess.Popen[str]:
    return start([sys.executable, "-c", CLI, str(timeout), "import", "--workspace", str(root), str(csv_path)])


@pytest.mark.parametrize("rounds", [pytest.param(1, id="once"), pytest.param(15, id="fifteen times",
                                                                             marks=pytest.mark.slow)])
def test_two_imports_at_once_both_land_whole(review: Path, tmp_path: Path, rounds: int) -> None:
    rng = random.Random(3)
    for round_ in range(rounds):
        # Both add cells to the same new reviewer files, and both rewrite alice's open work.
        first = cells_csv(review, tmp_path / "a.csv", "dave", ("open_work",), f"A{round_}")
        second = cells_csv(review, tmp_path / "b.csv", "dave", ("reset_retention", "separate_evidence"), f"B{round_}")
        rows_a = list(csv.reader(io.StringIO(first.read_text(encoding="utf-8"))))[1:]
        rows_b = list(csv.reader(io.StringIO(second.read_text(encoding="utf-8"))))[1:]
        rows_a += [(p, "open_work", "alice", code, s, f"alice by A{round_}", c) for p, _, _, code, s, _, c in rows_a]
        rows_b += [(p, "open_work", "alice", "P", "Sec. 9", f"alice by B{round_}", c) for p, *_, c in rows_b[::2]]
        write_csv(first, [tuple(r) for r in rows_a])
        write_csv(second, [tuple(r) for r in rows_b])

        a, b = import_process(review, first), import_process(review, second)
        go(a, b) if rng.random() < 0.5 else go(b, a)
        results = [finish(a), finish(b)]
        for code, out, err in results:
            assert code == 0, err
            assert "Traceback" not in err and "Imported" in out

        after = load_review(review)
        assert not after.errors, [str(p) for p in after.errors]
        for protocol in after.protocols:
            dave = {f: c.basis for f, c in after.sheet(protocol.id, "dave").cells.items()}
            assert dave == {"open_work": f"A{round_} ({protocol.id})",
                            "reset_retention": f"B{round_} ({protocol.id})",
                            "separate_evidence": f"B{round_} ({protocol.id})"}, "no lost update"
        # The two writes of alice's open work did not interleave: one import's batch is entirely on top.
        alice = {c.basis for c in after.all_cells() if c.reviewer == "alice" and c.field == "open_work"}
        b_protocols = {r[0] for r in rows_b if r[2] == "alice"}
        on_top_a = alice == {f"alice by A{round_}"}
        on_top_b = {c.basis for c in after.all_cells() if c.reviewer == "alice" and c.field == "open_work"
                    and c.protocol in b_protocols} == {f"alice by B{round_}"}
        assert on_top_a or on_top_b, alice


def hold_lock(root: Path) -> subprocess.Popen[str]:
    """Another process holding the workspace write lock until told to let go."""
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from protocoder.storage.store import Store
        from protocoder.storage.paths import Paths
        with Store(Paths(Path(sys.argv[1]))).locked():
            print("ready", flush=True)
            sys.stdin.readline()
    """)
    return start([sys.executable, "-c", script, str(root)])


@pytest.mark.parametrize("timeout", [pytest.param(0.5, id="short timeout"),
                                     pytest.param(None, id="default 10 s", marks=pytest.mark.slow)])
def test_a_writer_that_cannot_get_the_lock_says_so_and_writes_nothing(review: Path, tmp_path: Path,
                                                                       timeout: float | None) -> None:
    csv_path = cells_csv(review, tmp_path / "a.csv", "dave", ("open_work",), "A")
    holder = hold_lock(review)
    try:
        before = tree_digest(review)
        if timeout is None:  # the real command, unchanged
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "protocoder", "import", "--workspace", str(review),
                                   str(csv_path)], capture_output=True, text=True, timeout=60)
            code, err = done.returncode, done.stderr
            assert time.monotonic() - started >= 10
        else:
            loser = import_process(review, csv_path, timeout)
            go(loser)
            code, _, err = finish(loser)
        assert code == 1
        assert "Traceback" not in err
        assert err.startswith("protocoder: error: another protocoder process is writing to workspace"), err
        assert f"(waited {timeout or 10:g} s for" in err and "try again when it has finished" in err
        assert tree_digest(review) == before, "the loser wrote nothing"
    finally:
        go(holder)
        finish(holder)
    # Once the lock is free, the same import goes through.
    assert subprocess.run([sys.executable, "-m", "protocoder", "import", "--workspace", str(review), str(csv_path)],
                          capture_output=True, timeout=60).returncode == 0


def test_a_save_with_a_fingerprint_from_before_an_import_conflicts(review: Path, tmp_path: Path) -> None:
    protocol = "bench-00003"
    sheet_path = Paths(review).sheet_file(protocol, "alice")
    saver = start([sys.executable, "-c", SAVER, str(review), protocol, "10", "Edited in the app."], expect="read")
    # While the app has the sheet open, the command line imports new text for another cell of it.
    csv_path = cells_csv(review, tmp_path / "a.csv", "alice", ("open_work",), "From the CLI")
    done = subprocess.run([sys.executable, "-m", "protocoder", "import", "--workspace", str(review), str(csv_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = sheet_path.read_bytes()
    go(saver)
    code, out, err = finish(saver)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"conflict: {sheet_path} changed on disk since it was read"
    assert lines[1] == f"theirs: From the CLI ({protocol})", "the conflict carries what is on disk now"
    assert lines[2] == "saved"
    cells = load_review(review).sheet(protocol, "alice").cells
    assert cells["open_work"].basis == f"From the CLI ({protocol})", "the import's cell survives"
    assert cells["separate_evidence"].basis == "Edited in the app.", "the app's edit lands after the merge"
    assert imported != sheet_path.read_bytes()


@pytest.mark.parametrize("rounds", [pytest.param(1, id="once"), pytest.param(12, id="twelve times",
                                                                             marks=pytest.mark.slow)])
def test_saves_racing_an_import_never_lose_anything(review: Path, tmp_path: Path, rounds: int) -> None:
    rng = random.Random(11)
    outcomes = {"saved": 0, "conflict": 0, "locked": 0}
    for round_ in range(rounds):
        csv_path = cells_csv(review, tmp_path / "a.csv", "alice", ("open_work",), f"Import {round_}")
        importer = import_process(review, csv_path)
        savers = [start([sys.executable, "-c", SAVER, str(review), f"bench-{i:05d}", "0.3", f"App {round_}"],
                        expect="read") for i in rng.sample(range(PROTOCOLS), 3)]
        go(importer)
        time.sleep(rng.uniform(0.0, 0.4))
        go(*savers)
        code, _, err = finish(importer)
        assert code == 0, err
        for saver in savers:
            code, out, err = finish(saver)
            assert code == 0, err
            assert out.splitlines()[-1] == "saved", out
            for outcome in outcomes:
                outcomes[outcome] += sum(line.startswith(outcome) for line in out.splitlines())
        after = load_review(review)
        assert not after.errors
        for protocol in after.protocols:
            cells = after.sheet(protocol.id, "alice").cells
            assert cells["open_work"].basis == f"Import {round_} ({protocol.id})", "no import cell lost"
        edited = {p.id for p in after.protocols
                  if after.sheet(p.id, "alice").cells["separate_evidence"].basis == f"App {round_}"}
        assert len(edited) == 3, "no saved edit lost"
    print(f"\nsaves racing imports: {outcomes}")


# A save of alice's cell that stops half-way, holding whatever lock a save holds, until "go".
MID_SAVE = textwrap.dedent("""
    import sys
    from dataclasses import replace
    from pathlib import Path
    import protocoder.storage.sheet_writes as sheet_writes
    from protocoder.storage.store import Store
    from protocoder.storage.workspace import load_review

    root, protocol = Path(sys.argv[1]), sys.argv[2]
    review = load_review(root, reviewer="alice")
    write_cell = sheet_writes.write_cell

    def stop_half_way(entry, cell):
        print("holding", flush=True)
        sys.stdin.readline()
        write_cell(entry, cell)

    sheet_writes.write_cell = stop_half_way
    cell = replace(review.sheet(protocol, "alice").cells["separate_evidence"], basis="Held save.")
    Store(review.paths).save_cell(cell, review.rubric)
    print("saved", flush=True)
""")


def test_saves_into_different_files_do_not_wait_for_each_other(review: Path, tmp_path: Path) -> None:
    """Issue 32: twenty reviewers saving at once queued on the one workspace lock (most of their
    save latency). A save holds its own file's lock and the workspace lock shared: another file's
    save goes on, a save of the same file and any other change (an import) wait for it."""
    from dataclasses import replace

    from protocoder.errors import LockedError
    from protocoder.storage.store import Store

    holder = start([sys.executable, "-c", MID_SAVE, str(review), "bench-00001"], expect="holding")
    try:
        data = load_review(review, reviewer="alice")
        store = Store(data.paths, lock_timeout=0.5)
        other = replace(data.sheet("bench-00002", "alice").cells["separate_evidence"], basis="Saved meanwhile.")
        store.save_cell(other, data.rubric)  # another file: no wait (before: LockedError after 0.5 s)
        same = replace(data.sheet("bench-00001", "alice").cells["open_work"], basis="Same file.")
        with pytest.raises(LockedError):
            store.save_cell(same, data.rubric)
        loser = import_process(review, cells_csv(review, tmp_path / "a.csv", "dave", ("open_work",), "A"), 0.5)
        go(loser)
        code, _, err = finish(loser)
        assert code == 1 and "another protocoder process is writing to workspace" in err, err
    finally:
        go(holder)
    code, out, err = finish(holder)
    assert (code, out.splitlines()[-1]) == (0, "saved"), err
    after = load_review(review, reviewer="alice")
    assert after.sheet("bench-00001", "alice").cells["separate_evidence"].basis == "Held save."
    assert after.sheet("bench-00001", "alice").cells["open_work"].basis != "Same file."
    assert after.sheet("bench-00002", "alice").cells["separate_evidence"].basis == "Saved meanwhile."
    assert not any(p.name.startswith(".") and p.name.endswith(".tmp") for p in review.rglob("*")), "no debris"


def test_a_save_completes_an_interrupted_change_first(review: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-file save does not share the lock while a killed change's journal waits: it takes the
    lock exclusively and completes that change first, so the change cannot land later on top of it."""
    from dataclasses import replace

    from protocoder.storage import commit
    from protocoder.storage.store import Store

    paths = Paths(review)
    target = paths.sheet_file("bench-00003", "alice")
    store = Store(paths)
    changed = target.read_text(encoding="utf-8") + "# written by the interrupted change\n"
    data = load_review(review, reviewer="alice")  # before the journal: loading completes it too

    def killed(root: Path, record: object) -> None:
        raise OSError(5, "killed half-way")

    with monkeypatch.context() as patch:
        patch.setattr(commit, "_apply", killed)
        with store.locked(), pytest.raises(commit.CommitFailed):
            transaction = store.transaction()
            transaction.write(target, changed.encode())
            transaction.commit()
    assert commit.pending(paths.state_dir)
    cell = replace(data.sheet("bench-00003", "alice").cells["separate_evidence"], basis="Saved after.")
    store.save_cell(cell, data.rubric)
    assert not commit.pending(paths.state_dir)
    text = target.read_text(encoding="utf-8")
    assert "# written by the interrupted change" in text and "Saved after." in text
