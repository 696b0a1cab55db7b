"""Issue 22: quotes can be imported from CSV as export writes them; each new quote is checked
against its snapshot (one line per bad row naming the row and the closest passage)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from protocoder.storage.workspace import load_review

from .test_workflow import MD_QUOTE, documents, ok, pinned, pinned_once, typeset  # noqa: F401  (fixtures)
from conftest import tree_digest


def quoted_rows(cli, workspace: Path) -> tuple[list[str], list[dict[str, str]]]:
    text = ok(cli("export", "--workspace", workspace)).stdout
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


def write(path: Path, header: list[str], rows: list[dict[str, str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def test_export_then_import_keeps_quotes_byte_for_byte(pinned: Path, cli) -> None:  # noqa: F811
    header, rows = quoted_rows(cli, pinned)
    assert any(row["quotes"] for row in rows)
    path = write(pinned / "again.csv", header, rows)
    before = tree_digest(pinned / "protocols")
    result = ok(cli("import", "--workspace", pinned, path))
    assert "0 cells changed" in result.stdout
    assert tree_digest(pinned / "protocols") == before


def test_quotes_imported_for_another_reviewer_are_checked_and_stored(pinned: Path, cli) -> None:  # noqa: F811
    header, rows = quoted_rows(cli, pinned)
    quoted = [dict(row, reviewer="dora") for row in rows if row["quotes"]]
    ok(cli("import", "--workspace", pinned, write(pinned / "dora.csv", header, quoted)))
    review = load_review(pinned)
    original = {(c.protocol, c.field): c.quotes for c in review.all_cells() if c.reviewer == "casheekar" and c.quotes}
    imported = {(c.protocol, c.field): c.quotes for c in review.all_cells() if c.reviewer == "dora"}
    assert imported == original
    assert "no problems" in ok(cli("validate", "--workspace", pinned)).stdout


def test_a_hand_written_quote_is_located_and_a_wrong_one_names_the_closest_passage(pinned: Path, cli) -> None:  # noqa: F811
    header = ["protocol", "field", "reviewer", "code", "source", "basis", "quotes"]
    good = {"protocol": "swe-bench", "field": "reset_retention", "reviewer": "erin", "code": "E",
            "source": "rules, Sec. 1", "basis": "Reset before each attempt.",
            "quotes": json.dumps([{"source": "rules", "text": MD_QUOTE}])}
    wrong = dict(good, field="open_work", quotes=json.dumps([{"source": "rules", "text": MD_QUOTE.replace(
        "initial snapshot", "first snapshot")}]))
    before = tree_digest(pinned / "protocols")
    result = cli("import", "--workspace", pinned, write(pinned / "mixed.csv", header, [good, wrong]))
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if "mixed.csv" in line]
    assert len(lines) == 1 and "row 3: quote 1: quote not found in source 'rules'" in lines[0], result.stderr
    assert "closest passage" in lines[0] and "initial snapshot" in lines[0]
    assert tree_digest(pinned / "protocols") == before, "nothing written"
    ok(cli("import", "--workspace", pinned, write(pinned / "good.csv", header, [good])))
    quote = load_review(pinned).cells("swe-bench", "reset_retention")["erin"].quotes[0]
    assert quote.text == MD_QUOTE and quote.start is not None and quote.snapshot
