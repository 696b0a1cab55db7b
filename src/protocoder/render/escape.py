"""Escaping user text for Markdown tables and LaTeX, and inline Markdown in basis text.

Two rules hold for every user-written value:

* In LaTeX nothing a user writes can run a command: every special character is
  replaced in one pass, and every character outside what pdflatex with T1 fonts can
  typeset is mapped to a macro or, failing that, to a visible ``[U+XXXX]`` placeholder
  (so the document still compiles, and the gap is visible rather than silently dropped).
* In Markdown nothing a user writes can break a table row or turn into markup they did
  not write: pipes, newlines and inline syntax are escaped.

Basis text may contain inline Markdown (emphasis, strong, code, links). It is parsed
with markdown-it-py and written out properly for each target.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.token import Token


class Latex(str):
    """Text that is already LaTeX and must not be escaped again."""

    __slots__ = ()


class Markdown(str):
    """Text that is already Markdown (table-safe) and must not be escaped again."""

    __slots__ = ()


# --------------------------------------------------------------------------- LaTeX

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # A row starting with "[" right after "\\" would be read as "\\[<length>]".
    "[": "{[}",
    "]": "{]}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\textquotedbl{}",
    "`": r"\textasciigrave{}",
    "\n": " ",
    "\t": " ",
    "\r": " ",
}

_MATH = {
    "≤": r"\leq", "≥": r"\geq", "≈": r"\approx", "≠": r"\neq", "−": "-", "∞": r"\infty",
    "∑": r"\sum", "∏": r"\prod", "∈": r"\in", "∉": r"\notin", "∀": r"\forall", "∃": r"\exists",
    "⇒": r"\Rightarrow", "⇐": r"\Leftarrow", "⇔": r"\Leftrightarrow", "↔": r"\leftrightarrow",
    "√": r"\surd", "∼": r"\sim", "′": r"{}^{\prime}", "″": r"{}^{\prime\prime}", "✓": r"\checkmark",
    "✔": r"\checkmark", "✗": r"\times", "✘": r"\times", "★": r"\bigstar", "∩": r"\cap", "∪": r"\cup",
    "⊂": r"\subset", "⊆": r"\subseteq", "∧": r"\wedge", "∨": r"\vee", "¬": r"\neg", "∂": r"\partial",
    "∇": r"\nabla", "∅": r"\emptyset", "≡": r"\equiv", "∝": r"\propto", "⟶": r"\longrightarrow",
    "⋅": r"\cdot", "∘": r"\circ", "⊕": r"\oplus", "⊗": r"\otimes", "ℓ": r"\ell", "∫": r"\int",
}
_GREEK_NAMES = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "varsigma", "τ": "tau", "υ": "upsilon", "φ": "phi",
    "χ": "chi", "ψ": "psi", "ω": "omega", "ϑ": "vartheta", "ϕ": "varphi", "ϵ": "varepsilon",
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma",
    "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
_GREEK_LATIN = {"Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
                "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "ο": "o"}
_SPACES = {"\u2009": r"\,", "\u202f": r"\,", "\u200a": r"\,", "\u2002": r"\enspace{}",
           "\u2003": r"\quad{}", "\u2007": r"\enspace{}", "\u2008": r"\,", "\u2004": r"\,",
           "\u2005": r"\,", "\u2006": r"\,", "\u200b": "", "\u2060": "", "\ufeff": "", "\u00ad": ""}

# Characters pdflatex typesets with [T1]{fontenc}, [utf8]{inputenc} and lmodern, as
# declared in t1enc.dfu, ts1enc.dfu and utf8enc.dfu and checked by compiling each one.
_TEXT_RANGES = (
    (0x00A0, 0x0125), (0x0128, 0x0137), (0x0139, 0x013E), (0x0141, 0x0148), (0x014A, 0x0165),
    (0x0168, 0x017E), (0x0192, 0x0192), (0x01C4, 0x01D4), (0x01E2, 0x01E3), (0x01E6, 0x01EB),
    (0x01F0, 0x01F0), (0x01F4, 0x01F5), (0x0218, 0x021B), (0x0232, 0x0233), (0x0237, 0x0237),
    (0x02C6, 0x02C7), (0x02D8, 0x02D9), (0x02DB, 0x02DD), (0x0E3F, 0x0E3F), (0x1E02, 0x1E03),
    (0x1E0D, 0x1E0D), (0x1E1E, 0x1E21), (0x1E25, 0x1E25), (0x1E30, 0x1E31), (0x1E37, 0x1E37),
    (0x1E43, 0x1E43), (0x1E45, 0x1E45), (0x1E47, 0x1E47), (0x1E5B, 0x1E5B), (0x1E63, 0x1E63),
    (0x1E6D, 0x1E6D), (0x1E8E, 0x1E91), (0x1E9E, 0x1E9E), (0x1EF2, 0x1EF3), (0x2010, 0x2016),
    (0x2018, 0x201A), (0x201C, 0x201E), (0x2020, 0x2022), (0x2026, 0x2026), (0x2030, 0x2031),
    (0x2039, 0x203B), (0x203D, 0x203D), (0x2044, 0x2044), (0x204E, 0x204E), (0x2052, 0x2052),
    (0x20A1, 0x20A1), (0x20A4, 0x20A4), (0x20A6, 0x20A6), (0x20A9, 0x20A9), (0x20AB, 0x20AC),
    (0x20B1, 0x20B1), (0x2103, 0x2103), (0x2116, 0x2117), (0x211E, 0x211E), (0x2120, 0x2120),
    (0x2122, 0x2122), (0x2126, 0x2127), (0x212E, 0x212E), (0x2190, 0x2193), (0x2329, 0x232A),
    (0x2422, 0x2423), (0x25E6, 0x25E6), (0x25EF, 0x25EF), (0x266A, 0x266A), (0x27E8, 0x27E9),
    (0x3008, 0x3009), (0xFB00, 0xFB06),
)


MACROS = frozenset(
    {"textbackslash", "textasciitilde", "textasciicircum", "textless", "textgreater", "textbar", "textquotedbl",
     "textasciigrave", "ensuremath", "texttt", "emph", "textbf", "href", "newline", "enspace", "quad", "prime"}
    | set(_GREEK_NAMES.values())
    | {m.group(1) for value in _MATH.values() for m in re.finditer(r"\\([A-Za-z]+)", value)}
)
"""Every macro name the escaper can emit; user text can never produce any other."""


def _typesettable(ch: str) -> bool:
    point = ord(ch)
    if 0x20 <= point < 0x7F:
        return True
    return any(low <= point <= high for low, high in _TEXT_RANGES)


def _latex_char(ch: str) -> str:
    if ch in _LATEX_SPECIALS:
        return _LATEX_SPECIALS[ch]
    if _typesettable(ch):
        return ch
    if ch in _SPACES:
        return _SPACES[ch]
    if ch in _GREEK_NAMES:
        return rf"\ensuremath{{\{_GREEK_NAMES[ch]}}}"
    if ch in _GREEK_LATIN:
        return _GREEK_LATIN[ch]
    if ch in _MATH:
        return rf"\ensuremath{{{_MATH[ch]}}}"
    # Visible, compilable, and impossible to mistake for the character itself.
    return rf"\texttt{{{{[}}U+{ord(ch):04X}{{]}}}}"


_LIGATURE_BREAKS = re.compile(r"(?<=-)(?=-)|(?<=,)(?=,)|(?<=')(?=')|(?<=[!?])(?=`)")


class _LatexTable(dict[int, str]):
    """``str.translate`` table: code point -> LaTeX, filled in as characters are met.

    One ``translate`` call replaces a Python-level loop over every character (the
    largest cost of rendering long basis text). ``\x00`` marks a ligature break.
    """

    LIMIT = 8192

    def __missing__(self, point: int) -> str:
        value = "{}" if point == 0 else _latex_char(chr(point))
        if len(self) < self.LIMIT:  # hostile text cannot grow the table without bound
            self[point] = value
        return value


_LATEX_TABLE = _LatexTable()


@lru_cache(maxsize=16384, typed=True)  # a table prints each label, code and name many times
def latex_escape(text: str) -> Latex:
    """Escape plain text for LaTeX text mode (one pass; unicode mapped; ligatures kept literal)."""
    text = unicodedata.normalize("NFC", str(text))
    # "--", ",," and "''" are TeX ligatures; a user who typed two hyphens meant two hyphens.
    if "--" in text or ",," in text or "''" in text or "!`" in text or "?`" in text:  # else the regex finds nothing
        text = _LIGATURE_BREAKS.sub("\x00", text)
    return Latex(text.translate(_LATEX_TABLE))


def latex_url(url: str) -> Latex:
    """Escape a URL for the first argument of ``\\href``."""
    # Keep existing percent-escapes and fragments; encode braces, backslashes and spaces.
    safe = quote(url, safe="/:?&=+-_.~,;@!*'()[]$%#")
    return Latex(safe.replace("\\", "%5C").replace("%", r"\%").replace("#", r"\#"))


# --------------------------------------------------------------------------- Markdown

_MD_ESCAPE = re.compile(r"([\\`*_\[\]<>|~])")
_ENTITY_LIKE = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


_MD_PLAIN = re.compile(r"[\\`*_\[\]<>|~&]|[^\S ]|  ")
"""Anything :func:`md_escape` changes; text without it is returned as it is (most cells)."""
_SPACES_RUN = re.compile(r"\s+")


def md_escape(text: str) -> Markdown:
    """Escape plain text for one cell of a GFM table."""
    text = str(text)
    if not _MD_PLAIN.search(text):
        return Markdown(text)
    return Markdown(_SPACES_RUN.sub(" ", _md_text(text)))


def _md_code(content: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if content.startswith("`") or content.endswith("`") else ""
    # GFM honours "\|" even inside code spans, so a pipe never ends the cell.
    return f"{fence}{pad}{content.replace('|', chr(92) + '|')}{pad}{fence}"


def _md_url(url: str) -> str:
    return quote(url, safe="/:?&=+-_.~,;@!*#%'[]$")


# --------------------------------------------------------------------------- inline Markdown

_PARSER = MarkdownIt("zero").enable(["emphasis", "backticks", "link", "escape", "newline", "autolink"])

PLAIN_URL = re.compile(r"https?://[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,3}(?::[0-9]{1,5})?"
                       r"(?:[/?#][A-Za-z0-9;/?:@&=+$,\-_.!~*'()#]*)?")
"""A web address markdown-it's ``normalizeLink`` returns as it is: an ASCII host of at most four
labels (so never over mdurl's 255 characters), a port of digits if any, and a path, query and
fragment made only of the characters mdurl's encoder keeps (no ``%``, no space, nothing outside
ASCII). ``tests/test_escape.py`` checks the claim on generated addresses and on every link of a
generated review."""


def _normalize_link(url: str) -> str:
    # markdown-it normalises every link's address through mdurl (parse, punycode, format,
    # percent-encode): a third of parsing a typical basis. For the addresses that round trip
    # unchanged, the answer is known without it.
    return url if PLAIN_URL.fullmatch(url) else _MARKDOWN_IT_NORMALIZE(url)


_MARKDOWN_IT_NORMALIZE = _PARSER.normalizeLink
_PARSER.normalizeLink = _normalize_link  # type: ignore[method-assign] # the instance attribute shadows the method
_LINK_SCHEMES = ("http://", "https://", "mailto:")


_TOKEN_MEMO: ContextVar[dict[str, list[Token]] | None] = ContextVar("protocoder_inline_tokens", default=None)


@contextmanager
def shared_inline_parse() -> Iterator[None]:
    """Within the block, each distinct basis text is parsed once (rendering needs it per target).

    Nested blocks share the outermost block's parses.
    """
    if _TOKEN_MEMO.get() is not None:
        yield
        return
    token = _TOKEN_MEMO.set({})
    try:
        yield
    finally:
        _TOKEN_MEMO.reset(token)


def parse_inline_ahead(texts: Iterable[str]) -> None:
    """Parse texts now, inside :func:`shared_inline_parse`, so that rendering finds them parsed."""
    for text in texts:
        _inline_tokens(text)


def _inline_tokens(text: str) -> list[Token]:
    memo = _TOKEN_MEMO.get()
    if memo is not None and text in memo:
        return memo[text]
    source = unicodedata.normalize("NFC", str(text))
    result = simple_inline_tokens(source)
    if result is None:
        tokens = _PARSER.parseInline(source)
        result = list(tokens[0].children or []) if tokens else []
    if memo is not None:
        memo[text] = result
    return result


# A basis is mostly words with a few plain constructs: *emphasis*, **strong**, `code` and
# [text](https://address). For a text made only of those, in the shapes below, markdown-it's
# tokens are known without running its rule machinery (two thirds of the parse's time):
# :func:`simple_inline_tokens` builds them, and gives up (None: markdown-it parses the text) at
# anything else. tests/test_render_speed.py checks it against markdown-it on every basis of a
# generated review and on arbitrary text made of Markdown's punctuation.

_SIMPLE_PIECE = re.compile(
    r"(?P<text>[^`\[\]*\\<\n\r\0]+)"
    # a code span of one backtick each side: no newline, no space at either end (markdown-it would
    # strip one), and the closing backtick alone (a run of two would not close it)
    r"|`(?P<code>[^`\n\r\0 ](?:[^`\n\r\0]*[^`\n\r\0 ])?)`(?!`)"
    # emphasis or strong around plain text that starts and ends with a letter or digit (so the
    # opening run can only open and the closing one close), closed by a run of the same length
    r"|(?P<em>\*\*?)(?P<inner>[^\W_](?:[^*`\[\]\\<\n\r\0]*[^\W_])?)(?P=em)(?!\*)"
    # an inline link around plain text, to an address without parentheses, entities or spaces
    r"|\[(?P<label>[^`\[\]*\\<\n\r\0]+)\]\((?P<url>[^\s()<>\\&\x00-\x1f\x7f]+)\)")
_NOT_SIMPLE = re.compile(r"[\\<\n\r\0]")
"""A backslash (an escape or a hard break), ``<`` (an autolink), a line break or a NUL."""
_LOOSE_UNDERSCORE = re.compile(r"_(?:(?<![^\W_]_)|(?![^\W_]))")
"""An underscore that is not between two letters or digits: it could open or close emphasis."""


def simple_inline_tokens(text: str) -> list[Token] | None:
    """markdown-it's inline tokens of ``text`` (already NFC), when it is made only of plain text,
    ``*emphasis*``, ``**strong**``, `` `code` `` and ``[text](https://…)`` in their plain shapes;
    None for anything else."""
    if _NOT_SIMPLE.search(text) is not None or "_" in text and _LOOSE_UNDERSCORE.search(text) is not None:
        return None
    tokens: list[Token] = []
    # Text not yet written out; "" where markdown-it leaves an empty text token (the second
    # asterisk of a strong run), merged, as markdown-it merges it, into any text beside it.
    pending: str | None = None
    position, end = 0, len(text)
    while position < end:
        piece = _SIMPLE_PIECE.match(text, position)
        if piece is None:
            return None
        kind = piece.lastgroup
        if kind == "text":
            pending = (pending or "") + piece.group("text")
            position = piece.end()
            continue
        if kind == "url":
            url = piece.group("url")
            if PLAIN_URL.fullmatch(url) is None:
                return None
        strong = kind == "inner" and len(piece.group("em")) == 2
        if pending is not None or strong:
            tokens.append(Token("text", "", 0, content=pending or ""))
        pending = None
        if kind == "code":
            tokens.append(Token("code_inline", "code", 0, content=piece.group("code"), markup="`"))
        elif kind == "inner":
            marker = piece.group("em")
            tag = "strong" if strong else "em"
            tokens += [Token(f"{tag}_open", tag, 1, markup=marker),
                       Token("text", "", 0, level=1, content=piece.group("inner")),
                       Token(f"{tag}_close", tag, -1, markup=marker)]
            if strong:
                pending = ""
        else:
            tokens += [Token("link_open", "a", 1, attrs={"href": url}),
                       Token("text", "", 0, level=1, content=piece.group("label")),
                       Token("link_close", "a", -1)]
        position = piece.end()
    if pending is not None:
        tokens.append(Token("text", "", 0, content=pending))
    return tokens


def inline_html(text: str) -> str:
    """markdown-it's HTML of basis text (inline Markdown), as ``MarkdownIt.renderInline`` writes it.

    The HTML has always been rendered from the text as written: a text already in NFC (almost
    every one) is the text the other targets parse, so their shared parse is rendered.
    """
    text = str(text)
    if unicodedata.is_normalized("NFC", text):
        return _PARSER.renderer.renderInline(_inline_tokens(text), _PARSER.options, {})
    return _PARSER.renderInline(text)


def _safe_href(token: Token) -> str | None:
    href = str(token.attrGet("href") or "")
    return href if href.lower().startswith(_LINK_SCHEMES) else None


def inline_to_latex(text: str) -> Latex:
    """Render basis text (inline Markdown) as LaTeX.

    Image syntax (``![alt](url)``) is not an image: it is an exclamation mark and a link, in
    both targets, so that no table ever embeds (or loads) a remote file.
    """
    parts: list[str] = []
    link_start, link_href = -1, None
    for token in _inline_tokens(text):
        kind = token.type
        if kind == "text":
            parts.append(latex_escape(token.content))
        elif kind == "softbreak":
            parts.append(" ")
        elif kind == "hardbreak":
            parts.append(r"\newline{}")
        elif kind == "em_open":
            parts.append(r"\emph{")
        elif kind == "strong_open":
            parts.append(r"\textbf{")
        elif kind in ("em_close", "strong_close"):
            parts.append("}")
        elif kind == "code_inline":
            parts.append(rf"\texttt{{{latex_escape(token.content)}}}")
        elif kind == "link_open":
            href = _safe_href(token)
            parts.append(rf"\href{{{latex_url(href)}}}{{" if href else "{")
            link_start, link_href = len(parts), href
        elif kind == "link_close":
            if len(parts) == link_start and link_href:
                parts.append(latex_escape(link_href))  # an empty text (an image without alt text): show the URL
            parts.append("}")
        else:  # pragma: no cover - the parser enables no other inline rule
            parts.append(latex_escape(token.content))
    return Latex("".join(parts))


def inline_to_markdown(text: str) -> Markdown:
    """Render basis text (inline Markdown) as table-safe GFM, normalised."""
    parts: list[str] = []
    link_href: str | None = None
    for token in _inline_tokens(text):
        kind = token.type
        if kind == "text":
            parts.append(_md_text(token.content))
        elif kind in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif kind in ("em_open", "em_close"):
            parts.append("*")
        elif kind in ("strong_open", "strong_close"):
            parts.append("**")
        elif kind == "code_inline":
            parts.append(_md_code(token.content))
        elif kind == "link_open":
            link_href = _safe_href(token)
            if link_href and parts and parts[-1].endswith("!"):
                # "!" right before a link would make it an image, loaded from anywhere when the
                # table is viewed: escaped, it stays the "!" and the link LaTeX shows.
                parts[-1] = parts[-1][:-1] + "\\!"
            parts.append("[" if link_href else "")
        elif kind == "link_close":
            if link_href and parts[-1] == "[":
                parts.append(_md_text(link_href))  # an empty text (an image without alt text): show the URL
            parts.append(f"]({_md_url(link_href)})" if link_href else "")
            link_href = None
        else:  # pragma: no cover - the parser enables no other inline rule
            parts.append(_md_text(token.content))
    return Markdown("".join(parts).strip())


_MD_TEXT_PLAIN = re.compile(r"[\\`*_\[\]<>|~&\r\n\t]")
_LINE_BREAKS = re.compile(r"[\r\n\t]")


def _md_text(text: str) -> str:
    if not _MD_TEXT_PLAIN.search(text):
        return text
    text = _MD_ESCAPE.sub(r"\\\1", text)
    text = _ENTITY_LIKE.sub(r"\\&", text)
    return _LINE_BREAKS.sub(" ", text)


def inline_plain(text: str) -> str:
    """The visible text of basis Markdown (what a reader sees), for comparisons."""
    return "".join(t.content for t in _inline_tokens(text) if t.type in ("text", "code_inline")
                   ) if text else ""
