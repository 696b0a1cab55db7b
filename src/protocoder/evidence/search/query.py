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
"""The words that passages quoted for the same field in other protocols share (``find --reviewer``, see
:func:`shared_words`): what evidence for this field has looked like before."""
QUOTES_SHARING = 3
"""A quoted word joins the query when at least this many quotes (or all of them, when there are fewer)
contain it. All the quotes' words as one part made warm recall worse than cold on the dev documents
(0.78 -> 0.66 recall@10): a dozen quotes from other harnesses bring a hundred words about those
harnesses, and on short passages each of them can outrank the field. The words several quotes share
are the field's vocabulary ("cache", "container", "fresh"): 0.80 (chosen on the dev documents, with
three quote sets per document; 2 quotes sharing scored 0.79, 4 scored 0.78). Checked again in round 4
with paragraphs as passages, on the 14 dev documents and three quote sets: 3 sharing 0.768 warm, every
word (1) 0.732; it stays 3 (on the fresh set, seen twice, 1 would score higher: see the results log)."""


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


def _tokens(text: str) -> list[tuple[str, str]]:
    """(lower-cased word, its stem) of each content word of ``text``, in order."""
    out = []
    for match in _WORD.finditer(text.lower()):
        token = match.group().replace("’", "'")
        if "'" in token:
            token = token.split("'")[0]
        if token and token not in _STOPWORDS:
            out.append((token, stem(token)))
    return out


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


def shared_words(quotes: Sequence[str]) -> list[str]:
    """The words that at least :data:`QUOTES_SHARING` of ``quotes`` contain (all of them when there are
    fewer quotes), as first written, most shared first: one quote teaches all its words, a dozen their
    common ones. Words meet by their stem (``cached`` and ``caching`` are one word)."""
    counts: dict[str, int] = {}
    written: dict[str, str] = {}
    for quote in quotes:
        tokens = _tokens(quote)
        for token, stemmed in tokens:
            written.setdefault(stemmed, token)
        for stemmed in {s for _, s in tokens}:
            counts[stemmed] = counts.get(stemmed, 0) + 1
    needed = min(QUOTES_SHARING, len(quotes))
    return [written[s] for s in sorted((s for s, n in counts.items() if n >= needed), key=lambda s: (-counts[s], s))]


def field_query(rubric: Rubric, fld: Field, typed: str = "", *, quotes: Sequence[str] = ()) -> Query:
    """The query for one field: its question, definition and guidance; its codes' definitions
    (weaker); the ``search_terms`` of the field and its codes; what the reviewer typed; and
    the words shared by ``quotes``, passages quoted for this field in other protocols (:func:`shared_words`)."""
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
    learned = shared_words(quotes)
    if learned:
        parts.append((WEIGHT_QUOTES, " ".join(learned)))
    # The semantic signal compares with what the field means, not with quotes (on the dev documents
    # adding them made warm recall worse); what the reviewer types is what they look for now, so then
    # it compares with that alone.
    meaning = (typed.strip(),) if typed.strip() else (
        " ".join((fld.label, fld.question, fld.definition)), " ".join(getattr(fld, "search_terms", ())))
    return Query(tuple(parts), meaning)
