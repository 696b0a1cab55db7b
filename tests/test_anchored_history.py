"""Issue 12 (history items): an anchored history, reads under the lock, no silent partial state.

* each release records the ledger's head and the hash of its own metadata, so a rolled-back,
  deleted or diverging ledger, a deleted release, a release without its release.yaml and an
  edited release.yaml are reported by ``validate`` (and block ``render``);
* a damaged ``view.json`` is one line naming the file, never a traceback;
* ``status`` with a damaged history exits non-zero with the problem;
* ``correct``, ``adjudicate`` and ``freeze`` decide from what they read under the lock:
  parallel corrections of one cell (real processes) record true ``old`` codes, and a freeze
  that saw the workspace change while it built the tables starts over;
* an adjudication of a released cell is written with its correction all or nothing: killed
  in between (a real process, SIGKILL), the state is reported with the command that
  finishes it, and that command (or the next lifecycle write) does.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_lifecycle import DECISIONS, add_reviewer, edit, ok, release_bytes, strip_to_legacy

from protocoder.lifecycle.corrections import load_corrections
from protocoder.storage.paths import Paths

from conftest import tree_digest

DISAGREE = [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
            ("tau-bench,separate_evidence,alice,E", "tau-bench,separate_evidence,alice,P"),
            ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")]


@pytest.fixture
def released(bundled: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_reviewer(bundled, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", bundled, "--cell", cell, "--code", code, "--reason", "meeting"))
    ok(cli("freeze", "--workspace", bundled, "--label", "v1", "--bootstrap", "0"))
    return bundled


def refused(cli, workspace: Path, *args: str) -> str:
    result = cli(*args, "--workspace", workspace)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.fixture
def anchored(released: Path, cli) -> tuple[Path, str]:
    """Two corrections, then release v2 anchored to them; returns the ledger after the first one."""
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "one"))
    after_one = (released / "corrections.yaml").read_text(encoding="utf-8")
    ok(cli("correct", "--workspace", released, "--cell", "re-bench/open_work", "--code", "P", "--reason", "two"))
    ok(cli("freeze", "--workspace", released, "--label", "v2", "--bootstrap", "0"))
    assert "ledger:\n  entries: 2\n  hash: sha256:" in (released / "releases/v2/release.yaml").read_text()
    assert "metadata_hash: sha256:" in (released / "releases/v2/release.yaml").read_text()
    ok(cli("validate", "--workspace", released, "--strict"))
    return released, after_one


def test_a_ledger_rolled_back_behind_the_committed_output_is_reported(released: Path, cli) -> None:
    """No release saw the correction, but output/ was rendered (and committed) with it: rolling
    back corrections.yaml alone must not make the correction vanish silently."""
    ledger = released / "corrections.yaml"
    before = ledger.read_text(encoding="utf-8") if ledger.exists() else None
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "one"))
    ok(cli("render", "--workspace", released, "--bootstrap", "0"))
    assert '"entries": 1' in (released / "output" / ".protocoder-outputs.json").read_text(encoding="utf-8")
    ok(cli("validate", "--workspace", released, "--strict"))
    after = ledger.read_text(encoding="utf-8")
    if before is None:
        ledger.unlink()  # as deleting the file, or `git checkout HEAD~1 -- corrections.yaml`, would
    else:
        ledger.write_text(before, encoding="utf-8")
    stderr = refused(cli, released, "validate")
    assert ("output/.protocoder-outputs.json records tables rendered from a ledger of 1 entry ending in "
            "sha256:" in stderr and "corrections were lost" in stderr), stderr
    # The way out the message names: restore the ledger; then everything is clean again.
    ledger.write_text(after, encoding="utf-8")
    ok(cli("validate", "--workspace", released, "--strict"))


def test_a_rolled_back_ledger_is_reported(anchored: tuple[Path, str], cli) -> None:
    workspace, after_one = anchored
    ledger = workspace / "corrections.yaml"
    ledger.write_text(after_one, encoding="utf-8")  # as `git checkout HEAD~1 -- corrections.yaml` would
    stderr = refused(cli, workspace, "validate")
    assert ("corrections.yaml: release v2 recorded the ledger at 2 entries ending in sha256:" in stderr
            and "holds only 1 entries: corrections were lost" in stderr), stderr
    assert "git log -- corrections.yaml" in stderr
    assert "holds only 1 entries" in refused(cli, workspace, "render", "--bootstrap", "0")
    ledger.unlink()
    assert "corrections.yaml is missing" in refused(cli, workspace, "validate")


def test_a_diverging_ledger_is_reported(anchored: tuple[Path, str], cli, tmp_path: Path) -> None:
    workspace, after_one = anchored
    # Another branch's ledger: the same first entry, then different ones (what a merge that
    # kept the other side would leave).
    import shutil

    other = tmp_path / "other"
    shutil.copytree(workspace, other)
    shutil.rmtree(other / ".protocoder")  # another clone: its own locks and recorded ledger head
    shutil.rmtree(other / "releases/v2")
    (other / "corrections.yaml").write_text(after_one, encoding="utf-8")
    ok(cli("correct", "--workspace", other, "--cell", "osworld/open_work", "--code", "P", "--reason", "other"))
    ok(cli("correct", "--workspace", other, "--cell", "swe-bench/open_work", "--code", "NR", "--reason", "x"))
    ledger = workspace / "corrections.yaml"
    current = ledger.read_text(encoding="utf-8")
    ledger.write_text((other / "corrections.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    stderr = refused(cli, workspace, "validate")
    assert "no longer holds that entry (it diverges from what the release saw)" in stderr
    ledger.write_text(current, encoding="utf-8")
    ok(cli("validate", "--workspace", workspace, "--strict"))


def test_deleted_or_edited_release_metadata_is_reported(anchored: tuple[Path, str], cli) -> None:
    workspace, _ = anchored
    metadata = workspace / "releases/v1/release.yaml"
    text = metadata.read_text(encoding="utf-8")
    metadata.write_text(text.replace("by: carol", "by: mallory"), encoding="utf-8")
    stderr = refused(cli, workspace, "validate")
    assert "releases/v1/release.yaml:" in stderr and "release.yaml was modified after the release was frozen" in stderr
    metadata.unlink()
    stderr = refused(cli, workspace, "validate")
    assert "releases/v1: release folder without its release.yaml" in stderr
    assert "correction 1 (cybench/open_work) corrects release v1, which is not in releases/" in stderr
    metadata.write_text(text, encoding="utf-8")
    ok(cli("validate", "--workspace", workspace, "--strict"))
    import shutil

    shutil.rmtree(workspace / "releases/v1")
    stderr = refused(cli, workspace, "validate")
    assert "corrections.yaml:" in stderr and "corrects release v1, which is not in releases/ (deleted?)" in stderr
    assert "restore releases/v1/ from version control" in stderr


@pytest.mark.parametrize("damage, message", [
    pytest.param(lambda text: text[:len(text) // 2], "malformed JSON", id="truncated"),
    pytest.param(lambda text: "[]\n", "expected a JSON object, found list", id="a-list"),
    pytest.param(lambda text: text.replace('{\n "agreement"', '{\n "x": 1,\n "agreement"', 1), "unexpected key 'x'",
                 id="extra-key"),
])
def test_a_damaged_view_is_one_line_naming_the_file(released: Path, cli, damage, message: str) -> None:
    view = released / "releases/v1/view.json"
    view.write_text(damage(view.read_text(encoding="utf-8")), encoding="utf-8")
    for command in (["validate"], ["render", "--bootstrap", "0"], ["render", "--release", "v1"], ["status"]):
        stderr = refused(cli, released, *command)
        assert "releases/v1/view.json: file of a release was modified after the release was frozen" in stderr
    # A release from before metadata hashes, with view.json's recorded hash edited to match:
    # what is wrong with the view itself is named, still in one line.
    strip_to_legacy(released / "releases/v1")
    import hashlib

    from protocoder.storage.yamlio import load_document

    document = load_document(released / "releases/v1/release.yaml", "release.yaml")
    document.data["files"]["view.json"] = "sha256:" + hashlib.sha256(view.read_bytes()).hexdigest()
    document.save()
    for command in (["validate"], ["render", "--bootstrap", "0"], ["render", "--release", "v1"]):
        stderr = refused(cli, released, *command)
        located = [line for line in stderr.splitlines() if line.startswith("releases/v1/view.json")]
        assert located and message in located[0], stderr


def test_status_with_a_damaged_history_exits_non_zero(anchored: tuple[Path, str], cli) -> None:
    workspace, _ = anchored
    ledger = workspace / "corrections.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("reason: one", "reason: edited"), encoding="utf-8")
    result = cli("status", "--workspace", workspace)
    assert result.exit_code == 1 and "was edited after it was recorded" in result.stderr
    assert "Corrections since" not in result.stdout and "History: 1 problem" in result.stdout
    ledger.write_text("entries: [\n", encoding="utf-8")
    assert cli("status", "--workspace", workspace).exit_code == 1
    ledger.unlink()
    table = workspace / "releases/v2/tables/matrix.md"
    table.write_text(table.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = cli("status", "--workspace", workspace)
    assert result.exit_code == 1 and "releases/v2/tables/matrix.md" in result.stderr


def test_adjudicate_with_a_damaged_ledger_changes_nothing(released: Path, cli) -> None:
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "one"))
    ledger = released / "corrections.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("reason: one", "reason: edited"), encoding="utf-8")
    edit(released / "protocols/webarena/codes/alice.yaml", "code: P", "code: E")  # a new disagreement
    before = tree_digest(released)
    stderr = refused(cli, released, "adjudicate", "--cell", "webarena/open_work", "--code", "E", "--reason", "r")
    assert "corrections.yaml" in stderr and "was edited after it was recorded" in stderr
    assert tree_digest(released) == before


# --------------------------------------------------------------------------- reads under the lock

CORRECTOR = textwrap.dedent("""
    import sys
    from pathlib import Path
    from protocoder.lifecycle import correct
    from protocoder.storage.paths import Paths
    root, codes = Path(sys.argv[1]), sys.argv[2].split(",")
    import protocoder.storage.store
    protocoder.storage.store.Store.__init__.__kwdefaults__["lock_timeout"] = 60.0
    print("ready", flush=True)
    sys.stdin.readline()
    from protocoder.errors import Rejected
    for index, code in enumerate(codes):
        try:
            correct(Paths(root), "cybench/open_work", code=code, reason=f"{sys.argv[3]} {index}", by=sys.argv[3])
        except Rejected as exc:  # the cell already has that code: nothing to correct
            assert "nothing to correct" in str(exc), exc
            print("unchanged", flush=True)
