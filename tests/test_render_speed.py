"""Issue 34: what was made faster in render prints the same bytes.

* :func:`~protocoder.render.latex_text.may_break` decides, without the character walk, that a text
  gets no line-break point: wherever it says so, the walk leaves the text as it is (on arbitrary
  LaTeX made of what the escaper writes, and on every basis of a generated review).
* The rendered tables keep their bytes: ``tests/test_render_bytes.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.render.escape import inline_to_latex, latex_escape
from protocoder.render.latex_text import _with_breaks, break_long_words, may_break

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from generate import generate  # noqa: E402

FRAGMENTS = [
    "a", "word", "reinitialised", "documentation,", "x/y", "-", ".", "#", "_", " ", "  ", "\n", "{", "}", "{}",
    r"\emph{", r"\textbf{", r"\texttt{", r"\_", r"\#", r"\&", r"\%", r"\{", r"\}", "\\ ", "\\",
    r"\href{https://example.org/a b}{", r"\href{https://example.org/docs/0\#s66}{", r"\ensuremath{\tau}",
    r"\ensuremath{ }", r"\ensuremath{\mathrm{a} b}", r"\x{ }", r"\a{b}{c d}", r"\textbackslash{}", r"\newline{}",
    r"\texttt{{[}U+4E2D{]}}", "abcdefghijklmnopqrstuvwxyz", "0123456789.", "https://example.org/path?q=1&r=2",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_text_without_a_break_point_is_kept_as_it_is(pieces: list[str]) -> None:
    latex = "".join(pieces)
    if not may_break(latex):
        assert _with_breaks(latex) == latex
    assert break_long_words(latex) == _with_breaks(latex)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_escaped_text_gets_the_walks_breaks(text: str) -> None:
    latex = latex_escape(text)
    assert break_long_words(latex) == _with_breaks(latex)


def test_generated_bases_mostly_skip_the_walk_and_keep_its_bytes(tmp_path: Path) -> None:
    from protocoder.storage.workspace import load_review

    generate(tmp_path / "ws", protocols=40, seed=7)
    bases = {cell.basis for sheet in load_review(tmp_path / "ws").sheets for cell in sheet.cells.values()}
    latex = [inline_to_latex(basis) for basis in bases]
    assert all(break_long_words(text) == _with_breaks(text) for text in latex)
    skipped = sum(not may_break(text) for text in latex)
    assert skipped > 0.8 * len(latex), f"only {skipped} of {len(latex)} bases skip the walk"
