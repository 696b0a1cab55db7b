"""Issue 30.1 (all but the find cache): protocoder's own folders delete and write only what it made.

A clone can bring ``.protocoder``, ``output`` or ``releases`` as a symbolic link into a tracked
folder such as ``protocols/webarena/codes/``. Every command that would write or sweep there
refuses in one line naming the link and the fix, before anything is created, and nothing in
the link's target changes. The ignore rules written by ``init`` cover a link named
``.protocoder`` (a pattern without a trailing slash).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_lifecycle import DECISIONS, DISAGREE, add_reviewer, ok

from conftest import copy_bundled

TARGET = "protocols/webarena/codes"


def digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (names and bytes), links not followed."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def released_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from protocoder.cli import main

    def cli(*args):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    root = copy_bundled(tmp_path_factory.mktemp("template") / "review")
    add_reviewer(root, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", root, "--cell", cell, "--code", code, "--reason", "meeting",
               "--by", "c"))
    ok(cli("freeze", "--workspace", root, "--label", "v1", "--bootstrap", "0", "--by", "c"))
    return root


@pytest.fixture
def released(released_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "review"
    shutil.copytree(released_template, root, symlinks=True)
    shutil.rmtree(root / ".protocoder", ignore_errors=True)
    return root


def plant(root: Path, name: str) -> Path:
    """``name`` (a folder protocoder keeps) made a relative link into protocols/webarena/codes."""
    link = root / name
    shutil.rmtree(link, ignore_errors=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(root / TARGET, link.parent), link)
    return link


def assert_refused(result, shown: str) -> None:
    assert result.exit_code != 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert f"{shown} is a symbolic link (to " in lines[0] and f"remove the link (rm {shown})" in lines[0], lines[0]


STATE_COMMANDS = {
    "correct": ["correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D", "--by", "ada"],
    "adjudicate a released cell": ["adjudicate", "--cell", "webarena/open_work", "--code", "P", "--reason", "again",
                                   "--by", "c"],
    "cell set": ["cell", "set", "--cell", "webarena/reset_retention", "--reviewer", "casheekar", "--basis", "new"],
    "freeze": ["freeze", "--label", "v2", "--bootstrap", "0", "--by", "c"],
    "withdraw": ["withdraw", "webarena", "--reason", "gone", "--by", "c"],
}


@pytest.mark.parametrize("command", list(STATE_COMMANDS))
def test_a_state_folder_linked_into_protocols_is_refused(released: Path, cli, command: str) -> None:
    plant(released, ".protocoder")
    before = digest(released / TARGET)
    ledger = (released / "corrections.yaml").read_bytes() if (released / "corrections.yaml").exists() else None
    assert_refused(cli(*STATE_COMMANDS[command], "--workspace", released), ".protocoder")
    assert digest(released / TARGET) == before, "nothing written or deleted through the link"
    assert ((released / "corrections.yaml").read_bytes() if (released / "corrections.yaml").exists() else None) \
        == ledger
    assert not (released / "releases" / "v2").exists()


def test_import_through_a_linked_state_folder_is_refused(released: Path, cli, tmp_path: Path) -> None:
    plant(released, ".protocoder")
    csv_file = tmp_path / "cells.csv"
    csv_file.write_text("protocol,field,reviewer,code,source,basis\nwebarena,open_work,bo,NR,S,B\n")
    before = digest(released / TARGET)
    assert_refused(cli("import", "--workspace", released, csv_file, "--reason", "bo read App. D again"), ".protocoder")
    assert digest(released / TARGET) == before


def test_kept_answers_and_team_secrets_are_never_written_through_the_link(released: Path) -> None:
    from protocoder.errors import ProtocoderError
    from protocoder.identity import remember_person
    from protocoder.team.secrets import issue_signin

    plant(released, ".protocoder")
    (released / TARGET / ".commit.json.debris.tmp").write_text("not protocoder's")  # looks like its temporary
    before = digest(released / TARGET)
    with pytest.raises(ProtocoderError, match="is a symbolic link"):
        remember_person(released / ".protocoder", "ada")
    with pytest.raises(ProtocoderError, match="is a symbolic link"):
        issue_signin(released, "ada")
    from protocoder.storage.workspace import load_review

    load_review(released)  # a reader sweeps a killed writer's temporaries: never through the link
    assert digest(released / TARGET) == before


def test_output_linked_into_protocols_is_refused(released: Path, cli) -> None:
    plant(released, "output")
    before = digest(released / TARGET)
    assert_refused(cli("render", "--workspace", released, "--format", "md", "--bootstrap", "0"), "output")
    assert_refused(cli("render", "--workspace", released, "--release", "v1"), "output")
    assert digest(released / TARGET) == before


def test_releases_linked_into_protocols_is_refused(released: Path, cli) -> None:
    shutil.move(released / "releases", released / "kept-releases")
    plant(released, "releases")
    before = digest(released / TARGET)
    assert_refused(cli("freeze", "--workspace", released, "--label", "v2", "--bootstrap", "0", "--by", "c"),
                   "releases")
    assert digest(released / TARGET) == before


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_init_ignores_a_link_named_protocoder(tmp_path: Path, cli) -> None:
    root = tmp_path / "fresh"
    ok(cli("init", root))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    os.symlink("protocols", root / ".protocoder")  # a link, not a folder: ".protocoder/" would not match it
    added = subprocess.run(["git", "add", "-A", "--dry-run"], cwd=root, capture_output=True, text=True, check=True)
    assert ".protocoder" not in added.stdout, added.stdout
    assert subprocess.run(["git", "check-ignore", "-q", ".protocoder"], cwd=root).returncode == 0


@pytest.mark.parametrize("name", [".protocoder", ".protocoder/find", "output", "releases"])
def test_validate_names_a_link_where_protocoder_keeps_its_own_folder(released: Path, cli, name: str) -> None:
    # The commands that write there refuse the link; validate said "ok" (the link stays inside the
    # workspace, so it was not one that leads out). It now reports the same line, with the fix.
    if name == "releases":
        shutil.move(released / "releases", released / "kept-releases")
    if name.startswith(".protocoder/"):
        (released / ".protocoder").mkdir(exist_ok=True)
    plant(released, name)
    before = digest(released / TARGET)
    result = cli("validate", "--workspace", released)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if f"{name} is a symbolic link (to " in line]
    assert len(lines) == 1 and f"remove the link (rm {name})" in lines[0], result.stderr
    if name == "output":
        refused = cli("render", "--workspace", released, "--format", "md", "--bootstrap", "0")
        assert refused.stderr.strip().splitlines()[0].split("error: ", 1)[-1] in lines[0]
    assert digest(released / TARGET) == before
