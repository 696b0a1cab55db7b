"""Issue 22: a cell from the command line (``cell set``, ``cell show``) and ``assisted`` in export/import.

Every test runs the real CLI on a copy of the bundled review and asserts on what reached disk:
the reviewer's file as the loader reads it, its bytes, the ledger; a refused command leaves
every byte of the workspace as it was.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review
from protocoder.storage.yamlio import parse_yaml

from conftest import copy_bundled, tree_digest

SHEET = "protocols/webarena/codes/casheekar.yaml"
README = """# WebArena harness

Intro paragraph.

## Evaluation

> [!NOTE]
> Each task starts from a fresh snapshot of the websites.

- The **reset** script restores every site with `docker compose down -v`.
- Results are scored after the `stop` action; see [the docs](https://example.org/docs).

| setting | value |
|---|---|
| timeout | 30 min |
"""


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def whole_tree(root: Path) -> dict[str, bytes]:
    """Every file of the workspace, .protocoder included (a refused command writes none of them)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def cell_of(root: Path, field: str = "open_work", reviewer: str = "casheekar", protocol: str = "webarena"):
    return load_review(root).cells(protocol, field).get(reviewer)


@pytest.fixture
def quoted(bundled: Path, cli, tmp_path: Path) -> Path:
    """The bundled review with a pinned Markdown README, one quote on webarena/open_work and the cell assisted."""
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    ok(cli("source", "add", "--workspace", bundled, "webarena", readme, "--id", "readme"))
    ok(cli("quote", "add", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
           "--source", "readme", "The **reset** script restores every site with `docker compose down -v`."))
    review = load_review(bundled)
    cell = review.cells("webarena", "open_work")["casheekar"]
    Store(review.paths).save_cell(replace(cell, assisted=True), review.rubric)
    return bundled


# --------------------------------------------------------------------------- cell set


def test_set_changes_only_what_it_names_and_keeps_quotes_and_assisted(quoted: Path, cli) -> None:
    before = cell_of(quoted)
    assert before.quotes and before.assisted
    other_cells = {f: cell_of(quoted, f) for f in ("reset_retention", "separate_evidence")}
    out = ok(cli("cell", "set", "--workspace", quoted, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--code", "P", "--basis", "A stop action and checkers; nothing on background work."))
    assert out.startswith("Set webarena/open_work (casheekar): code NR → P, basis")
    after = cell_of(quoted)
    assert (after.code, after.basis) == ("P", "A stop action and checkers; nothing on background work.")
    assert (after.source, after.cites) == (before.source, before.cites)
    assert after.quotes == before.quotes and after.assisted is True
    assert after.rubric_version == "1.0" and after.coded_at != before.coded_at and after.coded_at.endswith("Z")
    assert {f: cell_of(quoted, f) for f in other_cells} == other_cells
    text = (quoted / SHEET).read_text(encoding="utf-8")
    assert text.startswith("# Cells coded by casheekar for WebArena")  # the file's comment is kept
    assert "assisted: true" in text and "docker compose down -v" in text
    assert not load_review(quoted).errors


def test_an_empty_value_clears_and_an_empty_code_makes_a_draft(bundled: Path, cli) -> None:
    ok(cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
           "--code", "", "--cite", ""))
    draft = cell_of(bundled)
    assert draft.code is None and draft.cites == () and draft.rubric_version == "" and draft.coded_at == ""
    assert draft.source == "Paper Sec. 3.2 and App. A.9" and draft.basis.startswith("The paper specifies")
    entry = parse_yaml((bundled / SHEET).read_text(encoding="utf-8"), SHEET)["cells"]["open_work"]
    assert "code" not in entry and "cites" not in entry and "coded_at" not in entry
    ok(cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
           "--basis", ""))
    assert cell_of(bundled).basis == ""
    # Coding the draft again needs the basis the code requires.
    refused = cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                  "--code", "NR")
    assert refused.exit_code == 1 and "code 'NR' requires basis; give --basis" in refused.stderr
    ok(cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar",
           "--code", "NR", "--basis", "Silent on work in flight.", "--cite", "zhou2024webarena;zhu2025establishing"))
    cell = cell_of(bundled)
    assert (cell.code, cell.cites) == ("NR", ("zhou2024webarena", "zhu2025establishing")) and cell.coded_at


