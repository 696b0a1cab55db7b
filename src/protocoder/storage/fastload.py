"""The fast safe loader behind :func:`protocoder.storage.yamlio.parse_yaml`.

ruamel's own safe loader spends most of its time outside the parser: it builds a new
``YAML`` object, loader class and version-switching resolver for every file, and runs
its constructor over every node. Here libyaml's parser (ruamel's ``CParser``) composes
the nodes, and a small iterative builder (:func:`_plain_data`) turns what review files
are made of (mappings, lists, scalars) into plain data, refusing on the way, at their
line, what protocoder never accepts (anchors and aliases, explicit tags on containers,
values that cannot be built). Anything else unusual goes to ruamel's constructor, so the
data is always what ruamel's safe loader gives (``tests/test_properties.py`` checks it).
"""

from __future__ import annotations

import operator
import re
from datetime import date, datetime
from typing import Any

from ruamel.yaml import YAML

MAX_DEPTH = 32
"""Deepest nesting accepted. protocoder's own formats nest five levels at most."""


def _safe_yaml() -> YAML:
    yaml = YAML(typ="safe")
    yaml.allow_duplicate_keys = False
    return yaml


try:
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
    from ruamel.yaml.resolver import Resolver
    from ruamel.yaml.tag import Tag
except ImportError:  # pragma: no cover - no libyaml bindings (PyPy): the pure-Python loader
    _FastSafeLoader: Any = None
    _IMPLICIT_TAGS: frozenset[int] = frozenset()
else:
    _STR, _SEQ, _MAP = Resolver.DEFAULT_SCALAR_TAG, Resolver.DEFAULT_SEQUENCE_TAG, Resolver.DEFAULT_MAPPING_TAG

    def _implicit_table() -> dict[str, tuple[tuple[Tag, Any], ...]]:
        # The YAML 1.2 rules of Resolver, as (shared tag, compiled match) per first character.
        tags: dict[str, Tag] = {}
        return {first: tuple((tags.setdefault(name, Tag(suffix=name)), regexp.match) for name, regexp in rules)
                for first, rules in Resolver.yaml_implicit_resolvers.items()}

    IMPLICIT = _implicit_table()
    _IMPLICIT_TAGS = frozenset(id(tag) for rules in IMPLICIT.values() for tag, _ in rules)
    _PLAIN_RESOLVER = not Resolver.yaml_path_resolvers and None not in IMPLICIT

    class _FastResolver(Resolver):
        """The YAML 1.2 resolver, returning one shared :class:`Tag` per tag name.

        Shared tags let :func:`_plain_data` recognise plain text by identity instead of
        formatting a tag string for every node.
        """

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if not _PLAIN_RESOLVER:  # pragma: no cover - someone registered path resolvers
                return super().resolve(kind, value, implicit)
            if kind is ScalarNode:
                if implicit[0]:
                    tag = _RESOLVED.get(value)
                    if tag is None:
                        tag = _STR
                        for rule_tag, match in IMPLICIT.get(value[:1], ()):
                            if match(value):
                                tag = rule_tag
                                break
                        if len(value) <= 64 and len(_RESOLVED) < 4096:
                            _RESOLVED[value] = tag
                    return tag
                return _STR
            return _SEQ if kind is SequenceNode else _MAP

    _RESOLVED: dict[str, Any] = {}
    """The tag of each short plain scalar met (every key, code and date, again in every file):
    the rules depend on the text alone, so each distinct text is matched against them once."""

    class _FastSafeLoader(CParser, SafeConstructor, _FastResolver):  # type: ignore[misc]
        """ruamel's ``CSafeLoader`` with duplicate keys refused.

        ``YAML(typ="safe").load`` builds a new ``YAML`` object (which globs for plug-ins),
        a new loader class, and a version-switching resolver that looks the YAML version
        up, through exceptions, for every scalar. The C parser never reports a ``%YAML``
        directive to that resolver, so it always applies the YAML 1.2 rules: exactly
        :class:`Resolver`'s.
        """

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            self._parser = self._composer = self
            SafeConstructor.__init__(self, loader=self)
            self.allow_duplicate_keys = False
            _FastResolver.__init__(self, loadumper=self)

        if _PLAIN_RESOLVER:
            # libyaml's composer calls these two around every node (350,000 calls for a 1,000-protocol
            # review); without path resolvers they do nothing, and their results are not used, so
            # built-ins taking the same arguments stand in (no Python frame each: 8% of the parse).
            descend_resolver = staticmethod(operator.is_)
            ascend_resolver = staticmethod(tuple)

        def dispose(self) -> None:
            # The loader refers to itself (as parser, composer, constructor and resolver): with
            # that cycle broken, each file's parser (libyaml's buffers, the nodes it built) is
            # freed at once, instead of piling up for the garbage collector to find.
            CParser.dispose(self)
            self.__dict__.clear()


class _Unusual(Exception):
    """A document :func:`_plain_data` leaves to ruamel's constructor (it is rare)."""


