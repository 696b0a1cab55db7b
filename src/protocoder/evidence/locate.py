"""Find a quoted passage in a snapshot's extracted text, forgiving what extraction changes.

Text taken from a PDF differs from what a reader copies out of it in ways that do not
change what it says: line breaks and runs of spaces, words hyphenated at the end of a
line (``evalu-\\nation``), ligature glyphs (``ﬁ``, and the control codes that TeX's T1
fonts leave without a Unicode mapping), typographic quotes and dashes, non-breaking and
zero-width spaces. Both the text and the quote are brought to one comparison form, and
matches are mapped back to character offsets of the extracted text, so that a quote's
span always points into what the reader shows.

Markup is dropped the same way, so that a passage copied from the raw file compares equal
to the same passage of the extracted (rendered) text: Markdown's emphasis, code spans, link
and image syntax (``[text](url)``: the text stays), list markers, heading and blockquote
markers, table pipes and delimiter rows, fences, footnote and admonition markers (and
footnote references as a renderer shows them, ``[1]``, with their ``↩︎`` back-links), a MkDocs
admonition's header line (``!!! note "Title"`` compares as the title the reader shows, ``Title``;
``??? tip`` as ``Tip``),
backslash escapes; HTML tags and comments, and character references (``&amp;``). Both
sides go through the same form, so a ``*`` or ``|`` that is text rather than markup is
dropped from both and still matches. The marks that start a line (``#``, ``-``, ``+``, ``>``,
a rule) are dropped inside a line too, after a space: a quote of several lines of a code
block or list made into one line (``pip install x # then run``) compares equal to the lines.

Case and words are never changed: a quote is the text as written.
"""

from __future__ import annotations

import bisect
import re
import time
from collections import Counter
from dataclasses import dataclass

_SAME_LENGTH = str.maketrans({
    **dict.fromkeys("\r\f\v\u2028\u2029", "\n"),
    **dict.fromkeys("\t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                    "\u200a\u202f\u205f\u3000", " "),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"),
})
"""Characters replaced one for one: line breaks, spaces, quotes and dashes of every kind
(line breaks stay line breaks until hyphens have been joined across them)."""
_SAME_LENGTH_RUN = re.compile("[" + "".join(map(chr, _SAME_LENGTH)) + "]+")
"""A run of the characters :data:`_SAME_LENGTH` replaces (none of them is special in a class)."""


def _same_length(text: str) -> str:
    """``text.translate(_SAME_LENGTH)``, quicker: only runs of such (rare) characters are translated (a
    dictionary look-up per character of a text not all ASCII took 6 ms for an 84 KB README)."""
    return _SAME_LENGTH_RUN.sub(lambda run: run.group().translate(_SAME_LENGTH), text)

_EXPANSIONS = {
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
    "\ufb06": "st", "\u2026": "...",
    # TeX's T1 (Cork) encoding puts ligatures at these codes; a PDF whose font has no
    # Unicode map extracts them as control characters.
    "\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",
}

_CANDIDATE = re.compile("|".join(map(re.escape, "-\u00ad\u200b\u200c\u200d\u2060\ufeff\ufb00\ufb01\ufb02\ufb03"
                                               "\ufb04\ufb05\ufb06\u2026\x1b\x1c\x1d\x1e\x1f"))
                        + "| [ \n]+|\n[ \n]+")
"""Where the length may change: hyphens, invisible characters, ligatures, runs of white space.

Each alternative begins with one character (not a class), so the engine skips ahead to the next
one (a 100-page text in milliseconds); what to do at each candidate is decided in Python:

* a hyphen between word characters is dropped, on both sides of a comparison, so that
  ``state-of-the-\\nart`` (hyphen kept at a line break), ``evalu-\\nation`` (hyphenated by
  the typesetter) and the quote ``state-of-the-art`` or ``evaluation`` all compare equal.
  Only a hyphen followed by a line break (not ``pre- and post-``) joins across white space;
* soft hyphens and zero-width characters are dropped;
* ligatures (and TeX's T1 ligature codes) become their letters;
* a run of spaces and line breaks becomes one space.
"""

_HYPHEN_TAIL = re.compile(r"(?: *\n *)?(?=\w)")
_GONE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


@dataclass(frozen=True)
class Span:
    """A passage of the extracted text: ``text[start:end]``."""

    start: int
    end: int


@dataclass(frozen=True)
class Closest:
    """The passage most like a quote that was not found, with how alike they are (0–1)."""

    start: int
    end: int
    ratio: float


