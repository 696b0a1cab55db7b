"""Two kinds of real README the tenth set brought: one written on Windows (CRLF line ends) and one in Chinese.

agentbenchkit's README (tests/data/real-docs-heldout10, unmodified; see its MANIFEST.md) is both. Before:
its blank lines ended in ``\\r\\n``, which the raw-paragraph rule did not read as blank, so a paragraph ran on to
the next heading (a sentence, a table and a code block as one passage); and a run of Chinese characters was one
"word", so a reviewer's typed ``并行`` ("parallel") matched nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.search import source_passages, words

from .docs import cli_workspace

DATA = Path(__file__).resolve().parents[1] / "data"
README = DATA / "real-docs-heldout10" / "agentbenchkit" / "README.md"


def _passages(data: bytes) -> list:
    raw = raw_text(data, "text/markdown")
    assert raw is not None
    return source_passages("readme", extract(data, "text/markdown"), raw)


def test_a_crlf_readme_has_the_passages_of_the_same_file_with_lf() -> None:
    data = README.read_bytes()
    assert b"\r\n\r\n" in data  # the files are as published: CRLF
    raw = raw_text(data, "text/markdown")
    assert raw is not None and "\r\n" in raw
    crlf = _passages(data)
    lf = _passages(data.replace(b"\r\n", b"\n"))
    assert [(p.kind, p.text) for p in crlf] == [(p.kind, p.text) for p in lf]
    # and no passage runs over a blank line of the raw file
    for passage in crlf:
        assert passage.raw_start is not None and passage.raw_end is not None
        assert not re.search(r"\n[ \t]*\r?\n", raw[passage.raw_start:passage.raw_end]), passage.text


@pytest.mark.parametrize(("text", "expected"), [
    ("集成RAY 并行代理", ["集成", "ray", "并行", "行代", "代理"]),
    ("並列", ["並列"]),
    ("の", ["の"]),
    ("한국어 문서", ["한국", "국어", "문서"]),
    ("the集成", ["集成"]),  # a stop word stays out when written against CJK text too
    ("Cached results are reused", ["cach", "result", "reus"]),  # English is read as before
])
def test_cjk_text_is_read_as_pairs_of_characters(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_find_with_a_typed_chinese_word_finds_the_chinese_sentence(tmp_path: Path) -> None:
    """At the command line: ``find --query 并行`` on the real Chinese README puts the line that says agents run in
    parallel with Ray first."""
    workspace, run = cli_workspace(tmp_path, "abk", "AgentBenchKit", README)
    done = run("find", "-w", workspace, "--cell", "abk/separate_evidence", "--query", "并行", "--format", "json")
    candidates = json.loads(done.stdout)
    assert candidates and "集成RAY 并行代理并收集答案" in candidates[0]["text"], candidates[:2]
