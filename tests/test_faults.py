"""Fault injection: writers are SIGKILLed at random (seeded) moments; nothing saved is ever lost.

Each scenario runs a real process that writes to a workspace and kills it with SIGKILL
after a random delay, then checks that

* every file parses and the workspace validates (in-process after each kill, and with a
  real ``python -m protocoder validate`` at the end);
* every file holds exactly (byte for byte) its old content or one of its new contents:
  the acceptable versions come from the same operations run to completion; an import
  (several files) is, once the next command has read the workspace, wholly old or wholly
  new; a render's output folder holds only files its manifest lists, and the next render
  (without --force) takes it over;
* temporary files a killed writer leaves (``.NAME.*.tmp``, ``releases/.LABEL.*``) never
  take a target's place, and do not pile up: the next writer of the same file, holding the
  workspace lock, removes them.

The scenarios: ``Store.save_cell``/``save_note`` in a loop (as the coding app saves),
``protocoder import`` of a large CSV (all files or none), ``render`` into a folder it
rendered before (its manifest), ``adjudicate --cell``, ``freeze --label`` (never a half
release visible to ``render --release``) and ``correct --cell``. Clocks are pinned
in the child processes so that the new contents are reproducible. The default run kills a
few times per scenario; ``pytest -m slow`` kills a hundred times per scenario.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from protocoder.lifecycle.changes import history_problems
from protocoder.storage.outputs import MANIFEST
from protocoder.storage.workspace import load_review

from conftest import REPO, add_alice, copy_bundled

SEED = 20260815
QUICK, SLOW = 2, 100
PROTOCOLS = 40  # in the import scenario: its write phase is about a quarter of a second
CLOCK = "2026-09-01T12:00:00Z"

# Pins the clock of every module that stamps times, imports what the commands need (so
# that the kill lands in the work, not in the imports), then says "ready".
PRELUDE = textwrap.dedent(f"""
    import sys
    import protocoder.storage.store, protocoder.storage.sheet_writes, protocoder.exchange, protocoder.publish
    import protocoder.coding_agreement
    import protocoder.lifecycle.adjudication, protocoder.lifecycle.releases, protocoder.lifecycle.corrections
    import protocoder.cli
    from protocoder import exchange, lifecycle, storage
    for module in (storage.store, storage.sheet_writes, exchange.importing, lifecycle.adjudication, lifecycle.releases,
                   lifecycle.corrections):
        module.now_iso = lambda: {CLOCK!r}
    print("ready", flush=True)
""")

CLI_CHILD = PRELUDE + textwrap.dedent("""
    from protocoder.cli import main
    main(sys.argv[1:], prog_name="protocoder")
""")

# The coding app's way of saving: one cell or one note at a time, each under the lock.
SAVE_OPERATIONS = textwrap.dedent("""
    from dataclasses import replace
    from protocoder.model import Cell

    def operations(store, rubric):
        def cell(code, basis):
            return lambda: store.save_cell(Cell("webarena", "open_work", "casheekar", code, "Paper Sec. 3.2",
                                                basis, ("zhou2024webarena",), "1.0", "2026-09-01"), rubric)

        def note(text):
            return lambda: store.save_note("webarena", "casheekar", "run_unit", text, rubric)

        return [cell("P", "Background work is *partly* covered: " + "x " * 400),
                cell("NR", "Nothing is said about work in flight."),
                note("One task instance.\\nIn its own container."),
                note("One episode " * 300)]
""")

SAVE_CHILD = PRELUDE + SAVE_OPERATIONS + textwrap.dedent("""
    from pathlib import Path
    from protocoder.storage.store import Store
    from protocoder.storage.workspace import load_review
    review = load_review(Path(sys.argv[1]))
    ops = operations(Store(review.paths), review.rubric)
    index = 0
    while True:
        ops[index % len(ops)]()
        index += 1
""")


# --------------------------------------------------------------------------- helpers


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the workspace except locks and temporaries, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".protocoder" not in p.parts and not is_debris(p, root)}


def is_debris(path: Path, root: Path) -> bool:
    """A killed writer's leftover: a temporary file or a release staging folder."""
    relative = path.relative_to(root).parts
    return (path.name.startswith(".") and path.name.endswith(".tmp")) or (
        len(relative) >= 2 and relative[0] == "releases" and relative[1].startswith("."))


def debris(root: Path) -> list[str]:
    found = {str(p.relative_to(root)) for p in root.rglob(".*.tmp")}
    releases = root / "releases"
    if releases.is_dir():
        found |= {str(p.relative_to(root)) for p in releases.iterdir() if p.name.startswith(".")}
    return sorted(found)