def normalise(text: str) -> str:
    """The comparison form of ``text`` (for quotes; see :class:`Haystack` for documents)."""
    return _comparison(_strip_markup(text)[0], translated=True)[0].strip()


INLINE_TAGS = frozenset(["a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i",
                          "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time",
                          "u", "var", "wbr"])
"""HTML elements inside a line of text: their tags join what is around them; other tags separate."""

_LINE_MARK = (r"[ ]*(?:(?:`{3,}|~{3,})[^\n]*"  # a fence line, with its info string
              r"|\|?[ ]*:?-{3,}:?[ ]*(?:\|[ ]*:?-{3,}:?[ ]*)*\|?[ ]*(?=\n|$)"  # a table's delimiter row, a rule
              r"|={3,}[ ]*(?=\n|$)"  # a setext underline
              r"|(?:>[ ]?)*(?:#{1,6}(?:[ ]+|$)|(?:[-+*]|\d{1,3}[.)])(?:[ ]+|$)(?:\[[ xX]\](?:[ ]+|$))?)?)")
"""What may start a line: a fence, a delimiter row, a blockquote's ``>``, a heading's ``#``, a
list marker (with a task box). At the very end of a quote a marker needs no space after it."""
_LEAD_MARK = re.compile(r"[ ]*(?:-{3,}|={3,})(?=[ \n]|$)|" + _LINE_MARK)
"""What :data:`_LINE_MARK` drops at a line start, dropped at the start of a quote (a rule too, when the
quote joins the lines after it onto its line)."""
_ONE_LINE_LEAD = re.compile(r"[ ]*(?:`{3,}|~{3,})[\w+.-]*(?=[ ]|$)|" + _LEAD_MARK.pattern)
"""The same at the start of a quote on one line: a fence's language only, for the quote's next words
are the code's first line (a fence, then ``bash cd analysis``)."""
_MARKUP = re.compile(
    r"\n" + _LINE_MARK
    + r"|[ ](?:#{1,6}|[-+>]|-{3,}|={3,}|(?:`{3,}|~{3,})[\w+.-]*)(?=[ \n]|$)"  # the same inside a line (lines joined)
    r"|[ ]&(?:[mn]dash|minus|horbar|dash|hyphen|#821[0-3]|#8722|#x201[0-5]|#x2212);(?=[ \n]|$)"  # " &mdash; " as " — "
    + r"|\[\^[^\]\s]{1,40}\]:?"  # a footnote reference or definition label
    r"|\[\d{1,3}\]"  # a footnote reference as rendered ([1]), a numbered citation
    r"|\u21a9[\u21a9\ufe0e\ufe0f]*|\ufe0e[\u21a9\ufe0e\ufe0f]*|\ufe0f[\u21a9\ufe0e\ufe0f]*"  # a back-link (↩︎)
    r"|\[![A-Za-z]{2,12}\]"  # an admonition marker, [!NOTE]
    # a MkDocs admonition's header line (!!! note "Title") after a space, a line break or at the start
    r"|!(?<![^\n ]!)!![ ]+[^\n]*?[ ]*(?=\n|$)"
    r"|\?(?<![^\n ]\?)\?\?\+?[ ]+[^\n]*?[ ]*(?=\n|$)"
    r"|\]\((?:[^()\s]|\([^()\s]*\))*(?:[ ]+\"[^\"\n]*\")?\)"  # ](url "title")
    r"|\]\[[^\]\n]{0,100}\]"  # ][reference]
    r"|![\[\]]|\[|\]"
    r"|<!--.{0,20000}?-->"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:[ \n/][^<>]{0,4000})?>"
    r"|&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});"
    r"|\\(?=[!-/:-@\[-`{-~])"
    r"|\*[*`~_]*|`[*`~_]*|~[*`~_]*|_[*`~_]*|\|", re.S)
"""Markup of Markdown and HTML (see the module docstring). Every alternative begins with one character,
not a class, a repeat or a look-behind (hence ``[*`~_]+`` split by its first character), so that Python's
engine skips ahead to the next one instead of trying the pattern everywhere (84 KB: 2.3 ms, not 6.6)."""


