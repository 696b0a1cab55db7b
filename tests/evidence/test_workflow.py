"""Snapshots and quotes end to end, through the real CLI on real files.

A PDF typeset by pdflatex (two pages, sections), an HTML page and a Markdown file are
pinned as sources, passages of each are quoted on cells, and then the workspace is
damaged the ways real ones are: a snapshot edited, the paper revised, the snapshots kept
out of git.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result

from protocoder.evidence.snapshots import SOURCES_DIR
from protocoder.storage.workspace import load_review

from .docs import HTML_PAGE, MARKDOWN_DOC, PAPER_V1, PAPER_V2, latex_pdf
from conftest import tree_digest

PDF_QUOTE = "Each episode ends when the agent submits a final answer or after fifty steps, whichever comes first."
PDF_QUOTE_KEPT = "The official harness caps each run at thirty minutes of wall-clock time"
HTML_QUOTE = "The harness starts one container per task instance and removes it once the grader has written its report."
MD_QUOTE = "Every task is reset to its initial snapshot before each attempt"


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


@pytest.fixture(scope="module")
def typeset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The paper in two versions, typeset once for this module (pdflatex takes a second a run)."""
    folder = tmp_path_factory.mktemp("papers")
    return {"pdf": latex_pdf(folder / "v1", "paper", PAPER_V1), "pdf2": latex_pdf(folder / "v2", "paper", PAPER_V2)}


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory, typeset: dict[str, Path]) -> dict[str, Path]:
    """The three kinds of document."""
    folder = tmp_path_factory.mktemp("docs")
    html = folder / "harness.html"
    markdown = folder / "rules.md"
    html.write_text(HTML_PAGE, encoding="utf-8")
    markdown.write_text(MARKDOWN_DOC, encoding="utf-8")
    return {**typeset, "html": html, "md": markdown}


@pytest.fixture(scope="module")
def pinned_once(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path]) -> Path:
    """The bundled review with the three documents pinned for swe-bench and four passages quoted,
    made once through the CLI; each test gets a copy (:func:`pinned`)."""
    from click.testing import CliRunner

    from protocoder.cli import main

    from conftest import copy_bundled

    def cli(*args: object) -> Result:
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    bundled = copy_bundled(tmp_path_factory.mktemp("pinned") / "review")
    out = ok(cli("source", "add", "swe-bench", documents["pdf"], "--workspace", bundled,
                 "--url", "https://example.org/paper.pdf", "--version", "v1", "--accessed", "2026-08-01"))
    # The id defaults to a short slug of the document's own title (its first words, to 32 characters), and is printed.
    assert "Pinned source benchmark-for-long-horizon for swe-bench" in out.stdout
    ok(cli("source", "add", "swe-bench", documents["html"], "--id", "harness", "--workspace", bundled))
    ok(cli("source", "add", "swe-bench", documents["md"], "--id", "rules", "--workspace", bundled))
    for field, source, text in [("open_work", "benchmark-for-long-horizon", PDF_QUOTE),
                                ("reset_retention", "benchmark-for-long-horizon", PDF_QUOTE_KEPT),
                                ("reset_retention", "harness", HTML_QUOTE),
                                ("separate_evidence", "rules", MD_QUOTE)]:
        out = ok(cli("quote", "add", "--cell", f"swe-bench/{field}", "--reviewer", "casheekar", "--source", source,
                     text, "--workspace", bundled))
        assert out.stdout.startswith("Quoted ")
    return bundled


@pytest.fixture
def pinned(pinned_once: Path, tmp_path: Path) -> Path:
    """A private copy of the pinned review."""
    return Path(shutil.copytree(pinned_once, tmp_path / "review"))


def sheet_text(workspace: Path) -> str:
    return (workspace / "protocols/swe-bench/codes/casheekar.yaml").read_text(encoding="utf-8")


