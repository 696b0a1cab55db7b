"""Issue 30.4: outputs carry text, not terminal codes.

ESC, BEL, OSC sequences and C1 controls typed into a basis or a reason are stored as given
(``cell set`` and ``import`` say so) but reach no output raw: ``output/*.md``,
``corrections.md``, ``report.html``, the CSV and JSON exports and the terminal all show each
as ``[U+XXXX]``, as the LaTeX output does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_lifecycle import DECISIONS, DISAGREE, add_reviewer, ok

from protocoder.errors import visible_text

# A hyperlink (OSC 8) that hides its target, a colour, a bell, a C1 CSI that clears the screen.
EVIL = "see \x1b]8;;https://evil.example\x07here\x1b]8;;\x07 \x1b[31mred\x1b[0m bell\x07 c1\x9b2J done"
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_visible_text_shows_every_control_and_keeps_layout() -> None:
    assert visible_text("a\x1b[31mb\x07c\x9bd\x7fe\rf") == "a[U+001B][31mb[U+0007]c[U+009B]d[U+007F]e[U+000D]f"
    assert visible_text("tab\tand\nnewline, ünïcödé ✓") == "tab\tand\nnewline, ünïcödé ✓"


def assert_no_controls(text: str, where: str) -> None:
    found = CONTROLS.search(text)
    assert found is None, f"{where} holds {found.group()!r}"


def test_a_hostile_basis_and_reason_reach_no_output_raw(bundled: Path, cli) -> None:
    out = ok(cli("cell", "set", "--workspace", bundled, "--cell", "webarena/reset_retention", "--reviewer",
                 "casheekar", "--basis", EVIL))
    assert "holds control characters U+0007, U+001B, U+009B: stored as given" in out
    add_reviewer(bundled, cli, "alice", DISAGREE)
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", bundled, "--cell", cell, "--code", code, "--reason", "meeting",
               "--by", "c"))
    ok(cli("freeze", "--workspace", bundled, "--label", "v1", "--bootstrap", "0", "--by", "c"))
    ok(cli("correct", "--workspace", bundled, "--cell", "cybench/open_work", "--code", "P", "--reason", EVIL,
           "--by", "ada", "--source", "App. D", "--basis", EVIL))
    ok(cli("render", "--workspace", bundled, "--format", "all", "--bootstrap", "0"))
    outputs = {p.name: p.read_text(encoding="utf-8") for p in (bundled / "output").iterdir() if p.is_file()}
    assert {"ledger.md", "corrections.md", "report.html", "ledger.tex"} <= set(outputs)
    for name, text in outputs.items():
        assert_no_controls(text, name)
    assert "[U+001B]" in outputs["corrections.md"] and "[U+001B]" in outputs["report.html"]
    for fmt in ("csv", "json"):
        exported = ok(cli("export", "--workspace", bundled, "--format", fmt))
        assert_no_controls(exported, f"export --format {fmt}")
        assert "[U+001B]]8;;https://evil.example[U+0007]here" in (exported if fmt == "csv" else
                                                                   json.dumps(json.loads(exported)))
    final = ok(cli("export", "--workspace", bundled, "--view", "final", "--format", "json"))
    assert_no_controls(final, "export --view final")


def test_an_error_message_quoting_a_hostile_value_prints_no_codes(bundled: Path, cli) -> None:
    result = cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--code", "\x1b]0;pwned\x07X")
    assert result.exit_code != 0
    assert_no_controls(result.stderr, "the error")
    assert "pwned" in result.stderr


def test_import_says_when_it_stored_control_characters(bundled: Path, cli, tmp_path: Path) -> None:
    csv_file = tmp_path / "cells.csv"
    csv_file.write_text("protocol,field,reviewer,code,source,basis\n"
                        f"webarena,open_work,casheekar,P,App. D,\"{EVIL}\"\n", encoding="utf-8")
    out = ok(cli("import", "--workspace", bundled, csv_file))
    assert "Imported 1 rows" in out
    assert "note: row 2 holds control characters U+0007, U+001B, U+009B: stored as given" in out


@pytest.mark.parametrize("row, message", [
    ('webarena,open_work,casheekar,P,App. D,"never closed\n',
     "row 2: a quoted value opened in this row is never closed: the file ends inside it"),
    ('webarena,open_work,casheekar,P,App. D,"closed"then more\n',
     "row 2: text follows the closing quote of a value"),
])
def test_a_broken_quote_is_named_with_its_row(bundled: Path, cli, tmp_path: Path, row: str, message: str) -> None:
    """Issue 30.8: an unterminated quote in a CSV's last row was reported as "6 values for 7 columns"."""
    csv_file = tmp_path / "cells.csv"
    csv_file.write_text("protocol,field,reviewer,code,source,basis\n"
                        "webarena,reset_retention,casheekar,E,App. D,fine\n" + row,
                        encoding="utf-8")
    result = cli("import", "--workspace", bundled, csv_file)
    assert result.exit_code == 1
    assert f"{csv_file}: {message.replace('row 2', 'row 3')}" in result.stderr, result.stderr
    assert "values for" not in result.stderr


def test_a_ratings_csv_with_a_quote_left_open_is_named_with_its_row(cli, tmp_path: Path) -> None:
    """agree --ratings took the rest of the file as one value and went on."""
    ratings = tmp_path / "ratings.csv"
    ratings.write_text('unit,rater,code\nu1,a,x\nu1,b,x\nu2,a,"y\nu2,b,y\nu3,a,x\n', encoding="utf-8")
    result = cli("agree", "--ratings", ratings)
    assert result.exit_code != 0
    assert f"{ratings}, row 4: a quoted value opened in this row is never closed" in result.stderr, result.stderr
