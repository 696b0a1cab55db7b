"""The discussion of cells: ``protocols/<id>/comments/<person>.yaml``, one file per person (so that two
people commenting at once never touch the same file), each a list of ``{field, at, text}``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from ...model import Comment, is_slug
from ..files import read_text
from ..findings import Findings, Reader, describe
from ..paths import Paths
from ..yamlio import parse_yaml

COMMENTS_DIR = "comments"


def comments_file(paths: Paths, protocol_id: str, person: str) -> Path:
    """Where ``person``'s comments on the cells of ``protocol_id`` are kept."""
    return paths.protocol_dir(protocol_id) / COMMENTS_DIR / f"{person}.yaml"


def parse_comments(data: Any, findings: Findings, protocol_id: str, person: str) -> list[Comment]:
    """Parse one person's comments file (oldest first)."""
    r = Reader(findings)
    if data is None:
        return []
    top = r.mapping(data, [], optional=("comments",), what="a mapping with 'comments'")
    if top is None:
        return []
    raw = top.get("comments") or []
    if not isinstance(raw, list):
        r.add(["comments"], f"expected a list of comments, found {describe(raw)}")
        return []
    result = []
    for index, item in enumerate(raw):
        path = ["comments", index]
        entry = r.mapping(item, path, required=("field", "at", "text"), what="a comment mapping")
        if entry is None:
            continue
        result.append(Comment(protocol_id, r.text(entry, "field", path, required=True), person,
                              r.moment(entry, "at", path), r.text(entry, "text", path, required=True)))
    return result


def read_comments(paths: Paths, protocol_id: str) -> list[Comment]:
    """Every comment on the cells of ``protocol_id``, in time order; :class:`InvalidInput` names a bad file."""
    folder = paths.protocol_dir(protocol_id) / COMMENTS_DIR
    comments: list[Comment] = []
    problems = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if not is_slug(path.stem) or path.is_symlink():
            continue  # not a file protocoder writes
        shown = paths.show(path)
        text = read_text(path, shown)
        findings = Findings(shown, text)
        comments += parse_comments(parse_yaml(text, shown), findings, protocol_id, path.stem)
        problems += findings.problems()
    if problems:
        raise InvalidInput(problems)
    return sorted(comments, key=lambda c: (c.at, c.by))
