"""Issue 31.7: after a release, a reviewer's coding session holds no other reviewer's codes, and
changing an adjudicated released cell needs an adjudicator: the reviewer's change is saved as a
proposal (their own file), no correction is recorded, and the message names the adjudicator's command."""

from __future__ import annotations

import json
from pathlib import Path

from protocoder.storage.workspace import load_review
from protocoder.tui.screens import ReasonModal

from .helpers import app_for, loaded, settle
from .test_adjudicate import add_alice


def notifications(pilot) -> list[str]:
    return [str(n.message) for n in pilot.app._notifications]


async def test_a_reviewer_proposes_and_an_adjudicator_decides(workspace: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    assert cli("adjudicate", "--workspace", workspace, "--cell", "webarena/open_work", "--take", "alice",
               "--reason", "alice read Sec. 3.2").exit_code == 0
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        held = json.dumps(pilot.app.session.current)
        assert '"codes"' not in held and "alice" not in held, "no other reviewer's codes in this process"
        await pilot.press("enter")  # WebArena; open work is adjudicated P in v1, casheekar's own code NR
        await pilot.pause()
        await pilot.press("1")  # E
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ReasonModal), "no correction of a decided cell by a reviewer"
        await settle(pilot)
        said = " ".join(notifications(pilot))
        assert "webarena/open_work was decided by an adjudicator in release v1" in said
        assert "protocoder adjudicate --cell webarena/open_work --take casheekar" in said
    assert load_review(workspace).cells("webarena", "open_work")["casheekar"].code == "E", "saved as a proposal"
    assert not (workspace / "corrections.yaml").exists(), "the current view is the adjudicator's to change"
    row = next(line for line in cli("export", "--workspace", workspace, "--view", "final").stdout.splitlines()
               if line.startswith("webarena,open_work,"))
    assert row.startswith("webarena,open_work,P,adjudicated")
