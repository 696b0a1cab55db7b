"""Problems found in a workspace, and the exceptions that carry them.

Every message a user sees about bad input is a :class:`Problem`: it names the file and,
where one exists, the line and column (or the CSV row), so that editors and CI logs can
jump straight to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters a terminal acts on (C0 but tab and newline, DEL, C1): ESC starts colour,
cursor and OSC sequences (a link, a window title, a clipboard write), BEL rings, CR overwrites."""


def visible_text(text: str) -> str:
    """``text`` with every control character shown as ``[U+XXXX]``, as LaTeX output shows it.

    The one neutralising function of every output boundary (Markdown, HTML, CSV, JSON, the
    terminal): what a reviewer typed is printed as text and never run by a terminal that
    shows the file. Tab and newline stay (layout, not commands).
    """
    if _CONTROLS.search(text) is None:  # the common case: one scan, no copy
        return text
    return _CONTROLS.sub(lambda found: f"[U+{ord(found.group()):04X}]", text)


def control_characters(text: str) -> list[str]:
    """The control characters :func:`visible_text` would replace in ``text``, as ``U+XXXX`` (each once)."""
    if _CONTROLS.search(text) is None:
        return []
    return sorted({f"U+{ord(ch):04X}" for ch in _CONTROLS.findall(text)})


def stored_controls_note(controls: list[str], where: str) -> str:
    """What ``cell set`` and ``import`` say when they stored text holding control characters."""
    return (f"note: {where} holds control character{'s' if len(controls) != 1 else ''} {', '.join(controls[:6])}"
            f"{' …' if len(controls) > 6 else ''}: stored as given; every output (tables, exports, the terminal) "
            "shows each as [U+XXXX]")


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
        return visible_text(f"{where}: {label}{self.message}")  # printed on a terminal: never its codes


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