def restore(root: Path, state: dict[str, bytes]) -> None:
    """Put the workspace back to ``state`` (debris is left where it is, on purpose).

    The ledger head recorded in .protocoder/ belongs to the state thrown away: it goes too
    (else the rolled-back ledger is, rightly, reported as having lost entries)."""
    (root / ".protocoder" / "ledger-head.json").unlink(missing_ok=True)
    for path in sorted(root.rglob("*"), reverse=True):
        relative = str(path.relative_to(root))
        if ".protocoder" in path.parts or is_debris(path, root) or any(
                is_debris(parent, root) for parent in path.parents if root in parent.parents):
            continue
        if path.is_file() and relative not in state:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()) and relative not in ("releases",):
            path.rmdir()
    for relative, payload in state.items():
        target = root / relative
        if not target.exists() or target.read_bytes() != payload:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(payload)


def run_and_kill(argv: list[str], delay: float, *, timeout: float = 60) -> bool:
    """Start ``argv``, wait for "ready", SIGKILL it ``delay`` seconds later; True if it finished first."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == b"ready", (line, process.stderr.read() if process.stderr else b"")
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        time.sleep(min(0.005, max(0.0, deadline - time.monotonic())))
    finished = process.poll() is not None
    if not finished:
        os.kill(process.pid, signal.SIGKILL)
    _, err = process.communicate(timeout=timeout)
    if finished:
        assert process.returncode == 0, err.decode(errors="replace")[-2000:]
    return finished


def work_time(argv: list[str]) -> float:
    """Seconds from "ready" to exit of a run to completion."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
    start = time.perf_counter()
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode(errors="replace")[-2000:]
    return time.perf_counter() - start


def assert_valid(root: Path) -> None:
    review = load_review(root)
    problems = [p for p in list(review.problems) + history_problems(review) if p.severity == "error"]
    assert not problems, "\n".join(str(p) for p in problems)


def assert_each_file_old_or_new(root: Path, versions: dict[str, set[bytes | None]]) -> None:
    now = snapshot(root)
    for relative in sorted(set(now) | set(versions)):
        acceptable = versions.get(relative, {None})
        assert now.get(relative) in acceptable, f"{relative} holds neither its old nor a new content"


