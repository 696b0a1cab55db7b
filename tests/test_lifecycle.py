"""Issue 11: a review lifecycle with no dead ends — the six scenarios, each through the real CLI.

Each test is one of the issue's scenarios, strung together the way a team works, and fails
on the code before the issue: a half-done cell no longer blocks anyone; a second release
after a correction stays valid; a stale adjudication of a cell the reviewers settled stops
counting; evidence is corrected without a fake code change; a released protocol is
withdrawn before it is removed; a reason typed in the app is never thrown away, and cells
coded under an old definition are acknowledged with ``recheck``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from protocoder.model import Cell
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

from conftest import tree_digest

DISAGREE = [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
            ("tau-bench,separate_evidence,alice,E", "tau-bench,separate_evidence,alice,P"),
            ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")]
DECISIONS = [("webarena/open_work", "NR"), ("tau-bench/separate_evidence", "E"), ("cybench/reset_retention", "E")]


def add_reviewer(workspace: Path, cli, name: str, changes: list[tuple[str, str]]) -> None:
    """A second reviewer who agrees with casheekar except on ``changes`` (CSV rows, as alice)."""
    exported = cli("export", "--workspace", workspace).stdout.replace(",casheekar,", ",alice,")
    for old, new in changes:
        assert old in exported
        exported = exported.replace(old, new)
    exported = exported.replace(",alice,", f",{name},")
    (workspace.parent / f"{name}.csv").write_text(exported, encoding="utf-8")
    result = cli("import", "--workspace", workspace, workspace.parent / f"{name}.csv")
    assert result.exit_code == 0, result.stderr


@pytest.fixture
def two(bundled: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled review plus alice, who disagrees with casheekar on three cells."""
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_reviewer(bundled, cli, "alice", DISAGREE)
    return bundled


