"""Export and import of cells as CSV/JSON: round trips, neutralised formulas, all-or-nothing import."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from protocoder.storage.workspace import load_review

from conftest import tree_digest


def test_export_csv_has_one_row_per_reviewer_cell(bundled: Path, cli) -> None:
    result = cli("export", "--workspace", bundled)
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 30
    assert list(rows[0]) == ["protocol", "field", "reviewer", "code", "source", "basis", "cites", "status",
                             "quotes", "assisted"]
    assert {row["status"] for row in rows} == {"complete"}
    webarena_reset = next(r for r in rows if r["protocol"] == "webarena" and r["field"] == "reset_retention")
    assert webarena_reset["cites"] == "zhou2024webarena;zhu2025establishing"


def test_export_json(bundled: Path, cli) -> None:
    out = bundled / "cells.json"
    assert cli("export", "--workspace", bundled, "--format", "json", "--out", out).exit_code == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == 30 and rows[0]["cites"] == ["zhou2024webarena"]


def test_export_neutralises_formulas_and_import_restores_them(bundled: Path, cli) -> None:
    csv_path = bundled / "in.csv"
    csv_path.write_text("protocol,field,reviewer,code,source,basis,cites\n"
                        "cybench,open_work,bob,P,=cmd|' /C calc'!A0,+SUM(A1:A9) is not a formula,\n",
                        encoding="utf-8")
    assert cli("import", "--workspace", bundled, csv_path).exit_code == 0
    exported = cli("export", "--workspace", bundled).stdout
    assert "'=cmd|' /C calc'!A0" in exported and "'+SUM(A1:A9)" in exported
    # Re-importing the export changes nothing: the apostrophes are removed again.
    (bundled / "again.csv").write_text(exported, encoding="utf-8")
    before = tree_digest(bundled / "protocols")
    result = cli("import", "--workspace", bundled, bundled / "again.csv")
    assert result.exit_code == 0 and "0 cells changed" in result.stdout
    assert tree_digest(bundled / "protocols") == before
    cell = load_review(bundled).cells("cybench", "open_work")["bob"]
    assert cell.source == "=cmd|' /C calc'!A0"


def test_import_creates_and_updates_cells(bundled: Path, cli) -> None:
    csv_path = bundled / "in.csv"
    csv_path.write_text("protocol,field,reviewer,code,source,basis,cites\n"
                        "webarena,open_work,alice,NR,Paper Sec. 3.2,Nothing on background work.,zhou2024webarena\n"
                        "webarena,open_work,casheekar,P,Paper Sec. 3.2,Changed my mind.,\n", encoding="utf-8")
    result = cli("import", "--workspace", bundled, csv_path)
    assert result.exit_code == 0, result.stderr
    review = load_review(bundled)
    cells = review.cells("webarena", "open_work")
    assert cells["alice"].code == "NR" and cells["alice"].cites == ("zhou2024webarena",)
    assert cells["alice"].rubric_version == "1.0" and cells["alice"].coded_at
    assert cells["casheekar"].code == "P" and cells["casheekar"].basis == "Changed my mind."
    assert (bundled / "protocols/webarena/codes/alice.yaml").is_file()
    assert not review.problems


def test_import_refuses_a_bad_csv_and_writes_nothing(bundled: Path, cli) -> None:
    csv_path = bundled / "bad.csv"
    csv_path.write_text(
        "protocol,field,reviewer,code,source,basis,cites\n"
        "webarena,open_work,alice,NR,Sec. 1,Fine row.,\n"                      # row 2: good
        "nowhere,open_work,alice,NR,Sec. 1,Unknown protocol.,\n"               # row 3
        "webarena,open_wrok,alice,NR,Sec. 1,Unknown field.,\n"                 # row 4
        "webarena,reset_retention,alice,NA,Sec. 1,Not allowed here.,\n"        # row 5
        "webarena,separate_evidence,alice,E,,,\n"                              # row 6: no source/basis
        "osworld,open_work,alice,NR,Sec. 1,Bad cite.,nobody2099\n"             # row 7
        "webarena,open_work,alice,P,Sec. 1,Duplicate of row 2.,\n"             # row 8
        "osworld,open_work,../x,NR,Sec. 1,Unsafe reviewer.,\n",                # row 9
        encoding="utf-8")
    before = tree_digest(bundled)
    result = cli("import", "--workspace", bundled, csv_path)
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    for row, message in [(3, "unknown protocol 'nowhere'"), (4, "unknown field 'open_wrok'"),
                         (5, "not allowed for field 'reset_retention'"), (6, "requires: source, basis"),
                         (7, "'nobody2099' is not in references.bib"), (8, "duplicate of row 2"),
                         (9, "not a safe id")]:
        lines = [line for line in result.stderr.splitlines() if f"bad.csv: row {row}: " in line]
        assert len(lines) == 1 and message in lines[0], (row, result.stderr)
    assert "row 2:" not in result.stderr
    assert tree_digest(bundled) == before, "nothing is written when any row is bad"


def test_import_header_and_encoding_errors(bundled: Path, cli) -> None:
    cases = {
        "missing.csv": (b"protocol,field,code\nwebarena,open_work,NR\n", "row 1: missing column(s) reviewer"),
        "empty.csv": (b"", "row 1: the file is empty"),
        "latin1.csv": (b"protocol,field,reviewer,code,basis\nwebarena,open_work,alice,NR,caf\xe9\n",
                       "row 2: not valid UTF-8"),
    }
    before = tree_digest(bundled)
    for name, (payload, message) in cases.items():
        (bundled / name).write_bytes(payload)
        result = cli("import", "--workspace", bundled, bundled / name)
        assert result.exit_code == 1 and message in result.stderr, (name, result.stderr)
    assert {k: v for k, v in tree_digest(bundled).items() if not k.endswith(".csv")} == before


def test_import_accepts_bom_and_crlf(bundled: Path, cli) -> None:
    path = bundled / "win.csv"
    path.write_bytes("\ufeffprotocol,field,reviewer,code,source,basis\r\n"
                     "webarena,open_work,alice,NR,Sec. 1,Nothing said.\r\n".encode())
    assert cli("import", "--workspace", bundled, path).exit_code == 0
    assert load_review(bundled).cells("webarena", "open_work")["alice"].basis == "Nothing said."


def test_dry_run_writes_nothing(bundled: Path, cli) -> None:
    path = bundled / "in.csv"
    path.write_text("protocol,field,reviewer,code,source,basis\nwebarena,open_work,alice,NR,S,B\n",
                    encoding="utf-8")
    before = tree_digest(bundled / "protocols")
    result = cli("import", "--workspace", bundled, path, "--dry-run")
    assert result.exit_code == 0 and "1 rows are valid" in result.stdout
    assert tree_digest(bundled / "protocols") == before


def test_a_hand_written_leading_apostrophe_is_kept(bundled: Path, cli) -> None:
    """Issue 26: "'-v' flag" was stored as "-v' flag". Only protocoder's own escape is undone."""
    path = bundled / "in.csv"
    path.write_text("protocol,field,reviewer,code,source,basis\n"
                    "webarena,open_work,alice,NR,'-v' flag,'=not a formula either\n", encoding="utf-8")
    assert cli("import", "--workspace", bundled, path).exit_code == 0
    cell = load_review(bundled).cells("webarena", "open_work")["alice"]
    assert (cell.source, cell.basis) == ("'-v' flag", "'=not a formula either")
    # Exported, each gets protocoder's escape on top, and comes back exactly.
    exported = cli("export", "--workspace", bundled).stdout
    assert "''-v' flag" in exported
    (bundled / "again.csv").write_text(exported, encoding="utf-8")
    before = tree_digest(bundled / "protocols")
    result = cli("import", "--workspace", bundled, bundled / "again.csv")
    assert result.exit_code == 0 and "0 cells changed" in result.stdout
    assert tree_digest(bundled / "protocols") == before


