"""References (issue 29, item 6): LaTeX accents and commands in BibTeX print as Unicode in the
Markdown and HTML reference lists and stay valid LaTeX; ``bib add`` warns about what it cannot
decode, naming the line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from protocoder.cli import main
from protocoder.storage.bibliography import latex_text, parse_bibtex

from conftest import copy_bundled

ACCENTED = r"""@misc{zhang2024cybench,
  author        = {Balunovi{\'c}, Mislav and Tram{\`e}r, Florian and M\"oller, J{\"u}rgen and Stra{\ss}er, Anna},
  title         = {{Cybench}: Attacks \& defenses -- a framework},
  howpublished  = {arXiv preprint arXiv:2408.08926},
  year          = {2024},
  url           = {https://example.org/~cy/bench%20v1},
}
"""


def run(*args: object, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


@pytest.mark.parametrize("latex, text", [
    (r"Balunovi{\'c}", "Balunović"), (r"Tram{\`e}r", "Tramèr"), (r"M\"oller", "Möller"), (r"{\ss}", "ß"),
    (r"1--10", "1–10"), (r"A \& B", "A & B"), (r"{\v{S}}ekoranja", "Šekoranja"), (r"{Lost in the {M}iddle}",
                                                                                 "Lost in the Middle"),
    (r"state-of-the-art", "state-of-the-art"),
])
def test_latex_in_bibtex_values_is_decoded(latex: str, text: str) -> None:
    assert latex_text(latex) == text


def test_a_url_keeps_its_percent_and_tilde() -> None:
    entries, _ = parse_bibtex(ACCENTED, "references.bib")
    assert entries[0].text("url") == "https://example.org/~cy/bench%20v1"


@pytest.fixture
def accented(tmp_path: Path) -> Path:
    root = copy_bundled(tmp_path / "review")
    bib = root / "references.bib"
    text = bib.read_text(encoding="utf-8")
    start = text.index("@misc{zhang2024cybench,")
    end = text.index("\n}\n", start) + 3
    bib.write_text(text[:start] + ACCENTED + text[end:], encoding="utf-8")
    return root


def test_reference_lists_print_unicode_and_the_latex_compiles(accented: Path) -> None:
    result = run("render", "--workspace", accented, "--format", "all", "--standalone")
    assert result.exit_code == 0, result.output
    out = accented / "output"
    markdown = (out / "ledger.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    for listing in (markdown, html):
        assert "Mislav Balunović" in listing and "Florian Tramèr" in listing and "Jürgen Möller" in listing
        assert "Anna Straßer" in listing and "–" in listing
        assert "{\\'c}" not in listing and "\\ss" not in listing and "\\&" not in listing
    latex = "".join(path.read_text(encoding="utf-8") for path in out.glob("*.tex"))
    assert "Balunović" in latex and "{\\'c}" not in latex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    ledger = next(path for path in out.glob("*.tex") if "Balunovi" in path.read_text(encoding="utf-8"))
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", ledger.name], cwd=out,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Missing character" not in (out / ledger.with_suffix(".log").name).read_text(errors="replace")


def test_bib_add_warns_about_commands_it_cannot_decode(bundled: Path, tmp_path: Path) -> None:
    entry = tmp_path / "new.bib"
    entry.write_text("@misc{odd2025,\n  title = {A {\\frobnicate} benchmark},\n  year = {2025},\n}\n",
                     encoding="utf-8")
    result = run("bib", "add", "--workspace", bundled, entry)
    assert result.exit_code == 0, result.output
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith(f"{entry}:1:1: warning: entry 'odd2025', field title: "
                                                        "cannot decode \\frobnicate"), warnings
    clean = tmp_path / "clean.bib"
    clean.write_text("@misc{fine2025,\n  title = {Tram{\\`e}r's benchmark},\n  year = {2025},\n}\n",
                     encoding="utf-8")
    assert run("bib", "add", "--workspace", bundled, clean).stderr == ""