@pytest.fixture
def released(two: Path, cli) -> Path:
    """``two`` with every disagreement adjudicated and release v1 frozen."""
    for cell, code in DECISIONS:
        ok(cli("adjudicate", "--workspace", two, "--cell", cell, "--code", code, "--reason", "meeting"))
    result = cli("freeze", "--workspace", two, "--label", "v1", "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    return two


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def final(cli, workspace: Path) -> dict[str, dict[str, str]]:
    out = ok(cli("export", "--workspace", workspace, "--view", "final"))
    return {f"{r['protocol']}/{r['field']}": r for r in csv.DictReader(io.StringIO(out))}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def release_bytes(cli, workspace: Path, label: str, out: Path) -> dict[str, bytes]:
    ok(cli("render", "--workspace", workspace, "--release", label, "--out", out))
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


# --------------------------------------------------------------------------- 1. half-done work


def test_a_half_done_cell_is_incomplete_and_blocks_nobody(two: Path, cli) -> None:
    review = load_review(two)
    # A third reviewer picks E in the app and quits before typing the source and basis.
    Store(review.paths).save_cell(Cell("webarena", "open_work", "bo", "E"), review.rubric)

    validate = cli("validate", "--workspace", two)
    assert validate.exit_code == 0, validate.stderr
    assert "protocols/webarena/codes/bo.yaml:3:3: warning: code 'E' requires a source location" in validate.stderr
    assert "warning: code 'E' requires a basis" in validate.stderr
    assert cli("validate", "--workspace", two, "--strict").exit_code == 1
    for command in (["render", "--bootstrap", "0"], ["export"], ["status"], ["agree", "--bootstrap", "0"],
                    ["protocol", "list"]):
        ok(cli(*command, "--workspace", two))

    status = ok(cli("status", "--workspace", two))
    assert "bo                   1/30 coded, 1 incomplete" in status
    assert "Incomplete (1):\n  webarena/open_work: bo lacks source and basis" in status
    assert "bo 1/3 (1 incomplete)" in ok(cli("protocol", "list", "--workspace", two))
    cells = list(csv.DictReader(io.StringIO(ok(cli("export", "--workspace", two)))))
    assert {(r["reviewer"], r["status"]) for r in cells if r["protocol"] == "webarena" and
            r["field"] == "open_work"} == {("alice", "complete"), ("casheekar", "complete"), ("bo", "incomplete")}
    row = final(cli, two)["webarena/open_work"]
    assert (row["status"], row["code"]) == ("incomplete", ""), "never folded into a code"

    summary = (two / "output/summary.md").read_text(encoding="utf-8")
    assert "| Field | E | P | NR | NA | Unresolved | Incomplete | Not coded | Protocols |" in summary
    assert "| Open work | 0 | 2 | 5 | 2 | 0 | 1 | 0 | 10 |" in summary, "webarena/open_work: incomplete"
    ledger = (two / "output/ledger.md").read_text(encoding="utf-8")
    assert "| WebArena | Open work | incomplete |" in ledger and "Incomplete: bo's E lacks source and basis." in ledger

    refused = cli("freeze", "--workspace", two, "--label", "v1", "--allow-unresolved", "--bootstrap", "0")
    assert refused.exit_code == 1 and "1 cell is incomplete (webarena/open_work)" in refused.stderr
    assert "--allow-incomplete" in refused.stderr and not (two / "releases").exists()
    ok(cli("freeze", "--workspace", two, "--label", "v1", "--allow-unresolved", "--allow-incomplete",
           "--bootstrap", "0"))
    metadata = (two / "releases/v1/release.yaml").read_text(encoding="utf-8")
    assert "incomplete:\n  - webarena/open_work" in metadata and "  incomplete: 1" in metadata
    assert "| Open work | 0 | 2 | 5 | 2 | 0 | 1 | 0 | 10 |" in (two / "releases/v1/tables/summary.md").read_text()


# --------------------------------------------------------------------------- 2. releases after corrections


def strip_to_legacy(release: Path) -> None:
    """Make a release what the code before issue 11 froze: release.yaml without the incomplete
    cells, the ledger anchor and the metadata hash, and no baseline.json."""
    from protocoder.storage.yamlio import load_document

    document = load_document(release / "release.yaml", "release.yaml")
    for key in ("incomplete", "ledger", "metadata_hash"):
        del document.data[key]
    del document.data["denominators"]["incomplete"]
    del document.data["files"]["baseline.json"]
    document.save()
    (release / "baseline.json").unlink()
    assert sorted(document.data) == ["by", "content_hash", "created", "denominators", "files", "label",
                                     "unresolved"]


def test_a_second_release_after_a_correction_stays_valid(released: Path, cli, tmp_path: Path) -> None:
    v1 = release_bytes(cli, released, "v1", tmp_path / "v1")
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D"))
    ok(cli("freeze", "--workspace", released, "--label", "v2", "--bootstrap", "0"))
    validate = cli("validate", "--workspace", released, "--strict")
    assert validate.exit_code == 0, validate.stderr
    assert "ok: 10 protocols" in validate.stdout
    assert final(cli, released)["cybench/open_work"]["code"] == "P"
    v2 = release_bytes(cli, released, "v2", tmp_path / "v2")
    assert "| Cybench | P<sup>c</sup> |" in v2["matrix.md"].decode()

    # A later correction of a cell corrected before works, and a third release after it.
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "E", "--reason", "D.3",
           "--source", "App. D.3", "--basis", "Stops *every* process."))
    ok(cli("render", "--workspace", released, "--bootstrap", "0"))
    ok(cli("freeze", "--workspace", released, "--label", "v3", "--bootstrap", "0"))
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    assert final(cli, released)["cybench/open_work"]["code"] == "E"
    # A reviewer who now changes the released cell gets a warning naming the command that records it.
    edit(released / "protocols/cybench/codes/alice.yaml", "code: NR", "code: P")
    edit(released / "protocols/cybench/codes/casheekar.yaml", "code: NR", "code: P")
    validate = cli("validate", "--workspace", released)
    assert validate.exit_code == 0 and "protocoder correct --cell cybench/open_work --code P" in validate.stderr
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "both"))
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    # Whatever happened since, each release re-renders byte for byte.
    assert release_bytes(cli, released, "v1", tmp_path / "v1b") == v1
    assert release_bytes(cli, released, "v2", tmp_path / "v2b") == v2


def test_releases_made_before_baselines_keep_working(released: Path, cli, tmp_path: Path) -> None:
    # v1 and v2 as the code before issue 11 left them: v2 records the corrected code while the
    # reviewers' files keep the old one (the state that used to break validate and render).
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "P", "--reason", "App. D"))
    strip_to_legacy(released / "releases/v1")
    ok(cli("freeze", "--workspace", released, "--label", "v2", "--bootstrap", "0"))
    strip_to_legacy(released / "releases/v2")
    before = tree_digest(released / "releases")
    v2 = release_bytes(cli, released, "v2", tmp_path / "v2")

    validate = cli("validate", "--workspace", released, "--strict")
    assert validate.exit_code == 0, validate.stderr
    ok(cli("render", "--workspace", released, "--bootstrap", "0"))
    ok(cli("status", "--workspace", released))
    ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--code", "NR", "--reason", "undo"))
    ok(cli("freeze", "--workspace", released, "--label", "v3", "--bootstrap", "0"))
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    assert {k: v for k, v in tree_digest(released / "releases").items() if not k.startswith("v3/")} == before, \
        "no release file is rewritten"
    assert release_bytes(cli, released, "v2", tmp_path / "v2b") == v2


