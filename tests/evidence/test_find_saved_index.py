"""A cached index is queried with numpy alone (``SavedBM25``), and ranks exactly as bm25s would.

Built indexes are bm25s objects; a query against a cached one reads the arrays bm25s saved and sums
them as bm25s does (``word_scores``), so a one-shot ``find`` imports neither bm25s nor scipy. These
tests check, on published documentation (``tests/data/real-docs``), that the sum is bm25s's own to
the last bit, and that every field of the bundled rubric gets the same candidates, with the same
scores, from the index just built and from the index read back from the cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from protocoder.evidence.extract import extract
from protocoder.evidence.search import (
    PassageIndex,
    ProtocolPassages,
    field_query,
    read_index,
    source_passages,
    write_index,
)
from protocoder.evidence.search.ranking import SavedBM25, word_scores
from protocoder.storage.findings import Findings
from protocoder.storage.formats import parse_rubric
from protocoder.storage.yamlio import parse_yaml

REPO = Path(__file__).resolve().parents[2]
REAL_DOCS = REPO / "tests" / "data" / "real-docs"
DOCUMENTS = ["alpaca-eval/README.md", "lm-eval/README.md", "openhands-ai/README.md", "bigcodebench/ADVANCED_USAGE.md"]


def _index(name: str) -> PassageIndex:
    return PassageIndex.build(source_passages("readme", extract((REAL_DOCS / name).read_bytes(), "text/markdown")))


def _saved(index: PassageIndex, folder: Path) -> PassageIndex:
    write_index(folder, ProtocolPassages(index, ("readme",)))
    loaded = read_index(folder)
    assert loaded is not None
    assert isinstance(loaded.index.body, SavedBM25) and isinstance(loaded.index.heading, SavedBM25)
    return loaded.index


@pytest.mark.parametrize("name", DOCUMENTS)
def test_saved_scores_are_bm25s_scores_to_the_bit(name: str, tmp_path: Path) -> None:
    built = _index(name)
    saved = _saved(built, tmp_path / "index")
    for part in ("body", "heading"):
        bm25, mine = getattr(built, part), getattr(saved, part)
        assert mine.vocab_dict == bm25.vocab_dict
        ids = sorted(i for word, i in bm25.vocab_dict.items() if word)
        rng = np.random.default_rng(7)
        # Every word alone, and sets of words in any order (the sum runs word after word, in float32).
        groups = [[i] for i in ids] + [list(rng.choice(ids, size=min(len(ids), k), replace=False))
                                       for k in (2, 5, 20, 80) for _ in range(10)]
        for group in groups:
            expected = bm25.get_scores_from_ids(group)
            for scores in (word_scores(mine.scores, group), word_scores(bm25.scores, group)):
                assert scores.dtype == expected.dtype and np.array_equal(scores, expected), (part, group)


def test_every_field_finds_the_same_candidates_in_the_cache(tmp_path: Path) -> None:
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    rubric = parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))
    for number, name in enumerate(DOCUMENTS):
        built = _index(name)
        saved = _saved(built, tmp_path / str(number))
        for fld in rubric.fields:
            query = field_query(rubric, fld, "container reset")
            expected = [c.to_dict() for c in built.search(query, 50)]
            assert expected and json.dumps([c.to_dict() for c in saved.search(query, 50)]) == json.dumps(expected)


def test_a_saved_index_that_does_not_fit_together_is_not_used(tmp_path: Path) -> None:
    """Arrays whose pointers run past their data (written by hand: the manifest's hashes are the
    first guard) are refused, so the caller rebuilds rather than crash on a query."""
    folder = tmp_path / "index"
    _saved(_index(DOCUMENTS[0]), folder)
    body = folder / "body"
    assert SavedBM25.load(body) is not None
    indptr = np.load(body / "indptr.csc.index.npy")
    np.save(body / "indptr.csc.index.npy", indptr + 1)
    assert SavedBM25.load(body) is None
    np.save(body / "indptr.csc.index.npy", indptr)
    params = json.loads((body / "params.index.json").read_text(encoding="utf-8"))
    (body / "params.index.json").write_text(json.dumps({**params, "method": "bm25+"}), encoding="utf-8")
    assert SavedBM25.load(body) is None
