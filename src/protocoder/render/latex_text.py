"""LaTeX text after escaping: where long words may break, and the unicode engines' font fallback.

:func:`break_long_words` lets a URL, path or identifier break inside its table column;
:func:`unicode_text` turns the escaper's ``[U+XXXX]`` placeholders back into characters for
xelatex and lualatex, switching to the CJK font for scripts Latin Modern lacks.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from .escape import Latex, latex_escape

# Characters after which a long unbroken token (a URL, a path, an identifier) may break.
_BREAK_AFTER = frozenset("/.-_:?&=#,;@+")
_BREAK_RUN = 12  # a token breaks only once it is this long
_FORCE_BREAK = 18  # ... and anywhere after this many characters without a break point
_TEXT_MACROS = frozenset({"emph", "textbf", "texttt", "textit", "textsf"})
_BREAK = r"\hspace{0pt}"


def break_long_words(latex: str) -> str:
    """Allow line breaks inside long unbroken tokens of escaped LaTeX text.

    Inserts a zero-width glue (``\\hspace{0pt}``) after URL punctuation in a token longer
    than 12 characters, and every 18 characters where there is none, so such a token breaks
    inside its column instead of printing over the next. Arguments that are not text (the
    URL of ``\\href``, anything inside ``\\ensuremath`` or another macro's argument) are
    left as they are.
    """
    return _with_breaks(latex) if may_break(latex) else latex


def may_break(latex: str) -> bool:
    """False when :func:`break_long_words` would leave ``latex`` as it is, found without walking it.

    The walk breaks a run of characters without a space only after its 12th character, at URL
    punctuation or once 18 characters went without a break, and after a CJK placeholder. It
    counts neither braces nor a text macro's name (``\\emph``), a backslash with the character
    after it as one, and a macro's skipped argument (``\\href``'s URL, ``\\ensuremath{...}``)
    as one character at most: each word of the text, so counted (by its length, never less than
    the walk's count), shows whether the walk could break it. A space the walk does not see (in
    a skipped argument, after a backslash) or an escaped backslash leaves the text to the walk.
    Most bases are kept as they are without the walk; ``tests/test_render_speed.py`` checks this
    against the walk.
    """
    if "U+" in latex:
        return True
    if len(latex) < _BREAK_RUN:
        return False
    if "\\" in latex:
        if "\\\\" in latex or _ESCAPED_SPACE.search(latex) is not None:
            return True  # an escaped backslash (the macros found below would not be macros), an escaped space
        for _, start, end in _skipped_arguments(latex):
            if _SPACE.search(latex, start, end) is not None:
                return True
    for word in latex.split():
        if len(word) < _BREAK_RUN:
            continue
        if "\\" in word or "{" in word or "}" in word:
            pieces, last = [], 0
            for macro, _, end in _skipped_arguments(word):
                pieces += [word[last:macro], "x"]
                last = end
            pieces.append(word[last:])
            word = _UNCOUNTED.sub("", "".join(pieces))
        if len(word) >= _FORCE_BREAK or (len(word) >= _BREAK_RUN and _BREAK_CHARACTER.search(word, _BREAK_RUN - 1)):
            return True
    return False


def _skipped_arguments(latex: str) -> Iterator[tuple[int, int, int]]:
    """(where the macro starts, where its arguments start, where they end) of each macro whose
    arguments the walk skips, as it skips them."""
    last = 0
    for match in _ARGUMENT_MACRO.finditer(latex):
        name = match.group(1)
        macro = match.start()
        if macro < last or name in _TEXT_MACROS:
            continue  # inside arguments already skipped; or text
        end = _skip_group(latex, match.end())  # as the walk: \\href's URL; "{}"; one argument or two
        if name != "href" and not latex.startswith("{}", match.end()) and name != "ensuremath" \
                and end < len(latex) and latex[end] == "{":
            end = _skip_group(latex, end)
        yield macro, match.end(), end
        last = end


_BREAK_CHARACTER = re.compile(f"[{re.escape(''.join(sorted(_BREAK_AFTER)))}]")
_ARGUMENT_MACRO = re.compile(r"\\([A-Za-z]+)(?=[{\[])")
_UNCOUNTED = re.compile(r"\\(?:" + "|".join(sorted(_TEXT_MACROS)) + r")(?![A-Za-z])|(?<!\\)[{}]")
"""What the walk does not count: a text macro's name, a brace (an escaped one, ``\\{``, counts)."""
_ESCAPED_SPACE = re.compile(r"\\\s")
_SPACE = re.compile(r"\s")


