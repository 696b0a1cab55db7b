"""The key for `find` on real documentation (benchmarks/real_docs_key.yaml) is usable as a measure.

Every key passage must be found, as written, in its raw vendored document; the split must cover every
document once; the rubric's fields must be the ones keyed.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "benchmarks" / "real_docs_key.yaml"
REAL_DOCS = ROOT / "tests" / "data" / "real-docs"
FIELDS = {"open_work", "reset_retention", "separate_evidence"}


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
