"""Adjudication, frozen releases and the append-only corrections ledger (issue 5)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from protocoder.storage.workspace import load_review

from conftest import tree_digest


def final(cli, workspace: Path) -> dict[str, dict[str, str]]:
    out = cli("export", "--workspace", workspace, "--view", "final").stdout
    return {f"{r['protocol']}/{r['field']}": r for r in csv.DictReader(io.StringIO(out))}


def reviewer_files(workspace: Path) -> dict[str, str]:
    return {k: v for k, v in tree_digest(workspace / "protocols").items() if "/codes/" in k}


def test_disagreements_are_unresolved_until_adjudicated(two: Path, cli) -> None:
    rows = final(cli, two)
    assert len(rows) == 30
    unresolved = {key for key, row in rows.items() if row["status"] == "unresolved"}
    assert unresolved == {"webarena/open_work", "tau-bench/separate_evidence", "cybench/reset_retention"}
    assert all(rows[key]["code"] == "" for key in unresolved), "no majority vote, no code"
    assert {row["status"] for key, row in rows.items() if key not in unresolved} == {"agreed"}

    before = reviewer_files(two)
    result = cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--take", "casheekar",
                 "--reason", "No source describes background work.")
    assert result.exit_code == 0, result.stderr
    result = cli("adjudicate", "--workspace", two, "--cell", "tau-bench/separate_evidence", "--code", "P",
                 "--reason", "Reinitialisation is reported by the ABC audit only.", "--by", "dana")
    assert result.exit_code == 0, result.stderr
    assert reviewer_files(two) == before, "adjudication never modifies a reviewer's file"

    rows = final(cli, two)
    assert rows["webarena/open_work"]["status"] == "adjudicated" and rows["webarena/open_work"]["code"] == "NR"
    assert rows["webarena/open_work"]["basis"].startswith("The paper specifies stop actions")
    assert rows["tau-bench/separate_evidence"]["code"] == "P"
    assert rows["cybench/reset_retention"]["status"] == "unresolved"
    consensus = (two / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert "resolved: {alice: P, casheekar: NR}" in consensus and "resolved_hash: sha256:" in consensus
    assert "by: carol" in consensus and "taken_from: casheekar" in consensus


def test_agreement_always_uses_the_independent_codes(two: Path, cli) -> None:
    def pooled() -> dict:
        out = cli("agree", "--workspace", two, "--format", "json", "--bootstrap", "0").stdout
        return json.loads(out)["groups"][-1]["coefficients"]

    before = pooled()
    assert cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "NR",
               "--reason", "r").exit_code == 0
    assert pooled() == before
    assert before["percent_agreement"]["value"] == pytest.approx(27 / 30)


def test_changing_an_adjudicated_cell_makes_the_adjudication_stale(two: Path, cli) -> None:
    assert cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "NR",
               "--reason", "r").exit_code == 0
    sheet = two / "protocols/webarena/codes/alice.yaml"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("code: P", "code: E", 1), encoding="utf-8")
    assert final(cli, two)["webarena/open_work"]["status"] == "unresolved"
    result = cli("validate", "--workspace", two)
    assert result.exit_code == 0, "a warning alone does not fail validate"
    assert cli("validate", "--workspace", two, "--strict").exit_code == 1
    # Issue 31: the warning names the file that changed (alice's), not consensus.yaml.
    assert "protocols/webarena/codes/alice.yaml:" in result.stderr and "consensus.yaml" not in result.stderr
    assert "adjudication of webarena/open_work is stale" in result.stderr and "warning:" in result.stderr
    assert "Stale adjudications (1;" in cli("status", "--workspace", two).stdout
    # Adjudicating again appends a second entry; the first stays as it was.
    first = (two / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "P",
               "--reason", "second look").exit_code == 0
    second = (two / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert second.startswith(first)
    assert final(cli, two)["webarena/open_work"]["code"] == "P"


@pytest.mark.parametrize("args, message", [
    (["--cell", "webarena/open_work", "--code", "NR", "--reason", "  "], "needs a reason"),
    (["--cell", "webarena/open_work", "--code", "X", "--reason", "r"], "not allowed"),
    (["--cell", "webarena/open_work", "--code", "NR", "--take", "alice", "--reason", "r"], "as P, not NR"),
    (["--cell", "webarena/open_work", "--take", "bob", "--reason", "r"], "'bob' has not coded"),
    (["--cell", "nowhere/open_work", "--code", "E", "--reason", "r"], "no protocol 'nowhere'"),
    (["--cell", "webarena", "--code", "E", "--reason", "r"], "PROTOCOL/FIELD"),
])
def test_adjudicate_refuses_bad_input(two: Path, cli, args: list[str], message: str) -> None:
    before = tree_digest(two)
    result = cli("adjudicate", "--workspace", two, *args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert tree_digest(two) == before


def test_freeze_refuses_unresolved_cells_unless_allowed(two: Path, cli) -> None:
    result = cli("freeze", "--workspace", two, "--label", "v1")
    assert result.exit_code == 1 and "3 cells are unresolved" in result.stderr
    assert not (two / "releases").exists()
    result = cli("freeze", "--workspace", two, "--label", "draft", "--allow-unresolved", "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    release = (two / "releases/draft/release.yaml").read_text(encoding="utf-8")
    assert "unresolved: 3" in release and "- webarena/open_work" in release
    assert "content_hash: sha256:" in release and "protocols: 10" in release and "cells: 30" in release
    again = cli("freeze", "--workspace", two, "--label", "draft", "--allow-unresolved")
    assert again.exit_code == 1 and "labels are unique" in again.stderr


def adjudicate_all(workspace: Path, cli) -> None:
    for cell, code in [("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "E"),
                       ("cybench/reset_retention", "E")]:
        assert cli("adjudicate", "--workspace", workspace, "--cell", cell, "--code", code,
                   "--reason", "settled in the team meeting").exit_code == 0


def test_release_renders_byte_identically_after_corrections(two: Path, cli, tmp_path: Path) -> None:
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "100", "--seed", "3").exit_code == 0
    first = tmp_path / "first"
    assert cli("render", "--workspace", two, "--release", "v1", "--out", first).exit_code == 0
    frozen = {p.name: p.read_bytes() for p in first.iterdir()}
    assert {"summary.md", "matrix.md", "ledger.md", "summary.tex", "agreement.md"} <= set(frozen)

    result = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "P",
                 "--reason", "App. D does stop leftover processes.")
    assert result.exit_code == 0, result.stderr
    # Change the workspace in other ways too: a reviewer re-codes and records it.
    sheet = two / "protocols/osworld/codes/alice.yaml"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("code: NR", "code: P", 1), encoding="utf-8")
    assert cli("validate", "--workspace", two, "--strict").exit_code == 1, "a released cell changed, not recorded"
    sheet2 = two / "protocols/osworld/codes/casheekar.yaml"
    sheet2.write_text(sheet2.read_text(encoding="utf-8").replace("code: NR", "code: P", 1), encoding="utf-8")
    validate = cli("validate", "--workspace", two)
    assert validate.exit_code == 0 and "warning: released cell osworld/open_work is now P" in validate.stderr
    assert "protocoder correct --cell osworld/open_work --code P" in validate.stderr
    assert "protocols/osworld/codes/alice.yaml:4:" in validate.stderr
    assert cli("correct", "--workspace", two, "--cell", "osworld/open_work", "--code", "P",
               "--reason", "Both reviewers re-read Sec. 2.2").exit_code == 0
    assert cli("validate", "--workspace", two, "--strict").exit_code == 0

    second = tmp_path / "second"
    assert cli("render", "--workspace", two, "--release", "v1", "--out", second).exit_code == 0
    assert {p.name: p.read_bytes() for p in second.iterdir()} == frozen, "the release never changes"

    assert cli("render", "--workspace", two, "--format", "md").exit_code == 0
    corrections = (two / "output/corrections.md").read_text(encoding="utf-8")
    assert "| v1 | Cybench | Open work | NR | P | App. D does stop leftover processes. | carol |" in corrections
    assert "| v1 | OSWorld | Open work | NR | P | Both reviewers re-read Sec. 2.2 | carol |" in corrections
    matrix = (two / "output/matrix.md").read_text(encoding="utf-8")
    # The matrix marks corrected (c) and adjudicated (a) cells as the ledger does.
    assert "| Cybench | P<sup>c</sup> | E<sup>a</sup> | P |" in matrix
    assert "| OSWorld | P<sup>c</sup> | E | P |" in matrix
    rows = final(cli, two)
    assert rows["cybench/open_work"]["code"] == "P" and rows["cybench/open_work"]["corrected"] == "yes"
    status = cli("status", "--workspace", two).stdout
    assert "Latest release: v1" in status and "Corrections since: 2" in status


def test_a_correction_can_carry_its_own_source_basis_and_citations(two: Path, cli) -> None:
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0").exit_code == 0
    released = final(cli, two)["cybench/open_work"]

    bare = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "P", "--reason", "r1")
    assert bare.exit_code == 0 and "keeps the released source and basis" in bare.stdout
    assert final(cli, two)["cybench/open_work"]["basis"] == released["basis"]

    result = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "E", "--reason", "r2",
                 "--source", "App. D.3", "--basis", "App. D.3 names the *processes* it stops.",
                 "--cite", "zhang2024cybench")
    assert result.exit_code == 0, result.stderr
    assert "keeps the released" not in result.stdout
    row = final(cli, two)["cybench/open_work"]
    assert (row["code"], row["source"], row["cites"]) == ("E", "App. D.3", "zhang2024cybench")
    assert row["basis"] == "App. D.3 names the *processes* it stops."
    assert "basis: App. D.3 names the *processes* it stops." in (two / "corrections.yaml").read_text(encoding="utf-8")
    assert cli("validate", "--workspace", two).exit_code == 0
    assert cli("render", "--workspace", two, "--format", "md", "--bootstrap", "0").exit_code == 0
    ledger = (two / "output/ledger.md").read_text(encoding="utf-8")
    assert "App. D.3 names the *processes* it stops." in ledger


@pytest.mark.parametrize("args, message", [
    (["--basis", "b", "--source", "s", "--cite", "nokey2020"], "citation key 'nokey2020' is not in references.bib"),
    (["--source", "App. D"], "code E needs basis"),
])
def test_a_correction_record_is_checked_like_a_cell(two: Path, cli, args: list[str], message: str) -> None:
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0").exit_code == 0
    before = tree_digest(two)
    result = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "E", "--reason", "r", *args)
    assert result.exit_code == 1 and message in result.stderr, result.stderr
    assert tree_digest(two) == before


def test_correct_needs_a_release_and_a_change(two: Path, cli) -> None:
    result = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "P", "--reason", "r")
    assert result.exit_code == 1 and "nothing has been released yet" in result.stderr
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0").exit_code == 0
    result = cli("correct", "--workspace", two, "--cell", "cybench/open_work", "--code", "NR", "--reason", "r")
    assert result.exit_code == 1 and "already NR" in result.stderr


def corrected_twice(two: Path, cli) -> Path:
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0").exit_code == 0
    for cell, code in [("cybench/open_work", "P"), ("re-bench/open_work", "P"), ("cybench/open_work", "NR")]:
        result = cli("correct", "--workspace", two, "--cell", cell, "--code", code, "--reason", f"to {code}")
        assert result.exit_code == 0
    assert cli("validate", "--workspace", two).exit_code == 0
    return two / "corrections.yaml"


def test_edited_correction_is_detected(two: Path, cli) -> None:
    ledger = corrected_twice(two, cli)
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("reason: to P", "reason: something else", 1),
                      encoding="utf-8")
    result = cli("validate", "--workspace", two)
    assert result.exit_code == 1 and "correction 1 (cybench/open_work) was edited" in result.stderr
    assert cli("render", "--workspace", two).exit_code == 1


def test_deleted_or_reordered_correction_is_detected(two: Path, cli) -> None:
    ledger = corrected_twice(two, cli)
    text = ledger.read_text(encoding="utf-8")
    entries = text.split("\n  - ")
    assert len(entries) == 4
    ledger.write_text("\n  - ".join([entries[0], entries[1], entries[3]]), encoding="utf-8")
    result = cli("validate", "--workspace", two)
    assert result.exit_code == 1 and "an entry was deleted or the entries were reordered" in result.stderr
    ledger.write_text("\n  - ".join([entries[0], entries[2], entries[1], entries[3]]), encoding="utf-8")
    assert "reordered" in cli("validate", "--workspace", two).stderr
    ledger.write_text("\n  - ".join(entries[:3]) + "\n", encoding="utf-8")  # the last entry removed
    result = cli("validate", "--workspace", two)
    assert result.exit_code == 1 and "ledger head records 3 entries" in result.stderr


def test_a_modified_release_is_refused(two: Path, cli) -> None:
    adjudicate_all(two, cli)
    assert cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0").exit_code == 0
    table = two / "releases/v1/tables/matrix.md"
    table.write_text(table.read_text(encoding="utf-8").replace("WebArena", "WebArena!"), encoding="utf-8")
    result = cli("render", "--workspace", two, "--release", "v1", "--out", two / "x")
    assert result.exit_code == 1 and "releases/v1/tables/matrix.md" in result.stderr
    assert "modified after the release was frozen" in result.stderr
    assert not (two / "x").exists()


def test_status_shows_progress_and_unresolved(two: Path, cli) -> None:
    out = cli("status", "--workspace", two).stdout
    assert "alice                30/30 coded" in out and "casheekar            30/30 coded" in out
    assert "Unresolved (3):" in out and "webarena/open_work: alice P, casheekar NR" in out
    assert "No release yet" in out
    review = load_review(two)
    assert len(review.reviewers) == 2
