"""Which part of ``protocoder find`` costs recall against plain BM25 over paragraphs: one part at a time.

A diagnostic beside ``find_real.py`` (same documents, key, hit rule, warm quotes and figures; not a
measure of its own). Each row changes one thing against a reference row:

- *unit*: find's passages vs the raw file's blank-line paragraphs, ranked the same way (BM25, the same
  query, no kinds), and with or without find's heading words in each passage's index;
- *query*: the rubric's field text with its search terms (what both rankings get cold), without the
  search terms added from dev misses in round 2 (the terms of commit a089d75), without any;
- *kinds*: find with its kind factors, demotions and code floor on or off;
- *stems*: Snowball stems vs the lower-cased words (``--no-stems``, every row);
- *quotes warm*: find's use of quotes (since round 5 each quoted word weighed by how many quotes share it,
  ``query.quote_weights``) vs only the words three quotes share (rounds 2-4) vs every quoted word at
  weight 1.0 (the baseline's).

The "hybrid" rows rank find's code units and, for everything else, the raw blank-line paragraph around
each passage (round 4 made find's passages that). ``--news F`` and ``--group CHARS`` change find's news
factor and its list grouping for every row. Written in round 4 against the ranking of commit 7bead5a;
to see that ranking's table, run this file from a copy of that commit (``git archive 7bead5a | tar -x``).

Run: ``python benchmarks/find_ablation.py [--set real-docs|heldout2|heldout3] [--within K] [--no-stems] [--only TEXT]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import find_real  # noqa: E402

ORIGINAL_TERMS = {
    "open_work": "timeout, cleanup, teardown, background, subprocess, descendant process, pending, queued, delayed, "
                 "asynchronous, in flight, still running, cancel, kill, terminate, callback, long-running, monitoring",
    "reset_retention": "reset, restore, revert, snapshot, fresh, initial state, rebuild, container, virtual machine, "
                       "image, database, persist, retain, carry over, memory, setup, teardown, cleanup",
    "separate_evidence": "isolation, isolated, sandbox, separate, independent, i.i.d., trials, fresh state, shared, "
                         "shared service, shared state, parallel, concurrent, another run, accounts, credentials, "
                         "network",
    "NA": "synchronous, deterministic, in-memory"}
"""The bundled rubric's search terms as commit a089d75 gave them (from the paper's vocabulary), before round 2
added terms chosen from dev misses (threads, cache, resume, seed, docker ...)."""


def original_terms() -> dict[str, list[str]]:
    """Per field and code id: the search terms of :data:`ORIGINAL_TERMS`."""
    return {key: [t.strip() for t in value.split(",")] for key, value in ORIGINAL_TERMS.items()}


def rows(rubric, terms_mode: str) -> dict[str, Callable]:  # noqa: ANN001, C901
    """Each ablation row: (document, field, quotes) -> ranked candidates."""
    import numpy as np

    from protocoder.evidence.search import Query, field_query, words
    from protocoder.evidence.search.bm25 import bm25_index, weighted_scores
    from protocoder.evidence.search.query import WEIGHT_TERMS
    from protocoder.evidence.search.ranking import CODE_FLOOR, FLOORED_KINDS, KIND_WEIGHTS

    old_terms = original_terms()
    k = max(find_real.KS)

    def query(fld, quotes, *, terms: str, warm: str) -> Query:  # noqa: ANN001
        cold = field_query(rubric, fld)
        parts = [p for p in cold.parts if p[0] != WEIGHT_TERMS]
        if terms == "original":
            listed = [*old_terms.get(fld.id, []), *(t for c in fld.codes for t in old_terms.get(c, []))]
            parts.append((WEIGHT_TERMS, " ".join(listed)))
        elif terms == "now":
            parts = list(cold.parts)
        if quotes:
            if warm == "shared":  # only the words three quotes share, at full weight (rounds 2-4's rule)
                from protocoder.evidence.search import quote_weights

                shared = [word for word, share in quote_weights(quotes).items() if share == 1.0]
                parts = [(1.0, " ".join(shared)), *parts]
            elif warm == "find":  # as find builds it (query.quote_weights)
                parts = list(field_query(rubric, fld, quotes=quotes).parts[len(cold.parts):]) + parts
            else:
                parts.append((1.0, " ".join(quotes)))
        return Query(tuple(parts))

    cache: dict[tuple[str, str], tuple] = {}

    def units(document, unit: str):  # noqa: ANN001, ANN202
        key = (document.name, unit)
        if key not in cache:
            if unit == "paragraphs":
                items = [(a, b, t, "prose") for a, b, t in document.paragraphs]
                tokens = [words(t) for _, _, t, _ in items]
            elif unit in ("passages", "passages+heading"):
                ps = document.index.passages
                items = [(p.raw_start, p.raw_end, p.text, p.kind) for p in ps]
                tokens = [(words(p.heading) if unit == "passages+heading" else []) + words(p.text) for p in ps]
            else:  # hybrid: find's code units, and the blank-line paragraph around any other passage
                items, seen, texts = [], {}, []
                spans = [(a, b) for a, b, _ in document.paragraphs]
                for p in document.index.passages:
                    if p.kind in ("code", "comment", "install", "diagram") or p.raw_start is None:
                        items.append((p.raw_start, p.raw_end, p.text, p.kind))
                        texts.append(p.text)
                        continue
                    around = next(((a, b) for a, b in spans if a <= p.raw_start < b), None)
                    if around is None:
                        continue
                    if around in seen:
                        texts[seen[around]] += "\n" + p.text
                        continue
                    seen[around] = len(items)
                    items.append((around[0], around[1], document.raw[around[0]:around[1]], p.kind))
                    texts.append(p.text)
                tokens = [words(t) for t in (texts if unit == "hybrid-extracted" else [i[2] for i in items])]
            cache[key] = (items, bm25_index(tokens))
        return cache[key]

    def ranker(unit: str, *, terms: str = "now", warm: str = "all", kinds: bool = False, unfactored: str = "",
               floor: bool = True) -> Callable:
        def rank(document, fld, quotes):  # noqa: ANN001, ANN202
            items, index = units(document, unit)
            scores = weighted_scores(index, query(fld, quotes, terms=terms, warm=warm).weighted_words())
            if kinds:
                scores = scores * np.array([1.0 if kind == unfactored else KIND_WEIGHTS.get(kind, 1.0)
                                            for *_, kind in items], dtype="float32")
            order = np.argsort(-scores, kind="stable")
            found, least = [], None
            for i in order:
                score = float(scores[int(i)])
                if score <= 0 or len(found) >= k:
                    break
                if least is None:
                    least = score * CODE_FLOOR if kinds and floor else 0.0
                if score < least and items[int(i)][3] in FLOORED_KINDS:
                    continue
                found.append(items[int(i)][:3])
            return found
        return rank

    def find(*, terms: str = "now", warm: str = "find", kinds: bool = True, unfactored: str = "",
             shared: bool = True) -> Callable:
        from protocoder.evidence.search import ranking

        def rank(document, fld, quotes):  # noqa: ANN001, ANN202
            q = query(fld, quotes, terms=terms, warm=warm)
            saved = dict(ranking.KIND_WEIGHTS)
            saved_shared = ranking.SHARED_WORDS
            if unfactored:
                ranking.KIND_WEIGHTS[unfactored] = 1.0
            if not shared:
                ranking.SHARED_WORDS = 0  # no passage shares fewer than 0 words: round 7's rule off
            document.index._kind_weights = None
            try:
                return [(c.raw_start, c.raw_end, c.text) for c in document.index.search(q, k, use_kinds=kinds)]
            finally:
                ranking.KIND_WEIGHTS.update(saved)
                ranking.SHARED_WORDS = saved_shared
                document.index._kind_weights = None
        return rank

    del terms_mode
    return {
        "A  bm25 paragraphs (the baseline)": ranker("paragraphs"),
        "B  find (now)": find(),
        "unit: bm25 passages (find's cut, no headings, no kinds; baseline query)": ranker("passages"),
        "unit: bm25 passages + heading words": ranker("passages+heading"),
        "unit: hybrid (paragraphs, code split into find's units)": ranker("hybrid"),
        "kinds: find without kind factors and floor": find(kinds=False),
        "kinds: find without round 7's shared-words rule": find(shared=False),
        **{f"kinds: find, {kind} factor 1": find(unfactored=kind)
           for kind in ("table", "comment", "code", "install", "news", "toc", "badge", "boilerplate", "diagram")},
        "kinds: paragraphs (hybrid) with find's kinds and floor": ranker("hybrid", kinds=True),
        "unit: hybrid-extracted (find's passages joined by raw paragraph) with kinds": ranker(
            "hybrid-extracted", kinds=True),
        **{f"kinds: hybrid+kinds, {kind} factor 1": ranker("hybrid", kinds=True, unfactored=kind)
           for kind in ("table", "comment", "code", "install", "news", "toc", "badge", "boilerplate", "diagram")},
        "kinds: hybrid+kinds, no code floor": ranker("hybrid", kinds=True, floor=False),
        "query: bm25 paragraphs, original terms only": ranker("paragraphs", terms="original"),
        "query: bm25 paragraphs, no search terms": ranker("paragraphs", terms="none"),
        "query: find, original terms only": find(terms="original"),
        "query: find, no search terms": find(terms="none"),
        "quotes: bm25 paragraphs, shared quote words": ranker("paragraphs", warm="shared"),
        "quotes: find, every quote word (as the baseline)": find(warm="all"),
        "quotes: find, the words three quotes share": find(warm="shared"),
        "quotes: hybrid+kinds, shared quote words": ranker("hybrid", kinds=True, warm="shared"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="documents_set", choices=list(find_real.SETS), default="real-docs")
    parser.add_argument("--within", type=float, default=0.0, metavar="K")
    parser.add_argument("--no-stems", action="store_true", help="words without Snowball stems (lower-cased)")
    parser.add_argument("--only", default="", help="rows whose label contains this")
    parser.add_argument("--group", type=int, default=0, metavar="CHARS",
                        help="find's list and table groups and long-block cuts at CHARS (TARGET_PASSAGE_CHARS)")
    parser.add_argument("--news", type=float, default=None, help="find's news factor")
    args = parser.parse_args()
    if args.group:
        from protocoder.evidence.search import passages as passages_module

        passages_module.TARGET_PASSAGE_CHARS = args.group
        passages_module.MAX_PASSAGE_CHARS = max(passages_module.MAX_PASSAGE_CHARS, args.group)
    if args.news is not None:
        from protocoder.evidence.search import ranking

        ranking.KIND_WEIGHTS["news"] = args.news
    if args.no_stems:
        from protocoder.evidence.search import query as query_module

        query_module.stem = lambda word: word
    from find_recall import load_rubric

    folder, key_path = find_real.SETS[args.documents_set]
    rubric = load_rubric()
    key = find_real.load_key(key_path)
    documents = find_real.load_documents(folder, key_path)
    names = order = list(key["order"])
    print(f"python benchmarks/find_ablation.py {' '.join(sys.argv[1:])}".rstrip())
    print()
    print("| row | cold@10 | warm@10 | cold@20 | warm@20 | non-evidence cold / warm | median chars cold / warm |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, rank in rows(rubric, "").items():
        if args.only and args.only not in label:
            continue
        cold = find_real.evaluate(documents, names, order, rank, rubric, warm=False, within=args.within)
        warm = find_real.evaluate(documents, names, order, rank, rubric, warm=True, within=args.within)
        print(f"| {label} | {cold.recall[10]:.2f} | {warm.recall[10]:.2f} | {cold.recall[20]:.2f} | "
              f"{warm.recall[20]:.2f} | {cold.non_evidence:.0%} / {warm.non_evidence:.0%} | "
              f"{statistics.median(cold.lengths):.0f} / {statistics.median(warm.lengths):.0f} |")


if __name__ == "__main__":
    main()
