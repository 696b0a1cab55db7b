"""Issue 34: the ledger's git check (every committed corrections.yaml read through git) runs
again only when HEAD or the ledger changed; in between, a command runs
``git ls-files`` (is the ledger tracked?) and one ``git rev-parse``.

Real git, with a ``git`` first on PATH that logs each call and runs the real one; the
answers with and without the cache are the same, lost entries included.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from test_git_history import commit, git, repo  # noqa: F401  (the fixture)
from test_lifecycle import ok

from protocoder.lifecycle.gitcache import CACHE_DIR, CACHE_FILE

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CYBENCH = ["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D", "--by", "ada"]
REBENCH = ["correct", "--cell", "re-bench/open_work", "--code", "P", "--reason", "Sec. 4", "--by", "bo"]


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every git command protocoder runs (the real git does the work)."""
    shim, log = tmp_path / "shim", tmp_path / "git.log"
    shim.mkdir()
    real = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


def calls_of(cli, log: Path, *command: str) -> list[str]:
    """The git commands ``protocoder COMMAND`` ran (its exit status is returned first)."""
    log.write_text("", encoding="utf-8")
    result = cli(*command)
    return [f"exit {result.exit_code}", *log.read_text(encoding="utf-8").splitlines()]


def test_the_check_runs_once_per_change(repo: Path, cli, git_calls: Path) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    commit(repo, "correct cybench")
    first = calls_of(cli, git_calls, "validate", "--workspace", repo)
    assert first[0] == "exit 0" and any(c.startswith("rev-list") for c in first), first
    assert (repo / ".protocoder" / CACHE_DIR / CACHE_FILE).is_file()
    assert git(repo, "status", "--porcelain", "--ignored=no").stdout == "", "git never sees the cache"
    again = calls_of(cli, git_calls, "validate", "--workspace", repo)
    # Two processes: does git track the ledger (ledgerwatch), and the cache's key.
    assert again == ["exit 0", "ls-files --full-name -- corrections.yaml",
                     "rev-parse --show-prefix --show-toplevel HEAD"], "whether git tracks it, and the key"
    # a new correction changes the ledger; a commit changes HEAD: each runs the check again
    ok(cli(*REBENCH, "--workspace", repo))
    assert any(c.startswith("rev-list") for c in calls_of(cli, git_calls, "validate", "--workspace", repo))
    commit(repo, "correct re-bench")
    assert any(c.startswith("rev-list") for c in calls_of(cli, git_calls, "status", "--workspace", repo))
    assert len(calls_of(cli, git_calls, "status", "--workspace", repo)) == 3


def test_a_rollback_is_reported_from_the_cache_too(repo: Path, cli, git_calls: Path) -> None:  # noqa: F811
    ok(cli(*CYBENCH, "--workspace", repo))
    commit(repo, "one")
    ok(cli(*REBENCH, "--workspace", repo))
    commit(repo, "two")
    assert calls_of(cli, git_calls, "validate", "--workspace", repo)[0] == "exit 0"
    git(repo, "checkout", "HEAD~1", "--", "corrections.yaml")  # HEAD unchanged, the ledger older
    fresh = cli("validate", "--workspace", repo)
    cached = cli("validate", "--workspace", repo)
    assert fresh.exit_code == cached.exit_code == 1
    assert "re-bench/open_work NR -> P by bo" in fresh.stderr and "that the git history holds" in fresh.stderr
    assert cached.stderr == fresh.stderr
    assert len(calls_of(cli, git_calls, "validate", "--workspace", repo)) == 3, "answered from the cache"


def test_a_cache_from_elsewhere_is_not_believed(repo: Path, cli, git_calls: Path) -> None:  # noqa: F811
    """A cache whose key does not match (another HEAD), or that is not what protocoder writes, is
    ignored and replaced: lost entries are reported all the same."""
    ok(cli(*CYBENCH, "--workspace", repo))
    commit(repo, "one")
    ok(cli(*REBENCH, "--workspace", repo))
    commit(repo, "two")
    git(repo, "checkout", "HEAD~1", "--", "corrections.yaml")
    cache = repo / ".protocoder" / CACHE_DIR / CACHE_FILE
    cache.parent.mkdir(parents=True, exist_ok=True)
    for planted in ({"format": 1, "key": "0" * 64, "problems": []}, {"format": 1, "key": None}, "[", ""):
        cache.write_text(planted if isinstance(planted, str) else json.dumps(planted), encoding="utf-8")
        result = cli("validate", "--workspace", repo)
        assert result.exit_code == 1 and "that the git history holds" in result.stderr, planted
    assert json.loads(cache.read_text(encoding="utf-8"))["problems"], "replaced by the real answer"


def test_no_cache_where_it_cannot_be_kept(repo: Path, cli, git_calls: Path, tmp_path: Path) -> None:  # noqa: F811
    """A .protocoder that is a link is never written through; a read-only one takes no cache;
    both still validate, running the check each time."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.rmtree(repo / ".protocoder", ignore_errors=True)
    (repo / ".protocoder").symlink_to(outside, target_is_directory=True)
    cli("validate", "--workspace", repo)
    assert list(outside.iterdir()) == []
    (repo / ".protocoder").unlink()
    (repo / ".protocoder").mkdir()
    (repo / ".protocoder").chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(repo / ".protocoder", os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        for _ in range(2):
            calls = calls_of(cli, git_calls, "validate", "--workspace", repo)
            assert calls[0] == "exit 0" and any(c.startswith("rev-list") for c in calls)
    finally:
        (repo / ".protocoder").chmod(stat.S_IRWXU)


def test_outside_any_repository_no_git_process_runs(bundled: Path, cli, git_calls: Path) -> None:
    """A review that is not in git pays for no git process; put it in a repository (git init above it, or a
    worktree's .git file) and the ledger's check asks git again."""
    assert calls_of(cli, git_calls, "validate", "--workspace", bundled) == ["exit 0"]
    assert calls_of(cli, git_calls, "render", "--workspace", bundled, "--bootstrap", "0") == ["exit 0"]
    (bundled / ".git").write_text("gitdir: /nowhere\n", encoding="utf-8")  # a worktree's link: git is asked
    assert "ls-files --full-name -- corrections.yaml" in calls_of(cli, git_calls, "validate", "--workspace", bundled)
    (bundled / ".git").unlink()
    git(bundled.parent, "init", "-q")
    assert "ls-files --full-name -- corrections.yaml" in calls_of(cli, git_calls, "validate", "--workspace", bundled)
