"""Who is coding: the reviewer id from the command line, the environment or git.

An id typed on purpose (``--reviewer``, ``--by``, ``$PROTOCODER_REVIEWER``) is used as it is
or refused with the reason: ``../ada`` is never quietly turned into ``ada``, because that
would open another reviewer's file. Only git's ``user.name``, which is a person's name
and not an id, is turned into one (``Ada Lovelace`` → ``ada-lovelace``); the coding app
then asks before it starts a reviewer the workspace has not seen.
"""

from __future__ import annotations

import difflib
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

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
