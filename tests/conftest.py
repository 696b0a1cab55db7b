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
