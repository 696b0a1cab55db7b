"""The words BM25 counts, and a field's query as weighted parts."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...model import Field, Rubric


# Weights of the query's parts, chosen on the dev documents of benchmarks/find_real.py (real
# documentation; the held-out documents were not used to choose them).
WEIGHT_FIELD = 1.0
"""The field's question, definition and guidance."""
WEIGHT_CODES = 0.0
"""The definitions and guidance of the field's codes: off, they are about coding (E, P, NR), not about
where evidence is, and on real documentation they only pulled in passages about other things."""
WEIGHT_TERMS = 5.0
"""``search_terms`` of the field and its codes: words the rubric's authors chose to find evidence."""
WEIGHT_TYPED = 20.0
"""What the reviewer types: the strongest signal of what they look for now, so that a passage holding
the typed words outranks one holding many of the field's own words at :data:`WEIGHT_TERMS` (6 was
enough with the rubric's first search terms; with about 40 per field a passage matching seven of
them beat one matching all three typed words; not tuned on the benchmark, which types nothing)."""
WEIGHT_QUOTES = 1.0
"""What a word of the passages quoted for the same field in other protocols weighs when enough of them
contain it (``find --reviewer``, see :func:`quote_weights`): what evidence for this field has looked like
before."""
QUOTES_SHARING = 3
"""A quoted word weighs :data:`WEIGHT_QUOTES` × (the quotes that contain it / this many), at most
:data:`WEIGHT_QUOTES` (with fewer quotes than this, / their number: one quote teaches all its words).

The words several quotes share are the field's vocabulary ("cache", "container", "fresh"); a word of one
quote is often that harness's own name or command, but sometimes the very word the next document uses.
Every quoted word at full weight made warm recall worse than cold on the dev documents when passages
were short (round 2: 0.78 -> 0.66); only the words three quotes share (rounds 2-4) was better there
but lost on the second set (0.75 against 0.82 with every word, the three quote sets' mean). Weighing
each word by how many quotes share it holds on both: round 5, the 21 documents of both sets, three quote
sets each, recall@10 warm: dev 0.786 (only shared words 0.801, every word 0.753), second set 0.833
(0.803, 0.846); saturating at 2 / 4 / 5 quotes, or words of fewer quotes at a flat 0.1-0.5, are within
a key passage or two of it."""


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

_STOPWORD_TEXT = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with from has have had its which who whom whose what when where how do does did "
    "can could should would may might must shall we you your our us i me my he she him her them than so very "
    "also any each all some other more most only own same too just been being were about over under again "
    "further once here both few nor out up down off s t")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """The English Snowball (Porter 2) stem of ``word``: ``caching``, ``cached`` and ``cache`` meet at
    ``cach``, ``isolation`` and ``isolated`` at ``isol`` (remembered: documents repeat their words)."""
    found = _STEMS.get(word)
    if found is None:
        if len(word) <= 3 or word.isdigit():
            return word
        if len(_STEMS) > 200_000:
            _STEMS.clear()
        found = _STEMS[word] = _snowball().stemWord(word)
    return found


def _snowball() -> Any:
    """This thread's Snowball stemmer (a stemmer keeps state while it works: one per thread, as the
    coding app ranks candidates in a worker thread)."""
    found = getattr(_THREAD, "stemmer", None)
    if found is None:
        import snowballstemmer

        found = _THREAD.stemmer = snowballstemmer.stemmer("english")
    return found


_THREAD = threading.local()


def words(text: str) -> list[str]:
    """The stemmed, lower-cased content words of ``text`` (stop words dropped), in order."""
    return [stemmed for _, stemmed in _tokens(text)]


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
"""A run of Chinese, Japanese or Korean characters (kana, CJK ideographs, Hangul syllables)."""


