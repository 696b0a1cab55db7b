"""``source add PROTOCOL --repo REPO --rev REV --include GLOB``: files of real git repositories
made in tmp_path (commits, branches, a binary file), pinned at a commit; ``source check`` and
``source update`` of them after the branch moves; and the refusals (unknown revision, a glob
that matches nothing, no such folder) that write nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from test_schemas import errors_of

from protocoder.evidence.repository import glob_pattern, permalink, web_base

from conftest import tree_digest

README = "# Harness\n\nEach task runs in a fresh container that is removed after grading.\n"
RUN_PY = """import subprocess


def run(task):
    # one container per attempt, removed afterwards
    subprocess.run(["docker", "run", "--rm", task.image], check=True)
    env.reset()
    return task
"""
CONFIG = "limits:\n  wall_clock_minutes: 30\n  retries: 0\n"


def git(folder: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True,
                            env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                                 "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(folder), "PATH": "/usr/bin:/bin"})
    return result.stdout.strip()


@pytest.fixture
def harness(tmp_path: Path) -> Path:
    """A repository: a README, docs, the harness's code and configuration, a logo (binary)."""
    repo = tmp_path / "harness"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    files = {"README.md": README, "docs/usage.md": "# Usage\n\nRun `harness run`.\n",
             "docs/deep/limits.md": "# Limits\n\nThirty minutes per task.\n", "harness/run.py": RUN_PY,
             "harness/config.yaml": CONFIG, "setup.cfg": "[metadata]\nname = harness\n"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    (repo / "harness" / "logo.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(64))
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "first")
    return repo


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def sources_of(root: Path, protocol: str = "swe-bench") -> list[dict]:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load((root / "protocols" / protocol / "protocol.yaml").read_text(encoding="utf-8"))
    return [s for s in data.get("sources") or [] if s.get("commit")]


def test_matching_files_are_pinned_at_the_commit(bundled: Path, cli: Callable[..., Result], harness: Path) -> None:
    commit = git(harness, "rev-parse", "HEAD")
    # An uncommitted edit is not what gets pinned: the commit is.
    (harness / "README.md").write_text("# Edited, not committed\n", encoding="utf-8")
    out = ok(cli("source", "add", "swe-bench", "--repo", harness, "--rev", "main", "--include", "README.md",
                 "--include", "docs/**/*.md", "--include", "*.py", "--include", "harness/*.yaml",
                 "--workspace", bundled))
    assert f"Pinned 5 file(s) of {harness.resolve()} at {commit} for swe-bench:" in out.stdout
    assert "skipped harness/logo.py: binary" in out.stdout
    pinned = {s["path"]: s for s in sources_of(bundled)}
    assert sorted(pinned) == ["README.md", "docs/deep/limits.md", "docs/usage.md", "harness/config.yaml",
                              "harness/run.py"]
    for path, source in pinned.items():
        assert (source["repository"], source["rev"], source["commit"]) == (str(harness.resolve()), "main", commit)
        assert "permalink" not in source  # a local repository without a GitHub or GitLab origin has none
        assert source["title"] == path
        blob = subprocess.run(["git", "-C", str(harness), "show", f"{commit}:{path}"], capture_output=True,
                              check=True).stdout
        suffix = {"text/markdown": "md", "text/plain": "txt"}[source["media_type"]]
        assert (bundled / "sources" / f"{source['sha256']}.{suffix}").read_bytes() == blob
    assert pinned["harness/run.py"]["id"] == "harness-run-py"
    assert pinned["harness/run.py"]["media_type"] == "text/plain"
    assert pinned["README.md"]["media_type"] == "text/markdown"
    ok(cli("validate", "--workspace", bundled))


def test_a_github_origin_gives_each_file_its_permalink(bundled: Path, cli: Callable[..., Result],
                                                       harness: Path) -> None:
    git(harness, "remote", "add", "origin", "git@github.com:octo/harness.git")
    commit = git(harness, "rev-parse", "HEAD")
    ok(cli("source", "add", "swe-bench", "--repo", harness, "--include", "harness/run.py", "--workspace", bundled))
    (source,) = sources_of(bundled)
    assert source["repository"] == "git@github.com:octo/harness.git"
    assert source["rev"] == "HEAD"
    assert source["permalink"] == f"https://github.com/octo/harness/blob/{commit}/harness/run.py"
    assert source["url"] == source["permalink"]


def test_a_repository_by_url_is_cloned_and_read_at_a_branch(bundled: Path, cli: Callable[..., Result],
                                                            harness: Path) -> None:
    git(harness, "checkout", "--quiet", "-b", "v2")
    (harness / "README.md").write_text(README + "\nRetries are not allowed.\n", encoding="utf-8")
    git(harness, "commit", "--quiet", "-am", "v2")
    v2 = git(harness, "rev-parse", "HEAD")
    git(harness, "checkout", "--quiet", "main")
    # Serve partial clones, as GitHub and GitLab do: the clone is made without file contents
    # and only the matching files' contents are fetched.
    git(harness, "config", "uploadpack.allowFilter", "true")
    git(harness, "config", "uploadpack.allowAnySHA1InWant", "true")
    url = f"file://{harness}"
    out = ok(cli("source", "add", "swe-bench", "--repo", url, "--rev", "v2", "--include", "README.md",
                 "--workspace", bundled))
    assert f"at {v2}" in out.stdout
    (source,) = sources_of(bundled)
    assert (source["repository"], source["rev"], source["commit"], source["path"]) == (url, "v2", v2, "README.md")
    snapshot = bundled / "sources" / f"{source['sha256']}.md"
    assert snapshot.read_text(encoding="utf-8") == README + "\nRetries are not allowed.\n"


@pytest.mark.parametrize(("args", "why"), [
    (["--rev", "no-such-branch", "--include", "README.md"], "unknown revision 'no-such-branch'"),
    (["--include", "*.rs"], "matches *.rs"),
    (["--include", "harness/logo.py"], "nothing to pin: harness/logo.py: binary"),
])
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(
        bundled: Path, cli: Callable[..., Result], harness: Path, args: list[str], why: str) -> None:
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", "--repo", harness, *args, "--workspace", bundled)
    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1 and why in result.stderr and str(harness) in result.stderr, result.stderr
    assert tree_digest(bundled) == before


def test_a_folder_that_is_not_there_or_not_a_repository_is_refused(bundled: Path, cli: Callable[..., Result],
                                                                   tmp_path: Path) -> None:
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", "--repo", tmp_path / "nowhere", "--include", "*", "--workspace",
                 bundled)
    assert result.exit_code == 1 and "no such folder" in result.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("source", "add", "swe-bench", "--repo", plain, "--include", "*", "--workspace", bundled)
    assert result.exit_code == 1 and "not a git repository" in result.stderr, result.stderr
    result = cli("source", "add", "swe-bench", "--repo", plain, "--workspace", bundled)
    assert result.exit_code == 2 and "--include" in result.stderr
    assert tree_digest(bundled) == before