class Refused(Exception):
    """Something in a document protocoder refuses, at a known line and column (0-based)."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.line = getattr(mark, "line", -1)
        self.column = getattr(mark, "column", -1)


def _short_tag(tag: Any) -> str:
    text = str(getattr(tag, "suffix", None) or tag)
    return "!!" + text[len("tag:yaml.org,2002:"):] if text.startswith("tag:yaml.org,2002:") else text


_BUILT: dict[tuple[int, str], Any] = {}
"""Scalars already built, by implicit tag and text: every cell's ``coded_at`` is one of a few
dates, each built once (only values that cannot change are kept)."""
_UNCHANGEABLE = (bool, int, float, type(None), date, datetime)


def _construct_scalar(loader: Any, node: Any) -> Any:
    """A scalar other than plain text, built by ruamel; a value it cannot build (a date that
    does not exist, a number too long to convert) is refused at its line."""
    key = (id(node.ctag), node.value) if id(node.ctag) in _IMPLICIT_TAGS else None
    if key is not None and key in _BUILT:
        return _BUILT[key]
    try:
        value = loader.construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:
        tag = _short_tag(node.ctag)
        value = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        if tag == "!!int" and "digits" in str(exc):
            digits = sum(ch.isdigit() for ch in node.value)
            message = f"a number of {digits:,} digits is too long; put it in quotes if it is text"
        elif tag == "!!timestamp":
            message = f"{value!r} is not a valid date or time ({exc}); put it in quotes if it is text"
        else:
            message = f"{value!r} cannot be read as {tag} ({exc}); put it in quotes if it is text"
        raise Refused(message, node.start_mark) from None
    if key is not None and type(value) in _UNCHANGEABLE and len(_BUILT) < 4096:
        _BUILT[key] = value
    return value


def _plain_data(loader: Any, root: Any, aliases: bool = True) -> Any:
    """Build plain data from composed nodes, iteratively.

    Handles what review files are made of (mappings with unique scalar keys, lists, and
    scalars; scalars other than plain text go through ruamel's own constructors).
    Anything else (explicit tags on containers, merge keys, repeated nodes, duplicate
    keys, very deep nesting, a constructor error) raises :class:`_Unusual`, and the
    caller lets ruamel's constructor build the document, or report its error, exactly
    as before. Without ``aliases`` (the text has no anchor, so no node can repeat), plain
    text is taken straight from its node.
    """
    if root is None:
        return None
    seen: set[int] = set()
    stack: list[tuple[Any, Any, int]] = []
    bad_values: list[Refused] = []  # all of them, so that the first in the file is reported

    def scalar(node: Any) -> Any:
        try:
            return _construct_scalar(loader, node)
        except Refused as exc:
            bad_values.append(exc)
            return None

    def value_of(node: Any, depth: int) -> Any:
        if id(node) in seen:
            # The composer hands out the anchored node again for each alias.
            raise Refused("YAML anchors and aliases (& and *) are not allowed (this value is anchored and "
                           "repeated by an alias): write the value out", node.start_mark)
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            return node.value if node.ctag is _STR else scalar(node)
        if depth >= MAX_DEPTH:
            raise _Unusual
        if isinstance(node, MappingNode) and node.ctag is _MAP:
            mapping: dict[Any, Any] = {}
            stack.append((node, mapping, depth))
            return mapping
        if isinstance(node, SequenceNode) and node.ctag is _SEQ:
            sequence: list[Any] = []
            stack.append((node, sequence, depth))
            return sequence
        if isinstance(node, MappingNode | SequenceNode):
            # !!omap, !!set, !!pairs, !custom: protocoder's files are plain mappings and lists, and
            # the round-trip writer would keep the tag where the readers do not expect it.
            raise Refused(f"explicit YAML tag {_short_tag(node.ctag)} is not allowed: write a plain mapping "
                           "or list", node.start_mark)
        raise _Unusual

    result = value_of(root, 0)
    while stack:
        node, container, depth = stack.pop()
        if isinstance(container, dict):
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise _Unusual
                if key_node.ctag is _STR:
                    key = key_node.value
                elif key_node.ctag.suffix in ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"):
                    raise _Unusual
                else:
                    key = scalar(key_node)
                if key in container:
                    raise _Unusual
                if not aliases and value_node.__class__ is ScalarNode and value_node.ctag is _STR:
                    container[key] = value_node.value
                else:
                    container[key] = value_of(value_node, depth + 1)
        elif not aliases:
            container.extend(child.value if child.__class__ is ScalarNode and child.ctag is _STR
                             else value_of(child, depth + 1) for child in node.value)
        else:
            container.extend(value_of(child, depth + 1) for child in node.value)
    if bad_values:
        raise min(bad_values, key=lambda exc: (exc.line, exc.column))
    return result


_ANCHOR = re.compile(r"&[^\s,\[\]{}]")
"""Where an anchor (``&name``) could start: a text without one has no anchor, so no alias."""


def safe_load(text: str) -> tuple[Any, bool]:
    """Plain data of a YAML text, and whether its shape is known to be fine already.

    The fast path (:func:`_plain_data`) has checked depth and repeated nodes on the way;
    documents it leaves to ruamel still need the caller's shape check (depth, aliases).
    Raises :class:`Refused` for what protocoder refuses at a known place, and ruamel's
    own errors for malformed YAML.
    """
    if _FastSafeLoader is None:  # pragma: no cover
        return _safe_yaml().load(text), False
    loader = _FastSafeLoader(text)
    try:
        root = loader.get_single_node()
        try:
            return _plain_data(loader, root, aliases="&" in text and _ANCHOR.search(text) is not None), True
        except Refused:
            raise
        except Exception:  # noqa: BLE001 - _Unusual, or an error ruamel's constructor reports itself
            pass
    finally:
        loader.dispose()
    loader = _FastSafeLoader(text)
    try:
        return loader.get_single_data(), False
    finally:
        loader.dispose()
