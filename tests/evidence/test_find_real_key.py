"""The keys for `find` on real documentation are usable as a measure.

benchmarks/real_docs_key.yaml keys tests/data/real-docs (the dev set since round 3);
benchmarks/real_docs_key_heldout.yaml keys tests/data/real-docs-heldout (the fresh held-out set of round 3);
benchmarks/real_docs_key_heldout3.yaml keys tests/data/real-docs-heldout3 (the third set, keyed before any ranking);
benchmarks/real_docs_key_heldout4.yaml keys tests/data/real-docs-heldout4 (the fourth set, keyed before any ranking);
benchmarks/real_docs_key_heldout5.yaml keys tests/data/real-docs-heldout5 (the fifth set, keyed before any ranking);
benchmarks/real_docs_key_heldout6.yaml keys tests/data/real-docs-heldout6 (the sixth set, keyed before any ranking);
benchmarks/real_docs_key_heldout7.yaml keys tests/data/real-docs-heldout7 (the seventh set, keyed before any ranking);
benchmarks/real_docs_key_heldout8.yaml keys tests/data/real-docs-heldout8 (the eighth set, keyed before any ranking);
benchmarks/real_docs_key_heldout9.yaml keys tests/data/real-docs-heldout9 (the ninth set, keyed before any ranking);
benchmarks/real_docs_key_heldout10.yaml keys tests/data/real-docs-heldout10 (the tenth set, keyed before any ranking);
benchmarks/real_docs_key_heldout11.yaml keys tests/data/real-docs-heldout11 (the eleventh set, keyed before any
ranking);
benchmarks/real_docs_key_heldout12.yaml keys tests/data/real-docs-heldout12 (the twelfth set, keyed before any
ranking);
benchmarks/real_docs_key_heldout13.yaml keys tests/data/real-docs-heldout13 (the thirteenth set, keyed before any
ranking);
benchmarks/real_docs_key_heldout14.yaml keys tests/data/real-docs-heldout14 (the fourteenth set, keyed before any
ranking);
benchmarks/real_docs_key_heldout15.yaml keys tests/data/real-docs-heldout15 (the fifteenth set, keyed before any
ranking).
Every key passage must be found, as written, in its raw vendored document; the split must cover every
document once; the rubric's fields must be the ones keyed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "benchmarks" / "real_docs_key.yaml"
REAL_DOCS = ROOT / "tests" / "data" / "real-docs"
FIELDS = {"open_work", "reset_retention", "separate_evidence"}


@dataclass(frozen=True)
class KeyedSet:
    """A set of vendored documents keyed before any ranking ran on it (benchmarks/find_real.py --set NAME)."""

    name: str
    key: Path
    documents: Path
    count: int
    passages: tuple[int, int]
    per_field: int

    def load(self) -> dict:
        return yaml.safe_load(self.key.read_text(encoding="utf-8"))


HELDOUT_SETS = [
    KeyedSet("heldout2", ROOT / "benchmarks" / "real_docs_key_heldout.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout", 7, (60, 100), 0),
    KeyedSet("heldout3", ROOT / "benchmarks" / "real_docs_key_heldout3.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout3", 9, (70, 100), 20),
    KeyedSet("heldout4", ROOT / "benchmarks" / "real_docs_key_heldout4.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout4", 9, (70, 110), 20),
    KeyedSet("heldout5", ROOT / "benchmarks" / "real_docs_key_heldout5.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout5", 10, (70, 110), 20),
    KeyedSet("heldout6", ROOT / "benchmarks" / "real_docs_key_heldout6.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout6", 10, (70, 110), 20),
    KeyedSet("heldout7", ROOT / "benchmarks" / "real_docs_key_heldout7.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout7", 9, (70, 110), 20),
    KeyedSet("heldout8", ROOT / "benchmarks" / "real_docs_key_heldout8.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout8", 8, (70, 110), 20),
    KeyedSet("heldout9", ROOT / "benchmarks" / "real_docs_key_heldout9.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout9", 8, (70, 110), 20),
    KeyedSet("heldout10", ROOT / "benchmarks" / "real_docs_key_heldout10.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout10", 9, (70, 110), 20),
    KeyedSet("heldout11", ROOT / "benchmarks" / "real_docs_key_heldout11.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout11", 9, (70, 110), 20),
    KeyedSet("heldout12", ROOT / "benchmarks" / "real_docs_key_heldout12.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout12", 9, (70, 110), 20),
    KeyedSet("heldout13", ROOT / "benchmarks" / "real_docs_key_heldout13.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout13", 10, (70, 110), 20),
    KeyedSet("heldout14", ROOT / "benchmarks" / "real_docs_key_heldout14.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout14", 9, (70, 110), 20),
    KeyedSet("heldout15", ROOT / "benchmarks" / "real_docs_key_heldout15.yaml",
             ROOT / "tests" / "data" / "real-docs-heldout15", 9, (70, 110), 20),
]
by_name = pytest.mark.parametrize("keyed", HELDOUT_SETS, ids=lambda keyed: keyed.name)


def _key() -> dict:
    return yaml.safe_load(KEY.read_text(encoding="utf-8"))


def test_every_key_passage_is_in_its_raw_document() -> None:
    missing = []
    for doc, fields in _key()["documents"].items():
        raw = (REAL_DOCS / doc).read_text(encoding="utf-8")
        for field, passages in fields.items():
            missing += [(doc, field, passage) for passage in passages if passage not in raw]
    assert missing == []


def test_split_covers_every_document_once() -> None:
    key = _key()
    dev, heldout = key["split"]["dev"], key["split"]["heldout"]
    assert not set(dev) & set(heldout)
    assert sorted(dev + heldout) == sorted(key["documents"]) == sorted(key["order"])
    assert len(key["documents"]) == 14


def test_every_document_keys_the_three_rubric_fields() -> None:
    rubric = yaml.safe_load((ROOT / "rubric" / "evaluation-boundary.yaml").read_text(encoding="utf-8"))
    assert {field["id"] for field in rubric["fields"]} == FIELDS
    for doc, fields in _key()["documents"].items():
        assert set(fields) == FIELDS, doc


@by_name
def test_every_heldout_key_passage_is_in_its_raw_document(keyed: KeyedSet) -> None:
    missing = []
    counts = dict.fromkeys(sorted(FIELDS), 0)
    for doc, fields in keyed.load()["documents"].items():
        raw = (keyed.documents / doc).read_text(encoding="utf-8")
        assert set(fields) == FIELDS, doc
        for field, passages in fields.items():
            counts[field] += len(passages)
            missing += [(doc, field, passage) for passage in passages if passage not in raw]
    assert missing == []
    low, high = keyed.passages
    assert low <= sum(counts.values()) <= high, counts
    assert min(counts.values()) >= keyed.per_field, counts


@by_name
def test_heldout_split_covers_every_vendored_document(keyed: KeyedSet) -> None:
    key = keyed.load()
    assert sorted(key["split"][keyed.name]) == sorted(key["documents"]) == sorted(key["order"])
    vendored = {str(path.relative_to(keyed.documents)) for path in keyed.documents.rglob("*")
                if path.is_file() and path.name not in {"MANIFEST.md", "fetch.sh"}}
    assert set(key["documents"]) == vendored
    assert len(vendored) == keyed.count


def test_no_package_is_in_two_of_the_sets() -> None:
    """Each set's documents come from packages of its own (the first path part names the package), so a
    set measured once after tuning on the others shares nothing with them."""
    keys = {"dev": _key(), **{keyed.name: keyed.load() for keyed in HELDOUT_SETS}}
    packages = {name: {doc.split("/")[0] for doc in key["documents"]} for name, key in keys.items()}
    names = list(packages)
    shared = [(a, b, packages[a] & packages[b]) for i, a in enumerate(names) for b in names[i + 1:]
              if packages[a] & packages[b]]
    assert shared == []


@by_name
def test_every_heldout_key_passage_is_found_as_quote_add_finds_it(keyed: KeyedSet) -> None:
    """The keys' passages were copied from the raw files; each is found by the one verification path (the
    Haystack that place_quote asks), as a reviewer's `quote add` of it would be."""
    from protocoder.evidence.extract import extract
    from protocoder.evidence.locate import Haystack

    missing = []
    for doc, fields in keyed.load()["documents"].items():
        haystack = Haystack(extract((keyed.documents / doc).read_bytes(), "text/markdown").text)
        missing += [(doc, passage) for passages in fields.values() for passage in passages
                    if haystack.find(passage) is None]
    assert missing == []