def test_check_and_update_follow_the_branch(bundled: Path, cli: Callable[..., Result], harness: Path) -> None:
    ok(cli("source", "add", "swe-bench", "--repo", harness, "--rev", "main", "--include", "harness/run.py",
           "--include", "README.md", "--workspace", bundled))
    ok(cli("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source",
           "harness-run-py", 'subprocess.run(["docker", "run", "--rm", task.image], check=True)',
           "--workspace", bundled))
    ok(cli("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source",
           "harness-run-py", "env.reset()", "--workspace", bundled))
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "harness-run-py\tunchanged\tcommit" in out.stdout
    (harness / "harness" / "run.py").write_text(RUN_PY.replace("    env.reset()\n", ""), encoding="utf-8")
    git(harness, "commit", "--quiet", "-am", "no reset")
    new = git(harness, "rev-parse", "HEAD")
    before = tree_digest(bundled)
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert f"harness-run-py\tchanged\tcommit {new[:12]}\t1 of 2 quote(s) still found" in out.stdout
    # The branch moved but README.md did not change: the file is compared, not only the commit.
    assert "readme-md\tunchanged\tcommit" in out.stdout.lower()
    assert tree_digest(bundled) == before
    out = ok(cli("source", "update", "swe-bench", "harness-run-py", "--workspace", bundled))
    assert "Drifted evidence: 1 quote(s)" in out.stdout
    source = next(s for s in sources_of(bundled) if s["path"] == "harness/run.py")
    assert (source["commit"], source["rev"], source["version"]) == (new, "main", f"commit {new[:12]}")


def test_include_patterns() -> None:
    match = [p for p in ("README.md", "docs/a.md", "docs/x/y/b.md", "src/run.py", "run.py", "docs/a.txt")
             if glob_pattern("docs/**/*.md").match(p)]
    assert match == ["docs/a.md", "docs/x/y/b.md"]
    assert [p for p in ("run.py", "src/run.py", "src/a/run.pyc") if glob_pattern("*.py").match(p)] == \
        ["run.py", "src/run.py"]
    assert not glob_pattern("/README.md").match("docs/README.md")
    assert glob_pattern("README.md").match("docs/README.md")


def test_permalinks() -> None:
    commit = "c" * 40
    assert web_base("https://github.com/octo/harness.git") == "https://github.com/octo/harness"
    assert permalink("https://gitlab.com/group/sub/tool", commit, "a b.py") == \
        f"https://gitlab.com/group/sub/tool/-/blob/{commit}/a%20b.py"
    assert permalink("https://example.org/git/tool.git", commit, "a.py") == ""


