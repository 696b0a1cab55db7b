"""Write a brand-new YAML file quickly, byte for byte as the round-trip writer would.

A file that does not exist yet holds no comments or quoting to keep, so it does not need
ruamel's round-trip emitter (which took most of the time of an import that creates
thousands of reviewer files). :func:`fast_dump` writes the shapes protocoder builds for
new files (block mappings, flow lists, one-line text) itself, choosing each scalar's
style with ruamel's own analysis and resolver, so the result is the same text
``Document.dumps`` writes (``tests/test_storage.py`` checks that on arbitrary cells).
Anything else (multi-line or escaped text, very long lines, other types) returns None,
and the caller uses the round-trip writer.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.emitter import Emitter
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from .yamlio import _NEEDS_ESCAPES

_LONGEST = 1000
"""Longer text goes to the round-trip writer, which folds lines past its width."""

_STR_TAG = "tag:yaml.org,2002:str"


class _Fallback(Exception):
    """A value this writer does not handle."""


def _analyser() -> Any:
    emitter = Emitter(io.StringIO(), allow_unicode=True)
    emitter.use_version = None  # read through the emitter's `serializer` when there is no dumper
    return emitter


_EMITTER = _analyser()
_RESOLVER = VersionedResolver()


def _plain_resolves_to_text(value: str) -> bool:
    tag = _RESOLVER.resolve(ScalarNode, value, (True, False))
    return str(tag) == _STR_TAG


def _scalar(value: Any, *, flow: bool, key: bool = False) -> str:
    if type(value) is not str or not value or len(value) > _LONGEST or "\n" in value or _NEEDS_ESCAPES.search(value):
        raise _Fallback
    analysis = _EMITTER.analyze_scalar(value)
    if analysis.multiline:
        raise _Fallback
    if flow and ":" in value:
        # yamlio.flow_list quotes these (ruamel cannot read [Smith:2020] back).
        if "'" in value or not analysis.allow_single_quoted:
            raise _Fallback
        return f"'{value}'"
    if _plain_resolves_to_text(value) and (analysis.allow_flow_plain if flow else analysis.allow_block_plain):
        return value
    if key or "'" in value or not analysis.allow_single_quoted:
        raise _Fallback  # double quotes, or a quoted key: left to ruamel
    return f"'{value}'"


def fast_dump(data: Any, start_comment: str | None = None) -> str | None:
    """The YAML text of ``data`` as ``Document.dumps`` writes it for a new file, or None.

    ``data`` is a :class:`CommentedMap` without comments (``start_comment`` is written
    as the round-trip writer writes ``yaml_set_start_comment``), made of block mappings
    whose leaves are one-line text, flow lists of one-line text, or empty mappings.
    """
    lines: list[str] = []
    if start_comment:
        if "\n" in start_comment:
            return None
        lines.append(f"# {start_comment}")
    try:
        _mapping(data, 0, lines)
    except _Fallback:
        return None
    if any(len(line) > _LONGEST for line in lines):
        return None  # the round-trip writer may break a long flow list
    return "\n".join(lines) + "\n"


def _mapping(data: Any, indent: int, lines: list[str]) -> None:
    if type(data) is not CommentedMap or data.fa.flow_style() or data.ca.items or data.ca.comment:
        raise _Fallback
    pad = " " * indent
    for key, value in data.items():
        name = _scalar(key, flow=False, key=True)
        if type(value) is CommentedMap and not value.fa.flow_style():
            if not value:
                lines.append(f"{pad}{name}: {{}}")
            else:
                lines.append(f"{pad}{name}:")
                _mapping(value, indent + 2, lines)
        elif type(value) is CommentedSeq and value.fa.flow_style():
            if not value or value.ca.items:
                raise _Fallback
            lines.append(f"{pad}{name}: [{', '.join(_scalar(item, flow=True) for item in value)}]")
        else:
            lines.append(f"{pad}{name}: {_scalar(value, flow=False)}")