""")


def test_parallel_corrections_record_true_old_codes(released: Path) -> None:
    processes = []
    plans = {"ana": "P,E,P,NR,E,P", "ben": "E,NR,P,E,NR,E", "cas": "NR,P,E,P,E,NR", "dov": "P,NR,E,NR,P,E"}
    for who, codes in plans.items():
        process = subprocess.Popen([sys.executable, "-c", CORRECTOR, str(released), codes, who], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        processes.append(process)
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outcomes = [process.communicate(timeout=120) for process in processes]
    for process, (_, err) in zip(processes, outcomes, strict=True):
        assert process.returncode == 0, err
    unchanged = sum(out.count("unchanged") for out, _ in outcomes)
    entries, problems = load_corrections(Paths(released))
    assert not problems
    assert len(entries) + unchanged == 24
    previous = "NR"  # the released code
    for entry in entries:
        assert entry.old == previous, f"{entry.by} recorded old {entry.old}, but the view showed {previous}"
        previous = entry.new


def test_a_freeze_that_saw_the_workspace_change_starts_over(released: Path, monkeypatch) -> None:
    """freeze hashes exactly the state its tables show: a change while the tables are built
    (simulated: a save right after the first read) makes it read again."""
    from protocoder import publish
    from protocoder.lifecycle.releases import content_hash, find_release
    from protocoder.model import Cell
    from protocoder.storage.store import Store
    from protocoder.storage.workspace import load_review

    reads = []
    real = publish.load_review

    def load_then_change(root: Path, **kwargs):
        review = real(root, **kwargs)
        reads.append(review)
        if len(reads) == 1:  # another process saves a cell while this freeze works
            cell = review.cells("osworld", "open_work")["alice"]
            Store(review.paths).save_cell(Cell("osworld", "open_work", "alice", "P", cell.source, cell.basis,
                                               cell.cites), review.rubric)
            Store(review.paths).save_cell(Cell("osworld", "open_work", "casheekar", "P", cell.source, cell.basis,
                                               cell.cites), review.rubric)
        return review

    monkeypatch.setattr(publish, "load_review", load_then_change)
    release = publish.freeze_workspace(released, "v2", by="carol", bootstrap=0)
    assert len(reads) == 2, "the state changed after the first read: read again"
    review = load_review(released)
    assert release.content_hash == content_hash(review.paths, review.paths.rubric_dir / "evaluation-boundary.yaml")
    found = find_release(review.paths, "v2")
    assert found.baseline()["osworld/open_work"]["code"] == "P", "the baseline is the state hashed"
    assert found.view().cell("osworld", "open_work")["code"] == "NR", "the view keeps v1 (no correction)"


# --------------------------------------------------------------------------- all or nothing

# Adjudicates a released cell with the journal's second write replaced by a sudden death.
DIE_BETWEEN = textwrap.dedent("""
    import os, sys
    from protocoder.lifecycle import journal
    from protocoder.cli import main
    journal.write_ledger = lambda *a, **k: os._exit(9)
    main(sys.argv[1:], prog_name="protocoder")
