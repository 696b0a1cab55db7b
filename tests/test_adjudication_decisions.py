"""Issue 31.1 and 31.4: a decision is a code, an explicit choice of the evidence it keeps and a reason;
who decided and why appear in the ledger (Markdown, LaTeX, HTML) and in ``export --view final``; a
corrected cell is labelled ``corrected`` with the release it corrects, in the export and in ``status``.

Everything runs through the real CLI on a copy of the bundled review with a second reviewer
(``two``: alice disagrees with casheekar on webarena/open_work, tau-bench/separate_evidence and
cybench/reset_retention).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from conftest import tree_digest


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def final(cli, workspace: Path) -> dict[str, dict[str, str]]:
    out = ok(cli("export", "--workspace", workspace, "--view", "final"))
    return {f"{r['protocol']}/{r['field']}": r for r in csv.DictReader(io.StringIO(out))}


def test_keeping_two_reviewers_evidence_is_recorded_and_shown(two: Path, cli, tmp_path: Path) -> None:
    out = ok(cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "NR",
                 "--keep", "casheekar", "--keep", "alice", "--reason", "Both read the same section.", "--by", "dana"))
    assert "keeping casheekar's and alice's evidence." in out
    consensus = (two / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert "evidence: [casheekar, alice]" in consensus and "taken_from" not in consensus

    row = final(cli, two)["webarena/open_work"]
    assert (row["status"], row["code"], row["decided_by"], row["reason"], row["evidence"]) == (
        "adjudicated", "NR", "dana", "Both read the same section.", "casheekar's and alice's")

    ok(cli("render", "--workspace", two, "--out", tmp_path / "out"))
    ledger_md = (tmp_path / "out/ledger.md").read_text(encoding="utf-8")
    assert "Adjudicated by dana: Both read the same section. The evidence is casheekar's and alice's." in ledger_md
    ledger_tex = (tmp_path / "out/ledger.tex").read_text(encoding="utf-8")
    assert "Adjudicated by dana: Both read the same section." in ledger_tex
    report = (tmp_path / "out/report.html").read_text(encoding="utf-8")
    assert "Adjudicated by dana: Both read the same section. The evidence is casheekar&#39;s and alice&#39;s." \
        in report


def test_the_adjudicators_own_basis(two: Path, cli, tmp_path: Path) -> None:
    ok(cli("adjudicate", "--workspace", two, "--cell", "tau-bench/separate_evidence", "--code", "E",
           "--basis", "Sec. 4 keeps logs apart from the agent.", "--source", "Sec. 4",
           "--reason", "Neither reviewer read Sec. 4.", "--by", "dana"))
    consensus = (two / "protocols/tau-bench/consensus.yaml").read_text(encoding="utf-8")
    assert "evidence: own" in consensus
    row = final(cli, two)["tau-bench/separate_evidence"]
    assert (row["code"], row["source"], row["basis"], row["evidence"]) == (
        "E", "Sec. 4", "Sec. 4 keeps logs apart from the agent.", "the adjudicator's own")
    ok(cli("render", "--workspace", two, "--out", tmp_path / "out", "--format", "md"))
    assert "The basis is the adjudicator's own." in (tmp_path / "out/ledger.md").read_text(encoding="utf-8")


def test_a_code_alone_says_whose_evidence_it_keeps(two: Path, cli) -> None:
    out = ok(cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "P",
                 "--reason", "Alice is right.", "--by", "dana"))
    assert "keeping alice's evidence." in out
    assert "evidence: [alice]" in (two / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    # A code nobody chose: the reason is the basis, and the command says so.
    out = ok(cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--code", "E",
                 "--reason", "Sec. 5 is explicit.", "--by", "dana"))
    assert "keeping the adjudicator's own basis (the reason; --basis gives another)." in out


def test_bad_choices_are_refused_and_nothing_is_written(two: Path, cli) -> None:
    before = tree_digest(two)
    cases = [
        (["--code", "NR", "--keep", "zed"], "'zed' did not code webarena/open_work (coded by: alice, casheekar)"),
        (["--code", "NR", "--keep", "alice", "--basis", "x"], "--keep and --basis are different choices"),
        (["--take", "alice", "--keep", "alice"], "--take and --keep are different choices"),
        (["--code", "NR", "--source", "Sec. 2"], "--source and --cite go with --basis"),
        (["--code", "NR", "--basis", "  "], "--basis is empty"),
        (["--code", "NR", "--basis", "b", "--cite", "nokey"], "citation key 'nokey' is not in references.bib"),
    ]
    for args, message in cases:
        result = cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", *args, "--reason", "r",
                     "--by", "dana")
        assert result.exit_code != 0 and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert tree_digest(two) == before


def test_a_malformed_evidence_entry_names_its_line(two: Path, cli) -> None:
    ok(cli("adjudicate", "--workspace", two, "--cell", "webarena/open_work", "--take", "alice", "--reason", "r",
           "--by", "dana"))
    path = two / "protocols/webarena/consensus.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("evidence: [alice]", "evidence: 3"), encoding="utf-8")
    result = cli("validate", "--workspace", two)
    assert result.exit_code != 0
    assert "protocols/webarena/consensus.yaml:" in result.stderr and "'own' or a list of the reviewers" in \
        result.stderr


def test_a_corrected_cell_is_labelled_corrected_with_its_release(two: Path, cli) -> None:
    for cell, code in (("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "P"),
                       ("cybench/reset_retention", "P")):
        ok(cli("adjudicate", "--workspace", two, "--cell", cell, "--code", code, "--reason", "meeting",
               "--by", "dana"))
    ok(cli("freeze", "--workspace", two, "--label", "v1", "--by", "dana", "--bootstrap", "0"))
    ok(cli("correct", "--workspace", two, "--cell", "webarena/open_work", "--code", "P",
           "--reason", "Sec. 3.2 was missed.", "--by", "dana"))
    rows = final(cli, two)
    row = rows["webarena/open_work"]
    assert (row["status"], row["corrects"], row["decided_by"], row["reason"]) == (
        "corrected", "v1", "dana", "Sec. 3.2 was missed.")
    assert [r["status"] for r in rows.values()].count("adjudicated") == 2
    status = ok(cli("status", "--workspace", two))
    assert "2 adjudicated, 1 corrected," in status


def test_import_into_a_released_cell_needs_a_reason(two: Path, cli, tmp_path: Path) -> None:
    for cell, code in (("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "P"),
                       ("cybench/reset_retention", "P")):
        ok(cli("adjudicate", "--workspace", two, "--cell", cell, "--code", code, "--reason", "meeting",
               "--by", "dana"))
    ok(cli("freeze", "--workspace", two, "--label", "v1", "--by", "dana", "--bootstrap", "0"))
    rows = [line for line in ok(cli("export", "--workspace", two)).splitlines()
            if line.startswith(("protocol,", "osworld,open_work,alice,", "webarena,open_work,casheekar,"))]
    changed = "\n".join(rows).replace("osworld,open_work,alice,NR", "osworld,open_work,alice,P").replace(
        "webarena,open_work,casheekar,NR", "webarena,open_work,casheekar,E") + "\n"
    csv_file = tmp_path / "changes.csv"
    csv_file.write_text(changed, encoding="utf-8")
    before = tree_digest(two)
    refused = cli("import", "--workspace", two, csv_file)
    assert refused.exit_code == 1 and "changes cells of the latest release" in refused.stderr
    assert "osworld/open_work (alice)" in refused.stderr and "--reason" in refused.stderr
    assert tree_digest(two) == before, "nothing written"
    out = ok(cli("import", "--workspace", two, csv_file, "--reason", "Sec. 2.2 re-read"))
    assert "osworld/open_work: imported; the tables keep the released record until the cell is settled" in out
    assert ("webarena/open_work: adjudicated in the latest release; casheekar's change is a proposal until an "
            "adjudicator decides (protocoder adjudicate --cell webarena/open_work --take casheekar") in out
    assert not (two / "corrections.yaml").exists()
