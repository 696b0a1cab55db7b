"""Issue 29 item 2: render --quotes states what the reviewer behind a cell read of each source in the app
(an NR rests on it), in Markdown, LaTeX (escaped: ``%``) and HTML; without --quotes nothing changes."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from protocoder.model import SourceReading
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store

REAL_DOCS = Path(__file__).resolve().parents[1] / "data" / "real-docs"
README = REAL_DOCS / "lm-eval" / "README.md"


@pytest.fixture
def read(bundled: Path, cli) -> Path:
    """casheekar (the only coder: single-coded cells) read all of a real README and a quarter of another."""
    other = REAL_DOCS / "openhands-ai" / "README.md"
    for path, source_id in ((README, "lm-eval"), (other, "openhands")):
        assert cli("source", "add", "webarena", path, "--id", source_id, "--workspace", bundled).exit_code == 0
    store = Store(Paths(bundled))
    store.save_reading("webarena", "casheekar", hashlib.sha256(README.read_bytes()).hexdigest(),
                       SourceReading(10, ((0, 9),)))
    store.save_reading("webarena", "casheekar", hashlib.sha256(other.read_bytes()).hexdigest(),
                       SourceReading(8, ((0, 1),)))
    return bundled


def test_the_ledger_states_what_was_read_with_the_quotes(read: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    result = cli("render", "--quotes", "--bootstrap", "0", "--format", "all", "--out", out, "--workspace", read)
    assert result.exit_code == 0, result.stderr
    ledger = (out / "ledger.md").read_text(encoding="utf-8")
    assert "*WebArena · Open work*: read in the app: lm-eval 100% · openhands 25%." in ledger
    tex = (out / "ledger.tex").read_text(encoding="utf-8")
    assert "& & & Read in the app: lm-eval 100\\% · openhands 25\\%. \\\\" in tex  # % escaped
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<p class="read">Read in the app: lm-eval 100% · openhands 25%.</p>' in html
    # Without --quotes the ledger is what it always was.
    plain = tmp_path / "plain"
    assert cli("render", "--bootstrap", "0", "--format", "md", "--out", plain, "--workspace", read).exit_code == 0
    assert "read in the app" not in (plain / "ledger.md").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_the_latex_ledger_with_reading_compiles(read: Path, tmp_path: Path, cli) -> None:
    from latex_check import compile_tex

    out = tmp_path / "out"
    result = cli("render", "--quotes", "--bootstrap", "0", "--format", "latex", "--standalone", "--out", out,
                 "--workspace", read)
    assert result.exit_code == 0, result.stderr
    assert compile_tex(out / "ledger.tex") == []