def assert_validate_cli(root: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "protocoder", "validate", "--workspace", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def versions_of(*states: dict[str, bytes]) -> dict[str, set[bytes | None]]:
    """For every path, the contents it has in any of ``states`` (None: absent)."""
    paths = set().union(*states)
    return {path: {state.get(path) for state in states} for path in paths}


def delays(rng: random.Random, count: int, span: float) -> Iterator[float]:
    for _ in range(count):
        yield rng.uniform(0.0, span)


@pytest.fixture(params=[pytest.param(QUICK, id="few"), pytest.param(SLOW, id="hundred", marks=pytest.mark.slow)])
def kills(request: pytest.FixtureRequest) -> int:
    return request.param


def kill_repeatedly(root: Path, argv: list[str], kills: int, span: float, versions: dict[str, set[bytes | None]],
                    start: dict[str, bytes], rng: random.Random, label: str,
                    check: Callable[[Path], None] | None = None) -> dict[str, int]:
    """Kill a run ``kills`` times from ``start``; count how the runs ended and what they left."""
    counts = {"killed": 0, "finished": 0, "unchanged": 0, "partly written": 0, "left debris": 0, "debris at end": 0}
    for delay in delays(rng, kills, span):
        restore(root, start)
        seen = set(debris(root))
        counts["finished" if run_and_kill(argv, delay) else "killed"] += 1
        counts["left debris"] += bool(set(debris(root)) - seen)
        assert_each_file_old_or_new(root, versions)
        assert_valid(root)
        now = snapshot(root)
        if now == start:
            counts["unchanged"] += 1
        elif any(now.get(k) == start.get(k) for k, v in versions.items() if len(v) > 1):
            counts["partly written"] += 1
        if check is not None:
            check(root)
    counts["debris at end"] = len(debris(root))
    print(f"\n{label}: {counts}")
    return counts


# --------------------------------------------------------------------------- scenarios


def test_killed_while_saving_cells_and_notes(tmp_path: Path, kills: int) -> None:
    root = copy_bundled(tmp_path / "review")
    start = snapshot(root)
    # Every content the sheet can reach through the operations, in any order.
    namespace: dict = {}
    exec(SAVE_OPERATIONS, namespace)  # noqa: S102 - the same operations the child runs
    review = load_review(root)
    from protocoder.storage.store import Store

    ops = namespace["operations"](Store(review.paths), review.rubric)
    sheet = "protocols/webarena/codes/casheekar.yaml"
    reachable = {start[sheet]}
    frontier = [start[sheet]]
    while frontier:
        state = frontier.pop()
        for op in ops:
            (root / sheet).write_bytes(state)
            op()
            after = (root / sheet).read_bytes()
            if after not in reachable:
                reachable.add(after)
                frontier.append(after)
    restore(root, start)
    versions = versions_of(start)
    versions[sheet] = set(reachable)

    rng = random.Random(SEED)
    argv = [sys.executable, "-c", SAVE_CHILD, str(root)]
    counts = kill_repeatedly(root, argv, kills, 0.4, versions, start, rng, "save loop")
    assert counts["killed"] == kills, "the save loop never ends by itself"
    # Saving continues, and removes what earlier killed saves left behind.
    assert not debris_after_save(root)
    assert_validate_cli(root)


def debris_after_save(root: Path) -> list[str]:
    from protocoder.model import Cell
    from protocoder.storage.store import Store

    review = load_review(root)
    Store(review.paths).save_cell(Cell("webarena", "open_work", "casheekar", "NR", "Sec. 1", "Final.",
                                       ("zhou2024webarena",)), review.rubric)
    return [d for d in debris(root) if d.startswith("protocols/webarena/codes/")]


@pytest.fixture(scope="module")
def import_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, dict, float]:
    """A review of PROTOCOLS protocols, a CSV that adds a reviewer and changes another's cells, and
    the workspace before and after importing it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    base = tmp_path_factory.mktemp("import")
    root = base / "review"
    generate(root, protocols=PROTOCOLS, reviewers=("alice",), seed=SEED)
    review = load_review(root)
    rows = ["protocol,field,reviewer,code,source,basis,cites"]
    for cell in review.all_cells():
        basis = cell.basis.replace('"', "'")
        rows.append(f'{cell.protocol},{cell.field},dave,{cell.code},"{cell.source}","{basis}",{";".join(cell.cites)}')
        if cell.field == "open_work":
            rows.append(f'{cell.protocol},{cell.field},alice,{cell.code},"{cell.source}","Revised: {basis}",'
                        f'{";".join(cell.cites)}')
    csv_path = base / "cells.csv"
    csv_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = snapshot(root)
    seconds = work_time([sys.executable, "-c", CLI_CHILD, "import", "--workspace", str(root), str(csv_path)])
    after = snapshot(root)
    assert len(after) == len(before) + PROTOCOLS and sum(after[k] != v for k, v in before.items()) == PROTOCOLS
    restore(root, before)
    return root, csv_path, before, after, seconds


def test_killed_while_importing(import_case, kills: int) -> None:
    root, csv_path, before, after, seconds = import_case
    argv = [sys.executable, "-c", CLI_CHILD, "import", "--workspace", str(root), str(csv_path)]
    span = seconds * 1.1
    rng = random.Random(SEED + 1)
    def all_or_none(workspace: Path) -> None:
        # assert_valid has read the workspace, completing a change the kill left committed.
        assert snapshot(workspace) in (before, after), "an import is whole or absent, never partly written"

    counts = kill_repeatedly(root, argv, kills, span, versions_of(before, after), before, rng, "import",
                             check=all_or_none)
    assert counts["killed"], "no run was killed before it finished"
    assert counts["partly written"] == 0
    # Importing again after the last kill completes the import: the same files as an uninterrupted one,
    # and the temporaries killed imports left are gone.
    subprocess.run(argv, capture_output=True, timeout=120, check=True)
    assert snapshot(root) == after
    assert not [d for d in debris(root) if d.startswith("protocols/")]
    assert_validate_cli(root)
    restore(root, before)


@pytest.fixture
def two(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled review plus alice, who disagrees with casheekar on three cells (as in test_history)."""
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    return add_alice(copy_bundled(tmp_path / "review"), cli, tmp_path)


def reference(root: Path, argv: list[str]) -> tuple[dict[str, bytes], dict[str, bytes], float]:
    """The workspace before and after ``argv`` runs to completion, and how long its work takes."""
    before = snapshot(root)
    seconds = work_time(argv)
    after = snapshot(root)
    assert after != before
    restore(root, before)
    return before, after, seconds


def test_killed_while_adjudicating(two: Path, kills: int) -> None:
    argv = [sys.executable, "-c", CLI_CHILD, "adjudicate", "--workspace", str(two), "--cell", "webarena/open_work",
            "--code", "NR", "--reason", "Settled in the team meeting.", "--by", "dana"]
    before, after, seconds = reference(two, argv)
    assert set(after) - set(before) == {"protocols/webarena/consensus.yaml"}
    kill_repeatedly(two, argv, kills, seconds * 1.1, versions_of(before, after), before, random.Random(SEED + 2),
                    "adjudicate")
    assert_validate_cli(two)


