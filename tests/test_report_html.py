"""render --format html: one self-contained report.html, checked as text and in real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from review_factory import multilingual_review

sys.path.insert(0, str(REPO / "scripts"))
from screenshot_report import chromium, find_chromium  # noqa: E402

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed")


def report(cli, workspace: Path, out: Path) -> str:
    result = cli("render", "--workspace", workspace, "--format", "html", "--out", out, "--bootstrap", "100",
                 "--seed", "1")
    assert result.exit_code == 0, result.output
    # One file (and the manifest that lets later renders replace it, and only it).
    assert sorted(p.name for p in out.iterdir()) == [".protocoder-outputs.json", "report.html"]
    return (out / "report.html").read_text(encoding="utf-8")


def test_report_is_self_contained_and_escapes_what_it_prints(cli, bundled: Path, tmp_path: Path) -> None:
    name = bundled / "protocols" / "webarena" / "protocol.yaml"
    name.write_text(name.read_text(encoding="utf-8").replace("name: WebArena", 'name: "<script>alert(1)</script>"'),
                    encoding="utf-8")
    html = report(cli, bundled, tmp_path / "out")
    assert "<script" not in html and "&lt;script&gt;" in html
    # Nothing is fetched: no scripts, stylesheets, images, fonts or frames from anywhere.
    assert not re.search(r"<(?:script|link|img|iframe|object|embed)\b|@import|url\(|\bsrc=", html)
    assert "@media print" in html
    # The matrix is coloured from the palette (ordinal ramp, grey for not applicable) and prints every code.
    assert 'style="background:#D9D9D9;color:#000000" title="Not applicable">NA<' in html
    assert html.count('class="cell"') == 30
    # The ledger's citations link to the numbered references.
    assert '<a href="#ref-37">37</a>, <a href="#ref-38">38</a>' in html and 'id="ref-38"' in html


def test_report_shows_agreement_as_charts_and_history(cli, tmp_path: Path) -> None:
    html = report(cli, multilingual_review(tmp_path / "review", cli), tmp_path / "out")
    assert html.count("<svg") == 4, "one chart per field and the pooled row"
    assert "<circle" in html and 'id="corrections"' in html and "unresolved" in html
    assert "τ²-bench (Café 中文)" in html


@needs_chromium
def test_report_in_headless_chromium(cli, tmp_path: Path) -> None:
    """The report renders and prints in a real browser: a screenshot, and the printed PDF's text."""
    review = multilingual_review(tmp_path / "review", cli)
    report(cli, review, tmp_path / "out")
    html = tmp_path / "out" / "report.html"
    shot, pdf = tmp_path / "report.png", tmp_path / "report.pdf"
    chromium(html, screenshot=shot, window="1280,1600")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    chromium(html, pdf=pdf)
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed: the printed report was not read back")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    for expected in ("Protocol-level codes", "Inter-rater agreement", "Cell-level source ledger", "References",
                     "Corrections after release", "日本語"):
        assert expected in text, expected


@needs_chromium
@pytest.mark.parametrize("width", [900, 1100, 1440])
def test_every_table_fits_the_page_in_a_real_browser(cli, bundled: Path, tmp_path: Path, width: int) -> None:
    """Measured in Chromium: no table of a two-reviewer report is wider than the page's text column, and
    the agreement charts are inside their table (a grid display once pushed them off to the right).

    The second reviewer has just started (one cell done, one half done), so most coefficients are
    undefined and footnoted: the widest agreement table a new review produces."""
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (test extra)")
    (bundled / "protocols/webarena/codes/ada.yaml").write_text(
        "cells:\n  open_work:\n    code: P\n    source: Sec. 3.2\n    basis: A step cap, nothing on running work.\n"
        "    rubric_version: '1.0'\n  reset_retention:\n    code: E\n    rubric_version: '1.0'\n", encoding="utf-8")
    report(cli, bundled, tmp_path / "out")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                                   "--disable-background-networking", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((tmp_path / "out" / "report.html").as_uri())
            overflow = page.evaluate("""() => {
                const body = document.body.getBoundingClientRect();
                const wide = [...document.querySelectorAll('table')]
                    .filter(t => t.getBoundingClientRect().right > body.right - 1)
                    .map(t => `${t.className}: ${Math.round(t.getBoundingClientRect().right)}`
                              + ` > ${Math.round(body.right)}`);
                const charts = [...document.querySelectorAll('table.agreement svg')];
                const outside = charts.filter(svg => {
                    const table = svg.closest('table').getBoundingClientRect();
                    const box = svg.getBoundingClientRect();
                    return box.right > table.right + 1 || box.left < table.left - 1;
                }).length;
                const scrolled = [...document.querySelectorAll('.scroll')]
                    .filter(d => d.scrollWidth > d.clientWidth + 1).length;
                return {wide, charts: charts.length, outside, scrolled};
            }""")
        finally:
            browser.close()
    assert overflow["charts"] == 4, "one chart per field and the pooled row"
    assert overflow["outside"] == 0, overflow
    assert overflow["wide"] == [] and overflow["scrolled"] == 0, overflow
