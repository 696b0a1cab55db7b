"""Escaping: nothing a user writes can break a table or run a LaTeX command."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.render.escape import MACROS, inline_to_latex, inline_to_markdown, latex_escape, md_escape
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

from test_bundled_review import markdown_table

HOSTILE = [
    r"\input{/etc/passwd}",
    r"\write18{rm -rf /}",
    r"\def\x{y}\x \catcode`\^=7",
    "^^5cinput{/etc/passwd}",
    "$\\alpha$ & 50% # _ { } ~ ^",
    "[2cm] starts with a bracket",
    "}{ unbalanced { brace",
    "a | pipe and a\nnewline and `code | pipe`",
    "<script>alert(1)</script> &amp; &#x41;",
    "[click](javascript:alert(1)) *em* **strong** ~~strike~~",
    "--flag ``quotes'' ,, !` ?`",
    "τ-bench ≤ 0.5 ≈ α → β ✓ 😀 ℵ 中文",
    "\u200b zero width \u2009 thin \u00ad soft",
]

EMITTED_MACROS = MACROS


def macros(latex: str) -> set[str]:
    return set(re.findall(r"\\([A-Za-z]+)", latex))


def balanced(latex: str) -> bool:
    depth = 0
    for match in re.finditer(r"\\.|[{}]", latex):
        token = match.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


@pytest.mark.parametrize("text", HOSTILE)
def test_latex_escape_emits_only_known_macros(text: str) -> None:
    for out in (latex_escape(text), inline_to_latex(text)):
        assert macros(out) <= EMITTED_MACROS, macros(out) - EMITTED_MACROS
        assert balanced(out)
        assert "%" not in out.replace(r"\%", ""), "a bare % would comment out the rest of the row"
        assert "\n" not in out


def test_user_macros_are_never_emitted() -> None:
    assert not {"input", "write", "def", "catcode", "include", "immediate"} & MACROS


def test_specific_escapes() -> None:
    assert latex_escape("a_b & 50%") == r"a\_b \& 50\%"
    assert latex_escape("[x]") == "{[}x{]}"
    assert latex_escape("τ") == r"\ensuremath{\tau}"
    assert latex_escape("a--b") == "a-{}-b"
    assert latex_escape("x\\y") == r"x\textbackslash{}y"
    assert latex_escape("😀") == r"\texttt{{[}U+1F600{]}}"
    assert inline_to_latex("[docs](javascript:alert(1))") == r"{[}docs{]}(javascript:alert(1))"
    assert inline_to_latex("see [docs](https://e.org/a_b#c)") == r"see \href{https://e.org/a_b\#c}{docs}"
    assert inline_to_markdown("a | b `c|d`") == r"a \| b `c\|d`"


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_cell_reparses_to_the_same_text(text: str) -> None:
    table = f"| a | b |\n| --- | --- |\n| {md_escape(text)} | {inline_to_markdown(text)} |\n"
    rows = markdown_table(table)
    assert len(rows) == 2 and len(rows[1]) == 2, rows
    assert rows[1][0] == " ".join(text.split())


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_is_one_markdown_cell_with_the_same_text(text: str) -> None:
    escaped = md_escape(text)
    assert "\n" not in escaped
    rows = markdown_table(f"| a | b |\n| --- | --- |\n| {escaped} | x |\n")
    assert len(rows) == 2 and rows[1][1] == "x"
    # GFM trims a cell and drops NUL; everything else the user wrote comes back.
    expected = re.sub(r"\s+", " ", text.replace("\x00", "\ufffd")).strip()
    assert rows[1][0] == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_escapes_to_safe_latex(text: str) -> None:
    out = latex_escape(text)
    assert macros(out) <= EMITTED_MACROS
    assert balanced(out)


def hostile_workspace(bundled: Path) -> Path:
    """Put hostile text in every user-written slot of the bundled review."""
    review = load_review(bundled)
    store = Store(review.paths)
    settings_file = bundled / "protocoder.yaml"
    settings_file.write_text(settings_file.read_text(encoding="utf-8").replace(
        "title: Evaluation-boundary documentation of ten agent-evaluation protocols",
        "title: 'Review & 100% \\\\input{x} #1 τ'"), encoding="utf-8")
    protocol = review.protocol("webarena")
    from dataclasses import replace

    store.update_protocol(replace(protocol, name="Web|Arena \\input{x} [1] τ 😀"), review.bibliography.entries)
    for index, (pid, fld) in enumerate([(p.id, f.id) for p in review.protocols for f in review.rubric.fields]):
        text = HOSTILE[index % len(HOSTILE)]
        cell = review.cells(pid, fld)["casheekar"]
        store.save_cell(replace(cell, source=text.replace("\n", " "), basis=text), review.rubric)
    return bundled


def test_hostile_text_renders_as_tables(bundled: Path, cli) -> None:
    hostile_workspace(bundled)
    result = cli("render", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    ledger = markdown_table((bundled / "output" / "ledger.md").read_text(encoding="utf-8"))
    assert len(ledger) == 31 and all(len(row) == 5 for row in ledger)
    matrix = markdown_table((bundled / "output" / "matrix.md").read_text(encoding="utf-8"))
    assert matrix[1][0] == "Web|Arena \\input{x} [1] τ 😀"
    tex = (bundled / "output" / "ledger.tex").read_text(encoding="utf-8")
    assert r"\input{" not in tex and r"\write18" not in tex


@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_hostile_text_compiles_with_pdflatex(bundled: Path, tmp_path: Path, cli) -> None:
    hostile_workspace(bundled)
    out = tmp_path / "tex"
    assert cli("render", "--workspace", bundled, "--format", "latex", "--standalone", "--out", out).exit_code == 0
    for tex in sorted(out.glob("*.tex")):
        for _ in range(2):  # the second pass settles longtable widths and citations
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
                                 cwd=out, capture_output=True, timeout=120)
        log = (out / tex.with_suffix(".log").name).read_text(encoding="latin-1")
        assert run.returncode == 0, log[-3000:]
        assert "Missing character" not in log
        assert "There were undefined references" not in log
        assert not re.search(r"Citation `[^']*' on page \d+ undefined", log)
