"""Fixtures for the coding app's tests: a copy of the bundled workspace in tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from protocoder.model import Rubric, Sheet
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

REVIEWER = "ada"


@pytest.fixture
def workspace(bundled: Path) -> Path:
    """A copy of the bundled review in tmp_path (settings, rubric, protocols with casheekar's
    codes, references.bib); ``bundled`` comes from tests/conftest.py."""
    return bundled


@pytest.fixture
def paths(workspace: Path) -> Paths:
    return Paths(workspace)


@pytest.fixture
def store(paths: Paths) -> Store:
    return Store(paths)


@pytest.fixture
def rubric(workspace: Path) -> Rubric:
    review = load_review(workspace)
    assert review.rubric is not None
    return review.rubric


@pytest.fixture
def sheet_of(store: Store, rubric: Rubric) -> Callable[..., Sheet]:
    """Read a reviewer's sheet back from disk: ``sheet_of("webarena")``."""
    def read(protocol_id: str, reviewer: str = REVIEWER) -> Sheet:
        return store.read_sheet(protocol_id, reviewer, rubric)[0]
    return read


@pytest.fixture
def tree_bytes(workspace: Path) -> Callable[[], dict[str, bytes]]:
    """Snapshot every file of the workspace as bytes (to prove nothing was written)."""
    def snap() -> dict[str, bytes]:
        return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*"))
                if p.is_file() and ".protocoder" not in p.parts}
    return snap


@pytest.fixture(autouse=True)
def _no_browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Never open a real browser from a test."""
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda *a, **k: True)
    yield