def test_source_add_stores_the_snapshot_by_hash_with_its_text(pinned: Path, documents: dict[str, Path]) -> None:
    review = load_review(pinned)
    assert not review.errors
    sources = {s.id: s for s in review.protocol("swe-bench").sources if s.id}
    assert set(sources) == {"benchmark-for-long-horizon", "harness", "rules"}
    paper = sources["benchmark-for-long-horizon"]
    assert (paper.media_type, paper.version, paper.url, paper.accessed.isoformat()) == (
        "application/pdf", "v1", "https://example.org/paper.pdf", "2026-08-01")
    import hashlib

    assert paper.sha256 == hashlib.sha256(documents["pdf"].read_bytes()).hexdigest()
    stored = pinned / SOURCES_DIR / f"{paper.sha256}.pdf"
    assert stored.read_bytes() == documents["pdf"].read_bytes()
    sidecar = json.loads((pinned / SOURCES_DIR / f"{paper.sha256}.text.json").read_text(encoding="utf-8"))
    # Two pages, and the headings of the outline placed on their page.
    assert [label for _, label in sidecar["pages"]] == ["1", "2"]
    assert [title for _, _, title in sidecar["headings"]] == ["1 Introduction", "2 Evaluation Protocol",
                                                              "2.1 Stopping rule"]
    assert "ﬁ" not in sidecar["text"] and "\x1c" not in sidecar["text"]  # T1 ligature codes became letters
    assert sources["harness"].media_type == "text/html" and sources["rules"].media_type == "text/markdown"
    html_text = json.loads((pinned / SOURCES_DIR / f"{sources['harness'].sha256}.text.json").read_text())["text"]
    assert "pwned" not in html_text and "color: red" not in html_text  # scripts and styles are not text
    # The sources written before snapshots existed are still there, untouched.
    assert len(review.protocol("swe-bench").sources) == 5


def test_quotes_record_page_section_span_and_snapshot(pinned: Path) -> None:
    review = load_review(pinned)
    cell = review.cells("swe-bench", "open_work")["casheekar"]
    (quote,) = cell.quotes
    assert (quote.page, quote.section) == ("2", "2.1 Stopping rule")
    sha = next(s.sha256 for s in review.protocol("swe-bench").sources if s.id == quote.source)
    assert quote.snapshot == sha[:12]
    sidecar = json.loads((pinned / SOURCES_DIR / f"{sha}.text.json").read_text(encoding="utf-8"))
    # The span points at the passage in the extracted text (where pdflatex broke the line).
    assert " ".join(sidecar["text"][quote.start:quote.end].split()) == PDF_QUOTE
    # The YAML stays readable: one key per line, the text as written.
    text = sheet_text(pinned)
    assert f"text: {PDF_QUOTE}" in text and "page: 2" in text and "section: 2.1 Stopping rule" in text
    html_quote = review.cells("swe-bench", "reset_retention")["casheekar"].quotes[1]
    assert (html_quote.page, html_quote.section) == ("", "Running the harness")


def test_validate_finds_every_quote(pinned: Path, cli) -> None:
    out = ok(cli("validate", "--workspace", pinned))
    assert "4 of 4 quotes found in their snapshots; no problems" in out.stdout


def test_quote_not_in_the_snapshot_is_refused_with_the_closest_passage(pinned: Path, cli) -> None:
    before = tree_digest(pinned)
    result = cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source",
                 "benchmark-for-long-horizon", "The official harness caps each run at twenty minutes",
                 "--workspace", pinned)
    assert result.exit_code == 1
    assert "quote not found in source 'benchmark-for-long-horizon'" in result.stderr
    assert "closest passage (p. 1, Sec. 1)" in result.stderr and "thirty minutes" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert tree_digest(pinned) == before


def test_a_hand_written_quote_without_position_is_located_by_validate(pinned: Path, cli) -> None:
    path = pinned / "protocols/swe-bench/codes/casheekar.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("  separate_evidence:"))
    quotes_at = next(i for i in range(start, len(lines)) if lines[i].strip() == "quotes:")
    # Two quotes typed by hand, with no position: one is in the document, one is not.
    lines[quotes_at + 1:quotes_at + 1] = [
        "      - source: rules\n", "        text: Submissions must report the number of attempts per task.\n",
        "      - source: rules\n", "        text: Submissions must report the number of tries per task.\n"]
    path.write_text("".join(lines), encoding="utf-8")
    result = cli("validate", "--workspace", pinned)
    assert result.exit_code == 1
    problems = result.stderr.strip().splitlines()
    assert len(problems) == 2, result.stderr  # the quote not found, and the count
    line_number = next(i for i, line in enumerate(lines, 1) if "number of tries" in line)
    assert problems[0].startswith(f"protocols/swe-bench/codes/casheekar.yaml:{line_number}:15: ")
    assert "quote not found in source 'rules'" in problems[0]
    assert "Submissions must report the number of attempts per task." in problems[0]


