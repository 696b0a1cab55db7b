"""Every table fits the text block of a standard article, for any rubric, text and engine (issue 13).

Renders with ``--standalone`` (a) the bundled review, (b) a 43-field checklist with numeric
code ids, ten protocols and two reviewers who disagree, and (c) a review with long URLs,
CJK and accented names, an adjudication, a release and a correction; compiles every table
(with xelatex too for (c)) and fails on an overfull box over 5 pt, a missing character or
an undefined citation (tests/latex_check.py, which CI also runs on its own).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from latex_check import check_folder, log_problems, to_png
from review_factory import multilingual_review, wide_review

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
needs_xelatex = pytest.mark.skipif(shutil.which("xelatex") is None or shutil.which("fc-list") is None
                                   or "Noto Serif CJK" not in subprocess.run(["fc-list"], capture_output=True,
                                                                              text=True).stdout,
                                   reason="xelatex or the Noto CJK fonts (fonts-noto-cjk) are not installed")


def render_tex(cli, workspace: Path, out: Path, *extra: str) -> Path:
    result = cli("render", "--workspace", workspace, "--format", "latex", "--standalone", "--out", out,
                 "--bootstrap", "200", "--seed", "1", *extra)
    assert result.exit_code == 0, result.output
    return out


def assert_fits(folder: Path, engine: str = "pdflatex") -> None:
    problems = {name: found for name, found in check_folder(folder, engine).items() if found}
    assert not problems, "\n".join(p for found in problems.values() for p in found)
    for pdf in folder.glob("*.pdf"):
        assert pdf.stat().st_size > 1000, pdf.name


def test_the_log_check_catches_what_it_must() -> None:
    log = ("Overfull \\hbox (14201.3pt too wide) in paragraph at lines 5--9\n"
           "Overfull \\hbox (4.9pt too wide) in alignment at lines 1--2\n"
           "Missing character: There is no 中 in font lmr10!\n"
           "LaTeX Warning: Citation `x' on page 1 undefined on input line 3.\n")
    problems = log_problems(log)
    assert len(problems) == 3
    assert "14201.3pt" in problems[0] and "Missing character" in problems[1] and "Citation `x'" in problems[2]


@pytest.mark.latex
@needs_pdflatex
def test_a_bundled_review_fits(cli, tmp_path: Path) -> None:
    out = render_tex(cli, REPO, tmp_path / "a")
    assert sorted(p.name for p in out.glob("*.tex")) == ["ledger.tex", "matrix.tex", "summary.tex"]
    assert_fits(out)


@pytest.mark.latex
@needs_pdflatex
def test_b_a_43_field_checklist_fits_and_shows_every_field(cli, tmp_path: Path) -> None:
    review = wide_review(tmp_path / "review")
    out = render_tex(cli, review, tmp_path / "b")
    matrix = (out / "matrix.tex").read_text(encoding="utf-8")
    # Forty-three fields do not fit as columns: the matrix turns to fields as rows.
    assert "Field &" in matrix and matrix.count("\\cellcolor") >= 430 - matrix.count("\\textbf{?}")
    ids = re.findall(r"\\texttt\{((?:[a-z0-9]|\\hspace\{0pt\}|\.)+)\}", matrix)
    shown = {identifier.replace("\\hspace{0pt}", "") for identifier in ids}
    assert {f"o.a.{i}" for i in range(1, 10)} <= shown and len(shown) == 43
    agreement = (out / "agreement.tex").read_text(encoding="utf-8")
    assert "\\footnote{" not in agreement and "\\footnotemark" not in agreement
    assert "bootstrap resamples dropped" not in agreement
    assert_fits(out)
    pages = to_png(out / "matrix.pdf")
    assert 1 <= len(pages) <= 6, f"{len(pages)} pages for a 43-field matrix"


@pytest.mark.latex
@needs_pdflatex
def test_c_urls_cjk_and_history_fit_with_pdflatex(cli, tmp_path: Path) -> None:
    review = multilingual_review(tmp_path / "review", cli)
    out = render_tex(cli, review, tmp_path / "c")
    assert (out / "corrections.tex").is_file() and (out / "agreement.tex").is_file()
    ledger = (out / "ledger.tex").read_text(encoding="utf-8")
    assert "[}U+4E2D{]}" in ledger, "pdflatex keeps the visible placeholder for CJK"
    assert "\\hspace{0pt}" in ledger, "long tokens get break points"
    assert_fits(out)


@pytest.mark.latex
@needs_pdflatex
@needs_xelatex
def test_c_urls_cjk_and_history_fit_with_xelatex_and_print_as_text(cli, tmp_path: Path) -> None:
    review = multilingual_review(tmp_path / "review", cli)
    out = render_tex(cli, review, tmp_path / "c", "--engine", "xelatex")
    for tex in out.glob("*.tex"):
        assert "U+" not in tex.read_text(encoding="utf-8"), tex.name
    assert_fits(out, "xelatex")
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "ledger.pdf", "-"], cwd=out, capture_output=True, text=True).stdout
        assert "中文" in text and "Ångström" in text and "日本語" in text
        matrix = subprocess.run(["pdftotext", "matrix.pdf", "-"], cwd=out, capture_output=True, text=True).stdout
        assert "Café" in matrix


def test_engine_fragments_keep_or_restore_unicode(cli, tmp_path: Path) -> None:
    review = multilingual_review(tmp_path / "review", cli)
    for engine, placeholder in (("pdflatex", True), ("xelatex", False), ("lualatex", False)):
        out = tmp_path / engine
        assert cli("render", "--workspace", review, "--format", "latex", "--engine", engine, "--out", out,
                   "--bootstrap", "0").exit_code == 0
        matrix = (out / "matrix.tex").read_text(encoding="utf-8")
        assert ("U+4E2D" in matrix) is placeholder, engine
        if not placeholder:
            assert "{\\protocoderCJK 中\\hspace{0pt}文\\hspace{0pt}}" in matrix
            assert matrix.startswith("\\providecommand{\\protocoderCJK}{}")
