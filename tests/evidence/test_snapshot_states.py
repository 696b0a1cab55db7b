"""Issue 26: a snapshot replaced by a link, a folder or another file is an error naming it;
"not present here" is only for a snapshot that is genuinely absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocoder.evidence.snapshots import SOURCES_DIR

from .test_workflow import MD_QUOTE, documents, ok, pinned, pinned_once, typeset  # noqa: F401  (fixtures)
from conftest import tree_digest


def rules_snapshot(workspace: Path) -> Path:
    return next(path for path in (workspace / SOURCES_DIR).iterdir() if path.suffix == ".md")


@pytest.mark.parametrize("impostor, named", [
    ("link outside", "is a symbolic link (to {target}, outside the workspace), not the pinned file"),
    ("link inside", "is a symbolic link (to {target}, inside the workspace), not the pinned file"),
    ("folder", "is a folder, not the pinned file"),
    ("fifo", "is not a regular file (a device, pipe or socket)"),
])
def test_a_snapshot_that_is_not_the_pinned_file_is_an_error_naming_it(pinned: Path, tmp_path: Path, cli,  # noqa: F811
                                                                      impostor: str, named: str) -> None:
    snapshot = rules_snapshot(pinned)
    target = ""
    if impostor.startswith("link"):
        copy = (tmp_path / "elsewhere.md") if impostor == "link outside" else (pinned / "copy.md")
        copy.write_bytes(snapshot.read_bytes())  # even the same bytes: a link is not the pinned file
        snapshot.unlink()
        snapshot.symlink_to(copy)
        target = str(copy)
    elif impostor == "folder":
        snapshot.unlink()
        snapshot.mkdir()
    else:
        snapshot.unlink()
        os.mkfifo(snapshot)
    before = tree_digest(pinned / "protocols")
    result = cli("validate", "--workspace", pinned)
    assert result.exit_code == 1, result.output
    shown = f"{SOURCES_DIR}/{snapshot.name}"
    line = next(line for line in result.stderr.splitlines() if shown in line and "snapshot of source" in line)
    assert named.format(target=target) in line and "protocols/swe-bench/protocol.yaml:" in line, line
    assert "not present here" not in result.stderr
    listing = ok(cli("source", "list", "swe-bench", "--workspace", pinned)).stdout
    assert "not the pinned file" in listing and listing.count("not present here") == 0
    refused = cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source", "rules",
                  MD_QUOTE, "--workspace", pinned)
    assert refused.exit_code == 1 and named.format(target=target) in refused.stderr
    assert tree_digest(pinned / "protocols") == before


def test_a_genuinely_absent_snapshot_is_still_only_noted(pinned: Path, cli) -> None:  # noqa: F811
    rules_snapshot(pinned).unlink()
    result = ok(cli("validate", "--workspace", pinned))
    assert any("note: snapshot of source 'rules'" in line and "not present here" in line
               for line in result.stderr.splitlines())