def test_an_exported_formula_imported_as_a_new_reviewer_loses_only_the_escape(bundled: Path, cli) -> None:
    (bundled / "in.csv").write_text("protocol,field,reviewer,code,source,basis\n"
                                    "webarena,open_work,alice,NR,=SUM(1),Basis.\n", encoding="utf-8")
    assert cli("import", "--workspace", bundled, bundled / "in.csv").exit_code == 0
    exported = cli("export", "--workspace", bundled).stdout.replace(",alice,", ",dora,")
    (bundled / "dora.csv").write_text(exported, encoding="utf-8")  # export's own header: the escape is ours
    assert cli("import", "--workspace", bundled, bundled / "dora.csv").exit_code == 0
    assert load_review(bundled).cells("webarena", "open_work")["dora"].source == "=SUM(1)"


def test_a_header_with_doubled_byte_order_marks_reads_as_its_names(bundled: Path, cli) -> None:
    path = bundled / "twice.csv"
    path.write_bytes("\ufeff\ufeffprotocol,field,reviewer,code,source,basis\r\n"
                     "webarena,open_work,alice,NR,Sec. 1,Nothing said.\r\n".encode())
    result = cli("import", "--workspace", bundled, path)
    assert result.exit_code == 0, result.stderr
    assert load_review(bundled).cells("webarena", "open_work")["alice"].basis == "Nothing said."


