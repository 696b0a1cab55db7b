"""The vendored real documentation is byte for byte what its MANIFEST.md names.

Fifteen sets: tests/data/real-docs (14 documents, the dev set of `benchmarks/find_real.py`),
tests/data/real-docs-heldout (7 documents, the fresh held-out set of round 3),
tests/data/real-docs-heldout3 (9 documents of nine other packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout4 (9 documents of nine further packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout5 (10 documents of nine more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout6 (10 documents of eight more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout7 (9 documents of eight more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout8 (8 documents of eight more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout9 (8 documents of eight more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout10 (9 documents of nine more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout11 (9 documents of nine more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout12 (9 documents of nine more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout13 (10 documents of nine more packages, keyed before any ranking ran on them),
tests/data/real-docs-heldout14 (9 documents of eight more packages, keyed before any ranking ran on them) and
tests/data/real-docs-heldout15 (9 documents of nine more packages, keyed before any ranking ran on them).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
SETS = {"real-docs": 14, "real-docs-heldout": 7, "real-docs-heldout3": 9, "real-docs-heldout4": 9,
        "real-docs-heldout5": 10, "real-docs-heldout6": 10, "real-docs-heldout7": 9, "real-docs-heldout8": 8,
        "real-docs-heldout9": 8, "real-docs-heldout10": 9, "real-docs-heldout11": 9,
        "real-docs-heldout12": 9, "real-docs-heldout13": 10,
        "real-docs-heldout14": 9, "real-docs-heldout15": 9}


def manifest_rows(folder: Path) -> list[tuple[str, str]]:
    text = (folder / "MANIFEST.md").read_text(encoding="utf-8")
    return re.findall(r"\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|", text)


def manifest_packages(folder: Path) -> set[str]:
    """The *package* column of the MANIFEST's table (its first cell, on every row that lists a sha256)."""
    text = (folder / "MANIFEST.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| ([^|`]+?) \|.*\| `[0-9a-f]{64}` \|$", text, flags=re.MULTILINE))


@pytest.mark.parametrize(("name", "count"), SETS.items())
def test_manifest_lists_its_documents(name: str, count: int) -> None:
    assert len(manifest_rows(DATA / name)) == count


@pytest.mark.parametrize("name", SETS)
def test_every_document_matches_its_sha256(name: str) -> None:
    folder = DATA / name
    for path, digest in manifest_rows(folder):
        data = (folder / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, path


@pytest.mark.parametrize("name", SETS)
def test_every_file_in_the_folder_is_listed(name: str) -> None:
    folder = DATA / name
    listed = {path for path, _ in manifest_rows(folder)} | {"MANIFEST.md", "fetch.sh"}
    present = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert present == listed


def test_no_package_is_in_two_sets() -> None:
    """A set measured once after tuning on the others must share no package with them: the MANIFESTs' package
    columns (not the folder names, which could be renamed) are pairwise disjoint."""
    packages = {name: manifest_packages(DATA / name) for name in SETS}
    assert all(packages.values()), packages
    names = list(packages)
    shared = [(a, b, packages[a] & packages[b]) for i, a in enumerate(names) for b in names[i + 1:]
              if packages[a] & packages[b]]
    assert shared == []