def test_a_new_reviewer_gets_a_file_and_an_unchanged_cell_writes_nothing(bundled: Path, cli) -> None:
    args = ("cell", "set", "--workspace", bundled, "--cell", "cybench/open_work", "--reviewer", "dana",
            "--code", "NA", "--basis", "Every tool call returns when its work is done.")
    ok(cli(*args))
    cell = cell_of(bundled, protocol="cybench", reviewer="dana")
    assert cell.code == "NA" and cell.source == "" and cell.rubric_version == "1.0"
    before = whole_tree(bundled)
    assert "holds this already; nothing written" in ok(cli(*args))
    assert whole_tree(bundled) == before


REFUSALS = [
    (["--cell", "nowhere/open_work", "--reviewer", "casheekar", "--code", "P"], "no protocol 'nowhere'"),
    (["--cell", "webarena/no_field", "--reviewer", "casheekar", "--code", "P"],
     "the rubric has no field 'no_field' (fields: open_work, reset_retention, separate_evidence)"),
    (["--cell", "webarena", "--reviewer", "casheekar", "--code", "P"], "must be written PROTOCOL/FIELD"),
    (["--cell", "webarena/open_work", "--reviewer", "../alice", "--code", "P"],
     "reviewer name '../alice' is not a safe id"),
    (["--cell", "webarena/open_work", "--reviewer", "Alice", "--code", "P"], "reviewer name 'Alice' is not a safe id"),
    (["--cell", "webarena/open_work", "--reviewer", "casheekar", "--code", "X"],
     "code 'X' is not allowed for field 'open_work' (allowed: E, P, NR, NA)"),
    (["--cell", "webarena/open_work", "--reviewer", "casheekar", "--cite", "zhou2024webarena", "--cite", "nokey"],
     "citation key 'nokey' is not in references.bib; add its entry with protocoder bib add FILE.bib"),
    (["--cell", "webarena/open_work", "--reviewer", "bo", "--code", "E", "--source", "Sec. 3"],
     "code 'E' requires basis; give --basis"),
    (["--cell", "webarena/open_work", "--reviewer", "casheekar", "--basis", "x" * 200_001], "basis"),
    (["--cell", "webarena/open_work", "--reviewer", "casheekar", "--reason", "why", "--code", "P"],
     "--reason is for a change to a released cell"),
]


@pytest.mark.parametrize(("args", "message"), REFUSALS)
def test_bad_input_is_one_line_exit_nonzero_and_no_byte_written(quoted: Path, cli, args: list[str],
                                                                  message: str) -> None:
    before = whole_tree(quoted)
    result = cli("cell", "set", "--workspace", quoted, *args)
    assert result.exit_code in (1, 2), result.stdout
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert whole_tree(quoted) == before


def test_nothing_to_set_is_a_usage_error(bundled: Path, cli) -> None:
    result = cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "casheekar")
    assert result.exit_code == 2 and "nothing to set" in result.stderr


# --------------------------------------------------------------------------- after a release


@pytest.fixture
def released(bundled: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    ok(cli("freeze", "--workspace", bundled, "--label", "v1", "--bootstrap", "0"))
    return bundled


def test_a_released_change_without_a_reason_is_refused_naming_correct_and_that_command_works(released: Path,
                                                                                            cli) -> None:
    before = whole_tree(released)
    refused = cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                  "--code", "P", "--basis", "Changed.")
    assert refused.exit_code == 1
    assert "webarena/open_work is in release v1: this change would change its code from NR to P" in refused.stderr
    assert "--reason" in refused.stderr and "protocoder correct --cell webarena/open_work --code P" in refused.stderr
    assert whole_tree(released) == before
    # The command the message names records the correction alone.
    ok(cli("correct", "--workspace", released, "--cell", "webarena/open_work", "--code", "P", "--source", "Sec. 3",
           "--basis", "Changed.", "--reason", "re-read"))
    assert "new: P" in (released / "corrections.yaml").read_text(encoding="utf-8")
    assert cell_of(released).code == "NR"  # the reviewer's file stays as it was


