"""Ranking passages for a query: BM25 over words and headings, and a proximity bonus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import semantic
from .passage import HEADING_SEPARATOR, Passage
from .query import Query, words

# Weights of the score's parts, chosen with the query's (see .query) on the dev documents of
# benchmarks/find_real.py (real documentation; its held-out documents were not used to choose).
# A grid over these weights moved dev recall@10 by a few key passages at most; the heading and
# proximity signals did not help there and are off, and so did a BM25 over each passage's
# neighbours (tried with 1 to 10 passages around it: dev recall@10 equal or lower).
WEIGHT_HEADING = 0.0
"""A second BM25 over the heading path alone (the heading's words are in the body index too)."""
WEIGHT_PROXIMITY = 0.0
"""Per pair of distinct query words found within :data:`PROXIMITY_WINDOW` words of each other."""
PROXIMITY_WINDOW = 6
PROXIMITY_POOL = 200
"""How many of the best-scored passages the proximity bonus looks at (it can reorder only these)."""
KIND_WEIGHTS = {"prose": 1.0, "list": 1.0, "table": 0.5, "comment": 0.5, "code": 0.5, "install": 0.1, "news": 0.3,
                "toc": 0.1, "badge": 0.1, "boilerplate": 0.1}
"""What a passage's score is multiplied by, by its kind (see ``passages.PASSAGE_KINDS``): code and
tables rank below prose unless the query matches them clearly better; install lines, news
entries, tables of contents, badges and citation or licence sections are rarely what a field asks for. Chosen on the dev
documents of benchmarks/find_real.py."""
BM25_K1 = 1.5
BM25_B = 0.75
"""bm25s's defaults (Lucene's): term-frequency saturation and length normalisation (other
values on the dev split moved recall@10 by at most one passage)."""
BM25_METHOD = "lucene"
"""bm25s's default variant; like every variant but BM25L and BM25+, it gives a passage without the
query's words nothing, which :func:`word_scores` relies on."""


@dataclass(frozen=True)
class Candidate:
    """A passage ranked for one field: where it is, its text and its score (higher is better)."""

    source: str
    heading: str
    start: int
    end: int
    raw_start: int | None
    raw_end: int | None
    text: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``protocoder find --format json``)."""
        return {"source": self.source, "heading": self.heading, "start": self.start, "end": self.end,
                "raw_start": self.raw_start, "raw_end": self.raw_end, "score": self.score, "text": self.text}


@dataclass
class PassageIndex:
    """BM25 indexes over a set of passages (one protocol's), ready to answer queries."""

    passages: list[Passage]
    body: Any
    """BM25 index of each passage's words with its heading path: a ``bm25s.BM25`` when built here,
    a :class:`SavedBM25` when read from the cache (both score through :func:`word_scores`)."""
    heading: Any
    """BM25 index of each passage's heading path alone (the same two kinds)."""
    vectors: Any = None
    """Unit embeddings of the passages (numpy, one row each) for the semantic signal; None without it."""
    _tokens: dict[int, list[str]] = field(default_factory=dict)
    """Words of the passages the proximity bonus has looked at, by passage number."""
    _kind_weights: Any = None

    @classmethod
    def build(cls, passages: list[Passage]) -> PassageIndex:
        """Index ``passages`` (may be empty)."""
        body = _bm25([words(p.heading) + words(p.text) for p in passages])
        heading = _bm25([words(p.heading.split(HEADING_SEPARATOR)[-1]) if p.heading else [] for p in passages])
        vectors = semantic.embed([passage_meaning(p) for p in passages])
        if vectors is not None:
            vectors = vectors.astype("float16").astype("float32")  # as the cache stores them: same scores
        return cls(passages, body, heading, vectors)

    def tokens(self, number: int) -> list[str]:
        """The words of passage ``number`` in order (computed when first asked for)."""
        found = self._tokens.get(number)
        if found is None:
            found = self._tokens[number] = words(self.passages[number].text)
        return found

    def scores(self, query: Query, *, use_heading: bool = True, use_proximity: bool = True,
               use_kinds: bool = True, use_semantic: bool = True) -> Any:
        """One score per passage (numpy array) for ``query``."""
        import numpy as np

        weighted = query.weighted_words()
        total = np.zeros(len(self.passages), dtype="float32")
        if not self.passages or not weighted:
            return total
        total += _weighted_scores(self.body, weighted)
        if use_heading and WEIGHT_HEADING:
            total += WEIGHT_HEADING * _weighted_scores(self.heading, weighted)
        if use_proximity and WEIGHT_PROXIMITY:
            # The bonus reorders the best passages among themselves; only they are read word by
            # word (a thousand sources hold tens of thousands of passages).
            matched = np.flatnonzero(total > 0)
            if len(matched) > PROXIMITY_POOL:
                matched = matched[np.argpartition(-total[matched], PROXIMITY_POOL)[:PROXIMITY_POOL]]
            for index in matched:
                total[index] += WEIGHT_PROXIMITY * _close_pairs(self.tokens(int(index)), weighted)
        if use_kinds:
            total *= self.kind_weights()
        if use_semantic and self.vectors is not None and query.semantic:
            total = self._with_meaning(total, query)
        return total

    def _with_meaning(self, lexical: Any, query: Query) -> Any:
        """BM25 (scaled so the best passage has 1) plus the weighed cosine similarity to the query's meaning.

        A passage that shares no word with the query joins only when its similarity reaches
        ``SEMANTIC_FLOOR``; code and other kinds keep their factor on the similarity too.
        """
        import numpy as np

        vector = semantic.query_vector(query.semantic)
        if vector is None or len(self.vectors) != len(self.passages):
            return lexical
        similarity = self.vectors.astype("float32") @ vector.astype("float32")
        best = float(lexical.max()) if len(lexical) else 0.0
        fused = (lexical / best if best > 0 else lexical) + semantic.WEIGHT_SEMANTIC * np.clip(
            similarity, 0.0, None) * self.kind_weights()
        fused[(lexical <= 0) & (similarity < semantic.SEMANTIC_FLOOR)] = 0.0
        return fused.astype("float32")

    def kind_weights(self) -> Any:
        """Each passage's :data:`KIND_WEIGHTS` factor (numpy array; computed when first asked for)."""
        import numpy as np

        if self._kind_weights is None:
            self._kind_weights = np.array([KIND_WEIGHTS.get(p.kind, 1.0) for p in self.passages], dtype="float32")
        return self._kind_weights

    def search(self, query: Query, limit: int = 10, **options: bool) -> list[Candidate]:
        """The ``limit`` best passages for ``query``, best first; passages with no query word are left out."""
        import numpy as np

        scores = self.scores(query, **options)
        if limit <= 0 or not len(scores):
            return []
        # Ties (equal scores) keep text order: stable sort on the negated scores.
        order = np.argsort(-scores, kind="stable")[:limit]
        found = []
        for index in order:
            score = float(scores[index])
            if score <= 0:
                break
            p = self.passages[int(index)]
            found.append(Candidate(p.source, p.heading, p.start, p.end, p.raw_start, p.raw_end, p.text,
                                   round(score, 4)))
        return found


def passage_meaning(passage: Passage) -> str:
    """What the semantic signal embeds of a passage: its heading path and its text."""
    return f"{passage.heading}. {passage.text}" if passage.heading else passage.text


def _bm25(corpus: list[list[str]]) -> Any:
    import bm25s

    index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    # An empty token keeps bm25s happy for passages without words and for empty corpora.
    index.index([doc or [""] for doc in corpus] or [[""]], show_progress=False)
    return index


def _weighted_scores(index: Any, weighted: dict[str, float]) -> Any:
    """Sum over the query's words of weight × BM25 contribution (bm25s precomputes the latter)."""
    import numpy as np

    total = np.zeros(index.scores["num_docs"], dtype="float32")
    by_weight: dict[float, list[int]] = {}
    for word, weight in weighted.items():
        token_id = index.vocab_dict.get(word)
        if token_id is not None and word:
            by_weight.setdefault(weight, []).append(token_id)
    for weight, ids in by_weight.items():
        total += weight * word_scores(index.scores, ids)
    return total


def word_scores(scores: dict[str, Any], ids: Sequence[int]) -> Any:
    """Each passage's BM25 score for the words ``ids``: the sum of their precomputed contributions.

    ``scores`` is a bm25s index's ``scores`` (its CSC matrix: ``data``, ``indices``, ``indptr``,
    ``num_docs``), of one just built or of :class:`SavedBM25`. The sum is bm25s's own
    (``BM25.get_scores_from_ids`` for the ``lucene`` method: float32, word after word), so a
    cached index ranks exactly as the index it was saved from, without importing bm25s or scipy.
    """
    import numpy as np

    data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
    total = np.zeros(scores["num_docs"], dtype=data.dtype)
    for token_id in ids:
        start, end = int(indptr[token_id]), int(indptr[token_id + 1])
        # A word's passages are distinct within its column: a plain indexed add is bm25s's np.add.at.
        total[indices[start:end]] += data[start:end]
    return total


@dataclass(frozen=True)
class SavedBM25:
    """A bm25s index read back from the files ``bm25s.BM25.save`` wrote, with numpy alone.

    A cached index is only queried, never rebuilt, so loading it needs neither bm25s nor the
    scipy it imports (most of a one-shot ``protocoder find``'s start-up). It offers what the
    ranking reads of a bm25s index: ``vocab_dict`` and ``scores``.
    """

    vocab_dict: dict[str, int]
    scores: dict[str, Any]

    @classmethod
    def load(cls, folder: Path) -> SavedBM25 | None:
        """The index saved in ``folder``, or None when it is not one this code can score as bm25s
        would (another method or dtype, arrays that do not fit together): the caller rebuilds it."""
        import json

        import numpy as np

        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / f"{name}.csc.index.npy", allow_pickle=False)
                  for name in ("data", "indices", "indptr")]
        data, indices, indptr = arrays
        num_docs = params.get("num_docs")
        if (params.get("method") != BM25_METHOD or params.get("dtype") != str(data.dtype)
                or not isinstance(num_docs, int) or not isinstance(vocab, dict)
                or any(a.ndim != 1 for a in arrays) or not len(indptr)
                or len(data) != len(indices) or int(indptr[-1]) != len(data)
                or (len(indices) and not 0 <= int(indices.min()) <= int(indices.max()) < num_docs)
                # bm25s adds the empty token to the vocabulary after the matrix: it may have no column
                # (a query never holds it, see _weighted_scores).
                or not all(isinstance(i, int) and 0 <= i < len(indptr) - 1 for t, i in vocab.items() if t)):
            return None
        return cls(vocab, {"data": data, "indices": indices, "indptr": indptr, "num_docs": num_docs})


def _close_pairs(tokens: Sequence[str], weighted: dict[str, float]) -> float:
    """How many pairs of distinct query words occur within PROXIMITY_WINDOW words of each other."""
    positions = [(i, t) for i, t in enumerate(tokens) if t in weighted]
    pairs = set()
    for a in range(len(positions)):
        i, first = positions[a]
        for b in range(a + 1, len(positions)):
            j, second = positions[b]
            if j - i > PROXIMITY_WINDOW:
                break
            if first != second:
                pairs.add((first, second) if first < second else (second, first))
    return float(len(pairs))
