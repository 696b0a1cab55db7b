"""Documents made to hurt: each ends in one line naming the file, quickly, and nothing is stored.

Extraction runs in a child process limited in CPU time and memory (see
protocoder.evidence.extract); these tests check what a user sees for each kind of bad file,
and that the workspace is byte for byte as it was.
"""

from __future__ import annotations

import io
import json
import re
import time
import zlib
from pathlib import Path

import pytest

from protocoder.evidence.extract import ExtractionError, extract_bounded
from protocoder.evidence.snapshots import SOURCES_DIR

from .docs import make_pdf, paper_pages
from conftest import tree_digest


def _replace_stream(pdf: bytes, stream: bytes, *, flate: bool) -> bytes:
    """``pdf`` (uncompressed, one page) with its content stream replaced (offsets left stale:
    pypdf rebuilds them, as it must for real-world files)."""
    match = re.search(rb"/Length (\d+) >>\nstream\n", pdf)
    assert match is not None
    end = match.end() + int(match.group(1))
    head = b"/Length %d%s >>\nstream\n" % (len(stream), b" /Filter /FlateDecode" if flate else b"")
    return pdf[:match.start()] + head + stream + pdf[end:]


def _zip_bomb() -> bytes:
    """A page whose content stream inflates to a gigabyte (2 MB on disk)."""
    compressor = zlib.compressobj(9)
    line = b"(" + b"A" * 1000 + b") Tj\n"
    body = b"".join(compressor.compress(line) for _ in range(1_000_000)) + compressor.flush()
    return _replace_stream(make_pdf([["x"]], compress=False), body, flate=True)


