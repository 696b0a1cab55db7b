"""``team.yaml``: the members of a workspace's team, their roles and what they are assigned.

The file is committed with the workspace; it holds no secret. Example::

    # Who reviews this workspace (sign-in secrets live hashed in .protocoder/).
    reviewers_per_cell: 2          # optional: N independent reviewers per cell (default: all)
    session_hours: 12              # optional: how long a sign-in lasts (default 12)
    members:
      ada: {role: reviewer}
      ben: {role: reviewer, protocols: [webarena, osworld]}
      carol: {role: adjudicator}

``protocoder team add`` also writes a ``record`` per member (random, not a secret): the sessions
and sign-in links of a member belong to that record, so a member deleted from the file (by hand
or with ``team revoke``) and added again starts with no session, and an old link does not work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, ProtocoderError, UsageError
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
    record: str = ""
    """This membership's id (``record`` in team.yaml): sessions made under another record do not count."""


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


def parse_team(data: Any, display: str, text: str, protocols: frozenset[str] | None = None) -> Team:
    """The team in ``data`` (parsed YAML of ``display``); raises :class:`InvalidInput` naming each bad line.

    ``protocols``: the workspace's protocol ids, when assignments to others are to be refused too
    (``validate``; the server does not, so removing a protocol locks nobody out)."""
    from ..storage.findings import Findings, Reader

    findings = Findings(display, text)
    r = Reader(findings)
    if data is None:
        return Team()
    existing = protocols
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
                if not isinstance(name, str) or not can_sign_in(name):
                    r.add(path, f"member name {name!r} cannot sign in: use {LINK_NAME_RULE}", at="key")
                    continue
                item = r.mapping(raw, path, required=("role",), optional=("protocols", "record"),
                                 what="a member mapping")
                if item is None:
                    continue
                role = r.text(item, "role", path, required=True)
                if role and role not in ROLES:
                    r.add([*path, "role"], f"role must be one of {', '.join(ROLES)}, not {role!r}")
                protocols = r.text_list(item, "protocols", path) if "protocols" in item else ()
                if existing is not None:  # validate: what the server lets pass, so no one is locked out
                    if protocols and role == "adjudicator":
                        r.add([*path, "protocols"], "an adjudicator sees every cell: protocols are assigned to "
                                                    "reviewers only")
                    listed = isinstance(item.get("protocols"), list)
                    for index, protocol in enumerate(protocols):
                        if protocol not in existing:
                            r.add([*path, "protocols", index] if listed else [*path, "protocols"],
                                  f"{name} is assigned protocol {protocol!r}, which this workspace does not have "
                                  "(see `protocoder protocol list`)")
                record = r.text(item, "record", path) if "record" in item else ""
                if record and not is_slug(record):
                    r.add([*path, "record"], "record must be the id `protocoder team add` wrote "
                                             "(lowercase letters and digits)")
                members.append(Member(name, role, tuple(protocols), record or ""))
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


def team_problems(root: Path, protocols: frozenset[str]) -> list[Problem]:
    """Every problem of the workspace's team file (none without one), for ``validate``: YAML syntax,
    names, roles, and assignments to protocols the workspace does not have; each with its line."""
    from ..storage.files import read_text
    from ..storage.yamlio import parse_yaml

    path = team_file(root)
    if not path.is_file():
        return []
    try:
        text = read_text(path, TEAM_FILE)
        parse_team(parse_yaml(text, TEAM_FILE), TEAM_FILE, text, protocols)
    except InvalidInput as exc:
        return list(exc.problems)
    except ProtocoderError as exc:
        return [Problem(TEAM_FILE, 0, 0, str(exc))]
    return []


def new_record() -> str:
    """A fresh membership id for ``record`` in team.yaml."""
    import secrets

    return "r" + secrets.token_hex(4)  # a letter first: YAML never reads it as a number


LINK_NAME_RULE = "lowercase letters, digits, - and _ (it starts the sign-in token NAME.SECRET, so no dot)"


def can_sign_in(name: str) -> bool:
    """True when ``name`` can form a sign-in link: a safe id without a dot (the token is ``NAME.SECRET``)."""
    return is_slug(name) and "." not in name


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
        if member.record:
            entry["record"] = member.record
        members[name] = flow_mapping(entry)
    document.save()
