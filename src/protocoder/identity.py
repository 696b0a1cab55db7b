"""Who is coding: the reviewer id from the command line, the environment or git.

An id typed on purpose (``--reviewer``, ``--by``, ``$PROTOCODER_REVIEWER``) is used as it is
or refused with the reason: ``../ada`` is never quietly turned into ``ada``, because that
would open another reviewer's file. Only git's ``user.name``, which is a person's name
and not an id, is turned into one (``Ada Lovelace`` → ``ada-lovelace``); the coding app
then asks before it starts a reviewer the workspace has not seen.

Who adjudicates, freezes, corrects or withdraws (:func:`choose_person`) is given with ``--by``
or asked once per workspace and machine and remembered under ``.protocoder/``; git's
user.name is offered as the answer, never taken without asking.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .model import MAX_ID_LENGTH, is_slug, slugify

ENV_VAR = "PROTOCODER_REVIEWER"

FROM_OPTION = "--reviewer"
FROM_ENV = f"${ENV_VAR}"
FROM_GIT = "git's user.name"


def git_user_name() -> str | None:
    """git's ``user.name``, or None when git or the setting is missing."""
    try:
        result = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5,
                                check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    name = result.stdout.strip()
    return name or None


def reviewer_id(name: str) -> str | None:
    """Turn a person's name into a reviewer id (``Ada Lovelace`` → ``ada-lovelace``).

    For names, not for ids typed on purpose: those go through :func:`id_problem`.
    """
    candidate = name.strip() if is_slug(name.strip()) else slugify(name)
    return candidate if candidate and is_slug(candidate) else None


def id_problem(name: str) -> str | None:
    """Why ``name`` cannot be a reviewer id, or None when it can."""
    if is_slug(name):
        return None
    if not name.strip():
        return "it is empty"
    if len(name) > MAX_ID_LENGTH:
        return f"it is longer than {MAX_ID_LENGTH} characters"
    if "/" in name or "\\" in name or name.startswith("."):
        why = "it is a path, not a name"
    elif any(ch.isspace() for ch in name):
        why = "it contains spaces"
    elif name != name.lower():
        why = "it contains capital letters"
    else:
        why = "it contains characters other than lowercase letters, digits and single - _ ."
    return f"{why}; an id is lowercase letters and digits joined by single '-', '_' or '.'"


def check_reviewer_id(name: str, *, origin: str = FROM_OPTION) -> str:
    """``name`` when it is a safe reviewer id; else :class:`UsageError` with the reason and an id to use."""
    problem = id_problem(name)
    if problem is None:
        return name
    proposal = reviewer_id(name)
    hint = f" (did you mean {proposal}?)" if proposal else ""
    raise UsageError(f"{origin} {name!r} is not a safe id: {problem}{hint}")


@dataclass(frozen=True)
class ReviewerChoice:
    """The reviewer id to code as, and where it came from (shown when the app asks to confirm)."""

    id: str | None
    origin: str
    """:data:`FROM_OPTION`, :data:`FROM_ENV`, :data:`FROM_GIT`, or empty when nothing gave a name."""
    name: str = ""
    """What that source said (git's user.name may differ from the id made from it)."""


def choose_reviewer(explicit: str | None, *, origin: str = FROM_OPTION) -> ReviewerChoice:
    """The reviewer from ``explicit``, else ``$PROTOCODER_REVIEWER``, else git's user.name.

    Raises :class:`UsageError` for an explicit or environment value that is not a safe id.
    """
    if explicit is not None:
        return ReviewerChoice(check_reviewer_id(explicit, origin=origin), origin, explicit)
    from_env = os.environ.get(ENV_VAR, "")
    if from_env.strip():
        return ReviewerChoice(check_reviewer_id(from_env, origin=FROM_ENV), FROM_ENV, from_env)
    git_name = git_user_name()
    if git_name:
        derived = reviewer_id(git_name)
        if derived:
            return ReviewerChoice(derived, FROM_GIT, git_name)
    return ReviewerChoice(None, "")


def default_reviewer(explicit: str | None = None) -> str | None:
    """The reviewer id to use: ``explicit``, else ``$PROTOCODER_REVIEWER``, else git's user.name.

    Returns None when none of them gives a name; raises :class:`UsageError` when an
    explicit or environment value is not a safe id.
    """
    return choose_reviewer(explicit, origin="the reviewer name").id


def closest_reviewer(name: str, existing: Iterable[str]) -> str | None:
    """The existing reviewer id ``name`` was most likely meant to be (a typo), or None."""
    matches = difflib.get_close_matches(name, [r for r in existing if r != name], n=1, cutoff=0.6)
    return matches[0] if matches else None


# --------------------------------------------------------------------------- who adjudicates, freezes, corrects

PERSON_FILE = "person.json"
"""Under the workspace's ``.protocoder/`` (never committed): who adjudicates, freezes and
corrects in this workspace on this machine, as answered once."""

FROM_BY = "--by"
FROM_REMEMBERED = "remembered"


def person_file(state_dir: Path) -> Path:
    """Where the answer is kept: ``.protocoder/person.json``."""
    return state_dir / PERSON_FILE


def remembered_person(state_dir: Path) -> str | None:
    """The id remembered for this workspace and machine, or None (never asked, or the file is unusable:
    then the person is asked again, and the answer replaces it)."""
    try:
        data = json.loads(person_file(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("by") if isinstance(data, dict) else None
    return name if isinstance(name, str) and id_problem(name) is None else None


def remember_person(state_dir: Path, name: str) -> Path:
    """Keep ``name`` (a safe id) as who acts here; returns the file written (atomically)."""
    from .storage.files import atomic_write_text

    path = person_file(state_dir)
    atomic_write_text(path, json.dumps({"by": check_reviewer_id(name, origin="the name")}) + "\n")
    return path


@dataclass(frozen=True)
class PersonChoice:
    """Who acts, and how that was learnt (``--by``, the environment, remembered, or just asked)."""

    id: str
    origin: str


def choose_person(by: str | None, state_dir: Path, *, doing: str,
                  ask: Callable[[str, str | None], str] | None) -> PersonChoice:
    """Who ``doing`` (``adjudicates``, ``freezes``, ``corrects``…): ``--by``, else
    ``$PROTOCODER_REVIEWER``, else the answer remembered for this workspace and machine, else
    ``ask(question, offered)`` once (git's user.name is offered, never taken), remembered after.

    ``ask`` is None when nobody can be asked (no terminal): then :class:`UsageError` names ``--by``.
    An answer just given comes back with origin ``asked``: the caller keeps it with
    :func:`remember_person` once its command has succeeded (a refused command writes nothing).
    """
    if by is not None:
        return PersonChoice(check_reviewer_id(by, origin=FROM_BY), FROM_BY)
    from_env = os.environ.get(ENV_VAR, "")
    if from_env.strip():
        return PersonChoice(check_reviewer_id(from_env, origin=FROM_ENV), FROM_ENV)
    remembered = remembered_person(state_dir)
    if remembered is not None:
        return PersonChoice(remembered, FROM_REMEMBERED)
    if ask is None:
        raise UsageError(f"who {doing}? give --by NAME (or set ${ENV_VAR}); this workspace has no name "
                         "remembered on this machine, and there is no terminal to ask")
    git_name = git_user_name()
    offered = reviewer_id(git_name) if git_name else None
    answer = ask(f"Who {doing}? Your id in this workspace (lowercase letters, digits, - _ .)", offered).strip()
    return PersonChoice(check_reviewer_id(answer, origin="the name given"), "asked")
