"""Issue 26.1 with real git: a ledger that lost entries (deleted by one branch and merged
cleanly, checked out from an older commit, dropped by ``git merge -X ours``) is reported by
plain ``validate`` — also for corrections made after the last release — naming the lost entries
and the git command that restores them; ``render``, ``export --view final`` and ``freeze``
refuse with the same message, and ``--allow-lost-corrections`` is the deliberate way past."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from test_git_history import commit, git, on_branch, repo  # noqa: F401  (the fixture)
from test_lifecycle import final, ok

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CYBENCH = ["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D", "--by", "ada"]
REBENCH = ["correct", "--cell", "re-bench/open_work", "--code", "P", "--reason", "Sec. 4", "--by", "bo"]


def restore_command(message: str) -> list[str]:
    found = re.search(r"restore them: git (checkout [0-9a-f]{12} -- corrections\.yaml)", message)
    assert found, message
    return found.group(1).split()


def assert_refused_everywhere(repo: Path, cli, lost_cell: str) -> str:  # noqa: F811
    """validate, render, export --view final and freeze all refuse, with one message naming the cell."""
    result = cli("validate", "--workspace", repo)
    assert result.exit_code == 1, result.output
    assert lost_cell in result.stderr and "that the git history holds" in result.stderr, result.stderr
    message = next(line for line in result.stderr.splitlines() if "that the git history holds" in line)
    before = {p: p.read_bytes() for p in (repo / "output").rglob("*") if p.is_file()}
    for command in (["render"], ["export", "--view", "final"], ["freeze", "--label", "v9", "--bootstrap", "0"]):
        refused = cli(*command, "--workspace", repo)
        assert refused.exit_code == 1, (command, refused.output)
        assert message in refused.stderr, (command, refused.stderr)
        assert "Traceback" not in refused.output
    assert {p: p.read_bytes() for p in (repo / "output").rglob("*") if p.is_file()} == before
    assert not (repo / "releases" / "v9").exists()
    return message


def test_a_branch_that_deletes_the_ledger_merged_cleanly_is_reported(repo: Path, cli) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))  # after the last release: no release anchors it
    commit(repo, "correct cybench")
    git(repo, "checkout", "-q", "-b", "tidy")
    (repo / "corrections.yaml").unlink()
    commit(repo, "tidy up")
    git(repo, "checkout", "-q", "main")
    (repo / "notes.txt").write_text("unrelated\n")
    commit(repo, "notes")
    merged = git(repo, "merge", "--no-edit", "tidy")
    assert "CONFLICT" not in merged.stdout and not (repo / "corrections.yaml").exists()

    message = assert_refused_everywhere(repo, cli, "cybench/open_work NR -> P by ada ('App. D')")
    git(repo, *restore_command(message))  # the command the message names works
    assert cli("validate", "--workspace", repo).exit_code == 0
    assert final(cli, repo)["cybench/open_work"]["code"] == "P"


def test_a_checkout_of_an_older_ledger_is_reported(repo: Path, cli) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    commit(repo, "one")
    ok(cli(*REBENCH, "--workspace", repo))
    commit(repo, "two")
    git(repo, "checkout", "HEAD~1", "--", "corrections.yaml")
    message = assert_refused_everywhere(repo, cli, "re-bench/open_work NR -> P by bo")
    assert "cybench" not in message, "only the lost entry is named"
    commit(repo, "rollback committed")  # committing the rollback hides nothing
    assert cli("validate", "--workspace", repo).exit_code == 1

    allowed = cli("render", "--workspace", repo, "--allow-lost-corrections")
    assert allowed.exit_code == 0, allowed.output
    assert "corrections.yaml: warning: lost 1 entry" in allowed.stderr
    git(repo, *restore_command(message))
    assert cli("validate", "--workspace", repo).exit_code == 0
    assert final(cli, repo)["re-bench/open_work"]["code"] == "P"


def test_a_merge_that_kept_one_side_is_reported(repo: Path, cli) -> None:  # noqa: F811
    git(repo, "config", "--remove-section", "merge.protocoder")  # git's own text merge, as without git-setup
    on_branch(repo, cli, "ada", [CYBENCH])
    on_branch(repo, cli, "bo", [REBENCH])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    git(repo, "merge", "-q", "--no-edit", "-X", "ours", "bo")
    assert cli("status", "--workspace", repo).exit_code == 1
    message = assert_refused_everywhere(repo, cli, "re-bench/open_work NR -> P by bo")
    # main's own entry is not in bo's version: checking bo's out would lose it, so the message says so.
    assert "lacks entries recorded since" in message and "protocoder git-setup" in message


def test_a_clean_history_reports_nothing(repo: Path, cli) -> None:  # noqa: F811
    on_branch(repo, cli, "ada", [CYBENCH])
    on_branch(repo, cli, "bo", [REBENCH])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    git(repo, "merge", "-q", "--no-edit", "bo")  # through the merge driver: entries re-chained, none lost
    result = cli("validate", "--workspace", repo, "--strict")
    assert result.exit_code == 0, result.output


# --------------------------------------------------------------------------- 26.2: merges that mean what happened

def entries_of(repo: Path) -> list:  # noqa: F811
    from protocoder.lifecycle.corrections import load_corrections
    from protocoder.storage.paths import Paths

    entries, problems = load_corrections(Paths(repo))
    assert not problems, problems
    return entries


def test_the_identical_correction_on_both_branches_is_joined_into_one(repo: Path, cli) -> None:  # noqa: F811
    same = ["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D says so", "--by", "ada"]
    on_branch(repo, cli, "ada", [same])
    time.sleep(1.1)  # a second later: the same content but another time, so another hash
    on_branch(repo, cli, "bo", [same])  # ada again, on her other machine: the same decision twice
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    merged = git(repo, "merge", "--no-edit", "bo", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    entries = entries_of(repo)
    corrections = [e for e in entries if not e.action]
    assert [(e.cell, e.old, e.new) for e in corrections] == [("cybench/open_work", "NR", "P")]
    assert len(entries[-1].joined) == 1 and "1 identical joined" in entries[-1].reason
    validate = cli("validate", "--workspace", repo, "--strict", "--history")
    assert validate.exit_code == 0, validate.stderr
    ok(cli("render", "--workspace", repo, "--format", "md"))
    assert (repo / "output/corrections.md").read_text().count("App. D says so") == 1


def test_the_same_code_for_different_reasons_keeps_both_decisions(repo: Path, cli) -> None:  # noqa: F811
    """Issue 30.3: the driver joins only entries identical in code, evidence, reason and author."""
    cell = ["correct", "--cell", "cybench/open_work", "--code", "P"]
    on_branch(repo, cli, "ada", [[*cell, "--reason", "App. D lists the split", "--by", "ada"]])
    on_branch(repo, cli, "bo", [[*cell, "--reason", "the paper's Table 2", "--by", "bo"]])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    merged = git(repo, "merge", "--no-edit", "bo", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    corrections = [e for e in entries_of(repo) if not e.action]
    assert sorted((e.reason, e.by) for e in corrections) == [("App. D lists the split", "ada"),
                                                             ("the paper's Table 2", "bo")]
    # In order, each "was" true: NR -> P, then P -> P (the second decision, for its own reason).
    assert [(e.old, e.new) for e in corrections] == [("NR", "P"), ("P", "P")]
    assert not entries_of(repo)[-1].joined
    validate = cli("validate", "--workspace", repo, "--strict", "--history")
    assert validate.exit_code == 0, validate.stderr
    ok(cli("render", "--workspace", repo, "--format", "md"))
    listed = (repo / "output/corrections.md").read_text()
    assert "App. D lists the split" in listed and "the paper's Table 2" in listed
    assert final(cli, repo)["cybench/open_work"]["code"] == "P"


def test_a_correction_the_other_branch_overtook_is_rebased(repo: Path, cli) -> None:  # noqa: F811
    cell = ["--cell", "cybench/open_work"]
    on_branch(repo, cli, "ada", [["correct", *cell, "--code", "E", "--reason", "first E", "--by", "ada",
                                  "--source", "App. D", "--basis", "Stopped."],
                                 ["correct", *cell, "--code", "P", "--reason", "then P", "--by", "ada"]])
    on_branch(repo, cli, "bo", [["correct", *cell, "--code", "P", "--reason", "straight to P", "--by", "bo"]])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "bo")
    merged = git(repo, "merge", "--no-edit", "ada", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    corrections = [(e.old, e.new) for e in entries_of(repo) if not e.action]
    # Each "was" is what the cell was when the entry applies (the merged order is by time, then
    # content, so which branch comes first depends on the clock), and none is a no-op.
    assert corrections[0][0] == "NR" and corrections[-1][1] == "P", corrections
    assert all(before[1] == after[0] for before, after in zip(corrections, corrections[1:], strict=False)), corrections
    # bo's P for another reason is kept after ada's, going from P to P: no reason or author is lost.
    assert [c for c in corrections if c[0] == c[1]] in ([], [("P", "P")]), corrections
    assert {e.reason for e in entries_of(repo) if not e.action} == {"first E", "then P", "straight to P"}
    assert len(corrections) < 3 or any(e.rechained and any(i.was for i in e.rechained) for e in entries_of(repo))
    validate = cli("validate", "--workspace", repo, "--strict", "--history")
    assert validate.exit_code == 0, validate.stderr
    assert final(cli, repo)["cybench/open_work"]["code"] == "P"


def test_a_ledger_conflict_resolved_by_hand_names_git_setup(repo: Path, cli) -> None:  # noqa: F811
    git(repo, "config", "--remove-section", "merge.protocoder")  # a clone that never ran git-setup
    on_branch(repo, cli, "ada", [CYBENCH])
    on_branch(repo, cli, "bo", [REBENCH])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    assert git(repo, "merge", "--no-edit", "bo", check=False).returncode != 0
    conflicted = (repo / "corrections.yaml").read_text()
    marked = cli("validate", "--workspace", repo)
    assert marked.exit_code == 1 and "conflict markers" in marked.stderr and "protocoder git-setup" in marked.stderr
    assert "<<<<<<<" in conflicted
    # Resolved by hand: this side's file with the other side's entry pasted after its own.
    ours, theirs = git(repo, "show", ":2:corrections.yaml").stdout, git(repo, "show", ":3:corrections.yaml").stdout
    (repo / "corrections.yaml").write_text(ours + theirs[theirs.index("  - release:"):])
    result = cli("validate", "--workspace", repo)
    assert result.exit_code == 1
    assert "protocoder git-setup, which installs protocoder's merge driver" in result.stderr, result.stderr
    # What the message says to do works.
    ok(cli("git-setup", "--workspace", repo))
    git(repo, "checkout", "-m", "corrections.yaml")
    assert cli("validate", "--workspace", repo, "--strict").exit_code == 0
    codes = final(cli, repo)
    assert codes["cybench/open_work"]["code"] == "P" and codes["re-bench/open_work"]["code"] == "P"


# --------------------------------------------------------------------------- outside git

def test_outside_git_the_head_recorded_beside_the_locks_names_lost_entries(tmp_path: Path, cli) -> None:
    from test_lifecycle import DECISIONS, DISAGREE, add_reviewer

    from conftest import copy_bundled

    root = copy_bundled(tmp_path / "review")
    add_reviewer(root, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", root, "--cell", cell, "--code", code, "--reason", "meeting", "--by", "c"))
    ok(cli("freeze", "--workspace", root, "--label", "v1", "--bootstrap", "0", "--by", "c"))
    ok(cli(*CYBENCH, "--workspace", root))  # after the release, nothing rendered: only the recorded head saw it
    one = (root / "corrections.yaml").read_bytes()
    ok(cli(*REBENCH, "--workspace", root))
    (root / "corrections.yaml").write_bytes(one)  # rolled back by hand
    result = cli("validate", "--workspace", root)
    assert result.exit_code == 1
    assert "lost 1 entry that this workspace recorded when it last wrote the ledger (#2 re-bench/open_work " \
           "NR -> P by bo" in result.stderr, result.stderr
    assert cli("render", "--workspace", root).exit_code == 1
    (root / "corrections.yaml").unlink()
    assert "lost 2 entries" in cli("validate", "--workspace", root).stderr


def test_correct_withdraw_is_the_deliberate_way_to_drop_a_correction(repo: Path, cli) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    ok(cli(*REBENCH, "--workspace", repo))
    commit(repo, "two corrections")
    assert "no correction 9" in cli("correct", "--workspace", repo, "--withdraw", "9", "--reason", "r").stderr
    out = ok(cli("correct", "--workspace", repo, "--withdraw", "1", "--reason", "App. D was misread"))
    assert "cybench/open_work in release v1: P -> NR" in out
    entries = entries_of(repo)
    assert len(entries) == 3 and entries[-1].reason.startswith("withdraws correction 1 (NR -> P, 'App. D')")
    assert final(cli, repo)["cybench/open_work"]["code"] == "NR"
    commit(repo, "withdrawn")
    assert cli("validate", "--workspace", repo, "--strict").exit_code == 0, "nothing lost: the entry is still there"
    again = cli("correct", "--workspace", repo, "--withdraw", "1", "--reason", "twice")
    assert again.exit_code == 1 and "was followed by correction 3" in again.stderr
