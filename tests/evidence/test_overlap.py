"""Evidence agreement on quotes: pairs agreeing on a code whose quoted passages overlap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocoder.evidence.overlap import coefficient, overlaps
from protocoder.storage.store import CellUpdate, Store
from protocoder.storage.workspace import Review, load_review

from .docs import make_pdf

LINES = ["The harness caps each run at thirty minutes.", "Containers are discarded after grading.",
         "Scores are averaged over three seeds.", "Each episode ends after fifty steps."]


def copy_codes(review: Review, reviewer: str) -> None:
    """Every cell of the review coded alike by ``reviewer``, written through the store."""
    Store(review.paths).write_cells(
        [CellUpdate(c.protocol, c.field, reviewer, {"code": c.code, "source": c.source, "basis": c.basis,
                                                    "cites": c.cites}) for c in review.all_cells()],
        review.require_valid())


@pytest.fixture
def two_reviewers(bundled: Path, tmp_path: Path, cli) -> Path:
    """casheekar's codes copied to ada for every cell, and a paper pinned for webarena and osworld."""
    copy_codes(load_review(bundled), "ada")
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(make_pdf([LINES]))
    for protocol in ("webarena", "osworld"):
        assert cli("source", "add", protocol, paper, "--id", "paper", "--workspace", bundled).exit_code == 0

    def quote(cell: str, reviewer: str, text: str) -> None:
        result = cli("quote", "add", "--cell", cell, "--reviewer", reviewer, "--source", "paper", text,
                     "--workspace", bundled)
        assert result.exit_code == 0, result.stderr

    # webarena/open_work: the same sentence, quoted at different lengths: overlap.
    quote("webarena/open_work", "casheekar", LINES[0])
    quote("webarena/open_work", "ada", "caps each run at thirty minutes")
    # osworld/open_work: different sentences: no overlap.
    quote("osworld/open_work", "casheekar", LINES[1])
    quote("osworld/open_work", "ada", LINES[2])
    # webarena/reset_retention: only one of them quoted: not a pair that both quoted.
    quote("webarena/reset_retention", "ada", LINES[3])
    return bundled


def test_agree_reports_quote_overlap_beside_same_source(two_reviewers: Path, cli) -> None:
    result = cli("agree", "--format", "json", "--bootstrap", "200", "--seed", "7", "--workspace", two_reviewers)
    assert result.exit_code == 0, result.stderr
    groups = {g["group"]: g for g in json.loads(result.stdout)["groups"]}
    open_work = groups["open_work"]["evidence"]
    assert open_work["quote_overlap"]["value"] == 0.5
    assert open_work["same_source"]["value"] == 1.0  # the free-text locations were copied: equal strings
    assert groups["all"]["evidence"]["quote_overlap"]["value"] == 0.5
    assert groups["reset_retention"]["evidence"]["quote_overlap"]["value"] is None
    assert "both quoted a passage" in groups["reset_retention"]["evidence"]["quote_overlap"]["note"]
    low, high = open_work["quote_overlap"]["ci_low"], open_work["quote_overlap"]["ci_high"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    table = cli("agree", "--format", "full", "--bootstrap", "0", "--workspace", two_reviewers).stdout
    assert "evidence: quoted passages overlap" in table
    latex = cli("agree", "--format", "latex", "--bootstrap", "0", "--workspace", two_reviewers).stdout
    assert "Quoted passages overlap" in latex


def test_without_quotes_the_agreement_report_is_unchanged(bundled: Path, cli) -> None:
    copy_codes(load_review(bundled), "ada")
    report = json.loads(cli("agree", "--format", "json", "--bootstrap", "0", "--workspace", bundled).stdout)
    assert all("quote_overlap" not in g["evidence"] for g in report["groups"])


def test_overlap_needs_the_same_snapshot() -> None:
    assert overlaps([("abc123", 0, 10)], [("abc123def", 9, 20)])
    assert not overlaps([("abc123", 0, 10)], [("abc123", 10, 20)])  # touching is not sharing
    assert not overlaps([("abc123", 0, 10)], [("fff000", 0, 10)])  # another version of the text
    assert coefficient([(1, 1), (1, 0), (0, 0)], bootstrap=0, seed=None).value == 0.5
