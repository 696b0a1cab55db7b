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
