"""Quotes in the rendered ledger: printed with their page, escaped like all user text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .docs import make_pdf

HOSTILE = r"Runs | end & cost $5 \textbf{x} {y} ~ ^ # % _ <script>alert(1)</script> [link](javascript:x) *em*"


@pytest.fixture
def quoted(bundled: Path, tmp_path: Path, cli) -> Path:
    notes = tmp_path / "notes.txt"
    notes.write_text(f"Preface.\n\n{HOSTILE}\n\nAfter.\n", encoding="utf-8")
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(make_pdf([["Intro."], ["2 Method", "Each run stops after fifty steps."]],
                               outline=[("Intro", 0), ("Method", 1)]))
    for args in (("source", "add", "webarena", notes, "--id", "notes"),
                 ("source", "add", "webarena", paper, "--id", "paper", "--title", "The paper"),
                 ("quote", "add", "--cell", "webarena/open_work", "--reviewer", "casheekar", "--source", "notes",
                  HOSTILE),
                 ("quote", "add", "--cell", "webarena/open_work", "--reviewer", "casheekar", "--source", "paper",
                  "Each run stops after fifty steps.")):
        result = cli(*args, "--workspace", bundled)
        assert result.exit_code == 0, result.stderr
    return bundled


def test_render_quotes_markdown(quoted: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    result = cli("render", "--quotes", "--bootstrap", "0", "--format", "md", "--out", out, "--workspace", quoted)
    assert result.exit_code == 0, result.stderr
    ledger = (out / "ledger.md").read_text(encoding="utf-8")
    assert "*WebArena · Open work*: The paper, p. 2, Sec. 2\n\n> “Each run stops after fifty steps.”" in ledger
    html = MarkdownIt("commonmark").enable("table").render(ledger)
    assert "<script>" not in html and 'href="javascript' not in html and "<em>em</em>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "Runs | end &amp; cost $5" in html
    # Without --quotes the ledger is what it always was.
    plain = tmp_path / "plain"
    assert cli("render", "--bootstrap", "0", "--format", "md", "--out", plain, "--workspace", quoted).exit_code == 0
    assert "Quoted passages" not in (plain / "ledger.md").read_text(encoding="utf-8")


LONG = ("The harness stops every run after fifty steps and records the trajectory at "
        "https://example.org/benchmarks/harness/configuration/defaults/stopping-rule-and-timeouts.html "
        "for later inspection by the organisers. ") * 3


@pytest.fixture
def quoted_long(quoted: Path, tmp_path: Path, cli) -> Path:
    """The quoted review, and a long passage with a long URL quoted on another cell."""
    report = tmp_path / "report.md"
    report.write_text(f"# Report\n\n{LONG.strip()}\n", encoding="utf-8")
    for args in (("source", "add", "webarena", report, "--id", "report"),
                 ("quote", "add", "--cell", "webarena/reset_retention", "--reviewer", "casheekar", "--source",
                  "report", LONG.strip())):
        result = cli(*args, "--workspace", quoted)
        assert result.exit_code == 0, result.stderr
    return quoted


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_render_quotes_latex_compiles_and_fits(quoted_long: Path, tmp_path: Path, cli) -> None:
    from latex_check import compile_tex

    out = tmp_path / "out"
    result = cli("render", "--quotes", "--bootstrap", "0", "--format", "latex", "--standalone", "--out", out,
                 "--workspace", quoted_long)
    assert result.exit_code == 0, result.stderr
    tex = (out / "ledger.tex").read_text(encoding="utf-8")
    # Each quote is a row of its own under the basis, in the Basis column.
    assert "\n& & & \\textit{``Each run stops after fifty steps.''} (p. 2, Sec. 2) \\\\\n" in tex
    assert r"\textbackslash{}textbf" in tex and r"\textbf{x}" not in tex
    # Compiled twice with pdflatex: no overfull box over 5 pt, no missing character (tests/latex_check.py).
    assert compile_tex(out / "ledger.tex") == []
    if shutil.which("pdftotext") is not None:  # poppler-utils; the compile above is the check that matters
        text = subprocess.run(["pdftotext", "ledger.pdf", "-"], cwd=out, capture_output=True, check=True).stdout
        flat = " ".join(text.decode().split())
        assert "Each run stops after fifty steps." in flat and "\\textbf{x}" in flat
        assert "for later inspection by the organisers." in flat


def test_render_quotes_in_the_html_report(quoted: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    result = cli("render", "--quotes", "--bootstrap", "0", "--format", "html", "--out", out, "--workspace", quoted)
    assert result.exit_code == 0, result.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert ('<blockquote class="quote">“Each run stops after fifty steps.” <cite>The paper, p. 2, Sec. 2</cite>'
            in html)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert ".ledger blockquote.quote {" in html
    plain = tmp_path / "plain"
    assert cli("render", "--bootstrap", "0", "--format", "html", "--out", plain, "--workspace", quoted).exit_code == 0
    assert "quote" not in (plain / "report.html").read_text(encoding="utf-8")  # nor its style: as it was


def test_render_refuses_quotes_that_are_not_in_their_snapshot(quoted: Path, tmp_path: Path, cli) -> None:
    path = quoted / "protocols/webarena/codes/casheekar.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Each run stops after fifty steps.",
                                                             "Each run stops after five steps."), encoding="utf-8")
    result = cli("render", "--quotes", "--bootstrap", "0", "--out", tmp_path / "out", "--workspace", quoted)
    assert result.exit_code == 1
    assert "quote not found in source 'paper'" in result.stderr
    assert not (tmp_path / "out").exists()
