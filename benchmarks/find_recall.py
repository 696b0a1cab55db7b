"""Evidence finding: how many of the passages a careful full reading marks as evidence
``protocoder find`` puts in its top 5, 10 and 20 candidates, and how fast it answers.

The corpus (``benchmarks/find_corpus/``) is documentation of agent benchmarks written for
this evaluation in the style their repositories and sites use (READMEs with badges, news,
install steps, tables, admonitions, the inspect_evals layout; documentation pages in HTML;
paper excerpts as plain text). A protocol's documents (``NAME.md``, ``NAME.paper.txt``) are
indexed together, as its pinned sources are. Beside each document, ``<name>.gold.yaml`` lists, per field of the bundled
rubric (``open_work``, ``reset_retention``, ``separate_evidence``), the passages a reader
marks as evidence when reading the whole document: each is a quote of the text as it reads
(markup dropped). A candidate *finds* a gold passage when their spans in the extracted text
overlap. Recall@k = gold passages found in the top k / all gold passages, each (protocol,
field) queried on its own, as ``protocoder find --cell P/F --limit k`` does with nothing
typed.

Two splits, ``dev/`` and ``heldout/``. This corpus was written for the tool and is now a unit
fixture, not the measure: the weights in ``protocoder.evidence.search`` are chosen on the dev
documents of ``benchmarks/find_real.py`` (real, unmodified documentation with a key written
before tuning).

Methods (rows):

  document order    the first k passages (what reading from the top gives)
  bm25 only         BM25 (bm25s) of the field's label, question, definition and guidance
  + codes           ... and the field's codes' definitions and guidance, at WEIGHT_CODES (now 0: off)
  + search_terms    ... and the rubric's search_terms of the field and its codes
  + headings        ... and a BM25 over each passage's nearest heading
  protocoder find   ... and the proximity bonus: the full ranking

Speed: 1,000 sources (the corpus's documents repeated with distinct words added, so the
vocabulary grows as it would) indexed once, written to disk as the cache is, read back;
then the median of 30 queries (each field's full query) over the loaded index.

Run: ``python benchmarks/find_recall.py [--split dev|heldout|both] [--sources 1000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "find_corpus"
RUBRIC = ROOT.parent / "src" / "protocoder" / "data" / "evaluation-boundary.yaml"
KS = (5, 10, 20)
MEDIA = {".md": "text/markdown", ".html": "text/html", ".txt": "text/plain", ".pdf": "application/pdf"}


@dataclass
class Document:
    """One protocol of the corpus: its documents (sources) indexed together, with gold spans per field."""

    name: str
    index: object
    gold: dict[str, list[tuple[str, int, int]]]
    """Per field: (source, start, end) of each gold passage in that source's extracted text."""
    sources: int = 1


def load_rubric():  # noqa: ANN201 - a Rubric; imported lazily with the package
    from protocoder.storage.findings import Findings
    from protocoder.storage.formats import parse_rubric
    from protocoder.storage.yamlio import parse_yaml

    text = RUBRIC.read_text(encoding="utf-8")
    findings = Findings(str(RUBRIC), text)
    rubric = parse_rubric(parse_yaml(text, str(RUBRIC)), findings)
    if rubric is None or findings.problems():
        sys.exit(f"{RUBRIC}: the bundled rubric does not parse")
    return rubric


