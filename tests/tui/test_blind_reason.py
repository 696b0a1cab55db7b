"""Issue 31 item 7 in the coding app: whether a change to a released cell asks for a reason depends only on
what the reviewer may see (the published record and their own cell), never on another reviewer's code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from protocoder.tui.session import Session

from .test_adjudicate import add_alice


def set_alice(workspace: Path, code: str) -> None:
    """Alice's open-work code for WebArena, written in her file (as another reviewer's session would)."""
    path = workspace / "protocols/webarena/codes/alice.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("open_work:")
    end = text.index("code:", start)
    line_end = text.index("\n", end)
    path.write_text(text[:end] + f"code: {code}" + text[line_end:], encoding="utf-8")


def asks(workspace: Path, code: str) -> bool:
    session = Session(workspace, "casheekar")
    session.load()
    own = session.sheet("webarena").cells["open_work"]
    assert own.code == "NR"
    return session.needs_reason(replace(own, code=code))


@pytest.mark.parametrize("code", ["P", "NR"])
def test_the_reason_question_does_not_depend_on_the_other_reviewers_code(workspace: Path, cli, monkeypatch,
                                                                      code: str) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_alice(workspace, cli, [])  # alice agrees with casheekar: NR
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    answers = {}
    for alice in ("NR", "P", "E"):
        set_alice(workspace, alice)
        answers[alice] = asks(workspace, "P")
    # Before, the question appeared only when alice's code made casheekar's change settle the cell.
    assert answers == {"NR": True, "P": True, "E": True}
    set_alice(workspace, code)
    assert not asks(workspace, "NR"), "an unchanged own cell records nothing and asks nothing"


def test_the_message_after_saving_is_the_same_whatever_the_other_reviewer_coded(workspace: Path, cli,
                                                                               monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_alice(workspace, cli, [])
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    said = {}
    for alice in ("NR", "E"):  # casheekar's saves leave the cell unsettled with E, agreed on the old NR with NR
        set_alice(workspace, alice)
        session = Session(workspace, "casheekar")
        session.load()
        own = session.read_sheet("webarena").cells["open_work"]
        # An evidence edit saved as typed (no reason), then code changes with a reason.
        for cell, reason in ((replace(own, basis=own.basis + " Re-read."), None), (replace(own, code="P"), "re-read"),
                             (replace(own, code="NR"), "back")):
            if reason is not None:
                session.reasons[("webarena", "open_work")] = reason
            edit = session.stamp(session.cell_edit(cell))
            session.written(edit, session.write(edit))
        said[alice] = list(session.messages)
    assert said["NR"] == said["E"]
    assert not (workspace / "corrections.yaml").exists()


def test_a_failed_correction_never_quotes_the_other_reviewers_file(workspace: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_alice(workspace, cli, [])
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    set_alice(workspace, "SECRET")  # not a code: checking the whole workspace fails on alice's file
    session = Session(workspace, "casheekar")
    session.load()
    cell = replace(session.read_sheet("webarena").cells["open_work"], code="P")
    session.reasons[("webarena", "open_work")] = "re-read"
    edit = session.stamp(session.cell_edit(cell))
    session.written(edit, session.write(edit))
    said = " ".join(session.messages)
    assert "no correction was recorded" in said and "protocoder validate" in said
    assert "SECRET" not in said and "alice" not in said
