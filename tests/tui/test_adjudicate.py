"""Issue 5 in the TUIs: the adjudication app, and the reason prompt for a released cell."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, Select, TextArea

from protocoder.storage.workspace import load_review
from protocoder.tui.adjudicate import AdjudicationScreen, make_adjudication_app
from protocoder.tui.screens import ReasonModal
from protocoder.tui.widgets import CodeChoice

from .helpers import app_for, loaded, notices, screen_text, settle, shown, type_text


def add_alice(workspace: Path, cli, changes: list[tuple[str, str]]) -> None:
    """A second reviewer, alice, who agrees with casheekar except on ``changes``."""
    exported = cli("export", "--workspace", workspace).stdout.replace(",casheekar,", ",alice,")
    for old, new in changes:
        assert old in exported
        exported = exported.replace(old, new)
    (workspace / "alice.csv").write_text(exported, encoding="utf-8")
    assert cli("import", "--workspace", workspace, workspace / "alice.csv").exit_code == 0


def reviewer_files(workspace: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.glob("protocols/*/codes/*"))}


async def test_adjudicate_every_unresolved_cell_with_keys(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                               ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")])
    before = reviewer_files(workspace)
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        cells = screen.query_one("#adj-cells", OptionList)
        assert [cells.get_option_at_index(i).id for i in range(cells.option_count)] == [
            "webarena/open_work", "cybench/reset_retention"]
        assert len(screen.query(".adj-reviewer")) == 2, "both reviewers' cells side by side"

        await pilot.press("ctrl+s")  # nothing chosen yet: refused in place
        await pilot.pause()
        assert "Pick a code" in str(screen.query_one("#adj-status").render())
        await pilot.press("3")  # NR
        await pilot.press("ctrl+s")  # no reason yet: refused in place
        await pilot.pause()
        assert "reason" in str(screen.query_one("#adj-status").render())
        await type_text(pilot, "No source says what happens to background work.")
        await pilot.press("ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert cells.option_count == 1

        await pilot.press("f6")  # take the first reviewer's cell (alice: NR) whole
        await pilot.pause()
        screen.query_one("#adj-reason").focus()
        await pilot.pause()
        await type_text(pilot, "alice read App. D more closely")
        await pilot.press("ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert cells.option_count == 0
        assert "Nothing left to adjudicate" in str(screen.query_one("#adj-cell").render())

    assert reviewer_files(workspace) == before, "reviewers' files are never touched"
    review = load_review(workspace)
    first = review.adjudications[("webarena", "open_work")][-1]
    assert (first.code, first.by, dict(first.resolved)) == ("NR", "carol", {"alice": "P", "casheekar": "NR"})
    assert first.reason == "No source says what happens to background work."
    second = review.adjudications[("cybench", "reset_retention")][-1]
    assert (second.code, second.taken_from) == ("NR", "alice")
    assert cli("validate", "--workspace", workspace).exit_code == 0


async def test_changing_a_released_cell_asks_for_a_reason_and_records_a_correction(workspace: Path, cli,
                                                                                  monkeypatch) -> None:
    monkeypatch.setenv("PROTOCODER_REVIEWER", "carol")
    assert cli("freeze", "--workspace", workspace, "--label", "v1", "--bootstrap", "0").exit_code == 0
    app = app_for(workspace, "casheekar")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")  # WebArena; casheekar's open work is NR in v1
        await pilot.pause()
        await pilot.press("2")  # P
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReasonModal)
        await pilot.press("escape")  # keep the released code
        await settle(pilot)
        assert load_review(workspace).cells("webarena", "open_work")["casheekar"].code == "NR"
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReasonModal)
        await type_text(pilot, "App. A.9 does describe a wait for background jobs")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert load_review(workspace).cells("webarena", "open_work")["casheekar"].code == "P"
    ledger = (workspace / "corrections.yaml").read_text(encoding="utf-8")
    assert "cell: webarena/open_work" in ledger and "old: NR" in ledger and "new: P" in ledger
    assert "reason: App. A.9 does describe a wait for background jobs" in ledger
    assert "by: casheekar" in ledger
    assert cli("validate", "--workspace", workspace).exit_code == 0


async def test_adjudication_says_what_is_missing_keeps_reasons_and_clears_at_the_end(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                               ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")])
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        assert "carol" in screen_text(pilot)[0], "the adjudicator is named in the header"
        assert screen_text(pilot)[-1].lstrip().startswith("^q Quit  f1 Keys")
        await pilot.press("3", "ctrl+s")  # a code, no reason
        await pilot.pause()
        message = "A reason is required: type it above, then ctrl+s."
        assert message in notices(pilot), "a notification, wherever the adjudicator is looking"
        assert shown(pilot, message), "and on screen under the reason at 80x24"
        assert pilot.app.focused is screen.query_one("#adj-reason", TextArea)
        await type_text(pilot, "Half a reason")
        cells = screen.query_one("#adj-cells", OptionList)
        cells.highlighted = 1  # look at the other cell, then come back: the reason is still there
        await pilot.pause()
        assert screen.query_one("#adj-reason", TextArea).text == ""
        cells.highlighted = 0
        await pilot.pause()
        assert screen.query_one("#adj-reason", TextArea).text == "Half a reason"
        screen.query_one("#adj-code").focus()
        await pilot.press("3", "ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert cells.option_count == 1
        await pilot.press("f6")
        screen.query_one("#adj-reason").focus()
        await pilot.pause()
        await type_text(pilot, "alice is right")
        await pilot.press("ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert shown(pilot, "Nothing left to adjudicate")
        assert not screen.query_one("#adj-decision").display, "no decision form with nothing to decide"
        assert screen.query_one("#adj-reason", TextArea).text == ""
        assert screen.query_one("#adj-code", CodeChoice).chosen is None
        assert screen.query_one("#adj-take", Select).is_blank()
        assert screen.current is None and not shown(pilot, "alice is right")
    review = load_review(workspace)
    assert review.adjudications[("webarena", "open_work")][-1].reason == "Half a reason"