def test_the_baselines_do_not_move_with_finds_passages_or_its_use_of_quotes(monkeypatch) -> None:
    """Document order reads the raw file's paragraphs (it read find's passages, so it fell from 0.45 to
    0.27 when find cut code into lines); plain BM25 gets every borrowed quote word, however find uses them."""
    import sys

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import find_real
    from find_recall import load_rubric

    from protocoder.evidence.search import query

    rubric = load_rubric()
    documents = find_real.load_documents()
    order = _key()["order"]
    name = _key()["split"]["dev"][0]
    document = documents[name]
    fld = rubric.fields[1]
    quotes = find_real.warm_quotes(documents, order, name, fld.id)
    methods = find_real.methods(rubric)
    before = {label: methods[label](document, fld, quotes) for label in ("document order", "bm25 paragraphs")}
    assert before["document order"] == [p[:3] for p in document.paragraphs[:20]]
    monkeypatch.setattr(query, "QUOTES_SHARING", 1)  # find's use of quotes changes ...
    document.index.passages = document.index.passages[::-1]  # ... and so do its passages
    methods = find_real.methods(rubric)
    after = {label: methods[label](document, fld, quotes) for label in ("document order", "bm25 paragraphs")}
    assert after == before
    sys.modules.pop("find_real", None)
