"""One verification path (issue 29, item 5): ``quote add``, ``validate``, ``quote list``,
``render --quotes``, ``export`` (CSV, qdpx) and ``import`` judge the same quotes the same way.

Quotes of real documentation (tests/data/real-docs) made as a reviewer makes them — across
Markdown markup, across two paragraphs, lines of a code block joined as the reader joins
them — are accepted by every command, and the REFI-QDA export places each where ``validate``
found it in the text it ships. Records that are wrong (a text not in the source, raw offsets
edited by hand, an ``exact`` cut inside a URL) are refused by every command, with one line
naming the file, and nothing is written.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from lxml import etree

from protocoder.cli import main
from protocoder.evidence.extract import extract
from protocoder.evidence.locate import Span, normalise
from protocoder.evidence.reading import ReadingText
from protocoder.interop.refiqda import PROJECT_NS
from protocoder.storage.store import CellUpdate, Store
from protocoder.storage.workspace import load_review

from conftest import copy_bundled, tree_digest

REAL = Path(__file__).resolve().parent.parent / "data" / "real-docs"
ALPACA = REAL / "alpaca-eval" / "README.md"
BFCL = REAL / "bfcl-eval" / "README.md"
PROTOCOL = "swe-bench"
REVIEWER = "casheekar"
NS = {"q": PROJECT_NS}


def run(*args: object, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def reader_passage(path: Path, first: str, last: str | None = None) -> str:
    """The passage the reader quotes for the span from ``first`` to the end of ``last`` (or the
    sentence around ``first``), made by the core functions the reader calls."""
    reading = ReadingText(extract(path.read_bytes(), "text/markdown"))
    text = reading.extracted.text
    start = text.index(first)
    if last is None:
        return reading.passage(reading.sentence(Span(start, start + len(first))))
    end = text.index(last, start) + len(last)
    return reading.passage(Span(start, end))


def good_quotes() -> list[tuple[str, str, str]]:
    """(field, source, text): quotes a reviewer makes of the real documents."""
    return [
        # A sentence ending in a link plus a full stop, as rendered: the raw file has the link's URL.
        ("open_work", "alpaca", reader_passage(ALPACA, "Our leaderboards are computed on the")),
        # Two paragraphs at once.
        ("open_work", "alpaca", reader_passage(ALPACA, "We then pair each output with the output",
                                               "on the same instruction.")),
        # Lines of a code block, a comment among them, joined into one line as the reader does.
        ("reset_retention", "bfcl", reader_passage(BFCL, "cp bfcl_eval/.env.example .env",
                                                   "# Fill in necessary values in `.env`")),
        # A sentence with "e.g." in it, widened from a match inside it.
        ("separate_evidence", "alpaca", reader_passage(ALPACA, "may be biased towards models")),
    ]


@pytest.fixture(scope="module")
def quoted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_bundled(tmp_path_factory.mktemp("agree") / "review")
    ok(run("source", "add", PROTOCOL, ALPACA, "--id", "alpaca", "--workspace", root))
    ok(run("source", "add", PROTOCOL, BFCL, "--id", "bfcl", "--workspace", root))
    for field, source, text in good_quotes():
        ok(run("quote", "add", "--cell", f"{PROTOCOL}/{field}", "--reviewer", REVIEWER, "--source", source,
               "--workspace", root, "-", stdin=text))
    return root


@pytest.fixture
def quoted(quoted_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(quoted_once, tmp_path / "review"))


def sheet(root: Path) -> Path:
    return root / "protocols" / PROTOCOL / "codes" / f"{REVIEWER}.yaml"


def exported_rows(root: Path) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(ok(run("export", "--workspace", root)).stdout))
    return list(reader.fieldnames or []), [row for row in reader if row["quotes"] not in ("", "[]")]


def reimport_as(root: Path, reviewer: str) -> Result:
    """Export the cells with quotes and import them as another reviewer's (every quote checked)."""
    header, rows = exported_rows(root)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(dict(row, reviewer=reviewer) for row in rows)
    path = root / "again.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    try:
        return run("import", "--workspace", root, path)
    finally:
        path.unlink()


def qdpx(root: Path, out: Path) -> Result:
    return run("export", "--workspace", root, "--format", "qdpx", "--out", out)


def listed_states(root: Path) -> list[str]:
    lines = ok(run("quote", "list", "--workspace", root, "--reviewer", REVIEWER)).stdout.splitlines()
    return [line.split("\t")[5] for line in lines if line.startswith(f"{PROTOCOL}/")]


