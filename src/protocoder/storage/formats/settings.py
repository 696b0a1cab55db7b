"""``protocoder.yaml``: the workspace's settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model import (
    is_slug,
)
from ..findings import Findings, Reader, describe
from ..yamlio import KeyPath


@dataclass(frozen=True)
class Settings:
    """The workspace file ``protocoder.yaml``."""

    title: str = ""
    rubric: str = ""
    order: tuple[str, ...] = ()
    candidates: bool = True
    """False turns candidate passages (``protocoder find``, the app's pane) off for a blind first pass."""
    team_quotes: bool = False
    """True lets candidates learn from every reviewer's quotes of other protocols, not only the
    reviewer's own (``protocoder find --reviewer``)."""


def parse_settings(data: Any, findings: Findings) -> Settings:
    """Parse ``protocoder.yaml`` (an empty file is valid)."""
    if data is None:
        return Settings()
    r = Reader(findings)
    top = r.mapping(data, [], optional=("title", "rubric", "order", "candidates", "team_quotes"),
                    what="a settings mapping")
    if top is None:
        return Settings()
    order = r.text_list(top, "order", [])
    seen: set[str] = set()
    for index, protocol_id in enumerate(order):
        if protocol_id in seen:
            r.add(["order", index], f"protocol {protocol_id!r} is listed twice")
        seen.add(protocol_id)
    rubric = r.text(top, "rubric", [])
    if rubric and not is_slug(rubric):
        r.add(["rubric"], f"rubric id {rubric!r} is not a safe id")
    return Settings(r.text(top, "title", []), rubric, order, flag(r, top, "candidates", [], default=True),
                    flag(r, top, "team_quotes", [], default=False))


def flag(r: Reader, item: Mapping[str, Any], key: str, path: KeyPath, *, default: bool) -> bool:
    """A true/false value (``default`` when the key is absent or empty)."""
    value = item.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        r.add([*path, key], f"expected true or false for {key!r}, found {describe(value)}")
        return default
    return value
