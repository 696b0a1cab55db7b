"""Shared fixtures: a private copy of the bundled review for every test that writes."""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

REPO = Path(__file__).resolve().parent.parent
WORKSPACE_PARTS = ("protocoder.yaml", "rubric", "protocols", "references.bib")


def copy_bundled(target: Path) -> Path:
    """Copy the bundled review (the repository root's workspace files) into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for name in WORKSPACE_PARTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        else:
            shutil.copy2(source, target / name)
    return target


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """A writable copy of the bundled ten-protocol review."""
    return copy_bundled(tmp_path / "review")


def tree_digest(root: Path) -> dict[str, str]:
    """Hash of every file under ``root`` (to prove a command wrote nothing)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".protocoder" not in p.parts}


@pytest.fixture(autouse=True)
def _collector_back_on() -> Iterator[None]:
    """The batch commands turn the cyclic garbage collector off for the rest of their process;
    run in-process, the test session gets it back after each test."""
    yield
    gc.enable()


@pytest.fixture
def cli() -> Callable[..., Result]:
    """Run the protocoder CLI in-process; returns click's Result (stdout and stderr apart)."""
    from protocoder.cli import main

    def run(*args: str | os.PathLike[str], stdin: str | None = None) -> Result:
        return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)

    return run


ALICE_DISAGREES = [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                   ("tau-bench,separate_evidence,alice,E", "tau-bench,separate_evidence,alice,P"),
                   ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")]
"""The three cells on which the second reviewer of :func:`add_alice` disagrees with casheekar."""


def add_alice(root: Path, cli: Callable[..., Result], scratch: Path) -> Path:
    """Give the bundled review at ``root`` a second reviewer, alice: casheekar's export, imported
    under her name, disagreeing on :data:`ALICE_DISAGREES` (the CSV is written in ``scratch``)."""
    exported = cli("export", "--workspace", root).stdout.replace(",casheekar,", ",alice,")
    for old, new in ALICE_DISAGREES:
        assert old in exported
        exported = exported.replace(old, new)
    (scratch / "alice.csv").write_text(exported, encoding="utf-8")
    result = cli("import", "--workspace", root, scratch / "alice.csv")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def two(bundled: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled review plus alice, who disagrees with casheekar on three cells (adjudicator: carol)."""
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    return add_alice(bundled, cli, bundled)
