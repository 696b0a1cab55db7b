"""The team file and its commands through the real CLI: team add/link/list/revoke, the hashed
sign-in secrets, assignments, and `status` per reviewer."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.storage.workspace import load_review
from protocoder.team.members import Member, Team, load_team
from protocoder.team.progress import assignments, closed_cells, progress
from protocoder.team.secrets import SessionTable, redeem, secrets_file

from conftest import tree_digest

Cli = Callable[..., Any]


def token_of(output: str) -> str:
    match = re.search(r"/signin\?token=(\S+)", output)
    assert match, output
    return match.group(1)


def test_add_writes_the_team_file_and_prints_a_one_time_link(bundled: Path, cli: Cli) -> None:
    result = cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Added ada (reviewer) to team.yaml\n"
                                    "Sign-in link for ada (works once): /signin?token=ada.")
    token = token_of(result.stdout)
    result = cli("team", "add", "ben", "--role", "reviewer", "--protocols", "webarena,osworld",
                 "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    team = load_team(bundled)
    assert team is not None
    assert [(m.name, m.role, m.protocols) for m in team.members] == [
        ("ada", "reviewer", ()), ("ben", "reviewer", ("webarena", "osworld"))]
    assert all(m.record for m in team.members), "each membership has its record"
    # Only a salted scrypt hash is kept, in the state folder git ignores; the team file holds no secret.
    secret = token.split(".", 1)[1]
    stored = json.loads(secrets_file(bundled).read_text(encoding="utf-8"))
    assert set(stored["members"]["ada"]["signin"]) == {"salt", "scrypt", "issued", "record"}
    assert secret not in secrets_file(bundled).read_text(encoding="utf-8")
    assert secret not in (bundled / "team.yaml").read_text(encoding="utf-8")
    assert secrets_file(bundled).stat().st_mode & 0o077 == 0
    # The link works once.
    first = redeem(bundled, token)
    assert first is not None and first[0] == "ada"
    assert redeem(bundled, token) is None
    assert SessionTable(bundled).member_of(first[1]) == "ada"


def test_git_never_sees_the_secrets(bundled: Path, cli: Cli) -> None:
    (bundled / ".gitignore").write_text((Path(__file__).parent.parent / ".gitignore").read_text(encoding="utf-8"))
    subprocess.run(["git", "init", "-q"], cwd=bundled, check=True)
    assert cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).exit_code == 0
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=bundled,
                            capture_output=True, text=True, check=True).stdout
    assert "team.yaml" in listed and ".protocoder" not in listed


def test_link_replaces_an_unused_link(bundled: Path, cli: Cli) -> None:
    old = token_of(cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).stdout)
    result = cli("team", "link", "ada", "--workspace", bundled)
    assert result.exit_code == 0
    new = token_of(result.stdout)
    assert redeem(bundled, old) is None and redeem(bundled, new) is not None


def test_revoke_removes_the_member_and_ends_their_sessions(bundled: Path, cli: Cli) -> None:
    token = token_of(cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).stdout)
    table = SessionTable(bundled)
    _, session = redeem(bundled, token)  # type: ignore[misc]
    assert table.member_of(session) == "ada"
    result = cli("team", "revoke", "ada", "--workspace", bundled)
    assert result.exit_code == 0
    assert result.stdout.strip() == "Revoked ada: removed from team.yaml, 1 session(s) closed; their files stay."
    assert table.member_of(session) is None  # the same table object sees it at the next request
    assert load_team(bundled) == Team()


def test_a_damaged_secrets_file_lets_nobody_in_and_names_the_fix(bundled: Path, cli: Cli) -> None:
    token = token_of(cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).stdout)
    _, session = redeem(bundled, token)  # type: ignore[misc]
    secrets_file(bundled).write_text("{ not json", encoding="utf-8")
    assert SessionTable(bundled).member_of(session) is None
    result = cli("team", "link", "ada", "--workspace", bundled)
    assert result.exit_code == 1
    assert result.stderr.strip() == ("protocoder: error: team-secrets.json in .protocoder/ cannot be read; delete it "
                                     "and issue new sign-in links with `protocoder team link NAME`")
    secrets_file(bundled).unlink()
    assert cli("team", "link", "ada", "--workspace", bundled).exit_code == 0


@pytest.mark.parametrize(("args", "message"), [
    (("team", "add", "Ada Lovelace", "--role", "reviewer"), "member name 'Ada Lovelace' cannot form a sign-in link"),
    # Issue 32: a dot ends the name in a sign-in token (NAME.SECRET), so a.b could never sign in.
    (("team", "add", "a.b", "--role", "reviewer"), "member name 'a.b' cannot form a sign-in link"),
    (("team", "add", "ada", "--role", "reviewer", "--protocols", "webarena,nope"), "no such protocol: nope"),
    (("team", "add", "carol", "--role", "adjudicator", "--protocols", "webarena"), "an adjudicator sees every cell"),
    (("team", "revoke", "zed"), "zed is not in the team (see `protocoder team list`)"),
    (("team", "link", "zed"), "zed is not in the team; add them with `protocoder team add zed --role reviewer`"),
])
def test_bad_requests_are_one_line_and_write_nothing(bundled: Path, cli: Cli, args: tuple[str, ...],
                                                     message: str) -> None:
    before = tree_digest(bundled)
    result = cli(*args, "--workspace", bundled)
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert tree_digest(bundled) == before and not (bundled / "team.yaml").exists()


def test_adding_a_member_twice_names_the_command_that_helps(bundled: Path, cli: Cli) -> None:
    assert cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).exit_code == 0
    result = cli("team", "add", "ada", "--role", "adjudicator", "--workspace", bundled)
    assert result.exit_code == 2
    assert "for a new sign-in link run `protocoder team link ada`" in result.stderr
    assert cli("team", "link", "ada", "--workspace", bundled).exit_code == 0


def test_a_broken_team_file_is_named_with_its_line(bundled: Path, cli: Cli) -> None:
    (bundled / "team.yaml").write_text("members:\n  ada: {role: reviewer}\n  ben: {role: reviewr}\n"
                                       "reviewers_per_cell: 0\n", encoding="utf-8")
    for args in (("status",), ("team", "list"), ("serve",)):
        result = cli(*args, "--workspace", bundled)
        assert result.exit_code == 1, args
        assert result.stderr.splitlines() == [
            "team.yaml:3:15: role must be one of reviewer, adjudicator, not 'reviewr'",
            "team.yaml:4:21: reviewers_per_cell must be a whole number, 1 or more",
            "protocoder: 2 problems; nothing was written"], args


def test_a_wrong_session_lifetime_is_named_with_its_line(bundled: Path, cli: Cli) -> None:
    for value in ("0", "-1", "twelve", "true", "9000", ".inf"):
        (bundled / "team.yaml").write_text(f"members:\n  ada: {{role: reviewer}}\nsession_hours: {value}\n",
                                           encoding="utf-8")
        result = cli("team", "list", "--workspace", bundled)
        assert result.exit_code == 1, value
        assert result.stderr.splitlines() == [
            "team.yaml:3:16: session_hours must be a number of hours above 0 and at most 8760 (e.g. 12)"], value
    (bundled / "team.yaml").write_text("members:\n  ada: {role: reviewer}\nsession_hours: 0.5\n", encoding="utf-8")
    assert load_team(bundled) == Team((Member("ada", "reviewer"),), None, 0.5)
    assert load_team(bundled).session_hours == 0.5  # type: ignore[union-attr]
    (bundled / "team.yaml").write_text("members:\n  ada: {role: reviewer}\n", encoding="utf-8")
    assert load_team(bundled).session_hours == 12  # type: ignore[union-attr]


def _stored_session(root: Path, name: str) -> dict[str, str]:
    sessions = json.loads(secrets_file(root).read_text(encoding="utf-8"))["members"][name]["sessions"]
    assert len(sessions) == 1
    return next(iter(sessions.values()))


def test_a_session_ends_at_the_absolute_time_stored_with_its_hash(bundled: Path, cli: Cli) -> None:
    from datetime import UTC, datetime, timedelta

    token = token_of(cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).stdout)
    before = datetime.now(UTC).replace(microsecond=0)
    _, session = redeem(bundled, token, hours=2)  # type: ignore[misc]
    record = _stored_session(bundled, "ada")
    created = datetime.strptime(record["created"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    expires = datetime.strptime(record["expires"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= created <= datetime.now(UTC) and expires - created == timedelta(hours=2)
    table = SessionTable(bundled)
    assert table.member_of(session) == "ada"
    assert table.member_of(session, now=expires - timedelta(seconds=1)) == "ada"
    assert table.member_of(session, now=expires) is None  # ended: refused, though still on disk
    found = table.find(session)
    assert found is not None and found.member == "ada" and found.ended(expires)
    # The default lifetime is 12 hours; a record from before sessions expired ends 12 hours
    # after it was made, one that cannot say when it ends counts as ended.
    token = token_of(cli("team", "link", "ada", "--workspace", bundled).stdout)
    data = json.loads(secrets_file(bundled).read_text(encoding="utf-8"))
    data["members"]["ada"]["sessions"] = {}
    secrets_file(bundled).write_text(json.dumps(data), encoding="utf-8")
    _, session = redeem(bundled, token)  # type: ignore[misc]
    record = _stored_session(bundled, "ada")
    assert (datetime.strptime(record["expires"], "%Y-%m-%dT%H:%M:%SZ")
            - datetime.strptime(record["created"], "%Y-%m-%dT%H:%M:%SZ")) == timedelta(hours=12)
    for old, alive in (({"created": _stamp_ago(hours=1)}, True), ({"created": _stamp_ago(hours=13)}, False),
                       ({"expires": "soon"}, False), ({}, False)):
        data = json.loads(secrets_file(bundled).read_text(encoding="utf-8"))
        digest = next(iter(data["members"]["ada"]["sessions"]))
        data["members"]["ada"]["sessions"][digest] = old
        secrets_file(bundled).write_text(json.dumps(data), encoding="utf-8")
        assert (SessionTable(bundled).member_of(session) == "ada") is alive, old


def _stamp_ago(**delta: float) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_signing_in_again_drops_ended_sessions(bundled: Path, cli: Cli) -> None:
    token = token_of(cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).stdout)
    _, first = redeem(bundled, token)  # type: ignore[misc]
    data = json.loads(secrets_file(bundled).read_text(encoding="utf-8"))
    (record,) = data["members"]["ada"]["sessions"].values()
    record["expires"] = _stamp_ago(seconds=1)
    secrets_file(bundled).write_text(json.dumps(data), encoding="utf-8")
    token = token_of(cli("team", "link", "ada", "--workspace", bundled).stdout)
    _, second = redeem(bundled, token)  # type: ignore[misc]
    table = SessionTable(bundled)
    assert table.find(first) is None and table.member_of(second) == "ada"
    assert len(json.loads(secrets_file(bundled).read_text(encoding="utf-8"))["members"]["ada"]["sessions"]) == 1


def test_list_shows_roles_and_assignments(bundled: Path, cli: Cli) -> None:
    (bundled / "team.yaml").write_text("reviewers_per_cell: 2\nmembers:\n  ada: {role: reviewer}\n"
                                       "  ben: {role: reviewer, protocols: [webarena]}\n  cy: {role: reviewer}\n"
                                       "  carol: {role: adjudicator}\n", encoding="utf-8")
    lines = cli("team", "list", "--workspace", bundled).stdout.splitlines()
    assert lines[1] == "ben  reviewer  webarena"
    assert lines[3] == "carol  adjudicator  every cell (adjudicates)"
    # webarena has ben and one more; every other protocol two of ada and cy: both code every protocol but one.
    assert lines[0].startswith("ada  reviewer  ") and lines[2].startswith("cy  reviewer  ")


@settings(max_examples=60, deadline=None)
@given(n_pool=st.integers(1, 6), per_cell=st.one_of(st.none(), st.integers(1, 8)),
       n_protocols=st.integers(0, 12), explicit=st.lists(st.sets(st.integers(0, 11)), max_size=3))
def test_every_protocol_gets_n_reviewers_shared_evenly(n_pool: int, per_cell: int | None, n_protocols: int,
                                                      explicit: list[set[int]]) -> None:
    protocols = [f"p{i}" for i in range(n_protocols)]
    members = [Member(f"r{i}", "reviewer") for i in range(n_pool)]
    members += [Member(f"x{i}", "reviewer", tuple(f"p{j}" for j in sorted(chosen)))
                for i, chosen in enumerate(explicit) if chosen]
    team = Team((*members, Member("boss", "adjudicator")), per_cell)
    plan = assignments(team, protocols)
    assert "boss" not in plan
    for protocol in protocols:
        have = [name for name, assigned in plan.items() if protocol in assigned]
        assert len(have) == len(set(have))
        fixed = sum(protocol in m.protocols for m in members)
        wanted = n_pool + fixed if per_cell is None else max(per_cell, fixed) if per_cell - fixed <= n_pool \
            else fixed + n_pool
        assert len(have) == wanted
    shares = [len(plan[f"r{i}"]) for i in range(n_pool)]
    assert max(shares, default=0) - min(shares, default=0) <= 1  # nobody does more than one protocol extra
    assert assignments(team, protocols) == plan  # the same file gives the same plan


def test_status_shows_each_reviewers_assigned_started_and_finished_cells(bundled: Path, cli: Cli) -> None:
    (bundled / "team.yaml").write_text("members:\n  casheekar: {role: reviewer}\n"
                                       "  ada: {role: reviewer, protocols: [webarena, osworld]}\n"
                                       "  carol: {role: adjudicator}\n", encoding="utf-8")
    sheet = bundled / "protocols/webarena/codes/ada.yaml"
    sheet.write_text('cells:\n  open_work:\n    code: NR\n    source: Paper\n    basis: Nothing is said.\n'
                     '    rubric_version: "1.0"\n    coded_at: 2026-08-16\n'
                     '  reset_retention:\n    basis: a draft, no code yet\n', encoding="utf-8")
    result = cli("status", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    tail = result.stdout.splitlines()[-4:]
    assert tail == ["Team (team.yaml): assigned / started / finished cells per reviewer",
                    "  casheekar    30 assigned    30 started    30 finished",
                    "  ada           6 assigned     2 started     1 finished",
                    "  25 of 30 cells ready for adjudication"]
    review = load_review(bundled)
    team = load_team(bundled)
    assert team is not None
    # Closed: where every assigned reviewer has finished. casheekar alone codes eight
    # protocols (24 cells, all finished); on webarena and osworld ada codes too, and has
    # finished one cell; osworld's cells wait for her.
    closed = closed_cells(review, team)
    assert len(closed) == 25 and ("webarena", "open_work") in closed
    assert not {cell for cell in closed if cell[0] == "osworld"}
    assert [p.finished for p in progress(review, team)] == [30, 1]


def test_status_without_a_team_file_is_unchanged(bundled: Path, cli: Cli) -> None:
    assert "Team (team.yaml)" not in cli("status", "--workspace", bundled).stdout


# --------------------------------------------------------------------------- validate reads team.yaml (issue 32)


@pytest.mark.parametrize(("team_yaml", "expected"), [
    ("members:\n  ada: {role: reviewer\n", ["team.yaml:3:1: "]),  # YAML syntax, with its line
    ("members:\n  ada: {role: reviewer}\n  a.b: {role: reviewer}\n",
     ["team.yaml:3:3: member name 'a.b' cannot sign in"]),
    ("members:\n  ada: {role: reviewr}\n", ["team.yaml:2:"]),
    ("members:\n  ada: {role: reviewer, protocols: [webarena, nope]}\n",
     ["team.yaml:2:", "ada is assigned protocol 'nope', which this workspace does not have"]),
    ("members:\n  carol: {role: adjudicator, protocols: [webarena]}\n", ["an adjudicator sees every cell"]),
])
def test_validate_reports_the_problems_of_team_yaml(bundled: Path, cli: Cli, team_yaml: str,
                                                   expected: list[str]) -> None:
    assert cli("validate", "--workspace", bundled).exit_code == 0
    (bundled / "team.yaml").write_text(team_yaml, encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1, result.stderr
    team_lines = [line for line in result.stderr.splitlines() if line.startswith("team.yaml")]
    assert len(team_lines) == 1, result.stderr
    for part in expected:
        assert part in team_lines[0], team_lines
    assert "Traceback" not in result.stderr


def test_validate_passes_a_good_team_file(bundled: Path, cli: Cli) -> None:
    assert cli("team", "add", "ben", "--role", "reviewer", "--protocols", "webarena", "--workspace", bundled
               ).exit_code == 0
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if "team.yaml" in line]