def test_a_changed_snapshot_byte_is_reported_at_its_hash(pinned: Path, cli) -> None:
    review = load_review(pinned)
    paper = next(s for s in review.protocol("swe-bench").sources if s.media_type == "application/pdf")
    stored = pinned / SOURCES_DIR / f"{paper.sha256}.pdf"
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))
    result = cli("validate", "--workspace", pinned)
    assert result.exit_code == 1
    line = next(i for i, text in enumerate((pinned / "protocols/swe-bench/protocol.yaml").read_text().splitlines(), 1)
                if paper.sha256 in text)
    assert f"protocols/swe-bench/protocol.yaml:{line}:" in result.stderr
    assert "has changed: its bytes no longer match this SHA-256" in result.stderr
    assert "protocoder source update swe-bench benchmark-for-long-horizon FILE" in result.stderr


def test_update_reports_exactly_the_cell_whose_quote_changed(pinned: Path, documents: dict[str, Path], cli) -> None:
    out = ok(cli("source", "update", "swe-bench", "benchmark-for-long-horizon", documents["pdf2"],
                 "--version", "v2", "--workspace", pinned))
    drifted = [line.strip() for line in out.stdout.splitlines() if line.startswith("  swe-bench/")]
    assert drifted == [f'swe-bench/open_work (casheekar): "{PDF_QUOTE}"']
    assert "1 quote(s) found in this version: moved to it" in out.stdout
    review = load_review(pinned)
    paper = next(s for s in review.protocol("swe-bench").sources if s.media_type == "application/pdf")
    assert paper.version == "v2" and [v.version for v in paper.previous] == ["v1"]
    kept = review.cells("swe-bench", "reset_retention")["casheekar"].quotes[0]
    assert kept.snapshot == paper.sha256[:12]  # moved to the new version
    lost = review.cells("swe-bench", "open_work")["casheekar"].quotes[0]
    assert lost.snapshot == paper.previous[0].sha256[:12]  # still anchored where it was found
    # validate flags exactly that cell, as a warning at its quote (exit 0; --strict fails on it);
    # status counts it.
    assert cli("validate", "--strict", "--workspace", pinned).exit_code == 1
    result = cli("validate", "--workspace", pinned)
    assert result.exit_code == 0
    flagged = [line for line in result.stderr.splitlines() if "drifted evidence" in line]
    assert len(flagged) == 1 and "--cell swe-bench/open_work --reviewer casheekar" in flagged[0]
    assert "protocoder: 0 errors, 1 warning" in result.stderr
    status = ok(cli("status", "--workspace", pinned)).stdout
    assert "Drifted evidence (1 cell, 1 quote" in status
    assert "  swe-bench/open_work (casheekar): 1 quote of benchmark-for-long-horizon" in status
    # Confirming the code clears the flag, and the confirmation is in the reviewer's file.
    out = ok(cli("quote", "confirm", "--cell", "swe-bench/open_work", "--reviewer", "casheekar",
                 "--workspace", pinned))
    assert "Confirmed 1 quote(s)" in out.stdout
    assert f"confirmed: {paper.sha256[:12]}" in sheet_text(pinned)
    assert "1 confirmed against a newer version" in ok(cli("validate", "--workspace", pinned)).stdout
    assert "Drifted" not in ok(cli("status", "--workspace", pinned)).stdout


def test_requoting_from_the_new_version_clears_drift(pinned: Path, documents: dict[str, Path], cli) -> None:
    ok(cli("source", "update", "swe-bench", "benchmark-for-long-horizon", documents["pdf2"],
           "--workspace", pinned))
    args = ["--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--workspace", pinned]
    ok(cli("quote", "remove", *args, PDF_QUOTE))
    ok(cli("quote", "add", *args, "--source", "benchmark-for-long-horizon",
           "Each episode ends when the agent submits a final answer or after one hundred steps."))
    assert "no problems" in ok(cli("validate", "--workspace", pinned)).stdout


