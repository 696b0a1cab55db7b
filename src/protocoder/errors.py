"""Problems found in a workspace, and the exceptions that carry them.

Every message a user sees about bad input is a :class:`Problem`: it names the file and,
where one exists, the line and column (or the CSV row), so that editors and CI logs can
jump straight to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file.

    ``line`` and ``column`` are 1-based; 0 means "the file as a whole". ``severity`` is
    ``"error"`` (the workspace cannot be rendered) or ``"warning"`` (it can, but
    ``validate`` still reports it).
    """

    path: str
    line: int
    column: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.path
        if self.line:
            where += f":{self.line}:{self.column or 1}"
        label = "" if self.severity == "error" else f"{self.severity}: "
        return f"{where}: {label}{self.message}"


class ProtocoderError(Exception):
    """Base class of every error protocoder reports to a user without a traceback."""

    exit_code = 1


class InvalidInput(ProtocoderError):
    """Input that cannot be used; carries every problem found, not just the first."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems, key=_problem_sort_key)
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(ProtocoderError):
    """A command was asked for something it cannot do (bad option values, unknown ids)."""

    exit_code = 2


class Rejected(ProtocoderError):
    """A value a command cannot accept (an id that exists, a URL without a scheme, ...)."""


class ConflictError(ProtocoderError):
    """A file changed on disk since it was read; saving would overwrite someone's work."""

    def __init__(self, path: Path, message: str) -> None:
        self.path = path
        super().__init__(message)


class LockedError(ProtocoderError):
    """Another process holds the workspace's write lock."""


def _problem_sort_key(problem: Problem) -> tuple[str, int, int, str]:
    return (problem.path, problem.line, problem.column, problem.message)


def display_path(path: Path, root: Path | None = None) -> str:
    """Return ``path`` relative to ``root`` when it lies inside it, for short messages."""
    if root is not None:
        # Paths built from the root need no trip to the file system (resolving every
        # path cost a second on a 1,000-protocol workspace), nor relative_to's part lists:
        # pathlib's text of a path has no "." parts, doubled or trailing separators.
        text, prefix = str(path), str(root).rstrip(os.sep) + os.sep
        if os.sep == "/" and text.startswith(prefix) and ".." not in text[len(prefix):].split("/"):
            return text[len(prefix):]
        try:
            relative = path.relative_to(root)
        except ValueError:
            pass
        else:
            if ".." not in relative.parts:
                return str(relative)
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)