def test_a_released_change_with_a_reason_saves_the_cell_and_records_its_correction(released: Path, cli) -> None:
    out = ok(cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--code", "P", "--basis", "A timeout is stated.", "--reason", "re-read Sec. 3.2"))
    assert "correction recorded in release v1 (NR → P) with your reason" in out
    assert cell_of(released).code == "P"
    ledger = parse_yaml((released / "corrections.yaml").read_text(encoding="utf-8"), "corrections.yaml")
    [entry] = ledger["entries"]
    assert (entry["cell"], entry["old"], entry["new"], entry["reason"], entry["by"], entry["basis"]) == (
        "webarena/open_work", "NR", "P", "re-read Sec. 3.2", "casheekar", "A timeout is stated.")
    final = {f"{r['protocol']}/{r['field']}": r for r in csv.DictReader(io.StringIO(
        ok(cli("export", "--workspace", released, "--view", "final"))))}
    assert final["webarena/open_work"]["code"] == "P"
    validate = cli("validate", "--workspace", released)
    assert validate.exit_code == 0 and "webarena/open_work" not in validate.stderr
    # A change of evidence alone also changes the current view: a reason again.
    refused = cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                  "--basis", "Another basis.")
    assert refused.exit_code == 1 and "would change its source, basis or citations" in refused.stderr


def test_a_released_cell_left_unsettled_is_saved_without_a_correction(released: Path, cli) -> None:
    ledger = released / "corrections.yaml"
    had = ledger.read_bytes() if ledger.exists() else None
    out = ok(cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "alice",
                 "--code", "E", "--source", "Sec. 3", "--basis", "Stated."))
    assert "it is unresolved now, so the tables keep the released code" in out
    assert cell_of(released, reviewer="alice").code == "E"
    assert (ledger.read_bytes() if ledger.exists() else None) == had
    refused = cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "alice",
                  "--basis", "Stated again.", "--reason", "why")
    assert refused.exit_code == 1 and "no correction is recorded" in refused.stderr


# --------------------------------------------------------------------------- cell show


def test_show_prints_the_reviewers_own_cell_as_yaml(quoted: Path, cli) -> None:
    ok(cli("cell", "set", "--workspace", quoted, "--cell", "webarena/open_work", "--reviewer", "alice",
           "--code", "P", "--source", "S", "--basis", "B"))
    own = ok(cli("cell", "show", "--workspace", quoted, "--cell", "webarena/open_work", "--reviewer", "casheekar"))
    data = parse_yaml(own, "show")
    assert list(data["webarena/open_work"]) == ["casheekar"] and "alice" not in own
    shown = data["webarena/open_work"]["casheekar"]
    on_file = parse_yaml((quoted / SHEET).read_text(encoding="utf-8"), SHEET)["cells"]["open_work"]
    assert shown == {**on_file, "coded_at": str(on_file["coded_at"])}  # the file's bare date, shown as text
    assert shown["assisted"] is True and shown["quotes"][0]["source"] == "readme"
    every = parse_yaml(ok(cli("cell", "show", "--workspace", quoted, "--cell", "webarena/open_work")), "show")
    assert list(every["webarena/open_work"]) == ["alice", "casheekar"]
    missing = cli("cell", "show", "--workspace", quoted, "--cell", "webarena/open_work", "--reviewer", "bob")
    assert missing.exit_code == 1 and "has no cell by bob" in missing.stderr and "protocoder cell set" in missing.stderr


def test_show_marks_a_draft(bundled: Path, cli) -> None:
    ok(cli("cell", "set", "--workspace", bundled, "--cell", "webarena/open_work", "--reviewer", "bo",
           "--basis", "Half typed"))
    shown = parse_yaml(ok(cli("cell", "show", "--workspace", bundled, "--cell", "webarena/open_work",
                              "--reviewer", "bo")), "show")["webarena/open_work"]["bo"]
    assert shown == {"code": None, "basis": "Half typed"}


# --------------------------------------------------------------------------- assisted in export and import


def test_export_carries_assisted_and_import_applies_it(quoted: Path, cli, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(ok(cli("export", "--workspace", quoted)))))
    assert list(rows[0])[-1] == "assisted"
    flags = {(r["protocol"], r["field"], r["reviewer"]): r["assisted"] for r in rows}
    assert flags.pop(("webarena", "open_work", "casheekar")) == "yes" and set(flags.values()) == {""}
    as_json = json.loads(ok(cli("export", "--workspace", quoted, "--format", "json")))
    assert {r["assisted"] for r in as_json if r["field"] == "open_work" and r["protocol"] == "webarena"} == {"yes"}
    # export → import changes no byte
    exported = tmp_path / "cells.csv"
    exported.write_text(ok(cli("export", "--workspace", quoted)), encoding="utf-8", newline="")
    before = whole_tree(quoted)
    assert "0 cells changed in 0 files" in ok(cli("import", "--workspace", quoted, exported))
    assert whole_tree(quoted) == before
    # The column is applied: cleared on one cell, set on another, without re-stamping them.
    stamps = {f: cell_of(quoted, f).coded_at for f in ("open_work", "reset_retention")}
    hand = tmp_path / "flags.csv"
    hand.write_text("protocol,field,reviewer,code,assisted\n"
                    "webarena,open_work,casheekar,NR,\n"
                    "webarena,reset_retention,casheekar,E,yes\n", encoding="utf-8")
    assert "2 cells changed in 1 files" in ok(cli("import", "--workspace", quoted, hand))
    assert cell_of(quoted).assisted is False and cell_of(quoted, "reset_retention").assisted is True
    assert {f: cell_of(quoted, f).coded_at for f in stamps} == stamps
    assert cell_of(quoted).quotes  # the quotes column was absent: kept


