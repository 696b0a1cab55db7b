"""BM25 over passages as bm25s scores it: an index built from words, a query's weighted words summed over it,
and float32 arithmetic that reproduces bm25s's scores to the bit without importing it (for a cached index)."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from .saved import BM25_METHOD

BM25_K1 = 1.5
BM25_B = 0.75
"""bm25s's defaults (Lucene's): term-frequency saturation and length normalisation (other
values on the dev split moved recall@10 by at most one passage)."""


def bm25_index(corpus: Iterable[list[str]]) -> Any:
    """A bm25s index of ``corpus`` (one list of words per passage, read once, one at a time).

    The words are turned into bm25s's token ids here, as bm25s would (its vocabulary holds each word
    once; only the ids' order differs, which bm25s takes from a set of strings, so it varied from
    run to run anyway): each passage is kept as an array of ids, never as its list of words,
    and the scores are bm25s's own to the bit.
    """
    import bm25s

    vocab: dict[str, int] = {}
    ids: list[array] = []
    for doc in corpus:
        # An empty token keeps bm25s happy for passages without words and for empty corpora. An array
        # of ids is a third of a list's size; bm25s only counts, measures and iterates each passage's.
        ids.append(array("i", [vocab.setdefault(word, len(vocab)) for word in doc or [""]]))
    if not ids:
        ids.append(array("i", [vocab.setdefault("", 0)]))
    index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    index.index((ids, vocab), show_progress=False)
    return index


def weighted_scores(index: Any, weighted: dict[str, float]) -> Any:
    """Sum over the query's words of weight × BM25 contribution (bm25s precomputes the latter)."""
    import numpy as np

    total = np.zeros(index.scores["num_docs"], dtype="float32")
    for weight, ids in ids_by_weight(index, weighted).items():
        total += weight * word_scores(index.scores, ids)
    return total


def ids_by_weight(index: Any, weighted: dict[str, float]) -> dict[float, list[int]]:
    """The query's words in the index, as token ids grouped by their weight (in the query's order)."""
    by_weight: dict[float, list[int]] = {}
    for word, weight in weighted.items():
        token_id = index.vocab_dict.get(word)
        if token_id is not None and word:
            by_weight.setdefault(weight, []).append(token_id)
    return by_weight


_FLOAT32 = struct.Struct("f")


def as_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (as numpy stores it in a float32 array); no shared
    buffer, so that the coding app's worker threads can rank at the same time."""
    return _FLOAT32.unpack(_FLOAT32.pack(value))[0]


def word_scores(scores: dict[str, Any], ids: Sequence[int]) -> Any:
    """Each passage's BM25 score for the words ``ids``: the sum of their precomputed contributions.

    ``scores`` is a bm25s index's ``scores`` (its CSC matrix: ``data``, ``indices``, ``indptr``,
    ``num_docs``), of one just built or of :class:`.saved.SavedBM25`. The sum is bm25s's own
    (``BM25.get_scores_from_ids`` for the ``lucene`` method: float32, word after word), so a
    cached index ranks exactly as the index it was saved from, without importing bm25s or scipy.
    """
    import numpy as np

    data, indices, indptr = (np.asarray(scores[name]) for name in ("data", "indices", "indptr"))
    total = np.zeros(scores["num_docs"], dtype=data.dtype)
    for token_id in ids:
        start, end = int(indptr[token_id]), int(indptr[token_id + 1])
        # A word's passages are distinct within its column: a plain indexed add is bm25s's np.add.at.
        total[indices[start:end]] += data[start:end]
    return total
