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
import re
from functools import lru_cache
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.emitter import Emitter
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from .yamlio import NEEDS_ESCAPES

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

# ruamel's Emitter.analyze_scalar walks each text character by character in Python (most
# of an import's time); for one-line text without special characters its verdict reduces
# to these searches (tests/test_properties.py checks them against it on arbitrary text).
_SPECIAL = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_BLOCK_INDICATOR = re.compile(r"^(?:---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|[?:\-](?: |$))|(?<=.):(?: |$)| #")
_FLOW_INDICATOR = re.compile(r"^(?:---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|-(?: |$)|[?:]$)|[,\[\]{}]|(?<=.):(?: |$)| #")


def plain_styles(value: str) -> tuple[bool, bool] | None:
    """(plain allowed in block context, plain allowed in flow context) for one line of
    ordinary text, as ruamel's emitter decides; None for text it does not cover (empty,
    line breaks, characters only double quotes carry)."""
    if not value or "\n" in value or _SPECIAL.search(value):
        return None
    if value[0] == " " or value[-1] == " ":
        return False, False
    return _BLOCK_INDICATOR.search(value) is None, _FLOW_INDICATOR.search(value) is None


try:
    from .fastload import IMPLICIT

    def _plain_resolves_to_text(value: str) -> bool:
        return not any(match(value) for _, match in IMPLICIT.get(value[:1], ()))
except ImportError:  # pragma: no cover - no libyaml bindings: the resolver itself
    def _plain_resolves_to_text(value: str) -> bool:
        return str(_RESOLVER.resolve(ScalarNode, value, (True, False))) == _STR_TAG


def _scalar(value: Any, *, flow: bool, key: bool = False) -> str:
    if type(value) is not str:  # a list or mapping in a leaf (a quote's lines): left to ruamel
        raise _Fallback
    return _text_scalar(value, flow=flow, key=key)


@lru_cache(maxsize=4096)  # a file repeats its keys, codes and sources cell after cell (pure: no state)
def _text_scalar(value: str, *, flow: bool, key: bool = False) -> str:
    if len(value) > _LONGEST or NEEDS_ESCAPES.search(value):
        raise _Fallback
    styles = plain_styles(value)
    if styles is None:
        raise _Fallback
    if flow and ":" in value:
        # yamlio.flow_list quotes these (ruamel cannot read [Smith:2020] back).
        if "'" in value:
            raise _Fallback
        return f"'{value}'"
    if _plain_resolves_to_text(value) and styles[1 if flow else 0]:
        return value
    if key or "'" in value:
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