def load_split(split: str) -> list[Document]:
    """Every protocol of one split: its documents (``NAME.md``, ``NAME.paper.txt``: the part of
    the file name before the first dot names the protocol) extracted, segmented and indexed
    together, as ``protocoder find`` indexes a protocol's pinned sources; gold quotes located."""
    from protocoder.evidence.extract import extract, raw_text
    from protocoder.evidence.locate import Haystack
    from protocoder.evidence.search import PassageIndex, source_passages
    from protocoder.storage.yamlio import parse_yaml

    by_protocol: dict[str, list[Path]] = {}
    for path in sorted((CORPUS / split).iterdir()):
        if path.suffix in MEDIA and not path.name.endswith(".gold.yaml"):
            by_protocol.setdefault(path.name.split(".")[0], []).append(path)
    documents = []
    for protocol, paths in by_protocol.items():
        passages = []
        gold: dict[str, list[tuple[str, int, int]]] = {}
        for path in paths:
            source = path.name[: -len(path.suffix)]
            data = path.read_bytes()
            extracted = extract(data, MEDIA[path.suffix])
            passages += source_passages(source, extracted, raw_text(data, MEDIA[path.suffix]))
            haystack = Haystack(extracted.text)
            gold_path = path.with_name(source + ".gold.yaml")
            gold_data = parse_yaml(gold_path.read_text(encoding="utf-8"), str(gold_path)) or {}
            for field_id, quotes in gold_data.items():
                for quote in quotes:
                    span = haystack.find(quote)
                    if span is None:
                        sys.exit(f"{gold_path}: {field_id}: quote not in the extracted text: {quote!r}")
                    gold.setdefault(field_id, []).append((source, span.start, span.end))
        documents.append(Document(protocol, PassageIndex.build(passages), gold, len(paths)))
    return documents


def methods(rubric) -> dict[str, object]:  # noqa: ANN001
    """Each row's ranking: a function (index, field) -> candidates (best first, 20 of them)."""
    from protocoder.evidence.search import WEIGHT_CODES, WEIGHT_FIELD, WEIGHT_TERMS, Query, field_query

    def base_parts(fld, codes: bool, terms: bool) -> Query:  # noqa: ANN001
        parts = [(WEIGHT_FIELD, " ".join((fld.label, fld.question, fld.definition, fld.guidance)))]
        words = list(fld.search_terms)
        for code_id in fld.codes:
            code = rubric.code(code_id)
            if codes:
                parts.append((WEIGHT_CODES, f"{code.definition} {code.guidance}"))
            words += code.search_terms
        if terms and words:
            parts.append((WEIGHT_TERMS, " ".join(words)))
        return Query(tuple(parts))

    k = max(KS)
    return {
        "document order": lambda index, fld: index.passages[:k],
        "bm25 only": lambda index, fld: index.search(base_parts(fld, False, False), k, use_heading=False,
                                                     use_proximity=False),
        "+ codes": lambda index, fld: index.search(base_parts(fld, True, False), k, use_heading=False,
                                                   use_proximity=False),
        "+ search_terms": lambda index, fld: index.search(base_parts(fld, True, True), k, use_heading=False,
                                                          use_proximity=False),
        "+ headings": lambda index, fld: index.search(base_parts(fld, True, True), k, use_proximity=False),
        "protocoder find": lambda index, fld: index.search(field_query(rubric, fld), k),
    }


def recall(documents: list[Document], rank, rubric) -> tuple[dict[int, float], int]:  # noqa: ANN001
    """Recall@k for each k in KS, and the number of gold passages."""
    found = {k: 0 for k in KS}
    total = 0
    for document in documents:
        for field_id, spans in document.gold.items():
            ranked = rank(document.index, rubric.field(field_id))
            for source, start, end in spans:
                total += 1
                first = next((i for i, c in enumerate(ranked)
                              if c.source == source and c.start < end and start < c.end), None)
                for k in KS:
                    if first is not None and first < k:
                        found[k] += 1
    return {k: found[k] / total if total else 0.0 for k in KS}, total


