"""The vendored real documentation (tests/data/real-docs) is byte for byte what its MANIFEST.md names."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

REAL_DOCS = Path(__file__).parent / "data" / "real-docs"


def manifest_rows() -> list[tuple[str, str]]:
    text = (REAL_DOCS / "MANIFEST.md").read_text(encoding="utf-8")
    return re.findall(r"\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|", text)


def test_manifest_lists_fourteen_documents() -> None:
    assert len(manifest_rows()) == 14


def test_every_document_matches_its_sha256() -> None:
    for name, digest in manifest_rows():
        data = (REAL_DOCS / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
