"""The keys for `find` on real documentation are usable as a measure.

benchmarks/real_docs_key.yaml keys tests/data/real-docs (the dev set since round 3);
benchmarks/real_docs_key_heldout.yaml keys tests/data/real-docs-heldout (the fresh held-out set of round 3);
benchmarks/real_docs_key_heldout3.yaml keys tests/data/real-docs-heldout3 (the third set, keyed before any ranking);
benchmarks/real_docs_key_heldout4.yaml keys tests/data/real-docs-heldout4 (the fourth set, keyed before any ranking).
Every key passage must be found, as written, in its raw vendored document; the split must cover every
document once; the rubric's fields must be the ones keyed.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "benchmarks" / "real_docs_key.yaml"
REAL_DOCS = ROOT / "tests" / "data" / "real-docs"
HELDOUT_KEY = ROOT / "benchmarks" / "real_docs_key_heldout.yaml"
HELDOUT_DOCS = ROOT / "tests" / "data" / "real-docs-heldout"
HELDOUT3_KEY = ROOT / "benchmarks" / "real_docs_key_heldout3.yaml"
HELDOUT3_DOCS = ROOT / "tests" / "data" / "real-docs-heldout3"
HELDOUT4_KEY = ROOT / "benchmarks" / "real_docs_key_heldout4.yaml"
HELDOUT4_DOCS = ROOT / "tests" / "data" / "real-docs-heldout4"
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


def _heldout_key() -> dict:
    return yaml.safe_load(HELDOUT_KEY.read_text(encoding="utf-8"))


def test_every_heldout_key_passage_is_in_its_raw_document() -> None:
    missing = []
    count = 0
    for doc, fields in _heldout_key()["documents"].items():
        raw = (HELDOUT_DOCS / doc).read_text(encoding="utf-8")
        assert set(fields) == FIELDS, doc
        for field, passages in fields.items():
            count += len(passages)
            missing += [(doc, field, passage) for passage in passages if passage not in raw]
    assert missing == []
    assert count >= 60


def test_heldout_split_covers_every_document_and_shares_no_package_with_dev() -> None:
    key = _heldout_key()
    assert sorted(key["split"]["heldout2"]) == sorted(key["documents"]) == sorted(key["order"])
    assert len(key["documents"]) == 7
    dev_packages = {doc.split("/")[0] for doc in _key()["documents"]}
    assert not {doc.split("/")[0] for doc in key["documents"]} & dev_packages


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


def test_every_heldout_key_passage_is_found_as_quote_add_finds_it() -> None:
    """The fresh key's passages were copied from the raw files; each is found by the one verification
    path (the Haystack that place_quote asks), as a reviewer's `quote add` of it would be."""
    from protocoder.evidence.extract import extract
    from protocoder.evidence.locate import Haystack

    missing = []
    for doc, fields in _heldout_key()["documents"].items():
        haystack = Haystack(extract((HELDOUT_DOCS / doc).read_bytes(), "text/markdown").text)
        missing += [(doc, passage) for passages in fields.values() for passage in passages
                    if haystack.find(passage) is None]
    assert missing == []


def _heldout3_key() -> dict:
    return yaml.safe_load(HELDOUT3_KEY.read_text(encoding="utf-8"))


def test_every_heldout3_key_passage_is_in_its_raw_document() -> None:
    missing = []
    counts = dict.fromkeys(sorted(FIELDS), 0)
    for doc, fields in _heldout3_key()["documents"].items():
        raw = (HELDOUT3_DOCS / doc).read_text(encoding="utf-8")
        assert set(fields) == FIELDS, doc
        for field, passages in fields.items():
            counts[field] += len(passages)
            missing += [(doc, field, passage) for passage in passages if passage not in raw]
    assert missing == []
    assert 70 <= sum(counts.values()) <= 100, counts
    assert min(counts.values()) >= 20, counts