def _encrypted() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(paper_pages(1)))))
    writer.encrypt("secret", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


HOSTILE = {
    "garbage.pdf": (lambda: b"%PDF-1.4\nthis is not a PDF at all\n%%EOF\n", "not a readable PDF"),
    "truncated.pdf": (lambda: make_pdf(paper_pages(2))[:700], "not a readable PDF"),
    "no-header.pdf": (lambda: b"<html>a page renamed .pdf</html>", "not a PDF (it has no %PDF- header)"),
    "encrypted.pdf": (_encrypted, "the PDF is encrypted with a password"),
    "pages.pdf": (lambda: make_pdf([["x"]] * 3001, compress=False), "the PDF has 3,001 pages; the limit is 3,000"),
    "bomb.pdf": (_zip_bomb, "cannot be read (Limit reached while decompressing"),
    "deep.pdf": (lambda: make_pdf([["x"]], compress=False).replace(
        b"/MediaBox [0 0 612 792]", b"/MediaBox [0 0 612 792] /Deep " + b"[" * 100_000 + b"]" * 100_000),
        "not a readable PDF"),
    "scan.pdf": (lambda: make_pdf([[]]), "the PDF has no text layer"),
    "binary.bin": (lambda: bytes(range(256)) * 10, "not a document protocoder can read"),
    "empty.html": (lambda: b"<html><head><script>alert(1)</script></head><body> </body></html>",
                   "the page has no visible text"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_document_is_one_line_and_stores_nothing(bundled: Path, tmp_path: Path, cli, name: str) -> None:
    make, expected = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(make())
    before = tree_digest(bundled)
    started = time.monotonic()
    result = cli("source", "add", "webarena", path, "--workspace", bundled)
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: "), result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.output
    assert tree_digest(bundled) == before and not (bundled / SOURCES_DIR).exists()
    assert elapsed < 30


def test_enormous_file_is_refused_before_it_is_read(bundled: Path, tmp_path: Path, cli) -> None:
    huge = tmp_path / "huge.pdf"
    with open(huge, "wb") as handle:  # sparse: 200 MB that take no disk
        handle.write(b"%PDF-1.4\n")
        handle.truncate(200 * 1024 * 1024)
    before = tree_digest(bundled)
    started = time.monotonic()
    result = cli("source", "add", "webarena", huge, "--workspace", bundled)
    assert time.monotonic() - started < 5
    assert result.exit_code == 1
    assert result.stderr.strip() == f"{huge}: file is 209,715,200 bytes; the limit is 104,857,600"
    assert tree_digest(bundled) == before


def test_a_document_that_never_finishes_is_stopped_in_time() -> None:
    # Three million text operators: pypdf works through them for much longer than the limit given.
    slow = _replace_stream(make_pdf([["x"]], compress=False),
                           zlib.compress(b"BT /F1 11 Tf " + b"0 0 Td (a) Tj " * 3_000_000 + b"ET"), flate=True)
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="took longer than 2 s"):
        extract_bounded(slow, "application/pdf", seconds=2)
    assert time.monotonic() - started < 6


def test_a_document_that_needs_more_memory_than_allowed_is_one_line(bundled: Path, tmp_path: Path, cli,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The extracting child's address space is limited (RLIMIT_AS): past it, one line, nothing stored.
    The limit is lowered here so that an 11 MB text, within the plain-text size limit (12 MiB), crosses it."""
    monkeypatch.setenv("PROTOCODER_EXTRACT_MEMORY", str(48 * 1024 * 1024))
    big = tmp_path / "big.txt"
    line = "A reviewed sentence about resets between tasks, written again and again. " * 4 + "\n"
    big.write_text(line * (11 * 1024 * 1024 // len(line)), encoding="utf-8")
    before = tree_digest(bundled)
    result = cli("source", "add", "webarena", big, "--workspace", bundled)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"{big}: "), result.stderr
    assert "memory" in result.stderr, result.stderr
    assert tree_digest(bundled) == before
    # The same file with the usual limit is pinned.
    monkeypatch.delenv("PROTOCODER_EXTRACT_MEMORY")
    assert cli("source", "add", "webarena", big, "--workspace", bundled).exit_code == 0


def test_update_with_a_hostile_file_changes_nothing(bundled: Path, tmp_path: Path, cli) -> None:
    good = tmp_path / "paper.pdf"
    good.write_bytes(make_pdf(paper_pages(2)))
    assert cli("source", "add", "webarena", good, "--id", "paper", "--workspace", bundled).exit_code == 0
    bad = tmp_path / "paper-v2.pdf"
    bad.write_bytes(_encrypted())
    before = tree_digest(bundled)
    result = cli("source", "update", "webarena", "paper", bad, "--workspace", bundled)
    assert result.exit_code == 1 and "encrypted" in result.stderr
    assert tree_digest(bundled) == before


def test_html_scripts_and_deep_nesting_are_text_only(bundled: Path, tmp_path: Path, cli) -> None:
    page = tmp_path / "deep.html"
    page.write_bytes(b"<html><head><title>Deep</title><script>document.body.innerHTML = 'owned'</script></head>"
                     b"<body>" + b"<div><span>" * 100_000 + b"<script>steal()</script>The grader runs once."
                     + b"</span></div>" * 100_000 + b"<style>*{display:none}</style></body></html>")
    result = cli("source", "add", "webarena", page, "--id", "deep", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    (sidecar,) = (bundled / SOURCES_DIR).glob("*.text.json")
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    assert data["text"] == "The grader runs once." and data["title"] == "Deep"


def test_extracted_text_cannot_drive_the_terminal(bundled: Path, tmp_path: Path, cli) -> None:
    # Escape sequences (clear screen, set the window title, hyperlinks) and Rich/console markup
    # in a document are stored as plain characters, or dropped when they are controls.
    doc = tmp_path / "notes.txt"
    doc.write_text("Runs end \x1b[2J\x1b]0;pwned\x07after [bold red]ten[/] minutes.\x1b]8;;http://x\x1b\\link\n"
                   "Second line.\n", encoding="utf-8")
    assert cli("source", "add", "webarena", doc, "--id", "notes", "--workspace", bundled).exit_code == 0
    (sidecar,) = (bundled / SOURCES_DIR).glob("*.text.json")
    text = json.loads(sidecar.read_text(encoding="utf-8"))["text"]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text)
    assert "after [bold red]ten[/] minutes." in text
    # A quote that is not there is answered with the closest passage: printed without controls.
    result = cli("quote", "add", "--cell", "webarena/open_work", "--reviewer", "ada", "--source", "notes",
                 "Runs end \x1b[31m after eleven minutes", "--workspace", bundled)
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "[bold red]ten[/]" in result.stderr