def test_an_unreadable_assisted_value_refuses_the_row(bundled: Path, cli, tmp_path: Path) -> None:
    hand = tmp_path / "flags.csv"
    hand.write_text("protocol,field,reviewer,code,assisted\nwebarena,open_work,casheekar,NR,maybe\n",
                    encoding="utf-8")
    before = tree_digest(bundled)
    result = cli("import", "--workspace", bundled, hand)
    assert result.exit_code == 1
    assert f"{hand}: row 2: assisted is 'yes' or empty, not 'maybe'" in result.stderr
    assert tree_digest(bundled) == before


# Control characters are shown as [U+XXXX] in every export (issue 30.4): a round trip keeps all other text.
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\t\n"), max_size=30)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=TEXT, basis=TEXT, assisted=st.booleans())
def test_whatever_cell_set_writes_round_trips_through_export_and_import(tmp_path_factory, source: str, basis: str,
                                                                      assisted: bool) -> None:
    from click.testing import CliRunner

    from protocoder.cli import main

    root = copy_bundled(tmp_path_factory.mktemp("review"))
    if assisted:
        review = load_review(root)
        Store(review.paths).save_cell(replace(review.cells("webarena", "open_work")["casheekar"], assisted=True),
                                      review.rubric)

    def run(*args: str | Path):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    result = run("cell", "set", "--workspace", root, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--source", source, "--basis", basis, *(["--code", ""] if not (source.strip() and basis.strip())
                                                          else []))
    if result.exit_code != 0:
        # Only text the store refuses (controls, over-long) is refused; then nothing was written.
        assert result.exit_code == 1 and result.stderr.count("\n") == 1
        return
    cell = cell_of(root)
    assert (cell.source, cell.basis, cell.assisted) == (source, basis, assisted)
    exported = root.parent / "cells.csv"
    exported.write_text(run("export", "--workspace", root).stdout, encoding="utf-8", newline="")
    before = whole_tree(root)
    imported = run("import", "--workspace", root, exported)
    assert imported.exit_code == 0 and "0 cells changed" in imported.stdout
    assert whole_tree(root) == before


def test_a_correction_that_cannot_be_recorded_puts_the_reviewers_file_back(released: Path, cli,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from protocoder.lifecycle import amend

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(released / "corrections.yaml"))

    monkeypatch.setattr(amend, "record_change", full_disk)
    before = whole_tree(released)
    result = cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--code", "P", "--basis", "A timeout is stated.", "--reason", "re-read")
    assert result.exit_code == 1 and "No space left on device" in result.stderr and "Traceback" not in result.stderr
    after = whole_tree(released)
    assert {k: v for k, v in after.items() if not k.startswith(".protocoder")} == \
        {k: v for k, v in before.items() if not k.startswith(".protocoder")}
    assert cell_of(released).code == "NR"


def test_a_damaged_ledger_is_named_instead_of_treating_released_cells_as_unreleased(released: Path, cli) -> None:
    ok(cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
           "--code", "P", "--basis", "A timeout is stated.", "--reason", "re-read"))
    ledger = released / "corrections.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("reason: re-read", "reason: edited later"),
                      encoding="utf-8")
    before = whole_tree(released)
    result = cli("cell", "set", "--workspace", released, "--cell", "webarena/open_work", "--reviewer", "casheekar",
                 "--code", "E", "--basis", "Stated after all.")
    assert result.exit_code == 1 and "corrections.yaml" in result.stderr and "Traceback" not in result.stderr
    assert {k: v for k, v in whole_tree(released).items() if not k.startswith(".protocoder")} == \
        {k: v for k, v in before.items() if not k.startswith(".protocoder")}
