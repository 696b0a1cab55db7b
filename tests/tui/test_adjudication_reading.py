"""Issue 31.1 in the adjudication app at 80x24: each reviewer's cell read whole (f3, one reviewer at a
time at full width, f2 the next, pgup/pgdn scroll), and a decision that says whose evidence it
keeps before it is recorded (f4 changes it), recorded as that choice."""

from __future__ import annotations

from pathlib import Path

from textual.containers import VerticalScroll
from textual.widgets import Static

from protocoder.storage.workspace import load_review
from protocoder.tui.adjudicate import AdjudicationScreen, make_adjudication_app

from .helpers import screen_text, type_text
from .test_adjudicate import add_alice

LAST = "The last sentence says where the cleanup hook is documented."


def long_basis(workspace: Path, cli) -> None:
    """alice disagrees on webarena/open_work with a basis of many sentences, the last one :data:`LAST`."""
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    basis = " ".join(f"Sentence {n} of the reading, about what the harness does after the agent stops."
                     for n in range(1, 40)) + " " + LAST
    result = cli("cell", "set", "--workspace", workspace, "--cell", "webarena/open_work", "--reviewer", "alice",
                 "--basis", basis)
    assert result.exit_code == 0, result.stderr


def visible(pilot) -> str:
    """The screen's text as one line of words (wrapped lines joined)."""
    return " ".join(" ".join(screen_text(pilot)).split())


async def test_read_each_reviewer_whole_at_80x24(workspace: Path, cli) -> None:
    long_basis(workspace, cli)
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        assert LAST not in visible(pilot)
        await pilot.press("f3")
        await pilot.pause()
        text = visible(pilot)
        assert "alice P" in text and "casheekar NR" in text, "every reviewer's code in the strip"
        assert "alice: P" in text and "Sentence 1 of the reading" in text
        assert not screen.query_one("#adj-side").display, "full width: the list of cells steps aside"
        for _ in range(12):
            if LAST in visible(pilot):
                break
            await pilot.press("pagedown")
            await pilot.pause()
        assert LAST in visible(pilot), "the whole basis can be read"
        await pilot.press("f2")
        await pilot.pause()
        assert "casheekar: NR" in visible(pilot) and screen.query_one("#adj-read", VerticalScroll).scroll_y == 0
        await pilot.press("escape")
        await pilot.pause()
        assert screen.query_one("#adj-side").display and screen.query_one("#adj-decision").display


async def test_the_evidence_kept_is_said_before_and_recorded(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                               ("cybench,reset_retention,alice,E", "cybench,reset_retention,alice,NR")])
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        line = screen.query_one("#adj-evidence", Static)
        await pilot.press("2")  # P: alice chose it
        await pilot.pause()
        assert "Evidence: alice's (who chose P)" in str(line.render())
        await pilot.press("f4", "f4", "f4")  # alice's, casheekar's, both
        await pilot.pause()
        assert "Evidence: alice's and casheekar's" in str(line.render())
        screen.query_one("#adj-reason").focus()
        await pilot.pause()
        await type_text(pilot, "Both read Sec. 3.2.")
        await pilot.press("ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen.query_one("#adj-code").focus()
        await pilot.pause()
        await pilot.press("1", "f4", "f4", "f4", "f4")  # E on cybench: alice's, casheekar's, both, own
        await pilot.pause()
        assert "Evidence: your own: the reason is the basis" in str(line.render())
        screen.query_one("#adj-reason").focus()
        await pilot.pause()
        await type_text(pilot, "App. D states it.")
        await pilot.press("ctrl+s")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    review = load_review(workspace)
    first = review.adjudications[("webarena", "open_work")][-1]
    assert (first.code, first.kept) == ("P", ("alice", "casheekar"))
    second = review.adjudications[("cybench", "reset_retention")][-1]
    assert (second.code, second.kept, second.basis) == ("E", (), "App. D states it.")


async def test_the_discussion_is_shown_with_the_cell(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    assert cli("comment", "--workspace", workspace, "webarena/open_work", "Sec. 3.2 covers stop actions only.",
               "--by", "alice").exit_code == 0
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()
        text = visible(pilot)
        assert "Discussion (1)" in text and "alice" in text and "Sec. 3.2 covers stop actions only." in text


async def test_a_stale_decision_says_who_changed_what(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    assert cli("adjudicate", "--workspace", workspace, "--cell", "webarena/open_work", "--code", "NR",
               "--reason", "meeting", "--by", "carol").exit_code == 0
    sheet = workspace / "protocols/webarena/codes/casheekar.yaml"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("code: NR", "code: E", 1), encoding="utf-8")
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        stale = pilot.app.screen.query_one("#adj-stale", Static)
        assert stale.display and stale.region.height > 0, "in view"
        text = str(stale.render())
        assert "went stale: casheekar NR → E" in text and "take that reviewer's cell (f6)" in text


async def test_the_adjudicator_comments_from_the_app(workspace: Path, cli) -> None:
    add_alice(workspace, cli, [("webarena,open_work,alice,NR", "webarena,open_work,alice,P")])
    app = make_adjudication_app(workspace, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, AdjudicationScreen)
        screen.action_comment()  # the palette's "Comment on this cell"
        await pilot.pause()
        await type_text(pilot, "Which section did you read?")
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.screen is screen
        shown = str(screen.query_one("#adj-comments", Static).render())
        assert "Discussion (1)" in shown and "carol" in shown and "Which section did you read?" in shown
    text = (workspace / "protocols/webarena/comments/carol.yaml").read_text(encoding="utf-8")
    assert "field: open_work" in text and "Which section did you read?" in text