def test_heldout3_split_covers_every_vendored_document_and_shares_no_package_with_the_other_sets() -> None:
    key = _heldout3_key()
    assert sorted(key["split"]["heldout3"]) == sorted(key["documents"]) == sorted(key["order"])
    vendored = {
        str(p.relative_to(HELDOUT3_DOCS))
        for p in HELDOUT3_DOCS.rglob("*")
        if p.is_file() and p.name not in {"MANIFEST.md", "fetch.sh"}
    }
    assert set(key["documents"]) == vendored
    assert len(vendored) == 9
    other = {doc.split("/")[0] for doc in [*_key()["documents"], *_heldout_key()["documents"]]}
    assert not {doc.split("/")[0] for doc in key["documents"]} & other


def test_every_heldout3_key_passage_is_found_as_quote_add_finds_it() -> None:
    """The third key's passages were copied from the raw files; each is found by the one verification
    path (the Haystack that place_quote asks), as a reviewer's `quote add` of it would be."""
    from protocoder.evidence.extract import extract
    from protocoder.evidence.locate import Haystack

    missing = []
    for doc, fields in _heldout3_key()["documents"].items():
        haystack = Haystack(extract((HELDOUT3_DOCS / doc).read_bytes(), "text/markdown").text)
        missing += [(doc, passage) for passages in fields.values() for passage in passages
                    if haystack.find(passage) is None]
    assert missing == []


def _heldout4_key() -> dict:
    return yaml.safe_load(HELDOUT4_KEY.read_text(encoding="utf-8"))


def test_every_heldout4_key_passage_is_in_its_raw_document() -> None:
    missing = []
    counts = dict.fromkeys(sorted(FIELDS), 0)
    for doc, fields in _heldout4_key()["documents"].items():
        raw = (HELDOUT4_DOCS / doc).read_text(encoding="utf-8")
        assert set(fields) == FIELDS, doc
        for field, passages in fields.items():
            counts[field] += len(passages)
            missing += [(doc, field, passage) for passage in passages if passage not in raw]
    assert missing == []
    assert 70 <= sum(counts.values()) <= 110, counts
    assert min(counts.values()) >= 20, counts


def test_heldout4_split_covers_every_vendored_document() -> None:
    key = _heldout4_key()
    assert sorted(key["split"]["heldout4"]) == sorted(key["documents"]) == sorted(key["order"])
    vendored = {
        str(p.relative_to(HELDOUT4_DOCS))
        for p in HELDOUT4_DOCS.rglob("*")
        if p.is_file() and p.name not in {"MANIFEST.md", "fetch.sh"}
    }
    assert set(key["documents"]) == vendored
    assert len(vendored) == 9


def test_no_package_is_in_two_of_the_four_sets() -> None:
    """Each set's documents come from packages of its own (the first path part names the package), so the
    fourth set, measured once after tuning on the other three, shares nothing with them."""
    sets = {
        "dev": _key(),
        "heldout2": _heldout_key(),
        "heldout3": _heldout3_key(),
        "heldout4": _heldout4_key(),
    }
    packages = {name: {doc.split("/")[0] for doc in key["documents"]} for name, key in sets.items()}
    shared = [
        (a, b, packages[a] & packages[b])
        for i, a in enumerate(packages)
        for b in list(packages)[i + 1:]
        if packages[a] & packages[b]
    ]
    assert shared == []


def test_every_heldout4_key_passage_is_found_as_quote_add_finds_it() -> None:
    """The fourth key's passages were copied from the raw files; each is found by the one verification
    path (the Haystack that place_quote asks), as a reviewer's `quote add` of it would be."""
    from protocoder.evidence.extract import extract
    from protocoder.evidence.locate import Haystack

    missing = []
    for doc, fields in _heldout4_key()["documents"].items():
        haystack = Haystack(extract((HELDOUT4_DOCS / doc).read_bytes(), "text/markdown").text)
        missing += [(doc, passage) for passages in fields.values() for passage in passages
                    if haystack.find(passage) is None]
    assert missing == []