def recall_table(split: str, rubric) -> tuple[list[str], float]:  # noqa: ANN001
    """The recall table of one split, and the full ranking's recall@10."""
    documents = load_split(split)
    rows = []
    full = 0.0
    total = 0
    for name, rank in methods(rubric).items():
        values, total = recall(documents, rank, rubric)
        rows.append(f"| {name} | " + " | ".join(f"{values[k]:.2f}" for k in KS) + " |")
        if name == "protocoder find":
            full = values[10]
    passages = sum(len(d.index.passages) for d in documents)
    head = [f"{split}: {len(documents)} protocols, {sum(d.sources for d in documents)} documents, "
            f"{passages} passages, {total} gold passages over {sum(len(d.gold) for d in documents)} "
            "(protocol, field) pairs",
            "", "| ranking | recall@5 | recall@10 | recall@20 |", "|---|---:|---:|---:|"]
    return head + rows, full


def speed(rubric, sources: int, seed: int = 20261202) -> tuple[list[str], float]:  # noqa: ANN001
    """Index ``sources`` documents, write and read the index back, time queries; (lines, median ms)."""
    from protocoder.evidence.extract import extract
    from protocoder.evidence.search import (
        Passage,
        PassageIndex,
        ProtocolPassages,
        field_query,
        read_index,
        source_passages,
        write_index,
    )

    pool = []
    for split in ("dev", "heldout"):
        for path in sorted((CORPUS / split).iterdir()):
            if path.suffix in MEDIA:
                pool.append(source_passages(path.name, extract(path.read_bytes(), MEDIA[path.suffix])))
    rng = random.Random(seed)
    passages = []
    for number in range(sources):
        for p in pool[number % len(pool)]:
            # Distinct words per source, as distinct documents have: the vocabulary grows.
            extra = " ".join(f"w{rng.randrange(200_000)}" for _ in range(3))
            passages.append(Passage(f"s{number}", p.heading, p.start, p.end, f"{p.text} {extra}"))
    started = time.perf_counter()
    index = PassageIndex.build(passages)
    built = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) / "index"
        folder.mkdir()
        started = time.perf_counter()
        write_index(folder, ProtocolPassages(index, tuple(f"s{n}" for n in range(sources))))
        written = time.perf_counter() - started
        started = time.perf_counter()
        loaded = read_index(folder)
        read = time.perf_counter() - started
    assert loaded is not None
    queries = [field_query(rubric, fld, typed) for fld in rubric.fields
               for typed in ("", "docker container", "timeout", "reset snapshot", "shared service state",
                             "background process", "fresh database", "cleanup", "isolation", "trial")][:30]
    times = []
    for query in queries:
        started = time.perf_counter()
        loaded.index.search(query, 10)
        times.append(time.perf_counter() - started)
    median_ms = statistics.median(times) * 1000
    lines = [f"speed: {sources:,} sources, {len(passages):,} passages",
             "", "| step | time |", "|---|---:|",
             f"| index (once, after a snapshot changes) | {built:.2f} s |",
             f"| write the cache | {written:.2f} s |",
             f"| read the cache | {read * 1000:.0f} ms |",
             f"| query, median of {len(times)} (max {max(times) * 1000:.0f} ms) | {median_ms:.1f} ms |"]
    return lines, median_ms


def report(split: str = "both", sources: int = 1000) -> tuple[list[str], dict[str, float]]:
    """Every table of this benchmark, and the figures benchmarks/run.py checks against targets."""
    rubric = load_rubric()
    lines: list[str] = []
    figures: dict[str, float] = {}
    for name in (("dev", "heldout") if split == "both" else (split,)):
        table, full = recall_table(name, rubric)
        lines += [*table, ""]
        figures[f"recall@10 {name}"] = full
    if sources:
        table, median_ms = speed(rubric, sources)
        lines += table
        figures["query ms"] = median_ms
    return lines, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "heldout", "both"], default="both")
    parser.add_argument("--sources", type=int, default=1000, help="sources in the speed test (0: skip it)")
    args = parser.parse_args()
    lines, _ = report(args.split, args.sources)
    print("protocoder find: recall of evidence passages and query time")
    print(f"python benchmarks/find_recall.py {' '.join(sys.argv[1:])}".rstrip())
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
