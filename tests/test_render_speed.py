"""Issue 34: what was made faster in render prints the same bytes.

* :func:`~protocoder.render.latex_text.may_break` decides, without the character walk, that a text
  gets no line-break point: wherever it says so, the walk leaves the text as it is (on arbitrary
  LaTeX made of what the escaper writes, and on every basis of a generated review).
* markdown-it's ``normalizeLink`` is skipped for an address of :data:`~protocoder.render.escape.PLAIN_URL`'s
  shape, which it returns unchanged: checked on generated addresses of that shape, on arbitrary text (the
  answer is always markdown-it's), on addresses it does change (the shape never matches them), and on every
  basis of a generated review (the same tokens with and without the shortcut).
* :func:`~protocoder.render.escape.simple_inline_tokens` builds markdown-it's tokens for a basis made of
  plain text, ``*em*``, ``**strong**``, `` `code` `` and ``[text](https://…)``: equal to markdown-it's on
  every basis of a generated review (where it is taken for all of them) and on arbitrary text made of
  Markdown's punctuation; it gives up on the shapes whose tokens differ from that plain reading.
* The rendered tables keep their bytes: ``tests/test_render_bytes.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.common.normalize_url import normalizeLink

from protocoder.render import escape
from protocoder.render.escape import PLAIN_URL, inline_to_latex, latex_escape, simple_inline_tokens
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


@settings(max_examples=3000, deadline=None)
@given(st.from_regex(PLAIN_URL, fullmatch=True))
def test_plain_addresses_are_what_markdown_it_makes_of_them(url: str) -> None:
    assert normalizeLink(url) == url
    assert escape._PARSER.normalizeLink(url) == url


URL_PIECES = ["http://", "https://", "HTTPS://", "mailto:", "//", "a", "Z", "0", "-", ".", ":", ":80", "/", "?",
              "#", "@", "%", "%41", "%zz", " ", "\t", "é", "τ", "[", "]", "|", "`", "<", "\"", "'", "(", ")",
              "_", "+", "~", "=", "&", "x" * 64, ".org", "example.org", "xn--bcher-kva", "\u3002"]


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(st.sampled_from(URL_PIECES), max_size=16).map("".join)))
def test_any_address_is_normalised_as_markdown_it_does(url: str) -> None:
    assert escape._PARSER.normalizeLink(url) == normalizeLink(url)


def test_addresses_markdown_it_changes_never_take_the_shortcut() -> None:
    changed = ["http://a.org/a b", "https://a.org/%zz", "https://a.org/é", "https://bücher.de/", "https://a.org/<x>",
               "https://a.org/`x`", "https://a.org/|", ".".join(["https://" + "a" * 63] + ["b" * 63] * 4),
               "https://a.org/\\x", 'https://a.org/"x"', "https://a.org/{x}", "https://a.org/^x"]
    for url in changed:
        assert normalizeLink(url) != url, url  # each of these is rewritten by markdown-it ...
        assert not PLAIN_URL.fullmatch(url), url  # ... so the shortcut must not answer for it
        assert escape._PARSER.normalizeLink(url) == normalizeLink(url)


def test_generated_bases_parse_to_the_same_tokens_with_and_without_the_shortcut(tmp_path: Path,
                                                                               monkeypatch) -> None:
    from protocoder.storage.workspace import load_review

    generate(tmp_path / "ws", protocols=40, seed=11)
    bases = sorted({cell.basis for sheet in load_review(tmp_path / "ws").sheets for cell in sheet.cells.values()})
    fast = [escape._PARSER.parseInline(basis) for basis in bases]
    links = [tok.attrGet("href") for tokens in fast for tok in tokens[0].children or [] if tok.type == "link_open"]
    assert sum(bool(PLAIN_URL.fullmatch(str(href))) for href in links) > 0.9 * len(links) > 0
    monkeypatch.setattr(escape._PARSER, "normalizeLink", normalizeLink)
    slow = [escape._PARSER.parseInline(basis) for basis in bases]
    assert [[t.as_dict() for t in tokens] for tokens in fast] == [[t.as_dict() for t in tokens] for tokens in slow]


def _markdown_it(text: str) -> list[dict]:
    return [token.as_dict() for token in escape._PARSER.parseInline(text)[0].children or []]


def _simple(text: str) -> list[dict] | None:
    tokens = simple_inline_tokens(text)
    return None if tokens is None else [token.as_dict() for token in tokens]


def test_generated_bases_take_the_simple_path_with_markdown_its_tokens(tmp_path: Path) -> None:
    from protocoder.storage.workspace import load_review

    generate(tmp_path / "ws", protocols=40, seed=13)
    bases = sorted({cell.basis for sheet in load_review(tmp_path / "ws").sheets for cell in sheet.cells.values()})
    simple = {basis: _simple(basis) for basis in bases}
    assert sum(tokens is not None for tokens in simple.values()) > 0.9 * len(bases)
    for basis, tokens in simple.items():
        if tokens is not None:
            assert tokens == _markdown_it(basis), basis


MARKDOWN_PIECES = ["a", "b", "word", "é", "τ", "1", " ", "  ", "\t", "\n", "*", "**", "***", "_", "__", "`", "``",
                   "[", "]", "(", ")", "![", "](", "](https://example.org/a_b#c)", "](https://x.org/(y))", "\\",
                   "<", ">", "<https://x.org>", "&", "&amp;", ".", ",", "!", "?", "-", ":", "'", '"', "\u00a0", "\r"]


@settings(max_examples=5000, deadline=None)
@given(st.lists(st.sampled_from(MARKDOWN_PIECES), max_size=24).map("".join))
def test_the_simple_path_gives_markdown_its_tokens_or_none(text: str) -> None:
    tokens = _simple(text)
    if tokens is not None:
        assert tokens == _markdown_it(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=60))
def test_the_simple_path_on_any_text(text: str) -> None:
    tokens = _simple(text)
    if tokens is not None:
        assert tokens == _markdown_it(text)


def test_shapes_markdown_it_reads_otherwise_leave_the_simple_path() -> None:
    # Each of these is plain text or a simple construct to the eye, and something else to markdown-it
    # (or needs its full rules): the simple path must not answer for any of them.
    for text in ["a_*b*_", "_a_", "*a *b* c*", "**a*", "*a**", "***a***", "*e.g.*", "* a*", "`a``b`", "` a `",
                 "``a``", "[a][b]", "[a]", '[a](https://x.org "t")', "[a](<https://x.org>)", "[a]( https://x.org)",
                 "[a](https://x.org/&amp;)", "[a](https://x.org/(b))", "[*a*](https://x.org)", "[`a`](https://x.org)",
                 "[a](javascript:alert(1))", "[a](HTTPS://X.ORG)", "a\\*b", "<https://x.org>", "a  \nb", "a\nb",
                 "a\r\nb", "a\0b", "snake_ case", "_lead", "trail_"]:
        assert simple_inline_tokens(text) is None, text
