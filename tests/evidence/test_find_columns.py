"""``protocoder find``'s table fits 80 terminal columns with Chinese text too.

textwrap counts characters, and a Chinese character takes two columns: the candidates of agentbenchkit's README
(tests/data/real-docs-heldout10, unmodified) printed lines of up to 130 columns in an 80-column table.
"""

from __future__ import annotations

import textwrap
import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from protocoder.cli.finding import TABLE_WIDTH, wrap_columns

from .docs import cli_workspace

README = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout10" / "agentbenchkit" / "README.md"


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


WORDS = st.text(alphabet=st.sampled_from("ab并行代理の한😀"), min_size=1, max_size=30)


@given(st.lists(WORDS, max_size=40), st.integers(min_value=4, max_value=80), st.integers(min_value=1, max_value=6))
def test_every_line_fits_and_nothing_is_lost_unless_cut(words: list[str], width: int, max_lines: int) -> None:
    lines = wrap_columns(" ".join(words), width, max_lines)
    assert len(lines) <= max_lines
    assert all(columns(line) <= width for line in lines), lines
    if not lines or not lines[-1].endswith(" …"):
        assert "".join("".join(lines).split()) == "".join(words)


@given(st.lists(st.text(alphabet="abcdefg", min_size=1, max_size=12), max_size=40),
       st.integers(min_value=12, max_value=80))
def test_latin_text_is_filled_as_textwrap_fills_it(words: list[str], width: int) -> None:
    text = " ".join(words)
    assert wrap_columns(text, width, 1000) == textwrap.wrap(text, width, break_on_hyphens=False)


def test_find_on_a_chinese_readme_fits_eighty_columns(tmp_path: Path) -> None:
    workspace, run = cli_workspace(tmp_path, "abk", "AgentBenchKit", README)
    done = run("find", "-w", workspace, "--cell", "abk/separate_evidence", "--query", "并行", "--limit", "20")
    lines = done.stdout.splitlines()
    assert any("并行代理" in line for line in lines)  # the Chinese list is shown, over several lines
    assert max(columns(line) for line in lines) <= TABLE_WIDTH, max(lines, key=columns)
