"""Issue 23: who adjudicates, freezes or corrects is given with --by or asked once per workspace and
machine (remembered under .protocoder/); git's user.name is offered, never taken without asking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import tree_digest


@pytest.fixture
def agreed(bundled: Path) -> Path:
    """The bundled review (one reviewer: nothing to adjudicate), ready to freeze."""
    return bundled


@pytest.fixture(autouse=True)
def _nobody_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROTOCODER_REVIEWER", raising=False)
    monkeypatch.setattr("protocoder.identity.git_user_name", lambda: "Ada Lovelace")


def test_without_by_and_without_a_terminal_freeze_names_by_and_writes_nothing(agreed: Path, cli) -> None:
    before = tree_digest(agreed)
    result = cli("freeze", "--workspace", agreed, "--label", "v1", "--bootstrap", "0")
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--by" in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert "ada-lovelace" not in result.stderr + result.stdout  # git's name is not taken
    assert tree_digest(agreed) == before
    assert not (agreed / ".protocoder" / "person.json").exists()


def test_asked_once_with_git_offered_then_remembered(agreed: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("protocoder.cli.lifecycle._interactive", lambda: True)
    result = cli("freeze", "--workspace", agreed, "--label", "v1", "--bootstrap", "0", stdin="\n")
    assert result.exit_code == 0, result.stderr
    assert "Who freezes?" in result.stderr and "[ada-lovelace]" in result.stderr  # offered, confirmed by enter
    assert "Remembered ada-lovelace" in result.stderr
    stored = json.loads((agreed / ".protocoder" / "person.json").read_text(encoding="utf-8"))
    assert stored == {"by": "ada-lovelace"}
    assert "by: ada-lovelace" in (agreed / "releases" / "v1" / "release.yaml").read_text(encoding="utf-8")
    # Asked once: the next command, even without a terminal, uses the remembered name.
    monkeypatch.setattr("protocoder.cli.lifecycle._interactive", lambda: False)
    corrected = cli("correct", "--workspace", agreed, "--cell", "webarena/open_work", "--code", "P",
                    "--reason", "The paper says more than we read.")
    assert corrected.exit_code == 0, corrected.stderr
    assert "Who" not in corrected.stderr
    ledger = (agreed / "corrections.yaml").read_text(encoding="utf-8")
    assert "by: ada-lovelace" in ledger


def test_by_wins_and_a_typed_name_other_than_git_is_kept(agreed: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("protocoder.cli.lifecycle._interactive", lambda: True)
    result = cli("freeze", "--workspace", agreed, "--label", "v1", "--bootstrap", "0", stdin="grace\n")
    assert result.exit_code == 0, result.stderr
    assert json.loads((agreed / ".protocoder" / "person.json").read_text(encoding="utf-8")) == {"by": "grace"}
    by_bob = cli("correct", "--workspace", agreed, "--cell", "webarena/open_work", "--code", "P",
                 "--reason", "Reread.", "--by", "bob")
    assert by_bob.exit_code == 0, by_bob.stderr
    assert "by: bob" in (agreed / "corrections.yaml").read_text(encoding="utf-8")
    assert json.loads((agreed / ".protocoder" / "person.json").read_text(encoding="utf-8")) == {"by": "grace"}
    bad = cli("freeze", "--workspace", agreed, "--label", "v2", "--bootstrap", "0", "--by", "../ada")
    assert bad.exit_code != 0 and "--by '../ada' is not a safe id" in bad.stderr


def test_a_refused_command_remembers_nobody(agreed: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("protocoder.cli.lifecycle._interactive", lambda: True)
    before = tree_digest(agreed)
    result = cli("freeze", "--workspace", agreed, "--label", "Not A Label", "--bootstrap", "0", stdin="\n")
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert not (agreed / ".protocoder" / "person.json").exists()
    assert tree_digest(agreed) == before
