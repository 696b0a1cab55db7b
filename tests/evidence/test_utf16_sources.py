"""A document saved as UTF-16 (Windows PowerShell 5's ``>``, Notepad's "Unicode") is read as text.

Read as Windows-1252 before, every other character was a NUL: the text was ``ÿþ# T i t l e`` with its NULs
cleaned away, no heading, no quote could be located. The real README here is tests/data/real-docs-heldout10's
agentbenchkit (unmodified, CRLF, Chinese; see its MANIFEST.md), saved as UTF-16 the way Windows tools save it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .docs import cli_workspace

README = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout10" / "agentbenchkit" / "README.md"
HTML = ("<html><head><title>Sandbox runs</title></head><body><h1>Runs</h1>"
        "<p>Each run starts a fresh container.</p></body></html>")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_readme_is_pinned_quoted_and_searched_as_its_utf8_original(tmp_path: Path, encoding: str) -> None:
    text = README.read_bytes().decode("utf-8")
    mark = b"\xff\xfe" if encoding == "utf-16-le" else b"\xfe\xff"
    saved = tmp_path / "README.md"
    saved.write_bytes(mark + text.encode(encoding))
    workspace, _cli = cli_workspace(tmp_path, "abk", "AgentBenchKit")
    added = _cli("source", "add", "-w", workspace, "abk", saved, check=False)
    assert added.returncode == 0, added.stderr
    assert "Pinned source agentbenchkit for abk: AgentBenchKit" in added.stdout  # its heading, not "ÿþ# …"
    quoted = _cli("quote", "add", "-w", workspace, "--cell", "abk/separate_evidence", "--reviewer", "ana",
                  "--source", "agentbenchkit", "集成RAY 并行代理并收集答案", check=False)
    assert quoted.returncode == 0, quoted.stderr
    found = _cli("find", "-w", workspace, "--cell", "abk/separate_evidence", "--query", "并行", "--format", "json",
                 check=False)
    assert found.returncode == 0, found.stderr
    assert "集成RAY 并行代理并收集答案" in json.loads(found.stdout)[0]["text"]
    assert _cli("validate", "-w", workspace, check=False).returncode == 0


def test_a_utf16_html_page_is_read(tmp_path: Path) -> None:
    from protocoder.evidence.extract import extract

    extracted = extract(b"\xff\xfe" + HTML.encode("utf-16-le"), "text/html")
    assert extracted.title == "Sandbox runs"
    assert "Each run starts a fresh container." in extracted.text
