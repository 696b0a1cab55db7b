"""Problems in a file, found by key path and located only when reported; typed reading.

Every YAML format protocoder reads (the workspace files in :mod:`.formats`, and the
corrections ledger, releases and histories in :mod:`protocoder.lifecycle`) is checked the
same way: a :class:`Reader` takes values out of plain data and records in
:class:`Findings` what is wrong, by key path; :meth:`Findings.problems` then looks the
lines up (:class:`~protocoder.storage.yamlio.Locator`), so a file without problems never
pays for a round-trip parse. :func:`text_problem` tells writers what the reader would
refuse, so that a save never leaves a file that ``validate`` rejects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..errors import Problem
from ..model import is_slug
from .yamlio import KeyPath, Locator

MAX_TEXT_LENGTH = 20_000
"""Longest text accepted in one value (a basis is a sentence or a paragraph)."""


def text_problem(name: str, value: str) -> str | None:
    """Why ``value`` cannot be written as the text ``name`` (None when it can).

    Writers check with this what the loader would refuse, so that a save can never leave
    a file that ``validate`` (and the coding app) then rejects.
    """
    if len(value) > MAX_TEXT_LENGTH:
        return f"{name} is {len(value):,} characters long; the limit is {MAX_TEXT_LENGTH:,}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"{name} is not valid Unicode text (it holds the lone surrogate U+{ord(value[exc.start]):04X})"
    return None


@dataclass
class Finding:
    """A problem known by key path, before its line is looked up."""

    keypath: tuple[str | int, ...]
    message: str
    at: str = "value"
    severity: str = "error"


@dataclass
class Findings:
    """Problems of one file, located lazily."""

    display: str
    text: str
    items: list[Finding] = field(default_factory=list)

    def add(self, keypath: KeyPath, message: str, *, at: str = "value", severity: str = "error") -> None:
        """Record a problem at ``keypath`` (``at="key"`` points at the key itself)."""
        self.items.append(Finding(tuple(keypath), message, at, severity))

    def problems(self) -> list[Problem]:
        """The findings as located :class:`Problem` objects."""
        if not self.items:
            return []
        locator = Locator(self.text)
        result = []
        for item in self.items:
            line, column = locator.position(item.keypath, at=item.at)
            result.append(Problem(self.display, line, column, item.message, item.severity))
        return result


def describe(value: Any) -> str:
    """Name a YAML value's type the way a user would (for messages)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, date):
        return f"the date {value.isoformat()}"
    return f"{type(value).__name__}"


class Reader:
    """Small typed accessors over plain YAML data that record what is wrong."""

    def __init__(self, findings: Findings) -> None:
        self.findings = findings

    def add(self, keypath: KeyPath, message: str, **kwargs: Any) -> None:
        self.findings.add(keypath, message, **kwargs)

    def mapping(self, value: Any, path: KeyPath, *, required: Iterable[str] = (),
                optional: Iterable[str] = (), what: str = "") -> dict[str, Any] | None:
        """Check that ``value`` is a mapping with only known keys and all required ones."""
        required, optional = tuple(required), tuple(optional)
        if not isinstance(value, dict):
            self.add(path, f"expected {what or 'a mapping'}, found {describe(value)}")
            return None
        allowed = required + optional
        for key in value:
            if not isinstance(key, str):
                self.add(path, f"keys must be text, found {describe(key)}")
            elif allowed and key not in allowed:
                self.add([*path, key], f"unknown key {key!r} (expected one of: {', '.join(allowed)})", at="key")
        for key in required:
            if key not in value:
                self.add(path, f"missing required key {key!r}")
        return value

    def text(self, data: Mapping[str, Any], key: str, path: KeyPath, *, required: bool = False,
             version: bool = False) -> str:
        """A text value; numbers other than floats and dates are accepted as written."""
        value = data.get(key)
        if type(value) is str and not required and len(value) <= MAX_TEXT_LENGTH:
            return value  # what nearly every value is: none of the checks below applies
        if key not in data or data[key] is None:
            if required and key in data:
                self.add([*path, key], f"{key!r} must not be empty")
            return ""
        value = data[key]
        if isinstance(value, bool) or isinstance(value, float) and not version:
            self.add([*path, key], f"expected text for {key!r}, found {describe(value)}; put it in quotes")
            return ""
        if isinstance(value, float):
            self.add([*path, key], f"write the version in quotes (\"{value}\") so that YAML keeps it as text")
            return ""
        if isinstance(value, int):
            return str(value)
        if isinstance(value, datetime | date):
            return value.isoformat()
        if not isinstance(value, str):
            self.add([*path, key], f"expected text for {key!r}, found {describe(value)}")
            return ""
        if len(value) > MAX_TEXT_LENGTH:
            self.add([*path, key], f"{key!r} is {len(value):,} characters long; the limit is {MAX_TEXT_LENGTH:,}")
            return ""
        if required and not value.strip():
            self.add([*path, key], f"{key!r} must not be empty")
        return value

    def text_list(self, data: Mapping[str, Any], key: str, path: KeyPath) -> tuple[str, ...]:
        """A list of short strings (citation keys, code ids)."""
        value = data.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            # A single key written without brackets is common and unambiguous.
            value = [value]
        if not isinstance(value, list):
            self.add([*path, key], f"expected a list for {key!r}, found {describe(value)}")
            return ()
        items = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                self.add([*path, key, index], f"expected text in {key!r}, found {describe(item)}")
            else:
                items.append(item.strip())
        return tuple(items)

    def ids(self, data: Mapping[str, Any], key: str, path: KeyPath) -> tuple[str, ...]:
        """A list of code ids. An unquoted whole number is the id it spells (``[1, 0]`` and
        ``['1', '0']`` are the same codes), as it is for a single ``id: 1`` or ``code: 1``."""
        value = data.get(key)
        if isinstance(value, list):
            value = [str(item) if isinstance(item, int) and not isinstance(item, bool) else item for item in value]
        elif isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return self.text_list({key: value}, key, path)

    def day(self, data: Mapping[str, Any], key: str, path: KeyPath, *, required: bool = False) -> date | None:
        """A calendar date written as YYYY-MM-DD."""
        value = data.get(key)
        if value is None:
            if required and key in data:
                self.add([*path, key], f"{key!r} must not be empty")
            return None
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        if isinstance(value, str):
            try:
                return date.fromisoformat(value.strip())
            except ValueError:
                pass
        self.add([*path, key], f"expected a date (YYYY-MM-DD) for {key!r}, found {value!r}")
        return None

    def moment(self, data: Mapping[str, Any], key: str, path: KeyPath) -> str:
        """A date or date-time, normalised to ISO 8601 text."""
        value = data.get(key)
        if value is None:
            return ""
        if isinstance(value, datetime | date):
            return value.isoformat().replace("+00:00", "Z")
        if isinstance(value, str):
            try:
                datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
                return value.strip()
            except ValueError:
                pass
        self.add([*path, key], f"expected a date or time (ISO 8601) for {key!r}, found {value!r}")
        return ""

    def slug(self, data: Mapping[str, Any], key: str, path: KeyPath, *, what: str) -> str:
        """An id that must be a safe slug."""
        value = self.text(data, key, path, required=True)
        if value and not is_slug(value):
            self.add([*path, key], f"{what} {value!r} is not a safe id (lowercase letters, digits, "
                                   "and single '-', '_' or '.' between them)")
        return value
