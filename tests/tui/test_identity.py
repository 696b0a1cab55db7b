"""Issue 14.4: who is coding — listed, confirmed when new, refused when not a safe id."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from protocoder.errors import UsageError
from protocoder.identity import FROM_GIT, check_reviewer_id, choose_reviewer, closest_reviewer, id_problem
from protocoder.model import Cell, Rubric
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store
from protocoder.storage.workspace import reviewer_files
from protocoder.tui.app import CoderApp
from protocoder.tui.screens import ProtocolListScreen, ReviewerModal
from protocoder.tui.screens.reviewer import typed_reviewer

from .helpers import loaded, settle, type_text
from conftest import tree_digest


@pytest.fixture
def with_ada(workspace: Path, store: Store, rubric: Rubric) -> Path:
    """The bundled review (casheekar) plus a reviewer ada with one cell."""
    store.save_cell(Cell("webarena", "open_work", "ada", "NR", "Sec. 3", "Silent."), rubric)
    return workspace


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[CoderApp]:
    """Apps the CLI builds and runs, caught before they take over the terminal (a Pilot drives them)."""
    apps: list[CoderApp] = []
    monkeypatch.setattr(CoderApp, "run", lambda self, *a, **k: apps.append(self))
    monkeypatch.delenv("PROTOCODER_REVIEWER", raising=False)
    return apps


def test_ids_typed_on_purpose_are_checked_not_rewritten() -> None:
    assert check_reviewer_id("ada") == "ada"
    for name, why in (("../ada", "it is a path"), ("a/b", "it is a path"), ("Ada", "capital letters"),
                      ("ada lovelace", "spaces"), ("ada!", "characters other than"), ("", "empty")):
        problem = id_problem(name)
        assert problem is not None and why in problem, (name, problem)
    with pytest.raises(UsageError, match=r"--reviewer '\.\./ada' is not a safe id: it is a path.*ada\?"):
        check_reviewer_id("../ada")
    assert closest_reviewer("adaa", ["ada", "casheekar"]) == "ada"
    assert closest_reviewer("zoe", ["ada", "casheekar"]) is None
    assert typed_reviewer("Ada Lovelace") == ("ada-lovelace", "")  # a person's name, shown before use
    assert typed_reviewer("../ada")[0] is None


def test_git_names_become_ids_and_environment_ids_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROTOCODER_REVIEWER", raising=False)
    monkeypatch.setattr("protocoder.identity.git_user_name", lambda: "Ada Lovelace")
    choice = choose_reviewer(None)
    assert (choice.id, choice.origin, choice.name) == ("ada-lovelace", FROM_GIT, "Ada Lovelace")
    monkeypatch.setenv("PROTOCODER_REVIEWER", "../ada")
    with pytest.raises(UsageError, match=r"\$PROTOCODER_REVIEWER '\.\./ada' is not a safe id"):
        choose_reviewer(None)


def test_reviewers_are_listed_from_file_names(with_ada: Path) -> None:
    (with_ada / "protocols/webarena/codes/Not-Safe.yaml").write_text("cells: {}\n")
    assert reviewer_files(Paths(with_ada)) == {"ada": 1, "casheekar": 10}


def test_cli_refuses_an_unsafe_reviewer_and_writes_nothing(with_ada: Path, cli, launched) -> None:
    before = tree_digest(with_ada)
    for args in (["--reviewer", "../ada"], ["--reviewer", "Ada Lovelace"]):
        result = cli("code", "--workspace", with_ada, *args)
        assert result.exit_code == 2
        assert result.stderr.startswith(f"protocoder: error: --reviewer {args[1]!r} is not a safe id: ")
        assert "Traceback" not in result.output
    assert "did you mean ada-lovelace?" in result.stderr
    assert launched == [], "the app never started"
    assert tree_digest(with_ada) == before


async def test_cli_typo_in_reviewer_asks_before_starting_a_new_reviewer(with_ada: Path, cli, launched,
                                                                       sheet_of) -> None:
    before = tree_digest(with_ada)
    assert cli("code", "--workspace", with_ada, "--reviewer", "adaa").exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal), "a name the workspace does not know is not taken silently"
        assert "'adaa' (from --reviewer) is not a reviewer in this workspace yet" in str(
            prompt.query_one("#reviewer-intro").render())
        hint = str(prompt.query_one("#reviewer-id").render())
        assert "new reviewer id: adaa" in hint and "did you mean ada?" in hint
        listed = prompt.query_one("#reviewer-list", OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == ["ada", "casheekar"]
        assert listed.highlighted == 0, "the closest name is highlighted"
        assert tree_digest(with_ada) == before, "nothing is written before the reviewer answers"
        await pilot.press("down", "enter")  # into the list, pick ada
        await loaded(pilot)
        assert pilot.app.session.reviewer == "ada"
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        assert pilot.app.screen.table.get_cell("webarena", "coded") == "1/3"
    assert not any(with_ada.glob("protocols/*/codes/adaa.yaml"))


async def test_a_new_reviewer_is_started_on_confirmation(with_ada: Path, cli, launched, sheet_of) -> None:
    assert cli("code", "--workspace", with_ada, "--reviewer", "bob").exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReviewerModal)
        assert "did you mean" not in str(pilot.app.screen.query_one("#reviewer-id").render())
        await pilot.press("enter")  # the name is filled in: enter confirms it
        await loaded(pilot)
        assert pilot.app.session.reviewer == "bob"
        await pilot.press("enter", "1")
        await settle(pilot)
    assert sheet_of("webarena", "bob").cells["open_work"].code == "E"


async def test_an_existing_reviewer_starts_at_once(with_ada: Path, cli, launched) -> None:
    assert cli("code", "--workspace", with_ada, "--reviewer", "casheekar").exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        assert pilot.app.session.reviewer == "casheekar"


async def test_without_a_name_the_prompt_lists_the_reviewers(with_ada: Path, cli, launched, monkeypatch) -> None:
    monkeypatch.setattr("protocoder.identity.git_user_name", lambda: None)
    assert cli("code", "--workspace", with_ada).exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal)
        listed = prompt.query_one("#reviewer-list", OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == ["ada", "casheekar"]
        assert prompt.query_one("#reviewer-name", Input).value == ""
        await type_text(pilot, "../ada")  # typed into the prompt: refused with the reason, not shortened
        assert "cannot be a reviewer id: it is a path" in str(prompt.query_one("#reviewer-id").render())
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.screen is prompt
        prompt.query_one("#reviewer-name", Input).value = ""
        await type_text(pilot, "casheekar")
        assert "a reviewer here already" in str(prompt.query_one("#reviewer-id").render())
        await pilot.press("enter")
        await loaded(pilot)
        assert pilot.app.session.reviewer == "casheekar"


async def test_a_git_name_new_to_the_workspace_is_confirmed(with_ada: Path, cli, launched, monkeypatch) -> None:
    monkeypatch.setattr("protocoder.identity.git_user_name", lambda: "Ada Byron")
    assert cli("code", "--workspace", with_ada).exit_code == 0
    [app] = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal)
        assert "'ada-byron' (made from git's user.name 'Ada Byron')" in str(
            prompt.query_one("#reviewer-intro").render())
        assert prompt.query_one("#reviewer-name", Input).value == "ada-byron"
