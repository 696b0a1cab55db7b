"""``team.yaml``: the members of a workspace's team, their roles and what they are assigned.

The file is committed with the workspace; it holds no secret. Example::

    # Who reviews this workspace (sign-in secrets live hashed in .protocoder/).
    reviewers_per_cell: 2          # optional: N independent reviewers per cell (default: all)
    session_hours: 12              # optional: how long a sign-in lasts (default 12)
    members:
      ada: {role: reviewer}
      ben: {role: reviewer, protocols: [webarena, osworld]}
      carol: {role: adjudicator}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, UsageError
from ..model import is_slug

TEAM_FILE = "team.yaml"
ROLES = ("reviewer", "adjudicator")
"""A reviewer codes (only their own cells); an adjudicator decides between reviewers' codes."""

DEFAULT_SESSION_HOURS = 12.0
"""How long a session lasts after sign-in unless ``session_hours`` says otherwise: a working day,
so a cookie left in a shared or lost browser stops working by the next one."""

MAX_SESSION_HOURS = 24.0 * 365
"""The longest ``session_hours`` allowed (a year): a session that never ends is not offered."""


@dataclass(frozen=True)
class Member:
    """One person of the team."""

    name: str
    role: str
    protocols: tuple[str, ...] = ()
    """The protocols this reviewer codes; empty: as the team's assignment says (all, or a share)."""


@dataclass(frozen=True)
class Team:
    """The team file's content."""

    members: tuple[Member, ...] = ()
    reviewers_per_cell: int | None = None
    """N independent reviewers per cell; None: every reviewer codes every cell."""
    session_hours: float = DEFAULT_SESSION_HOURS
    """How long a session lasts from sign-in (absolute: using it does not extend it)."""

    def member(self, name: str) -> Member | None:
        """The member called ``name``, or None."""
        return next((m for m in self.members if m.name == name), None)

    @property
    def reviewers(self) -> tuple[Member, ...]:
        """Members with the reviewer role, in file order."""
        return tuple(m for m in self.members if m.role == "reviewer")


def team_file(root: Path) -> Path:
    """Where a workspace's team file lives (its root)."""
    return root / TEAM_FILE


def has_team(root: Path) -> bool:
    """True when the workspace has a team file."""
    return team_file(root).is_file()


def parse_team(data: Any, display: str, text: str) -> Team:
    """The team in ``data`` (parsed YAML of ``display``); raises :class:`InvalidInput` naming each bad line."""
    from ..storage.findings import Findings, Reader

    findings = Findings(display, text)
    r = Reader(findings)
    if data is None:
        return Team()
    top = r.mapping(data, [], optional=("members", "reviewers_per_cell", "session_hours"), what="a team mapping")
    members: list[Member] = []
    per_cell: int | None = None
    hours = DEFAULT_SESSION_HOURS
    if top is not None:
        raw_n = top.get("reviewers_per_cell")
        if raw_n is not None:
            if isinstance(raw_n, int) and not isinstance(raw_n, bool) and raw_n >= 1:
                per_cell = raw_n
            else:
                r.add(["reviewers_per_cell"], "reviewers_per_cell must be a whole number, 1 or more")
        raw_hours = top.get("session_hours")
        if raw_hours is not None:
            if (isinstance(raw_hours, int | float) and not isinstance(raw_hours, bool)
                    and 0 < raw_hours <= MAX_SESSION_HOURS):
                hours = float(raw_hours)
            else:
                r.add(["session_hours"], f"session_hours must be a number of hours above 0 and at most "
                                         f"{MAX_SESSION_HOURS:g} (e.g. 12)")
        raw_members = top.get("members") or {}
        if r.mapping(raw_members, ["members"], what="a mapping of member names to roles") is not None:
            for name, raw in raw_members.items():
                path = ["members", name]
                if not isinstance(name, str) or not is_slug(name):
                    r.add(path, f"member name {name!r} is not a safe id (lowercase letters, digits, - _ .)",
                          at="key")
                    continue
                item = r.mapping(raw, path, required=("role",), optional=("protocols",), what="a member mapping")
                if item is None:
                    continue
                role = r.text(item, "role", path, required=True)
                if role and role not in ROLES:
                    r.add([*path, "role"], f"role must be one of {', '.join(ROLES)}, not {role!r}")
                protocols = r.text_list(item, "protocols", path) if "protocols" in item else ()
                members.append(Member(name, role, tuple(protocols)))
    problems = [p for p in findings.problems() if p.severity == "error"]
    if problems:
        raise InvalidInput(problems)
    return Team(tuple(members), per_cell, hours)


def load_team(root: Path) -> Team | None:
    """The workspace's team, or None when it has no team file (single-user workspaces)."""
    from ..storage.files import read_text
    from ..storage.yamlio import parse_yaml

    path = team_file(root)
    if not path.is_file():
        return None
    display = TEAM_FILE
    text = read_text(path, display)
    return parse_team(parse_yaml(text, display), display, text)


def check_protocols(root: Path, protocols: tuple[str, ...]) -> None:
    """Refuse protocol ids the workspace does not have (:class:`UsageError` naming them)."""
    from ..storage.paths import Paths

    paths = Paths(root)
    missing = [p for p in protocols if not is_slug(p) or not paths.protocol_file(p).is_file()]
    if missing:
        raise UsageError(f"no such protocol: {', '.join(missing)} (see `protocoder protocol list`)")


def write_member(root: Path, member: Member | None, name: str) -> None:
    """Add or replace member ``name`` in ``team.yaml`` (remove it when ``member`` is None),
    keeping the file's comments and order. Call under the team lock."""
    from ..storage.yamlio import flow_list, flow_mapping, load_document, new_mapping

    path = team_file(root)
    document = load_document(path, TEAM_FILE)
    data = document.data
    if not data:
        data = new_mapping()
        document.data = data
        data.yaml_set_start_comment("Who reviews this workspace: members, roles and assignments.\n"
                                    "Sign-in secrets are never here: they live hashed in .protocoder/.")
    members = data.get("members")
    if members is None:
        members = new_mapping()
        data["members"] = members
    if member is None:
        members.pop(name, None)
    else:
        entry: dict[str, Any] = {"role": member.role}
        if member.protocols:
            entry["protocols"] = flow_list(list(member.protocols))
        members[name] = flow_mapping(entry)
    document.save()