# --------------------------------------------------------------------------- 3. stale adjudications


def test_an_adjudication_the_reviewers_overtook_stops_counting(released: Path, cli) -> None:
    # The case: after v1, alice changes webarena/open_work from P to NR, so both
    # reviewers now agree with what the adjudication decided.
    edit(released / "protocols/webarena/codes/alice.yaml", "code: P", "code: NR")
    validate = cli("validate", "--workspace", released, "--strict")
    assert validate.exit_code == 0, validate.stderr
    assert "1 superseded adjudication" in validate.stdout and "stale" not in validate.stderr
    status = ok(cli("status", "--workspace", released))
    assert "Superseded adjudications (1; kept in consensus.yaml, nothing to do):" in status
    assert "webarena/open_work: resolved alice P, casheekar NR; now agreed" in status
    assert "Stale" not in status
    consensus = (released / "protocols/webarena/consensus.yaml").read_text(encoding="utf-8")
    assert "resolved: {alice: P, casheekar: NR}" in consensus, "the record stays"

    # The other way round: both now say P, which the release does not. The warning names
    # the correction, and any coded cell can be decided again with a reason.
    edit(released / "protocols/webarena/codes/alice.yaml", "code: NR", "code: P")
    edit(released / "protocols/webarena/codes/casheekar.yaml", "code: NR", "code: P")
    validate = cli("validate", "--workspace", released)
    assert validate.exit_code == 0 and "protocoder correct --cell webarena/open_work --code P" in validate.stderr
    out = ok(cli("adjudicate", "--workspace", released, "--cell", "webarena/open_work", "--code", "P",
                 "--reason", "Both re-read Sec. 3.2"))
    assert "Re-decided (agreed) webarena/open_work: P" in out
    assert "Corrected webarena/open_work in release v1: NR -> P" in out
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    assert final(cli, released)["webarena/open_work"]["code"] == "P"
    ok(cli("adjudicate", "--workspace", released, "--cell", "webarena/reset_retention", "--code", "P",
           "--reason", "the team re-decides a settled cell"))
    assert final(cli, released)["webarena/reset_retention"]["code"] == "P"
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0


# --------------------------------------------------------------------------- 4. evidence corrections


def test_released_evidence_is_corrected_without_a_fake_code_change(released: Path, cli, tmp_path: Path) -> None:
    v1 = release_bytes(cli, released, "v1", tmp_path / "v1")
    before = final(cli, released)["cybench/open_work"]
    out = ok(cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--reason", "stray text",
                 "--basis", "The paper says nothing about processes left running."))
    assert "Corrected cybench/open_work in release v1: NR, evidence corrected" in out
    row = final(cli, released)["cybench/open_work"]
    assert (row["code"], row["source"], row["cites"]) == ("NR", before["source"], before["cites"])
    assert row["basis"] == "The paper says nothing about processes left running." and row["corrected"] == "yes"
    ok(cli("render", "--workspace", released, "--format", "md", "--bootstrap", "0"))
    assert "The paper says nothing about processes left running." in (released / "output/ledger.md").read_text()
    assert "| v1 | Cybench | Open work | NR | NR | stray text |" in (released / "output/corrections.md").read_text()
    refused = cli("correct", "--workspace", released, "--cell", "cybench/open_work", "--reason", "again",
                  "--basis", "The paper says nothing about processes left running.")
    assert refused.exit_code == 1 and "nothing to correct" in refused.stderr

    # Fixing the reviewers' files instead: validate names the command that takes their record.
    for reviewer in ("alice", "casheekar"):
        sheet = released / f"protocols/osworld/codes/{reviewer}.yaml"
        text = sheet.read_text(encoding="utf-8")
        start = text.index("basis:", text.index("open_work:"))
        sheet.write_text(text[:start] + "basis: Fixed in the file.\n" + text[text.index("\n    cites:", start) + 1:],
                         encoding="utf-8")
    validate = cli("validate", "--workspace", released)
    assert validate.exit_code == 0, validate.stderr
    assert "the evidence of released cell osworld/open_work changed" in validate.stderr
    assert "protocoder correct --cell osworld/open_work --reason" in validate.stderr
    ok(cli("correct", "--workspace", released, "--cell", "osworld/open_work", "--reason", "typo in both files"))
    assert final(cli, released)["osworld/open_work"]["basis"] == "Fixed in the file."
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    ok(cli("freeze", "--workspace", released, "--label", "v2", "--bootstrap", "0"))
    ledger = (released / "releases/v2/tables/ledger.md").read_text(encoding="utf-8")
    assert "Fixed in the file." in ledger and "processes left running" in ledger
    assert release_bytes(cli, released, "v1", tmp_path / "v1b") == v1