""")


def test_an_adjudication_killed_between_its_two_writes_is_finished(released: Path, cli) -> None:
    edit(released / "protocols/webarena/codes/alice.yaml", "code: P", "code: E")  # a new disagreement
    argv = [sys.executable, "-c", DIE_BETWEEN, "adjudicate", "--workspace", str(released), "--cell",
            "webarena/open_work", "--code", "E", "--reason", "Settled again", "--by", "dana"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 9
    consensus = (released / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert consensus.count("reason: Settled again") == 1, "the first write happened"
    assert not (released / "corrections.yaml").exists(), "the second did not"
    for command in (["validate"], ["render", "--bootstrap", "0"], ["status"]):
        stderr = refused(cli, released, *command)
        assert (".protocoder/pending.json: an adjudication of webarena/open_work was interrupted before all of its "
                "files were written: run `protocoder recover` to finish it") in stderr
    assert "Finished the adjudication of webarena/open_work (E) and its correction in release v1" in \
        ok(cli("recover", "--workspace", released))
    ledger = (released / "corrections.yaml").read_text(encoding="utf-8")
    assert "reason: Settled again" in ledger and "old: NR" in ledger and "new: E" in ledger
    assert consensus == (released / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    ok(cli("validate", "--workspace", released, "--strict"))
    assert "Nothing to recover" in ok(cli("recover", "--workspace", released))

    # The next lifecycle write finishes an interrupted one by itself.
    edit(released / "protocols/webarena/codes/alice.yaml", "code: E", "code: P")
    argv[argv.index("E")] = "P"
    assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 9
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "later"))
    entries, problems = load_corrections(Paths(released))
    assert not problems and [(e.cell, e.new) for e in entries] == [
        ("webarena/open_work", "E"), ("webarena/open_work", "P"), ("cybench/open_work", "P")]
    ok(cli("validate", "--workspace", released, "--strict"))


KILL_CHILD = textwrap.dedent("""
    import sys
    import protocoder.cli, protocoder.lifecycle.journal, protocoder.publish
    print("ready", flush=True)
    protocoder.cli.main(sys.argv[1:], prog_name="protocoder")