def test_an_invisible_character_in_a_column_name_is_named(bundled: Path, cli) -> None:
    path = bundled / "hidden.csv"
    path.write_bytes("protocol,fie\u200bld,reviewer,code\nwebarena,open_work,alice,NR\n".encode())
    before = tree_digest(bundled / "protocols")
    result = cli("import", "--workspace", bundled, path)
    assert result.exit_code == 1
    assert "row 1: column name 'fie\\u200bld' holds an invisible character U+200B (ZERO WIDTH SPACE)" in \
        result.stderr, result.stderr
    assert "Traceback" not in result.output and tree_digest(bundled / "protocols") == before


def _import_with_stderr_on(bundled: Path, csv_path: Path, tty: bool) -> tuple[int, str]:
    """Run a real ``protocoder import`` with its standard error on a terminal (a pty) or a pipe."""
    import os
    import subprocess
    import sys

    if tty:
        import pty

        master, slave = pty.openpty()
        process = subprocess.Popen([sys.executable, "-m", "protocoder", "import", "--workspace", str(bundled),
                                    str(csv_path)], stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        process.wait(timeout=120)
        return process.returncode, b"".join(chunks).decode(errors="replace")
    done = subprocess.run([sys.executable, "-m", "protocoder", "import", "--workspace", str(bundled), str(csv_path)],
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr


def test_import_shows_a_progress_bar_only_on_a_terminal(bundled: Path, cli) -> None:
    exported = cli("export", "--workspace", bundled).stdout
    path = bundled / "many.csv"
    path.write_text(exported.replace(",casheekar,", ",dora,"), encoding="utf-8")
    code, stderr = _import_with_stderr_on(bundled, path, tty=True)
    assert code == 0 and "Checking" in stderr and "Importing" in stderr, stderr
    path.write_text(exported.replace(",casheekar,", ",erin,"), encoding="utf-8")
    code, stderr = _import_with_stderr_on(bundled, path, tty=False)
    assert code == 0 and stderr == ""
    review = load_review(bundled)
    for name in ("dora", "erin"):  # every reviewer file written, each cell as exported
        assert {(c.source, c.basis) for c in review.all_cells() if c.reviewer == name} == \
            {(c.source, c.basis) for c in review.all_cells() if c.reviewer == "casheekar"}


def test_rows_out_of_export_order_still_import_whole(bundled: Path, cli) -> None:
    """Streaming writes a reviewer file when its last row is read: interleaved rows must all arrive."""
    lines = cli("export", "--workspace", bundled).stdout.replace(",casheekar,", ",dora,").splitlines()
    header, rows = lines[0], lines[1:]
    (bundled / "shuffled.csv").write_text("\n".join([header, *rows[::2], *rows[1::2]]) + "\n", encoding="utf-8")
    result = cli("import", "--workspace", bundled, bundled / "shuffled.csv")
    assert result.exit_code == 0 and f"Imported {len(rows)} rows: {len(rows)} cells changed" in result.stdout