def test_every_command_accepts_the_quotes_a_reviewer_makes_of_real_documents(quoted: Path, tmp_path: Path) -> None:
    quotes = [q for cell in load_review(quoted).all_cells() if cell.reviewer == REVIEWER for q in cell.quotes
              if q.source in ("alpaca", "bfcl")]
    assert len(quotes) == len(good_quotes())
    assert "[AlpacaEval dataset](https://huggingface.co/datasets/tatsu-lab/alpaca_eval)." in quotes[0].exact

    assert ok(run("validate", "--workspace", quoted)).exit_code == 0
    assert listed_states(quoted) == ["found"] * len(quotes)

    out = tmp_path / "review.qdpx"
    result = ok(qdpx(quoted, out))
    assert "left out" not in result.stderr
    with zipfile.ZipFile(out) as archive:
        project = etree.fromstring(archive.read("project.qde"))
        shipped = {}
        for source in project.iterfind(".//q:TextSource", NS):
            text = archive.read(source.get("plainTextPath").replace("internal://", "sources/")).decode("utf-8")
            for selection in source.iterfind("q:PlainTextSelection", NS):
                start, end = int(selection.get("startPosition")), int(selection.get("endPosition"))
                shipped[selection.get("name")] = text[start:end]
    assert len(shipped) == len(quotes)
    for quote in quotes:  # each where validate found it, in the text shipped
        assert normalise(shipped[quote.text[:80]]) == normalise(quote.text)

    ok(run("render", "--workspace", quoted, "--format", "md", "--quotes"))
    ledger = normalise((quoted / "output" / "ledger.md").read_text(encoding="utf-8"))  # Markdown-escaped
    for quote in quotes:
        assert normalise(quote.text)[:60] in ledger

    before = {cell.field: cell.quotes for cell in load_review(quoted).all_cells()
              if cell.protocol == PROTOCOL and cell.reviewer == REVIEWER}
    ok(reimport_as(quoted, "dora"))
    again = {cell.field: cell.quotes for cell in load_review(quoted).all_cells()
             if cell.protocol == PROTOCOL and cell.reviewer == "dora"}
    assert {f: q for f, q in before.items() if q} == again
    assert ok(run("validate", "--workspace", quoted)).exit_code == 0


def spoil(root: Path, how: str) -> None:
    """Write one wrong quote record into the reviewer's cell, through the store."""
    review = load_review(root)
    cell = review.cells(PROTOCOL, "open_work")[REVIEWER]
    first = cell.quotes[0]
    if how == "not in the source":
        bad = replace(first, text=first.text.replace("leaderboards", "scoreboards"), start=None, end=None,
                      exact="", prefix="", suffix="", raw_start=None, raw_end=None)
    elif how == "offsets edited by hand":
        assert first.raw_start is not None and first.raw_end is not None
        bad = replace(first, raw_start=first.raw_start + 7, raw_end=first.raw_end + 7)
    else:  # an exact cut inside the link's URL, as the reader used to store it
        cut = first.exact.index("](https://") + len("](https://hub")
        assert first.raw_start is not None
        bad = replace(first, exact=first.exact[:cut], raw_end=first.raw_start + cut)
    Store(review.paths).write_cells([CellUpdate(PROTOCOL, "open_work", REVIEWER, {"quotes": (bad, *cell.quotes[1:])})],
                                    review.require_valid())


@pytest.mark.parametrize("how", ["not in the source", "offsets edited by hand", "exact cut inside a URL"])
def test_every_command_refuses_a_wrong_record_and_writes_nothing(quoted: Path, tmp_path: Path, how: str) -> None:
    spoil(quoted, how)
    shown = f"protocols/{PROTOCOL}/codes/{REVIEWER}.yaml"
    before = tree_digest(quoted)

    result = run("validate", "--workspace", quoted)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith(f"{shown}:")]
    assert len(errors) == 1 and re.match(rf"{re.escape(shown)}:\d+:\d+: ", errors[0]), result.output

    states = listed_states(quoted)
    assert states[0] != "found" and states[1:] == ["found"] * (len(states) - 1)

    out = tmp_path / "review.qdpx"
    result = qdpx(quoted, out)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"cell {PROTOCOL}/open_work ({REVIEWER}), quote 1" in result.stderr
    assert "run `protocoder validate`" not in result.stderr  # no dead end: the reason itself
    assert not out.exists()

    result = run("render", "--workspace", quoted, "--format", "md", "--quotes")
    assert result.exit_code == 1 and "Traceback" not in result.output

    result = reimport_as(quoted, "dora")
    assert result.exit_code == 1 and "again.csv" in result.stderr and "quote 1" in result.stderr
    assert tree_digest(quoted) == before


def test_quote_add_of_a_text_not_in_the_source_names_the_closest_passage(quoted: Path) -> None:
    before = tree_digest(quoted)
    text = good_quotes()[0][2].replace("leaderboards", "scoreboards")
    result = run("quote", "add", "--cell", f"{PROTOCOL}/open_work", "--reviewer", REVIEWER, "--source", "alpaca",
                 "--workspace", quoted, "-", stdin=text)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "closest passage" in lines[0] and "Our leaderboards are computed" in lines[0]
    assert tree_digest(quoted) == before


def test_the_reader_widens_and_joins_real_passages_as_a_quote_the_commands_accept() -> None:
    # The passages above are made by the core functions the reader calls: check what they are.
    made = [text for _, _, text in good_quotes()]
    assert made[0] == "Our leaderboards are computed on the AlpacaEval dataset."
    assert made[2].startswith("cp bfcl_eval/.env.example .env # Fill in")
    assert made[3].startswith("**Caution**: Automatic evaluators (e.g. GPT-4) may be biased") or \
        made[3].startswith("Caution: Automatic evaluators (e.g. GPT-4) may be biased"), made[3]