""")


@pytest.mark.parametrize("kills", [pytest.param(4, id="few"), pytest.param(60, id="sixty", marks=pytest.mark.slow)])
def test_sigkill_during_an_adjudication_of_a_released_cell(released: Path, cli, kills: int) -> None:
    """Real SIGKILLs at random moments: the adjudication and its correction end up both or neither."""
    edit(released / "protocols/webarena/codes/alice.yaml", "code: P", "code: E")
    argv = [sys.executable, "-c", KILL_CHILD, "adjudicate", "--workspace", str(released), "--cell",
            "webarena/open_work", "--code", "E", "--reason", "Settled again", "--by", "dana"]
    start = {p: p.read_bytes() for p in released.rglob("*") if p.is_file()}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
    began = time.perf_counter()
    assert process.wait(timeout=60) == 0
    span = time.perf_counter() - began
    rng = random.Random(20261130)
    outcomes = {"neither": 0, "both": 0, "finished by recover": 0}
    for _ in range(kills):
        for path in [p for p in released.rglob("*") if p.is_file() and p not in start]:
            path.unlink()
        for path, payload in start.items():
            path.write_bytes(payload)
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0, span * 1.1))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        adjudicated = "Settled again" in (released / "protocols/webarena/consensus.yaml").read_text()
        ledger = released / "corrections.yaml"
        corrected = ledger.exists() and "Settled again" in ledger.read_text()
        if (released / ".protocoder/pending.json").exists():
            assert "run `protocoder recover`" in refused(cli, released, "validate")
            ok(cli("recover", "--workspace", released))
            outcomes["finished by recover"] += 1
        elif adjudicated or corrected:
            assert adjudicated and corrected, "an adjudication without its correction (or the reverse)"
            outcomes["both"] += 1
        else:
            outcomes["neither"] += 1
        ok(cli("validate", "--workspace", released))  # no error (the disagreement is a warning until decided)
    print(f"\nadjudicate a released cell under SIGKILL: {outcomes}")
    assert sum(outcomes.values()) == kills


def test_the_release_renders_the_same_after_all_this(anchored: tuple[Path, str], cli, tmp_path: Path) -> None:
    workspace, _ = anchored
    v1 = release_bytes(cli, workspace, "v1", tmp_path / "a")
    ok(cli("withdraw", "cybench", "--workspace", workspace, "--reason", "retracted"))
    ok(cli("protocol", "remove", "cybench", "--force", "--workspace", workspace))
    ok(cli("freeze", "--workspace", workspace, "--label", "v3", "--bootstrap", "0"))
    assert release_bytes(cli, workspace, "v1", tmp_path / "b") == v1
