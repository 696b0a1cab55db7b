"""Issue 11 in the coding app: a released protocol is not removed behind the release's back, a
reason is asked for every change of one's own released cell (whether it settles the cell would tell a
reviewer another reviewer's code) and recorded when a correction follows, a save stamps the
current rubric version."""

from __future__ import annotations

from pathlib import Path

from protocoder.storage.workspace import load_review
from protocoder.tui.screens import ReasonModal
from protocoder.tui.screens.protocol_list import ProtocolListScreen

from .helpers import app_for, loaded, settle, type_text
from .test_adjudicate import add_alice


def notifications(pilot) -> list[str]:
    return [str(n.message) for n in pilot.app._notifications]


async def test_removing_a_released_protocol_names_the_withdrawal(workspace: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    folder = workspace / "protocols/agentcanary"
    app = app_for(workspace)
    async with app.run_test(size=(100, 24)) as pilot:
        await loaded(pilot)
        await type_text(pilot, "canary")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen), "no confirmation that would lead nowhere"
        said = " ".join(notifications(pilot))
        assert "protocol 'agentcanary' is in release v1" in said
        assert "protocoder withdraw agentcanary --reason" in said
        await pilot.press("y", "y")
        await settle(pilot)
    assert folder.is_dir()
    # After the withdrawal the same keys remove it.
    assert cli("withdraw", "agentcanary", "--workspace", workspace, "--reason", "retracted").exit_code == 0
    app = app_for(workspace)
    async with app.run_test(size=(100, 24)) as pilot:
        await loaded(pilot)
        await type_text(pilot, "canary")
        await pilot.press("ctrl+d", "y", "y")
        await settle(pilot)
    assert not folder.exists()
    assert cli("validate", "--workspace", workspace, "--strict").exit_code == 0


async def test_a_reason_is_asked_for_every_change_and_recorded_with_a_correction(workspace: Path, cli,
                                                                                  monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_alice(workspace, cli, [])  # alice agrees with casheekar everywhere
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")  # WebArena; open work is NR for both reviewers in v1
        await pilot.pause()
        await pilot.press("2")  # P: the reviewers now disagree, but this process does not read alice's file
        await pilot.pause()
        # Asked for every change of one's own released cell: whether it settles the cell would tell the
        # reviewer another reviewer's code (it used to be asked only when the change settled it).
        assert isinstance(pilot.app.screen, ReasonModal)
        await type_text(pilot, "Re-read Sec. 3.2")
        await pilot.press("enter")
        await settle(pilot)
        said = " ".join(notifications(pilot))
        assert "webarena/open_work: saved in your file; release v1 keeps NR" in said
        assert "unresolved" not in said and "alice" not in said
        assert not (workspace / "corrections.yaml").exists()
        await pilot.press("3")  # back to NR: a change of one's own cell again, so asked again
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReasonModal)
        await type_text(pilot, "Back to what we released")
        await pilot.press("enter")
        await settle(pilot)
    assert load_review(workspace).cells("webarena", "open_work")["casheekar"].code == "NR"
    assert not (workspace / "corrections.yaml").exists()

    # When the change settles the cell on another code, the reason is asked and recorded.
    edit = workspace / "protocols/webarena/codes/alice.yaml"
    text = edit.read_text(encoding="utf-8")
    start = text.index("open_work:")
    edit.write_text(text[:start] + text[start:].replace("code: NR", "code: P", 1), encoding="utf-8")
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReasonModal)
        await type_text(pilot, "Both of us re-read Sec. 3.2")
        await pilot.press("enter")
        await settle(pilot)
        assert any("correction recorded in release v1 (NR → P) with your reason" in n for n in notifications(pilot))
    ledger = (workspace / "corrections.yaml").read_text(encoding="utf-8")
    assert "reason: Both of us re-read Sec. 3.2" in ledger and "new: P" in ledger
    assert cli("validate", "--workspace", workspace, "--strict").exit_code == 0


async def test_a_save_in_the_app_stamps_the_current_rubric_version(workspace: Path, cli) -> None:
    rubric = workspace / "rubric/evaluation-boundary.yaml"
    text = rubric.read_text(encoding="utf-8")
    rubric.write_text(text.replace('version: "1.0"', 'version: "1.1"', 1).replace('revised: "1.0"', 'revised: "1.1"'),
                      encoding="utf-8")
    before = cli("validate", "--workspace", workspace).stderr
    assert "protocols/webarena/codes/casheekar.yaml" in before and "redefined in 1.1" in before
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")  # WebArena, open work
        await pilot.pause()
        await pilot.press("2", "3")  # P, then NR again: saved twice, as it was
        await settle(pilot)
    cell = load_review(workspace).cells("webarena", "open_work")["casheekar"]
    assert (cell.code, cell.rubric_version) == ("NR", "1.1")
    after = cli("validate", "--workspace", workspace).stderr
    assert not [line for line in after.splitlines()
                if line.startswith("protocols/webarena/codes/casheekar.yaml") and "open_work" in line]