def adjudicated(two: Path, cli) -> Path:
    for cell, code in [("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "E"),
                       ("cybench/reset_retention", "E")]:
        assert cli("adjudicate", "--workspace", two, "--cell", cell, "--code", code, "--reason", "r").exit_code == 0
    return two


def test_killed_while_freezing(two: Path, cli, kills: int, tmp_path: Path) -> None:
    root = adjudicated(two, cli)
    argv = [sys.executable, "-c", CLI_CHILD, "freeze", "--workspace", str(root), "--label", "v1", "--by", "dana",
            "--bootstrap", "50", "--seed", "1"]
    before, after, seconds = reference(root, argv)
    release = {k: v for k, v in after.items() if k.startswith("releases/v1/")}
    assert "releases/v1/release.yaml" in release and len(release) > 10
    render = [sys.executable, "-m", "protocoder", "render", "--workspace", str(root), "--release", "v1",
              "--out", str(tmp_path / "out")]

    def no_half_release(workspace: Path) -> None:
        present = {k: v for k, v in snapshot(workspace).items() if k.startswith("releases/")}
        assert present in ({}, release), "a release is either absent or complete"
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        done = subprocess.run(render, capture_output=True, text=True, timeout=120)
        if present:
            assert done.returncode == 0, done.stderr
            for path in (tmp_path / "out").iterdir():
                if path.name == MANIFEST:
                    continue  # render's record of what it wrote there, not a table of the release
                assert path.read_bytes() == release[f"releases/v1/tables/{path.name}"]
        else:
            assert done.returncode == 1 and "no release labelled 'v1'" in done.stderr, done.stderr
            assert not (tmp_path / "out").exists()

    # Only a few of the runs render a release (each takes a second): check every third.
    counter = iter(range(10**6))
    kill_repeatedly(root, argv, kills, seconds * 1.1, versions_of(before, after), before, random.Random(SEED + 3),
                    "freeze", check=lambda ws: no_half_release(ws) if next(counter) % 3 == 0 else None)
    # A later freeze (holding the lock) clears staging folders that killed freezes left.
    restore(root, before)
    subprocess.run(argv, capture_output=True, timeout=120, check=True)
    assert not [d for d in debris(root) if d.startswith("releases/")]
    assert_validate_cli(root)


def test_killed_while_correcting(two: Path, cli, kills: int) -> None:
    root = adjudicated(two, cli)
    assert cli("freeze", "--workspace", root, "--label", "v1", "--bootstrap", "0").exit_code == 0
    argv = [sys.executable, "-c", CLI_CHILD, "correct", "--workspace", str(root), "--cell", "cybench/open_work",
            "--code", "P", "--reason", "App. D does stop leftover processes.", "--by", "dana"]
    before, after, seconds = reference(root, argv)
    assert set(after) - set(before) == {"corrections.yaml"}
    kill_repeatedly(root, argv, kills, seconds * 1.1, versions_of(before, after), before, random.Random(SEED + 4),
                    "correct")
    assert_validate_cli(root)


class _Anything:
    """Any content is acceptable here (the manifest: checked by its own invariant instead)."""

    def __contains__(self, item: object) -> bool:
        return True

    def __len__(self) -> int:
        return 0  # not counted as a file written partly


def test_killed_while_rendering(tmp_path: Path, cli, kills: int) -> None:
    from protocoder.storage.outputs import MANIFEST, read_manifest

    root = copy_bundled(tmp_path / "review")
    assert cli("render", "--workspace", root, "--bootstrap", "0").exit_code == 0
    sheet = root / "protocols/webarena/codes/casheekar.yaml"
    sheet.write_text(sheet.read_text().replace("does not say how work", "never says how work"))
    argv = [sys.executable, "-c", CLI_CHILD, "render", "--workspace", str(root), "--bootstrap", "0"]
    before, after, seconds = reference(root, argv)
    changed = {k for k in after if k.startswith("output/") and after[k] != before.get(k)}
    assert "output/ledger.md" in changed
    versions = versions_of(before, after)
    versions[f"output/{MANIFEST}"] = _Anything()

    def manifest_covers_the_folder(workspace: Path) -> None:
        out = workspace / "output"
        listed = read_manifest(out)["files"]
        import hashlib

        for path in out.iterdir():
            if path.name == MANIFEST or path.name.startswith("."):
                continue
            digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest in listed.get(path.name, ()), f"{path.name} is not listed as protocoder's"
        done = subprocess.run([sys.executable, "-m", "protocoder", "render", "--workspace", str(workspace),
                               "--bootstrap", "0"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not [p for p in out.iterdir() if p.name.endswith(".tmp")], "the next render removed temporaries"

    counter = iter(range(10**6))
    kill_repeatedly(root, argv, kills, seconds * 1.1, versions, before, random.Random(SEED + 5), "render",
                    check=lambda ws: manifest_covers_the_folder(ws) if next(counter) % 2 == 0 else None)