def _markup_replacement(match: str) -> str | None:
    """What a piece of markup becomes (None: it stays as it is)."""
    first = match[0]
    if first == "\n":
        return None if not match.strip() else "\n"
    if first == "<":
        if match.startswith("<!--"):
            return " "
        name = re.match(r"</?([A-Za-z][A-Za-z0-9-]*)", match)
        return "" if name and name.group(1).lower() in INLINE_TAGS else " "
    if first == "&":
        decoded = _unescape(match)
        return None if decoded == match else decoded.translate(_SAME_LENGTH)
    if first in "| ":
        return " "
    if match.startswith(("!!!", "???")):
        return admonition_title(match.lstrip("!?+"))
    return ""


_COMMON_REFERENCES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&nbsp;": "\u00a0"}
"""What ``html.unescape`` makes of the commonest named references."""


def _unescape(reference: str) -> str:
    """``html.unescape`` of one character reference, without loading ``html`` (about 1 ms) for the common
    ones: the named above and numbers of printable ASCII (html maps 0, 128–159, surrogates, controls)."""
    known = _COMMON_REFERENCES.get(reference)
    if known is not None:
        return known
    if reference[1] == "#":
        number = int(reference[3:-1], 16) if reference[2] in "xX" else int(reference[2:-1])
        if 0x20 <= number < 0x7f:
            return chr(number)
    import html  # loaded only for the rarer references

    return html.unescape(reference)


_TITLED = re.compile(r'\s*(?P<tokens>[^"\s](?:[^"]*[^"\s])?)\s+"(?P<title>.*)"[^\s"]*$')


def admonition_title(params: str) -> str:
    """The title a MkDocs admonition header (``!!! note "Title"`` without its marker) shows, as the
    Markdown extractor's admonition plugin (mdit-py-plugins) renders it: the quoted title; ``""``
    for none; else the words after the type; else the type capitalised (``!!! note``: "Note")."""
    params = params.strip()
    titled = _TITLED.match(params)
    if titled:
        return titled.group("title")
    kind, _, rest = params.partition(" ")
    if not rest:
        return kind.title()
    return "" if rest == '""' else rest