def _with_breaks(latex: str) -> str:
    """:func:`break_long_words`'s walk over the whole text."""
    out: list[str] = []
    run = since_break = 0
    i, n = 0, len(latex)
    while i < n:
        ch = latex[i]
        if ch == "\\":
            placeholder = _PLACEHOLDER.match(latex, i)
            if placeholder is not None:  # one character the engine cannot print: keep it whole
                out.append(placeholder.group(0))
                i = placeholder.end()
                run, since_break = run + 1, since_break + 1
                # CJK text has no spaces: a line may break after any wide character.
                if unicodedata.east_asian_width(chr(int(placeholder.group(1), 16))) in ("W", "F"):
                    out.append(_BREAK)
                    since_break = 0
                continue
            match = _MACRO.match(latex, i)
            if match is None:  # a trailing backslash cannot come from the escaper; keep it
                out.append(ch)
                i += 1
                continue
            name = match.group(1)
            end = match.end()
            if name and name.isalpha() and name not in _TEXT_MACROS:
                if name == "href":
                    end = _skip_group(latex, end)  # the URL; the link text that follows is text
                elif latex.startswith("{}", end):
                    end += 2  # \textbackslash{} and friends print one character
                    run, since_break = run + 1, since_break + 1
                elif end < n and latex[end] in "{[":
                    end = _skip_group(latex, end)  # \ensuremath{...}, \includegraphics[...]{...}
                    if end < n and latex[end] == "{" and name not in ("ensuremath",):
                        end = _skip_group(latex, end)
                    run, since_break = run + 1, since_break + 1
            elif not name.isalpha():  # \%, \_, \#, \&, \{, \}, \,
                run, since_break = run + 1, since_break + 1
            out.append(latex[i:end])
            if not name.isalpha() and name in "_#&" and run >= _BREAK_RUN:
                out.append(_BREAK)
                since_break = 0
            i = end
            continue
        # Words too short to reach a break, and the spaces after them, are copied whole (the
        # loop below would add nothing to them): most of a text, many words at a time.
        words = _SHORT_WORDS.match(latex, i) if run == 0 else None
        if words is not None:
            out.append(words.group())
            i = words.end()
            continue
        plain = _PLAIN_WORD.match(latex, i)
        if plain is not None:
            end = plain.end(1)
            if run + (end - i) < _BREAK_RUN:
                out.append(latex[i:end])
                run, since_break = run + end - i, since_break + end - i
            else:
                # A long word: its first characters keep the run below the break length; each
                # one after may end with a break.
                head = i + max(0, _BREAK_RUN - 1 - run)
                out.append(latex[i:head])
                run, since_break = run + head - i, since_break + head - i
                for ch in latex[head:end]:
                    out.append(ch)
                    run += 1
                    since_break += 1
                    if ch in _BREAK_AFTER or since_break >= _FORCE_BREAK:
                        out.append(_BREAK)
                        since_break = 0
            if plain.end(2) > end:
                out.append(latex[end:plain.end(2)])
                run = since_break = 0
            i = plain.end()
            continue
        if ch.isspace():
            run = since_break = 0
        elif ch not in "{}":
            run += 1
            since_break += 1
        out.append(ch)
        i += 1
        if ch.isspace() or ch in "{}":
            continue
        if run >= _BREAK_RUN and (ch in _BREAK_AFTER or since_break >= _FORCE_BREAK):
            out.append(_BREAK)
            since_break = 0
    return "".join(out)


