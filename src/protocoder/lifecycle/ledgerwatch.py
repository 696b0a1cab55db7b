"""The ledger watched in every layout: what ``corrections.yaml`` is compared with to find lost entries.

Releases and ``output/``'s manifest anchor the ledger wherever they are (see :mod:`history`).
Between them, the newest record of the ledger is:

* **git**, where git *tracks* ``corrections.yaml``: every committed version reachable from
  ``HEAD`` (:func:`~.githistory.lost_in_git`);
* **the state record** ``.protocoder/ledger-head.json`` everywhere else — no repository, a
  parent repository that ignores the workspace, a copy without its ``.git``, a ledger not yet
  added. It is written with every ledger write (see :mod:`ledger_writes`). In a repository whose
  current branch does not track the ledger, an entry the record names that some other branch
  holds is that branch's, not lost here; one that ``HEAD``'s history holds is reported from
  git (with the command that restores it).

docs/ledger.md is the threat model: what this detects, and what it cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import Problem
from ..storage.paths import Paths
from .corrections import Correction, resolve_anchor
from .gitcache import lost_in_git_once
from .githistory import commits_of, hashes_in_commits, ledger_in_git, lost_in_git
from .ledger_writes import HEAD_RECORD, recorded_head


def lost_entries(paths: Paths, corrections: Sequence[Correction]) -> list[Problem]:
    """Entries the newest record of the ledger (git, or the state record) holds that it lacks."""
    where = ledger_in_git(paths)
    if where is None:
        return lost_since_recorded(paths, corrections)
    name, tracked = where
    if tracked:
        return lost_in_git_once(paths, corrections, name)  # git runs again only when HEAD or the ledger changed
    lost = _lost_from_record(corrections, recorded_head(paths))
    in_history = commits_of(paths, "--all", "--", name)  # commits that ever touched the ledger
    if not in_history:
        return _record_problem(paths, lost)  # git never had it: the record is all there is
    problems = lost_in_git(paths, corrections, name)
    if lost:
        held = hashes_in_commits(paths, name, commits_of(paths, "--all"))
        # In HEAD's history: reported above, from git. On another branch only: not this branch's.
        problems += _record_problem(paths, [entry for entry in lost if str(entry.get("hash")) not in held])
    return problems


def lost_since_recorded(paths: Paths, corrections: Sequence[Correction]) -> list[Problem]:
    """Entries the head recorded in ``.protocoder/`` (at the last write) saw that the ledger
    lacks — a deleted, truncated or rolled-back file, also after the last release."""
    return _record_problem(paths, _lost_from_record(corrections, recorded_head(paths)))


def _lost_from_record(corrections: Sequence[Correction], recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in recorded if resolve_anchor(corrections, str(entry.get("hash", ""))) is None]


def _record_problem(paths: Paths, lost: list[dict[str, Any]]) -> list[Problem]:
    if not lost:
        return []
    shown = paths.show(paths.corrections)
    described = ", ".join(f"#{entry.get('index')} {entry.get('cell')} {entry.get('old') or '-'} -> {entry.get('new')} "
                          f"by {entry.get('by')}" for entry in lost[:8]) + (f" and {len(lost) - 8} more"
                                                                           if len(lost) > 8 else "")
    return [Problem(shown, 0, 0, f"lost {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} that this workspace "
                    f"recorded when it last wrote the ledger ({described}; recorded in "
                    f"{paths.show(paths.state_dir / HEAD_RECORD)}): restore {shown} from your backup or version "
                    "control. To publish without them anyway: --allow-lost-corrections")]