# --------------------------------------------------------------------------- 5. released protocols


def test_a_released_protocol_is_withdrawn_before_it_is_removed(released: Path, cli) -> None:
    before = tree_digest(released)
    for args in (["cybench"], ["cybench", "--force"]):
        refused = cli("protocol", "remove", "--workspace", released, *args)
        assert refused.exit_code == 1
        assert "protocol 'cybench' is in release v1" in refused.stderr
        assert "protocoder withdraw cybench --reason" in refused.stderr
    assert tree_digest(released) == before

    out = ok(cli("withdraw", "cybench", "--workspace", released, "--reason", "The benchmark was retracted."))
    assert "protocoder protocol remove cybench --force" in out
    validate = cli("validate", "--workspace", released)
    assert validate.exit_code == 0 and "still in the workspace" in validate.stderr
    ok(cli("protocol", "remove", "cybench", "--force", "--workspace", released))
    assert cli("validate", "--workspace", released, "--strict").exit_code == 0
    ok(cli("render", "--workspace", released, "--format", "md", "--bootstrap", "0"))
    output = released / "output"
    assert "Cybench" not in (output / "matrix.md").read_text(encoding="utf-8")
    assert "Counts over 9 protocols" in (output / "summary.md").read_text(encoding="utf-8")
    corrections = (output / "corrections.md").read_text(encoding="utf-8")
    assert "| v1 | Cybench | all fields | NR | withdrawn | The benchmark was retracted. |" not in corrections
    assert "| v1 | Cybench | all fields | — | withdrawn | The benchmark was retracted. | carol |" in corrections
    assert "cybench" not in {row.split("/")[0] for row in final(cli, released)}
    assert "Corrections since: 1" in ok(cli("status", "--workspace", released))


def test_withdraw_and_remove_refuse_what_they_cannot_do(two: Path, cli) -> None:
    refused = cli("withdraw", "cybench", "--workspace", two, "--reason", "r")
    assert refused.exit_code == 1 and "protocoder protocol remove cybench" in refused.stderr
    ok(cli("protocol", "remove", "cybench", "--force", "--workspace", two))  # nothing released: no check


# --------------------------------------------------------------------------- 6. small dead ends


def test_cells_coded_under_an_old_definition_are_acknowledged_with_recheck(two: Path, cli) -> None:
    rubric = two / "rubric/evaluation-boundary.yaml"
    edit(rubric, 'version: "1.0"\n', 'version: "1.1"\n')
    edit(rubric, '    revised: "1.0"\n', '    revised: "1.1"\n')  # open work redefined in 1.1
    validate = cli("validate", "--workspace", two)
    assert validate.exit_code == 0 and validate.stderr.count("was redefined in 1.1") == 20

    out = ok(cli("recheck", "--workspace", two, "--field", "open_work", "--reviewer", "alice",
                 "--protocol", "webarena"))
    assert out.strip() == "Rechecked 1 cell of open_work: now coded under rubric 1.1"
    assert cli("validate", "--workspace", two).stderr.count("was redefined in 1.1") == 19
    before = {c.reviewer + c.protocol: c for c in load_review(two).all_cells() if c.field == "open_work"}
    out = ok(cli("recheck", "--workspace", two, "--field", "open_work"))
    assert out.strip() == "Rechecked 19 cells of open_work: now coded under rubric 1.1"
    assert cli("validate", "--workspace", two, "--strict").exit_code == 0
    after = {c.reviewer + c.protocol: c for c in load_review(two).all_cells() if c.field == "open_work"}
    assert {k: (c.code, c.source, c.basis, c.cites, c.coded_at) for k, c in after.items()} == \
           {k: (c.code, c.source, c.basis, c.cites, c.coded_at) for k, c in before.items()}, "only the version"
    assert "nothing to recheck" in ok(cli("recheck", "--workspace", two, "--field", "open_work"))
    for args, message in [(["--field", "nope"], "no field 'nope'"), (["--field", "open_work", "--reviewer", "zed"],
                                                                     "no reviewer 'zed'")]:
        refused = cli("recheck", "--workspace", two, *args)
        assert refused.exit_code == 1 and message in refused.stderr


def test_lifecycle_commands_work_from_any_folder_inside_the_workspace(released: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(released / "protocols/cybench/codes")
    ok(cli("correct", "--cell", "cybench/open_work", "--code", "P", "--reason", "from a subfolder"))
    assert "Corrections since: 1" in ok(cli("status"))
    ok(cli("validate", "--strict"))
