"""Who is coding: the reviewer name from the command line, the environment or git."""

from __future__ import annotations

import os
import subprocess

from .model import is_slug, slugify

ENV_VAR = "PROTOCODER_REVIEWER"


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
    """Turn a person's name into a reviewer id (``Ada Lovelace`` → ``ada-lovelace``)."""
    candidate = name.strip() if is_slug(name.strip()) else slugify(name)
    return candidate if candidate and is_slug(candidate) else None


def default_reviewer(explicit: str | None = None) -> str | None:
    """The reviewer id to use: ``explicit``, else ``$PROTOCODER_REVIEWER``, else git's user.name.

    Returns None when none of them gives a usable name (the coding app then asks).
    """
    for candidate in (explicit, os.environ.get(ENV_VAR), git_user_name()):
        if candidate and candidate.strip():
            found = reviewer_id(candidate)
            if found:
                return found
    return None
