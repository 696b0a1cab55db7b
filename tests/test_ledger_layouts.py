"""Issue 30.2 and 30.7: the ledger watched in every layout, and all or nothing.

Whether git is the ledger's record depends on whether git *tracks* ``corrections.yaml``, not
on a ``.git`` somewhere above: a workspace inside a parent repository that ignores it, and a
copy without its ``.git``, compare the ledger with ``.protocoder/ledger-head.json``. A
correction whose record cannot be written changes nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_git_history import commit, git, repo  # noqa: F401  (the fixture)
from test_lifecycle import DECISIONS, DISAGREE, add_reviewer, ok

from conftest import copy_bundled

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CYBENCH = ["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D", "--by", "ada"]
REBENCH = ["correct", "--cell", "re-bench/open_work", "--code", "P", "--reason", "Sec. 4", "--by", "bo"]


def released(root: Path, cli) -> Path:
    add_reviewer(root, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", root, "--cell", cell, "--code", code, "--reason", "meeting", "--by", "c"))
    ok(cli("freeze", "--workspace", root, "--label", "v1", "--bootstrap", "0", "--by", "c"))
    return root


def truncate_to_one(root: Path, cli) -> None:
    """Two corrections after the release (nothing rendered, so only git or the record saw them),
    then the ledger rolled back by hand to the first."""
    ok(cli(*CYBENCH, "--workspace", root))
    one = (root / "corrections.yaml").read_bytes()
    ok(cli(*REBENCH, "--workspace", root))
    (root / "corrections.yaml").write_bytes(one)


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "Test",
                       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1"}.items():
        monkeypatch.setenv(key, value)


def test_a_parent_repository_that_ignores_the_workspace_does_not_hide_a_truncated_ledger(
        tmp_path: Path, cli, git_env: None) -> None:
    home = tmp_path / "home"
    home.mkdir()
    git(home, "init", "-q", "-b", "main")
    (home / ".gitignore").write_text("review/\n")  # a dotfiles repository that ignores the workspace
    (home / ".bashrc").write_text("# dotfiles\n")
    commit(home, "dotfiles")
    root = released(copy_bundled(home / "review"), cli)
    truncate_to_one(root, cli)
    result = cli("validate", "--workspace", root)
    assert result.exit_code == 1, result.output
    assert "lost 1 entry that this workspace recorded when it last wrote the ledger (#2 re-bench/open_work " \
           "NR -> P by bo" in result.stderr, result.stderr
    assert cli("render", "--workspace", root).exit_code == 1


def test_a_copy_without_its_git_history_compares_with_the_state_record(repo: Path, cli, tmp_path: Path) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    ok(cli(*REBENCH, "--workspace", repo))
    commit(repo, "two corrections")  # git is the record here ...
    assert cli("validate", "--workspace", repo).exit_code == 0
    copy = tmp_path / "unzipped"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    text = (copy / "corrections.yaml").read_text()
    # ... and in a copy without .git (a zip), the state folder's record is what is left.
    second = text.index("  - release: v1\n    cell: re-bench")
    head = text[:second].replace("entries: 2", "entries: 1")
    first_hash = [line for line in text[:second].splitlines() if line.strip().startswith("hash:")][-1].split()[-1]
    last_hash = [line for line in text.splitlines() if line.strip().startswith("hash:")][-1].split()[-1]
    (copy / "corrections.yaml").write_text(head.replace(last_hash, first_hash, 1))
    result = cli("validate", "--workspace", copy)
    assert result.exit_code == 1, result.output
    assert "lost 1 entry that this workspace recorded" in result.stderr and "#2 re-bench/open_work" in result.stderr


def test_the_state_folder_keeps_itself_out_of_git(repo: Path, cli) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    assert (repo / ".protocoder" / "ledger-head.json").is_file()
    commit(repo, "correction")  # git add -A in a repository whose ignore rules do not name .protocoder
    tracked = git(repo, "ls-files").stdout.splitlines()
    assert "corrections.yaml" in tracked and not [name for name in tracked if "ledger-head" in name]


def test_a_branch_that_never_had_the_ledger_is_not_told_it_lost_entries(repo: Path, cli) -> None:  # noqa: F811
    git(repo, "branch", "before")  # from the release, before any correction
    ok(cli(*CYBENCH, "--workspace", repo))
    commit(repo, "correction")
    git(repo, "checkout", "-q", "before")
    assert not (repo / "corrections.yaml").exists()
    result = cli("validate", "--workspace", repo)
    assert result.exit_code == 0, result.stderr  # the record's entry is on main, not lost here
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "corrections.yaml")
    commit(repo, "dropped the ledger")  # no longer tracked: the history still holds the entry
    result = cli("validate", "--workspace", repo)
    assert result.exit_code == 1 and "that the git history holds" in result.stderr, result.stderr


# --------------------------------------------------------------------------- 30.7: all or nothing


@pytest.mark.parametrize("blocker", ["folder", "immutable"])
def test_a_record_that_cannot_be_written_leaves_the_ledger_unchanged(tmp_path: Path, cli, blocker: str) -> None:
    root = released(copy_bundled(tmp_path / "review"), cli)
    ok(cli(*CYBENCH, "--workspace", root))
    before = (root / "corrections.yaml").read_bytes()
    state = root / ".protocoder"
    if blocker == "folder":
        (state / "ledger-head.json").unlink()
        (state / "ledger-head.json").mkdir()
    elif subprocess.run(["chattr", "+i", str(state)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        result = cli(*REBENCH, "--workspace", root)
    finally:
        if blocker == "immutable":
            subprocess.run(["chattr", "-i", str(state)], check=True)
    assert result.exit_code != 0
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output, result.stderr
    assert (root / "corrections.yaml").read_bytes() == before
    if blocker == "folder":
        os.rmdir(state / "ledger-head.json")
    retry = cli(*REBENCH, "--workspace", root)  # the retry records the correction, not "nothing to correct"
    assert retry.exit_code == 0, retry.output


def test_an_adjudication_of_a_released_cell_whose_record_cannot_be_written_changes_nothing(tmp_path: Path,
                                                                                          cli) -> None:
    """The adjudication also appends to consensus.yaml: refused before that, not after."""
    root = released(copy_bundled(tmp_path / "review"), cli)
    alice = root / "protocols/webarena/codes/alice.yaml"
    alice.write_text(alice.read_text(encoding="utf-8").replace("code: P", "code: E", 1), encoding="utf-8")
    before = {path: path.read_bytes() for path in (root / "protocols/webarena/consensus.yaml",)}
    record = root / ".protocoder" / "ledger-head.json"
    record.unlink(missing_ok=True)
    record.mkdir(parents=True)
    result = cli("adjudicate", "--workspace", root, "--cell", "webarena/open_work", "--code", "E", "--reason",
                 "settled again", "--by", "dana")
    assert result.exit_code != 0 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert ".protocoder/ledger-head.json: not a regular file" in result.stderr
    assert {path: path.read_bytes() for path in before} == before
    assert not (root / "corrections.yaml").exists() and not (root / ".protocoder" / "pending.json").exists()
