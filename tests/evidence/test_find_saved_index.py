"""A cached index is queried without bm25s or numpy (``SavedBM25``), and ranks exactly as bm25s would.

Built indexes are bm25s objects; a query against a cached one reads the arrays bm25s saved and sums
them as bm25s does (``word_scores``), and ``search`` ranks the query words' passages in plain
Python with float32's arithmetic (``_sparse_scores``), so a one-shot ``find`` imports neither bm25s,
scipy nor numpy. These tests check, on published documentation (``tests/data/real-docs``), that the
sums are bm25s's own to the last bit, that the plain-Python ranking is the numpy one's (every score,
every tie), and that every field of the bundled rubric gets the same candidates, with the same
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
    ranking,
    read_index,
    source_passages,
    words,
    write_index,
)
from protocoder.evidence.search.bm25 import word_scores
from protocoder.evidence.search.saved import SavedBM25
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


def _numpy_ranking(index: PassageIndex, query, limit: int) -> list[tuple[int, int, float]]:
    """The ranking as ``search`` made it with numpy alone (before its plain-Python path): where, and the score;
    code, tables and diagrams under ``CODE_FLOOR`` of the best are not among the first ``FLOOR_PLACES`` (after them
    they follow the others), and the best code block is shown."""
    scores = index.scores(query)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if float(scores[i]) > 0]
    least = float(scores[order[0]]) * ranking.CODE_FLOOR if order else 0.0

    def under(i: int) -> bool:
        return float(scores[i]) < least and index.passages[i].kind in ranking.FLOORED_KINDS

    floored = [i for i in order if under(i)]
    order = [i for i in order if not under(i)]
    # Round 7: a commented command or a line of configuration sharing fewer than SHARED_WORDS distinct words with
    # the query comes after every other candidate (stable sort on "is such a passage").
    asked = set(query.weighted_words())

    def lone(i: int) -> bool:
        p = index.passages[i]
        setting = p.kind == "code" and ranking.CONFIG_LINE.fullmatch(p.text) is not None
        return (p.kind in ranking.LONE_WORD_KINDS or setting) and len(asked & set(words(p.text))) < ranking.SHARED_WORDS

    others = [i for i in order if not lone(i)]
    # Rounds 8 and 9: the lone ones, then the floored ones, follow the others, and only once the others fill the
    # first FLOOR_PLACES.
    order = others + [i for i in order if lone(i)] + floored if len(others) >= ranking.FLOOR_PLACES else others
    order = _best_block_shown(index, query, scores, order)
    return [(index.passages[i].start, index.passages[i].end, round(float(scores[i]), 4)) for i in order[:limit]]


def _best_block_shown(index: PassageIndex, query, scores, order: list[int]) -> list[int]:  # noqa: ANN001
    """``order`` with round 6's rule (``ranking.BLOCK_SLOTS``): the run of consecutive code units under one heading
    whose summed BM25 (no kind factors) beats every other passage or run gets its best unit into the first
    BLOCK_SLOTS, in the last slot there that holds a floored kind (or a free one)."""
    plain = index.scores(query, use_kinds=False)
    runs, previous = [], None
    for p in index.passages:
        joined = (previous is not None and {p.kind, previous.kind} <= ranking.CODE_UNIT_KINDS
                  and (p.source, p.heading) == (previous.source, previous.heading))
        runs.append(runs[-1] if joined else len(set(runs)))
        previous = p
    totals: dict[int, float] = {}
    for i in np.flatnonzero(plain > 0).tolist():
        totals[runs[i]] = totals.get(runs[i], 0.0) + float(plain[i])
    if not totals:
        return order
    best = max(sorted(totals), key=lambda run: totals[run])
    members = [i for i in np.flatnonzero(plain > 0).tolist() if runs[i] == best]
    slots = ranking.BLOCK_SLOTS
    if index.passages[members[0]].kind not in ranking.CODE_UNIT_KINDS or any(runs[i] == best for i in order[:slots]):
        return order
    unit = max(members, key=lambda i: (float(scores[i]), -i))
    head, rest = order[:slots], [i for i in order[slots:] if i != unit]
    if len(head) == slots:
        code = [place for place, i in enumerate(head) if index.passages[i].kind in ranking.FLOORED_KINDS]
        if not code:
            return order
        rest.insert(0, head.pop(code[-1]))
    return [*head, unit, *rest]


def test_the_plain_python_ranking_is_the_numpy_ranking(tmp_path: Path) -> None:
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    rubric = parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))
    quotes = ["Each task runs in a fresh Docker container that is removed afterwards.",
              "Results are cached and reused when the same model is evaluated again."]
    for number, name in enumerate(DOCUMENTS):
        built = _index(name)
        for index in (built, _saved(built, tmp_path / str(number))):
            for fld in rubric.fields:
                for typed, learned in (("", []), ("docker cache seed", quotes)):
                    query = field_query(rubric, fld, typed, quotes=learned)
                    expected = _numpy_ranking(index, query, len(index.passages))
                    found = index.search(query, len(index.passages))
                    assert expected and [(c.start, c.end, c.score) for c in found] == expected
                    # Every score to the last bit, not only to the four decimals a candidate shows.
                    sparse = index._sparse_scores(query)
                    assert sparse is not None
                    assert [sparse.get(i, 0.0) for i in range(len(index.passages))] == index.scores(query).tolist()


def test_a_one_shot_find_without_numpy_answers_as_the_numpy_ranking(tmp_path: Path, cli) -> None:
    """A ``find`` process on a cached index ranks in plain Python (numpy is not loaded there); the
    same query in this process, where numpy is loaded, ranks with numpy: every candidate and score
    alike, for every field, the whole ranking (``--limit 1000``)."""
    import subprocess
    import sys

    from conftest import copy_bundled

    root = copy_bundled(tmp_path / "review")
    for number, name in enumerate(DOCUMENTS[:2]):
        added = cli("source", "add", "swe-bench", REAL_DOCS / name, "--id", f"doc{number}", "--workspace", root)
        assert added.exit_code == 0, added.output
    fields = ["open_work", "reset_retention", "separate_evidence"]
    code = ("import json, sys\nfrom click.testing import CliRunner\nfrom protocoder.cli import main\n"
            "out = {f: json.loads(CliRunner().invoke(main, ['find', '--cell', 'swe-bench/' + f, '--format', 'json',"
            " '--limit', '1000', '--workspace', sys.argv[1]]).stdout) for f in " + repr(fields) + "}\n"
            "print(json.dumps({'numpy': 'numpy' in sys.modules, 'found': out}))")
    first = cli("find", "--cell", "swe-bench/open_work", "--workspace", root)  # builds and caches the index
    assert first.exit_code == 0, first.output
    result = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    alone = json.loads(result.stdout)
    assert alone["numpy"] is False
    assert "numpy" in sys.modules
    for fld in fields:
        here = cli("find", "--cell", f"swe-bench/{fld}", "--format", "json", "--limit", "1000", "--workspace", root)
        assert alone["found"][fld] and alone["found"][fld] == json.loads(here.stdout)
