"""Issue 12.3–12.4 with real git: two reviewers on two branches each correct and adjudicate,
``git merge`` joins their history files through the merge driver, and ``validate`` is clean;
a merge where both decided the same cell differently is refused; ``validate --history``
finds a rolled-back ledger and a merge that kept one side."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_lifecycle import DECISIONS, DISAGREE, add_reviewer, final, ok

from protocoder.lifecycle.corrections import load_corrections
from protocoder.storage.paths import Paths

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if check:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(bundled: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled review with alice, adjudicated and released as v1, committed on main, with
    the merge driver installed by protocoder git-setup."""
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    for key, value in {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "Test",
                       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1"}.items():
        monkeypatch.setenv(key, value)
    git(bundled, "init", "-q", "-b", "main")
    git(bundled, "config", "user.name", "Test")
    git(bundled, "config", "user.email", "t@example.org")
    add_reviewer(bundled, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", bundled, "--cell", cell, "--code", code, "--reason", "meeting"))
    ok(cli("freeze", "--workspace", bundled, "--label", "v1", "--bootstrap", "0"))
    out = ok(cli("git-setup", "--workspace", bundled))
    assert "merge.protocoder.driver" in out
    assert (bundled / ".gitattributes").read_text() == ("corrections.yaml merge=protocoder\n"
                                                        "protocols/*/consensus.yaml merge=protocoder\n")
    commit(bundled, "v1")
    return bundled


def on_branch(repo: Path, cli, branch: str, steps: list[list[str]], *, start: str = "main") -> None:
    git(repo, "checkout", "-q", start)
    git(repo, "checkout", "-q", "-b", branch)
    for step in steps:
        ok(cli(*step, "--workspace", repo))
    commit(repo, branch)


ADA = [["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "ada: App. D", "--by", "ada"],
       ["adjudicate", "--cell", "webarena/reset_retention", "--code", "P", "--reason", "ada decides", "--by", "ada"]]
BO = [["correct", "--cell", "re-bench/open_work", "--code", "P", "--reason", "bo: Sec. 4", "--by", "bo"],
      ["adjudicate", "--cell", "webarena/separate_evidence", "--code", "E", "--reason", "bo decides", "--by", "bo"]]


def test_two_branches_that_correct_and_adjudicate_merge_cleanly(repo: Path, cli, tmp_path: Path) -> None:
    on_branch(repo, cli, "ada", ADA)
    on_branch(repo, cli, "bo", BO)
    other = tmp_path / "other"  # a second clone that merges the other way round
    git(tmp_path, "clone", "-q", str(repo), str(other))
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    merged = git(repo, "merge", "--no-edit", "bo", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "<<<<<<<" not in (repo / "corrections.yaml").read_text()

    validate = cli("validate", "--workspace", repo, "--strict", "--history")
    assert validate.exit_code == 0, validate.stderr
    rows = final(cli, repo)
    assert {key: rows[key]["code"] for key in ("cybench/open_work", "re-bench/open_work", "webarena/reset_retention",
                                                "webarena/separate_evidence")} == {
        "cybench/open_work": "P", "re-bench/open_work": "P", "webarena/reset_retention": "P",
        "webarena/separate_evidence": "E"}
    entries, problems = load_corrections(Paths(repo))
    assert not problems and [e.action for e in entries].count("merge") == 1
    consensus = (repo / "protocols/webarena/consensus.yaml").read_text()
    assert "reason: ada decides" in consensus and "reason: bo decides" in consensus

    # Merged the other way round, the result is the same file.
    ok(cli("git-setup", "--workspace", other))
    git(other, "checkout", "-q", "bo")
    git(other, "merge", "--no-edit", "origin/ada")
    for name in ("corrections.yaml", "protocols/webarena/consensus.yaml"):
        assert (other / name).read_text() == (repo / name).read_text(), name


def test_a_release_frozen_on_a_branch_stays_anchored_after_the_merge(repo: Path, cli) -> None:
    on_branch(repo, cli, "ada", ADA)
    on_branch(repo, cli, "bo", [*BO, ["freeze", "--label", "v2", "--bootstrap", "0"]])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    git(repo, "merge", "--no-edit", "bo")
    validate = cli("validate", "--workspace", repo)
    assert validate.exit_code == 0, validate.stderr
    # v2 was frozen without ada's decisions: they are not lost without a word.
    assert "correction 1 (cybench/open_work, release v1) was recorded on a branch without release v2" in \
        validate.stderr
    assert "protocoder correct --cell cybench/open_work --code P" in validate.stderr
    ok(cli("correct", "--workspace", repo, "--cell", "cybench/open_work", "--code", "P", "--reason", "ada's, again"))
    ok(cli("correct", "--workspace", repo, "--cell", "webarena/reset_retention", "--reason", "ada's, again"))
    validate = cli("validate", "--workspace", repo, "--strict", "--history")
    assert validate.exit_code == 0, validate.stderr


@pytest.mark.parametrize("ada, bo, message", [
    (["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "ada"],
     ["correct", "--cell", "cybench/open_work", "--code", "E", "--reason", "bo", "--source", "App. D",
      "--basis", "All stopped."], "both branches corrected cybench/open_work differently"),
    (["adjudicate", "--cell", "tau-bench/separate_evidence", "--code", "P", "--reason", "ada"],
     ["adjudicate", "--cell", "tau-bench/separate_evidence", "--code", "E", "--reason", "bo"],
     "both branches"),
])
def test_a_merge_where_both_decided_a_cell_differently_is_refused(repo: Path, cli, ada, bo, message) -> None:
    on_branch(repo, cli, "ada", [ada])
    on_branch(repo, cli, "bo", [bo])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "ada")
    merged = git(repo, "merge", "--no-edit", "bo", check=False)
    assert merged.returncode != 0
    assert message in merged.stdout + merged.stderr
    conflicted = git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert conflicted and all(name.endswith(("corrections.yaml", "consensus.yaml")) for name in conflicted)
    assert "<<<<<<< ours" in (repo / conflicted[0]).read_text()
    git(repo, "merge", "--abort")


def test_validate_history_finds_rollbacks_and_one_sided_merges(repo: Path, cli) -> None:
    ok(cli("correct", "--workspace", repo, "--cell", "cybench/open_work", "--code", "P", "--reason", "one"))
    commit(repo, "one")
    ok(cli("correct", "--workspace", repo, "--cell", "re-bench/open_work", "--code", "P", "--reason", "two"))
    commit(repo, "two")
    assert cli("validate", "--workspace", repo, "--history", "--strict").exit_code == 0

    git(repo, "checkout", "HEAD~1", "--", "corrections.yaml")  # no release anchored the second entry
    plain = cli("validate", "--workspace", repo)  # no release anchors the second entry: git does
    assert plain.exit_code == 1 and "re-bench/open_work" in plain.stderr, plain.output
    result = cli("validate", "--workspace", repo, "--history")
    assert result.exit_code == 1
    assert "corrections.yaml: the working copy is not an extension of the version before it" in result.stderr
    commit(repo, "rollback")
    result = cli("validate", "--workspace", repo, "--history")
    assert result.exit_code == 1 and "corrections.yaml: commit " in result.stderr
    assert "1 of its 2 entries were removed" in result.stderr
    git(repo, "reset", "-q", "--hard", "HEAD~1")

    on_branch(repo, cli, "side", [["correct", "--cell", "osworld/open_work", "--code", "P", "--reason", "side"]])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "-s", "ours", "side")  # keeps main's files: side's entry is lost
    result = cli("validate", "--workspace", repo, "--history")
    assert result.exit_code == 1
    assert "dropped or changed entries of the version before it (a merge that kept one side?)" in result.stderr


def test_git_setup_needs_a_repository_and_init_offers_it(tmp_path: Path, cli) -> None:
    root = tmp_path / "ws"
    out = ok(cli("init", root))
    assert "git-setup" not in out
    refused = cli("git-setup", "--workspace", root)
    assert refused.exit_code == 1 and "git init" in refused.stderr
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    assert "run `protocoder git-setup`" in ok(cli("init", repo / "review"))
    assert "merge.protocoder.driver" in ok(cli("init", repo / "second", "--git-setup"))
    assert (repo / "second/.gitattributes").is_file()