def _tokens(text: str) -> list[tuple[str, str]]:
    """(lower-cased word, its stem) of each content word of ``text``, in order.

    Chinese and Japanese write no spaces between words, so a run of their characters is read as its
    overlapping pairs of characters (a lone character as itself), as Lucene's CJK analyzer reads it:
    ``并行代理`` is ``并行``, ``行代``, ``代理``, and a reviewer's typed ``并行`` finds it. Latin letters
    written against them are words of their own (``集成RAY`` holds ``ray``)."""
    lowered = text.lower()
    out = []
    for match in _WORD.finditer(lowered):
        token = match.group().replace("’", "'")
        if "'" in token:
            token = token.split("'")[0]
        if not token or token in _STOPWORDS:
            continue
        if token.isascii() or not _CJK.search(token):
            out.append((token, stem(token)))
            continue
        at = 0
        for run in _CJK.finditer(token):
            out.extend((word, stem(word)) for word in _latin_words(token[at:run.start()]))
            chars = run.group()
            out.extend((pair, pair) for pair in ([chars] if len(chars) == 1 else
                                                 (chars[i:i + 2] for i in range(len(chars) - 1))))
            at = run.end()
        out.extend((word, stem(word)) for word in _latin_words(token[at:]))
    return out


def _latin_words(piece: str) -> list[str]:
    """The content words of a piece of a token between runs of CJK characters."""
    return [piece] if piece and piece not in _STOPWORDS else []


@dataclass(frozen=True)
class Query:
    """A query as weighted parts: (weight, text), e.g. the field's words at 1.0 and its codes' at 0.3."""

    parts: tuple[tuple[float, str], ...]
    semantic: tuple[str, ...] = ()
    """Texts whose meaning the semantic signal compares passages with (see ``.semantic``): the
    field's label, question and definition, and its search terms. Empty: BM25 alone."""

    def weighted_words(self) -> dict[str, float]:
        """Each distinct word of the query with the largest weight of a part it is in."""
        found: dict[str, float] = {}
        for weight, text in self.parts:
            for word in words(text):
                found[word] = max(found.get(word, 0.0), weight)
        return found


def quote_weights(quotes: Sequence[str]) -> dict[str, float]:
    """Each word of ``quotes`` (as first written) with its share of :data:`WEIGHT_QUOTES`: the number of
    quotes that contain it over :data:`QUOTES_SHARING` (over the number of quotes when there are fewer),
    at most 1; most shared first. Words meet by their stem (``cached`` and ``caching`` are one word)."""
    counts: dict[str, int] = {}
    written: dict[str, str] = {}
    for quote in quotes:
        tokens = _tokens(quote)
        for token, stemmed in tokens:
            written.setdefault(stemmed, token)
        for stemmed in {s for _, s in tokens}:
            counts[stemmed] = counts.get(stemmed, 0) + 1
    full = min(QUOTES_SHARING, len(quotes))
    return {written[s]: min(1.0, counts[s] / full) for s in sorted(counts, key=lambda s: (-counts[s], s))}


def field_query(rubric: Rubric, fld: Field, typed: str = "", *, quotes: Sequence[str] = ()) -> Query:
    """The query for one field: its question, definition and guidance; its codes' definitions
    (weaker); the ``search_terms`` of the field and its codes; what the reviewer typed; and
    the words of ``quotes``, passages quoted for this field in other protocols, weighed by how many of
    them share each (:func:`quote_weights`)."""
    parts: list[tuple[float, str]] = [(WEIGHT_FIELD, " ".join((fld.label, fld.question, fld.definition,
                                                               fld.guidance)))]
    terms = list(getattr(fld, "search_terms", ()))
    for code_id in fld.codes:
        try:
            code = rubric.code(code_id)
        except KeyError:
            continue
        if WEIGHT_CODES:
            parts.append((WEIGHT_CODES, " ".join((code.definition, code.guidance))))
        terms.extend(getattr(code, "search_terms", ()))
    if terms:
        parts.append((WEIGHT_TERMS, " ".join(terms)))
    if typed.strip():
        parts.append((WEIGHT_TYPED, typed))
    by_share: dict[float, list[str]] = {}
    for word, share in quote_weights(quotes).items():
        by_share.setdefault(share, []).append(word)
    parts.extend((WEIGHT_QUOTES * share, " ".join(learned)) for share, learned in by_share.items())
    # The semantic signal compares with what the field means, not with quotes (on the dev documents
    # adding them made warm recall worse); what the reviewer types is what they look for now, so then
    # it compares with that alone.
    meaning = (typed.strip(),) if typed.strip() else (
        " ".join((fld.label, fld.question, fld.definition)), " ".join(getattr(fld, "search_terms", ())))
    return Query(tuple(parts), meaning)