def test_missing_snapshots_are_not_present_here_and_nothing_is_lost(pinned: Path, documents: dict[str, Path],
                                                                    cli) -> None:
    before = sheet_text(pinned)
    for path in (pinned / SOURCES_DIR).iterdir():
        path.unlink()  # as in a clone of a repository that ignores /sources/
    result = ok(cli("validate", "--workspace", pinned))
    notes = [line for line in result.stderr.splitlines() if "not present here" in line]
    assert len(notes) == 3 and all(": note: snapshot of source" in line for line in notes)
    assert "0 of 4 quotes found in their snapshots (4 not checked: snapshot not present here)" in result.stdout
    assert sheet_text(pinned) == before
    assert "(3 not present here)" in ok(cli("status", "--workspace", pinned)).stdout
    listing = ok(cli("source", "list", "swe-bench", "--workspace", pinned)).stdout
    assert listing.count("not present here") == 3
    refused = cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source", "rules",
                  MD_QUOTE, "--workspace", pinned)
    assert refused.exit_code == 1 and "is not present here, so the quote cannot be checked" in refused.stderr
    # The command the refusal names brings the snapshot back; then the quote can be added.
    assert "protocoder source update swe-bench rules FILE" in refused.stderr
    out = ok(cli("source", "update", "swe-bench", "rules", documents["md"], "--workspace", pinned))
    assert "pinned to this file already" in out.stdout
    ok(cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source", "rules",
           MD_QUOTE, "--workspace", pinned))


def test_source_remove_is_refused_while_quoted(pinned: Path, cli) -> None:
    before = tree_digest(pinned)
    refused = cli("source", "remove", "swe-bench", "rules", "--workspace", pinned)
    assert refused.exit_code == 1
    assert "quoted 1 time(s), in swe-bench/separate_evidence (casheekar)" in refused.stderr
    assert "protocoder quote remove" in refused.stderr
    assert tree_digest(pinned) == before
    ok(cli("quote", "remove", "--cell", "swe-bench/separate_evidence", "--reviewer", "casheekar", "--source", "rules",
           "--workspace", pinned))
    sha = next(s.sha256 for s in load_review(pinned).protocol("swe-bench").sources if s.id == "rules")
    out = ok(cli("source", "remove", "swe-bench", "rules", "--workspace", pinned))
    assert f"sources/{sha}.md" in out.stdout
    assert not (pinned / SOURCES_DIR / f"{sha}.md").exists()
    assert not (pinned / SOURCES_DIR / f"{sha}.text.json").exists()
    assert "rules" not in {s.id for s in load_review(pinned).protocol("swe-bench").sources}
    assert "no problems" in ok(cli("validate", "--workspace", pinned)).stdout


def test_export_carries_quotes(pinned: Path, cli) -> None:
    rows = json.loads(ok(cli("export", "--format", "json", "--workspace", pinned)).stdout)
    row = next(r for r in rows if r["protocol"] == "swe-bench" and r["field"] == "open_work")
    (quote,) = row["quotes"]
    assert quote["text"] == PDF_QUOTE and quote["page"] == "2" and quote["section"] == "2.1 Stopping rule"
    assert isinstance(quote["start"], int) and quote["end"] > quote["start"]
    import csv
    import io

    table = list(csv.DictReader(io.StringIO(ok(cli("export", "--workspace", pinned)).stdout)))
    cell = next(r for r in table if r["protocol"] == "swe-bench" and r["field"] == "open_work")
    assert json.loads(cell["quotes"]) == row["quotes"]
    # The exported CSV imports again, and the import leaves the quotes where they are.
    exported = pinned / "cells.csv"
    exported.write_text(ok(cli("export", "--workspace", pinned)).stdout, encoding="utf-8")
    before = sheet_text(pinned)
    ok(cli("import", exported, "--workspace", pinned))
    assert sheet_text(pinned) == before