_MACRO = re.compile(r"\\([A-Za-z]+|.)", re.DOTALL)
# Plain characters (no macro, space or brace), then any spaces: \s is exactly str.isspace.
_PLAIN_WORD = re.compile(r"([^\\\s{}]+)(\s*)")
_SHORT_WORDS = re.compile(rf"(?:[^\\\s{{}}]{{1,{_BREAK_RUN - 1}}}\s+)+")


# A group with no group inside it, as _skip_group's loop reads one (a backslash escapes the next character).
_FLAT_GROUP = {"{": re.compile(r"\{(?:[^\\{}]|\\.)*\}", re.DOTALL),
               "[": re.compile(r"\[(?:[^\\\[\]]|\\.)*\]", re.DOTALL)}


def _skip_group(text: str, start: int) -> int:
    """Index just after the balanced ``{...}`` or ``[...]`` group that starts at ``start``."""
    if start >= len(text) or text[start] not in "{[":
        return start
    flat = _FLAT_GROUP[text[start]].match(text, start)
    if flat is not None:  # no group inside it (a URL, most often)
        return flat.end()
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def id_breaks(identifier: str) -> Latex:
    """An id that may break after each ``.``, ``_`` or ``-`` (ids are short, but a column of them is narrow)."""
    pieces = [piece for piece in re.findall(r"[^._-]*[._-]?", str(identifier)) if piece]
    return Latex(_BREAK.join(latex_escape(piece) for piece in pieces))


_PLACEHOLDER = re.compile(r"\\texttt\{\{\[\}U\+([0-9A-F]{4,6})\{\]\}\}")
_PLACEHOLDER_RUN = re.compile(rf"(?:{_PLACEHOLDER.pattern}(?:\\hspace\{{0pt\}})?)+")
# What the unicode engines print with the standalone files' fonts: Latin Modern (through fontspec) has
# Latin with its accents; Noto Serif CJK, switched to by \protocoderCJK, has Greek, Cyrillic, CJK, kana and
# Hangul. Anything else (emoji, scripts neither font has) keeps its visible [U+XXXX] placeholder.
_LATIN_RANGES = ((0x00A0, 0x024F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20BF), (0x2100, 0x214F))
_FALLBACK_RANGES = (
    (0x0370, 0x03FF), (0x0400, 0x04FF), (0x2190, 0x21FF), (0x2460, 0x24FF), (0x2E80, 0x2FDF),
    (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x312F), (0x3130, 0x318F), (0x31F0, 0x31FF),
    (0x3200, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
)
CJK_FONT_COMMAND = r"\protocoderCJK"


def _font_class(point: int) -> str:
    if unicodedata.category(chr(point)) in ("Cn", "Co", "Cs", "Cc"):
        return ""
    if any(low <= point <= high for low, high in _LATIN_RANGES):
        return "latin"
    if any(low <= point <= high for low, high in _FALLBACK_RANGES):
        return "cjk"
    return ""


def unicode_text(latex: str) -> str:
    """Turn the escaper's ``[U+XXXX]`` placeholders back into the characters, for xelatex and lualatex.

    Characters outside Latin go in a ``{\\protocoderCJK ...}`` group (the standalone files define it
    as Noto Serif CJK; a fragment provides an empty one). Only the escaper writes a placeholder
    inside ``\\texttt`` with bracket groups; text a user typed as ``[U+4E2D]`` stays as typed.
    """
    def restore(match: re.Match[str]) -> str:
        out: list[str] = []
        cjk: list[str] = []
        for item in re.finditer(rf"({_PLACEHOLDER.pattern})(\\hspace\{{0pt\}})?", match.group(0)):
            point = int(item.group(2), 16)
            kind = _font_class(point)
            if kind != "cjk" and cjk:
                out.append(f"{{{CJK_FONT_COMMAND} {''.join(cjk)}}}")
                cjk = []
            text = chr(point) if kind else item.group(1)
            if kind == "cjk":
                cjk.append(text + (item.group(3) or ""))
            else:
                out.append(text + (item.group(3) or ""))
        if cjk:
            out.append(f"{{{CJK_FONT_COMMAND} {''.join(cjk)}}}")
        return "".join(out)

    return _PLACEHOLDER_RUN.sub(restore, latex)