def test_a_quote_of_code_records_its_lines_and_the_ledger_cites_the_permalink(
        bundled: Path, cli: Callable[..., Result], harness: Path, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    git(harness, "remote", "add", "origin", "https://github.com/octo/harness.git")
    commit = git(harness, "rev-parse", "HEAD")
    ok(cli("source", "add", "swe-bench", "--repo", harness, "--include", "harness/*", "--include", "README.md",
           "--workspace", bundled))
    out = ok(cli("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source",
                 "harness-run-py", 'subprocess.run(["docker", "run", "--rm", task.image], check=True)\n    env.reset()',
                 "--workspace", bundled))
    assert "(lines 6–7)" in out.stdout
    out = ok(cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source",
                 "harness-config-yaml", "wall_clock_minutes: 30", "--workspace", bundled))
    assert "(line 2)" in out.stdout
    ok(cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source",
           "readme-md", "Each task runs in a fresh container", "--workspace", bundled))
    codes = YAML(typ="safe").load((bundled / "protocols" / "swe-bench" / "codes" / "casheekar.yaml").read_text())
    quotes = codes["cells"]["reset_retention"]["quotes"]
    assert quotes[-1]["lines"] == [6, 7]
    open_work = codes["cells"]["open_work"]["quotes"]
    assert open_work[-2]["lines"] == [2, 2]
    assert "lines" not in open_work[-1]  # Markdown is cited by its headings, not by line
    ok(cli("validate", "--workspace", bundled))
    assert errors_of(bundled) == []  # the files still match the schemas an editor checks them with
    out_dir = tmp_path / "out"
    ok(cli("render", "--quotes", "--bootstrap", "0", "--format", "md", "--out", out_dir, "--workspace", bundled))
    ledger = (out_dir / "ledger.md").read_text(encoding="utf-8")
    assert f"harness/run.py, https://github.com/octo/harness/blob/{commit}/harness/run.py#L6-L7" in ledger
    assert f"https://github.com/octo/harness/blob/{commit}/harness/config.yaml#L2\n" in ledger


def test_a_correction_hashes_a_quote_s_lines_only_when_it_has_them() -> None:
    """Correction entries written before quotes had ``lines`` keep their hashes: the key is
    hashed only when set (a quote of prose has none)."""
    from dataclasses import asdict, replace

    from protocoder.lifecycle.corrections import entry_hash, new_entry
    from protocoder.model import Quote

    prose = Quote("paper", "Each run stops after fifty steps.", page="2", start=10, end=43, snapshot="a" * 12)
    entry = new_entry(prev="", release="v1", cell="webarena/open_work", old="P", new="E", reason="r", by="ada",
                      at="2026-12-01T10:00:00Z", quotes=[prose])
    old_style = entry.content() | {"quotes": [{k: v for k, v in asdict(prose).items() if k != "lines"}]}
    assert entry.hash == entry_hash(old_style)
    code = replace(prose, lines=(6, 7))
    with_lines = new_entry(prev="", release="v1", cell="webarena/open_work", old="P", new="E", reason="r", by="ada",
                           at="2026-12-01T10:00:00Z", quotes=[code])
    assert with_lines.hash != entry.hash and with_lines.content()["quotes"][0]["lines"] == [6, 7]


def test_a_file_pinned_at_a_commit_does_not_change(bundled: Path, cli: Callable[..., Result], harness: Path) -> None:
    commit = git(harness, "rev-parse", "HEAD")
    ok(cli("source", "add", "swe-bench", "--repo", harness, "--rev", commit[:10], "--include", "README.md",
           "--workspace", bundled))
    (source,) = sources_of(bundled)
    assert (source["rev"], source["commit"]) == (commit[:10], commit)
    (harness / "README.md").write_text("# Rewritten\n", encoding="utf-8")
    git(harness, "commit", "--quiet", "-am", "rewrite")
    out = ok(cli("source", "check", "--workspace", bundled))
    assert f"swe-bench\treadme-md\tunchanged\tcommit {commit[:12]}" in out.stdout


def test_one_file_of_a_repository_may_be_given_an_id_and_a_title(bundled: Path, cli: Callable[..., Result],
                                                                  harness: Path) -> None:
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", "--repo", harness, "--include", "*.md", "--id", "docs",
                 "--workspace", bundled)
    assert result.exit_code == 1 and "--id and --title name one file, and 3 match" in result.stderr
    assert tree_digest(bundled) == before
    ok(cli("source", "add", "swe-bench", "--repo", harness, "--include", "/README.md", "--id", "readme",
           "--title", "Harness README", "--workspace", bundled))
    (source,) = sources_of(bundled)
    assert (source["id"], source["title"], source["path"]) == ("readme", "Harness README", "README.md")
