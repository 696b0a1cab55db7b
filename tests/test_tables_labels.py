"""Issue 31.4: published tables say what happened.

The matrix marks adjudicated and corrected cells as the ledger does; intervals print as
``[−0.13, 0.80]``; a continued LaTeX table keeps its number ("Table 1 (continued)", checked in
the compiled PDF's text); protocol names are not hyphenated in the narrow LaTeX columns.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from protocoder.render.agreement_table import interval_text

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
                                    reason="pdflatex and pdftotext (poppler) are needed")


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture
def decided(two: Path, cli) -> Path:
    """``two`` with its three disagreements adjudicated, released as v1, and one released cell corrected."""
    for cell, code in (("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "P"),
                       ("cybench/reset_retention", "E")):
        ok(cli("adjudicate", "--workspace", two, "--cell", cell, "--code", code, "--reason", "meeting",
               "--by", "dana"))
    ok(cli("freeze", "--workspace", two, "--label", "v1", "--by", "dana", "--bootstrap", "0"))
    ok(cli("correct", "--workspace", two, "--cell", "swe-bench/open_work", "--code", "NR",
           "--reason", "Sec. 4 was missed.", "--by", "dana"))
    return two


def test_the_matrix_marks_adjudicated_and_corrected_cells(decided: Path, cli, tmp_path: Path) -> None:
    ok(cli("render", "--workspace", decided, "--out", tmp_path / "out", "--bootstrap", "0"))
    matrix = (tmp_path / "out/matrix.md").read_text(encoding="utf-8")
    assert "| WebArena | NR<sup>a</sup> | E | P |" in matrix
    assert "| SWE-bench | NR<sup>c</sup> |" in matrix
    assert "<sup>a</sup> Adjudicated: reviewers disagreed" in matrix and "<sup>c</sup> Corrected after" in matrix
    tex = (tmp_path / "out/matrix.tex").read_text(encoding="utf-8")
    assert "NR\\textsuperscript{a}" in tex and "NR\\textsuperscript{c}" in tex
    html = (tmp_path / "out/report.html").read_text(encoding="utf-8")
    assert re.search(r'title="Not reported \(adjudicated\)">NR<sup>a</sup></td>', html)


def test_intervals_print_in_brackets_with_true_minus_signs(two: Path, cli, tmp_path: Path) -> None:
    assert interval_text(-0.125, 0.8) == "[−0.12, 0.80]"
    ok(cli("render", "--workspace", two, "--out", tmp_path / "out", "--bootstrap", "200", "--seed", "1"))
    for name in ("agreement.md", "agreement.tex", "report.html", "methods.md"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        # LaTeX: brackets in braces (not an optional argument after \newline), the minus in math mode;
        # Markdown: brackets escaped (never read as a link).
        for escaped, plain in (("{[}", "["), ("{]}", "]"), ("\\[", "["), ("\\]", "]"), ("\\ensuremath{-}", "−")):
            text = text.replace(escaped, plain)
        assert re.search(r"\[−?\d\.\d\d, −?\d\.\d\d\]", text), name
        assert not re.search(r"\d\.\d\d–−?\d\.\d\d", text), f"{name}: an interval written with a dash"


@pytest.mark.latex
@needs_pdflatex
def test_a_continued_table_keeps_its_number(two: Path, cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ok(cli("render", "--workspace", two, "--format", "latex", "--standalone", "--out", out, "--bootstrap", "200",
           "--seed", "1"))
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "agreement.tex"], cwd=out,
                   capture_output=True, check=True, timeout=300)
    text = subprocess.run(["pdftotext", "agreement.pdf", "-"], cwd=out, capture_output=True, text=True,
                          check=True).stdout
    assert "Table 1 (continued)" in text
    assert "Table 2 (continued)" not in text, "the agreement table's continuations took the next number"


def test_report_ids_break_only_at_their_separators(two: Path, cli, tmp_path: Path) -> None:
    """At 900 px the ledger's field column is narrow: an id may break after ``_`` (a <wbr>), never mid-word."""
    ok(cli("render", "--workspace", two, "--out", tmp_path / "out", "--bootstrap", "0", "--format", "html"))
    html = (tmp_path / "out/report.html").read_text(encoding="utf-8")
    assert '<span class="id">separate_<wbr>evidence</span>' in html
    assert ".id { display: block; overflow-wrap: anywhere" not in html
    assert "how often they also agree on</h3>" not in html, "a heading that stops mid-sentence"


@pytest.mark.latex
@needs_pdflatex
def test_protocol_names_are_never_hyphenated_in_the_corrections_table(decided: Path, cli, tmp_path: Path) -> None:
    ok(cli("correct", "--workspace", decided, "--cell", "theagentcompany/open_work", "--code", "P",
           "--reason", "y", "--by", "dana"))
    out = tmp_path / "out"
    ok(cli("render", "--workspace", decided, "--format", "latex", "--standalone", "--out", out, "--bootstrap", "0"))
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "corrections.tex"], cwd=out,
                   capture_output=True, check=True, timeout=300)
    assert "Overfull" not in (out / "corrections.log").read_text(encoding="latin-1"), "a name ran into a column"
    text = subprocess.run(["pdftotext", "-layout", "corrections.pdf", "-"], cwd=out, capture_output=True,
                          text=True, check=True).stdout
    assert "SWE-bench" in text and "TheAgentCompany" in text, "each name whole on its line"