def _strip_markup(text: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """``text`` without markup, and the changes made (as :func:`_comparison` records them)."""
    text = _same_length(text)
    parts: list[str] = []
    changes: list[tuple[int, int, int, int]] = []
    last = 0
    length = 0
    lead = (_LEAD_MARK if "\n" in text else _ONE_LINE_LEAD).match(text)
    if lead and lead.group().strip():
        last = lead.end()
        changes.append((0, 0, 0, last))
    # What a piece of markup becomes depends on its text only, and most pieces repeat ("\n", "_",
    # "`", "|", "[", "]"): each distinct piece is decided once (None: it stays as it is).
    decided: dict[str, str | None] = {}
    for match in _MARKUP.finditer(text, last):
        piece = match.group()
        try:
            replacement = decided[piece]
        except KeyError:
            replacement = _markup_replacement(piece)
            if replacement == piece:
                replacement = None
            decided[piece] = replacement
        if replacement is None:
            continue
        start, end = match.span()
        parts.append(text[last:start])
        parts.append(replacement)
        norm_start = length + (start - last)
        length = norm_start + len(replacement)
        changes.append((norm_start, length, start, end))
        last = end
    parts.append(text[last:])
    return "".join(parts), changes


class _Changes:
    """Offsets of a changed text mapped back to the text it was made from."""

    def __init__(self, changes: list[tuple[int, int, int, int]]) -> None:
        self.changes = changes
        self.starts = [change[0] for change in changes]

    def start(self, offset: int) -> int:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index < 0:
            return offset
        norm_start, norm_end, orig_start, orig_end = self.changes[index]
        return orig_start if offset < norm_end else offset + orig_end - norm_end

    def end(self, offset: int) -> int:
        index = bisect.bisect_left(self.starts, offset) - 1
        if index < 0:
            return offset
        norm_start, norm_end, orig_start, orig_end = self.changes[index]
        return orig_end if offset <= norm_end else offset + orig_end - norm_end


def _comparison(text: str, *, translated: bool = False) -> tuple[str, list[tuple[int, int, int, int]]]:
    """Comparison form of ``text`` and the spots where its length changed.

    Each change is ``(norm_start, norm_end, orig_start, orig_end)``: the comparison form's
    ``[norm_start, norm_end)`` stands for the original ``[orig_start, orig_end)``. Only
    length-changing spots are recorded, so a 300-page text costs a handful of entries per
    page, not one per character.
    ``translated``: ``text`` comes from :func:`_strip_markup`, translated already.
    """
    parts: list[str] = []
    changes: list[tuple[int, int, int, int]] = []
    last = 0
    norm_length = 0
    if not translated:
        text = _same_length(text)
    search = _CANDIDATE.search
    position = 0
    while (match := search(text, position)) is not None:
        start, end = match.span()
        first = text[start]
        position = end
        if first in "-\u00ad":
            tail = _HYPHEN_TAIL.match(text, end) if start > 0 and _is_word(text[start - 1]) else None
            if tail is not None:
                end = position = tail.end()
            elif first == "-":
                continue  # a hyphen that joins nothing stays
            replacement = ""
        elif first in _GONE:
            replacement = ""
        elif first in " \n":
            replacement = " "
        else:
            replacement = _EXPANSIONS[first]
        parts.append(text[last:start])
        parts.append(replacement)
        norm_start = norm_length + (start - last)
        norm_length = norm_start + len(replacement)
        changes.append((norm_start, norm_length, start, end))
        last = end
    parts.append(text[last:])
    return "".join(parts).replace("\n", " "), changes


_WORD = re.compile(r"\w+")


CLOSEST_LENGTH = 600
"""Characters of a quote that is not found compared with the text (its start: a longer quote
is offered the passage closest to how it begins)."""
CLOSEST_GRAMS = 40
"""Most distinct word n-grams of such a quote looked up in the text."""
CLOSEST_SECONDS = 0.8
"""About how long the search for the closest passage may take."""


class Haystack:
    """One extracted text, prepared for many searches."""

    def __init__(self, text: str) -> None:
        self.text = text
        bare, markup = _strip_markup(text)
        # Translated already: so was the text, and what _strip_markup puts in (test_locate_speed.py).
        self.norm, changes = _comparison(bare, translated=True)
        self._markup = _Changes(markup)
        self._spacing = _Changes(changes)

    def to_original(self, offset: int) -> int:
        """Where a passage starting at ``offset`` of the comparison form starts in the extracted text."""
        return self._markup.start(self._spacing.start(offset))

    def to_original_end(self, offset: int) -> int:
        """Where a passage ending at ``offset`` (exclusive) of the comparison form ends in the extracted text.

        A removed hyphen or markup right at the end stays outside the passage; a ligature cut
        in the middle is included whole.
        """
        return self._markup.end(self._spacing.end(offset))

    def _span(self, position: int, length: int) -> Span:
        return Span(self.to_original(position), self.to_original_end(position + length))

    def find_all(self, quote: str, *, limit: int = 1000) -> list[Span]:
        """Every place ``quote`` occurs (at most ``limit``), in text order."""
        needle = normalise(quote)
        if not needle:
            return []
        spans = []
        position = self.norm.find(needle)
        while position >= 0 and len(spans) < limit:
            spans.append(self._span(position, len(needle)))
            position = self.norm.find(needle, position + 1)
        return spans

    def find(self, quote: str) -> Span | None:
        """The first place ``quote`` occurs, or None."""
        needle = normalise(quote)
        if not needle:
            return None
        position = self.norm.find(needle)
        if position < 0:
            return None
        return self._span(position, len(needle))

    def matches_at(self, quote: str, start: int, end: int) -> bool:
        """True when ``text[start:end]`` is ``quote`` (after normalisation)."""
        if not 0 <= start < end <= len(self.text):
            return False
        return normalise(self.text[start:end]) == normalise(quote)

    def closest(self, quote: str, *, budget: float = CLOSEST_SECONDS) -> Closest | None:
        """The passage most like ``quote``, or None when nothing shares a word with it.

        Word n-grams of the quote (three words, then two, then one) vote for where the
        quote would start; the best few candidates are compared character by character.
        The work is bounded whatever the quote and the text: only the quote's first
        :data:`CLOSEST_LENGTH` characters are compared, at most :data:`CLOSEST_GRAMS` distinct
        n-grams vote, and the search stops after about ``budget`` seconds with the best
        answer so far (a long quote that is not found is answered in well under 2 s).
        """
        from difflib import SequenceMatcher  # only a quote not found needs it (about 1 ms to load)

        deadline = time.monotonic() + budget
        needle = normalise(quote)
        if len(needle) > CLOSEST_LENGTH:
            cut = needle.rfind(" ", 0, CLOSEST_LENGTH)
            needle = needle[:cut if cut > CLOSEST_LENGTH // 2 else CLOSEST_LENGTH]
        words = [(m.start(), m.group()) for m in _WORD.finditer(needle)]
        if not words:
            return None
        votes: Counter[int] = Counter()
        for size in (3, 2, 1):
            if len(words) < size:
                continue
            grams: dict[str, int] = {}  # each distinct n-gram once, at its first offset
            for index in range(len(words) - size + 1):
                offset = words[index][0]
                gram = needle[offset:words[index + size - 1][0] + len(words[index + size - 1][1])]
                if size == 1 and len(gram) < 4:
                    continue  # "a", "the": they vote everywhere
                grams.setdefault(gram, offset)
            chosen = list(grams.items())
            if len(chosen) > CLOSEST_GRAMS:  # spread over the quote, not its first words only
                step = len(chosen) / CLOSEST_GRAMS
                chosen = [chosen[int(i * step)] for i in range(CLOSEST_GRAMS)]
            for gram, offset in chosen:
                found = 0
                position = self.norm.find(gram)
                while position >= 0 and found < 50:
                    votes[(position - offset) // 8] += size
                    found += 1
                    position = self.norm.find(gram, position + 1)
                if time.monotonic() > deadline:
                    break
            if votes or time.monotonic() > deadline:
                break
        if not votes:
            return None
        best: Closest | None = None
        slack = max(20, len(needle) // 4)
        for bucket, _ in votes.most_common(5):
            if best is not None and time.monotonic() > deadline:
                break
            low = max(0, bucket * 8 - slack)
            window = self.norm[low:bucket * 8 + len(needle) + slack]
            matcher = SequenceMatcher(None, needle, window, autojunk=False)
            blocks = [block for block in matcher.get_matching_blocks() if block.size]
            if not blocks:
                continue
            start = low + blocks[0].b
            end = low + blocks[-1].b + blocks[-1].size
            ratio = SequenceMatcher(None, needle, self.norm[start:end], autojunk=False).ratio()
            if best is None or ratio > best.ratio:
                best = Closest(self.to_original(start), self.to_original_end(end), ratio)
        return best


def excerpt(text: str, start: int, end: int, *, width: int = 160) -> str:
    """``text[start:end]`` on one line, shortened in the middle to about ``width`` characters."""
    passage = " ".join(text[start:end].split())
    if len(passage) <= width:
        return passage
    half = width // 2 - 1
    return passage[:half].rstrip() + " … " + passage[-half:].lstrip()


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n\s*\n")
_ABBREVIATIONS = frozenset([
    "e.g", "i.e", "cf", "vs", "etc", "al", "fig", "figs", "sec", "secs", "eq", "eqs", "tab", "ch", "chap", "vol",
    "no", "nos", "pp", "approx", "resp", "incl", "esp", "ca", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "inc", "ltd", "corp",
    "dept", "univ"])
"""Words that end in a full stop without ending a sentence (compared in lower case)."""
_WORD_BEFORE = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]+$")


def _ends_sentence(text: str, match: re.Match[str], offset: int) -> bool:
    """True when the sentence end ``match`` (at ``offset`` in ``text``) ends a sentence: not the
    full stop of an abbreviation (``e.g.``, ``Jun.``, ``Fig.``, ``et al.``, an initial), and not
    followed by a word in lower case or a number (``Jun. 27``, ``version 0.4. The``)."""
    if match.group().startswith("\n"):
        return True
    position = offset + match.start()
    if text[position] == ".":
        word = _WORD_BEFORE.search(text, max(0, position - 12), position)
        if word and (word.group().lower() in _ABBREVIATIONS or len(word.group()) == 1):
            return False
    after = offset + match.end()
    while after < len(text) and text[after].isspace():
        after += 1
    return not (after < len(text) and (text[after].islower() or text[after].isdigit()))


def sentence_around(text: str, start: int, end: int) -> Span:
    """Widen ``text[start:end]`` to the sentence (or sentences) holding it.

    A sentence ends at ``.``, ``!`` or ``?`` followed by white space, or at a blank line; the
    full stop of an abbreviation (``e.g.``, ``Jun.``, ``Fig. 2``, ``et al.``) or one followed by a
    word in lower case or a number does not end it.
    """
    left = max(0, start - 2000)
    before = text[left:start]
    cut = left
    for match in _SENTENCE_END.finditer(before):
        if _ends_sentence(text, match, left):
            cut = left + match.end()
    right = text[end:end + 2000]
    stop = end + len(right)
    for match in _SENTENCE_END.finditer(right):
        if _ends_sentence(text, match, end):
            stop = end + match.end()
            break
    while cut < stop and text[cut].isspace():
        cut += 1
    while stop > cut and text[stop - 1].isspace():
        stop -= 1
    return Span(cut, stop)
