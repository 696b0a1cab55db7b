"""The one place protocoder reads and writes YAML and writes files.

* Reading for analysis (validate, render, agree, export) uses ruamel's safe loader with
  the libyaml parser when it is installed: plain Python data, fast.
* Reading for editing uses ruamel's round-trip loader, so that a save keeps the user's
  comments, key order, quoting and indentation.
* Line numbers are only needed when something is wrong, so they are looked up lazily
  (:func:`locate`) with the round-trip loader instead of being carried on every value.
* Every write is atomic: a temporary file in the same folder, flushed and fsynced,
  then renamed over the target, then the folder is fsynced. A process killed at any
  moment leaves the old file or the new one, never a torn one.

Nothing outside this module imports ruamel.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.util import load_yaml_guess_indent

from ..errors import InvalidInput, LockedError, Problem

# protocoder reads YAML by the 1.2 rules, under which "1e3" is a float like any other: ruamel's
# 14-line warning about the 1.1 rules (with a site-packages path) is noise to a reviewer.
with contextlib.suppress(ImportError):
    import warnings

    from ruamel.yaml.error import MantissaNoDotYAML1_1Warning

    warnings.filterwarnings("ignore", category=MantissaNoDotYAML1_1Warning)

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are refused: no review file comes near it, and a huge file is
almost always a mistake (or an attack) that would otherwise stall every command."""

MAX_DEPTH = 32
"""Deepest nesting accepted. protocoder's own formats nest five levels at most."""

KeyPath = Sequence[str | int]

_UMASK = os.umask(0)
os.umask(_UMASK)


# --------------------------------------------------------------------------- reading


def read_text(path: Path, display: str) -> str:
    """Read a UTF-8 text file, refusing oversized files and bad bytes with a located problem.

    A UTF-8 byte-order mark is dropped and CRLF line ends are accepted, because editors on
    Windows write both and neither changes what the file says.
    """
    return decode_utf8(read_capped(path, display, MAX_FILE_BYTES), display)


def read_capped(path: Path, display: str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or :class:`InvalidInput`.

    Only regular files are read, and never more than ``limit + 1`` bytes: a file that is
    a link to ``/dev/zero``, a pipe or a device would otherwise stall the command forever.
    """
    try:
        # Non-blocking, so that opening a named pipe does not wait for a writer. Plain file
        # descriptor reads: a buffered file object costs more than reading a review file.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidInput([Problem(display, 0, 0, "not a regular file")])
            if info.st_size > limit:
                raise InvalidInput([Problem(display, 0, 0, f"file is {info.st_size:,} bytes; the limit is {limit:,}")])
            raw = _read_up_to(fd, info.st_size + 1)  # a size-sized buffer: the limit may be megabytes
            if len(raw) > info.st_size:  # it grew while we read
                raw += _read_up_to(fd, limit + 1 - len(raw))
        finally:
            os.close(fd)
    except OSError as exc:
        raise InvalidInput([Problem(display, 0, 0, f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > limit:  # it grew while we looked
        raise InvalidInput([Problem(display, 0, 0, f"file is over {limit:,} bytes; the limit is {limit:,}")])
    return raw


def _read_up_to(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, or fewer at the end of the file."""
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_utf8(raw: bytes, display: str) -> str:
    """Decode bytes as UTF-8 (dropping a BOM), naming the line of the first bad byte."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidInput(
            [Problem(display, line, column, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]
        ) from None
    return text.replace("\r\n", "\n")


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

    _IMPLICIT = _implicit_table()
    _IMPLICIT_TAGS = frozenset(id(tag) for rules in _IMPLICIT.values() for tag, _ in rules)
    _PLAIN_RESOLVER = not Resolver.yaml_path_resolvers and None not in _IMPLICIT

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
                    for tag, match in _IMPLICIT.get(value[:1], ()):
                        if match(value):
                            return tag
                return _STR
            return _SEQ if kind is SequenceNode else _MAP

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

        def dispose(self) -> None:
            # The loader refers to itself (as parser, composer, constructor and resolver): with
            # that cycle broken, each file's parser (libyaml's buffers, the nodes it built) is
            # freed at once, instead of piling up for the garbage collector to find.
            CParser.dispose(self)
            self.__dict__.clear()


class _Unusual(Exception):
    """A document :func:`_plain_data` leaves to ruamel's constructor (it is rare)."""


class _Located(Exception):
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
        raise _Located(message, node.start_mark) from None
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
    bad_values: list[_Located] = []  # all of them, so that the first in the file is reported

    def scalar(node: Any) -> Any:
        try:
            return _construct_scalar(loader, node)
        except _Located as exc:
            bad_values.append(exc)
            return None

    def value_of(node: Any, depth: int) -> Any:
        if id(node) in seen:
            # The composer hands out the anchored node again for each alias.
            raise _Located("YAML anchors and aliases (& and *) are not allowed (this value is anchored and "
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
            raise _Located(f"explicit YAML tag {_short_tag(node.ctag)} is not allowed: write a plain mapping "
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


def _safe_load(text: str) -> tuple[Any, bool]:
    """Plain data of a YAML text, and whether its shape is known to be fine already.

    The fast path (:func:`_plain_data`) has checked depth and repeated nodes on the way;
    documents it leaves to ruamel still need :func:`_check_shape`.
    """
    if _FastSafeLoader is None:  # pragma: no cover
        return _safe_yaml().load(text), False
    loader = _FastSafeLoader(text)
    try:
        root = loader.get_single_node()
        try:
            return _plain_data(loader, root, aliases="&" in text and _ANCHOR.search(text) is not None), True
        except _Located:
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


_NEEDS_ESCAPES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
"""Characters only a double-quoted scalar can carry through a save and a load unchanged.

Control characters (tab and newline aside), CR, DEL, C1 controls, U+2028/U+2029 (which
YAML reads as line breaks: NEL was written raw and read back as a space, or made the
file unreadable) and a BOM. Double quotes write them as escapes (``\\N``, ``\\r``, ...).
"""


class _Representer(RoundTripRepresenter):
    """Round-trip representer that double-quotes text the other styles would corrupt, and
    never writes anchors and aliases (which protocoder's readers refuse): a value held twice
    in the data is written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_str(self, data: Any) -> Any:
        if _NEEDS_ESCAPES.search(data):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)


_Representer.add_representer(str, _Representer.represent_str)


def _roundtrip_yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Representer = _Representer
    yaml.allow_duplicate_keys = False
    yaml.preserve_quotes = True
    # Never re-wrap long text: a one-word edit would otherwise rewrite a whole paragraph.
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _yaml_problem(exc: Exception, display: str, text: str) -> Problem:
    if isinstance(exc, MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        message = exc.problem or "malformed YAML"
        if exc.context:
            message = f"{message} ({exc.context})"
        return Problem(display, mark.line + 1, mark.column + 1, message)
    if isinstance(exc, ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        return Problem(display, line, column, f"character {exc.character!r} is not allowed in YAML")
    if isinstance(exc, RecursionError):
        return Problem(display, 0, 0, f"nesting deeper than {MAX_DEPTH} levels")
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return Problem(display, 0, 0, f"malformed YAML: {first_line}")


def parse_yaml(text: str, display: str) -> Any:
    """Parse YAML text to plain Python data with the fast safe loader.

    Raises :class:`InvalidInput` for malformed YAML, duplicate keys, aliases (YAML's
    anchors can build exponentially large documents, and no protocoder format needs them)
    and nesting deeper than :data:`MAX_DEPTH`.
    """
    try:
        data, shape_checked = _safe_load(text)
    except _Located as exc:
        raise InvalidInput([Problem(display, exc.line + 1, exc.column + 1, exc.message)]) from None
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise InvalidInput([_yaml_problem(exc, display, text)]) from None
    problem = None if shape_checked else _check_shape(data, display)
    if problem is not None:
        raise InvalidInput([problem])
    return data


def load_yaml(path: Path, display: str) -> Any:
    """Read and parse one YAML file for analysis (see :func:`parse_yaml`)."""
    return parse_yaml(read_text(path, display), display)


def _check_shape(data: Any, display: str) -> Problem | None:
    # Iterative, so that a pathological document cannot exhaust the Python stack.
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth >= MAX_DEPTH:
            return Problem(display, 0, 0, f"nesting deeper than {MAX_DEPTH} levels")
        if id(node) in seen:
            return Problem(display, 0, 0, "YAML anchors and aliases (& and *) are not allowed")
        seen.add(id(node))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)
    return None


class Document:
    """A YAML file loaded for editing: round-trip data plus how to write it back."""

    def __init__(self, path: Path, data: Any, indent: tuple[int, int, int] | None = None):
        self.path = path
        self.data = data
        self._indent = indent

    def dumps(self) -> str:
        """Serialise the document, keeping the file's own indentation style."""
        yaml = _roundtrip_yaml()
        if self._indent:
            mapping, sequence, offset = self._indent
            yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        buffer = io.StringIO()
        yaml.dump(self.data, buffer)
        return buffer.getvalue()

    def save(self, text: str | None = None) -> str:
        """Write the document atomically; return the fingerprint of what was written.

        ``text`` is the document's :meth:`dumps`, when the caller has it already. Documents
        are saved under the workspace lock (by the store, freeze and corrections), so
        temporaries of the same file that killed writers left are swept away.
        """
        payload = (self.dumps() if text is None else text).encode("utf-8")
        atomic_write_bytes(self.path, payload, sweep=True)
        return hashlib.sha256(payload).hexdigest()


def load_document(path: Path, display: str, *, default: Any = None, text: str | None = None) -> Document:
    """Load a file for editing with the round-trip loader.

    A missing file gives a document holding ``default`` (an empty mapping if None), so
    callers create and update files the same way. ``text`` is the file's text when the
    caller has read it, and passed it through :func:`parse_yaml`, already (under the lock).
    """
    if text is None:
        if not path.exists():
            data = CommentedMap() if default is None else default
            return Document(path, data)
        text = read_text(path, display)
        # The fast checks first: they refuse aliases and deep nesting before the round-trip
        # loader (which recurses in Python) ever sees them.
        parse_yaml(text, display)
    try:
        data, seq_indent, offset = load_yaml_guess_indent(text, yaml=_roundtrip_yaml())
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise InvalidInput([_yaml_problem(exc, display, text)]) from None
    if data is None:
        data = CommentedMap() if default is None else default
    mapping = _guess_mapping_indent(text)
    if seq_indent is None or offset is None:
        seq_indent, offset = mapping + 2, mapping
    return Document(path, data, (mapping, max(seq_indent, offset + 2), offset))


def _guess_mapping_indent(text: str) -> int:
    # ruamel guesses one indent for mappings and sequences; files written as
    # "key:\n  sub: 1" with "  - item" lists need the two told apart.
    previous: tuple[int, bool] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if previous is not None and previous[1] and indent > previous[0] and not stripped.startswith("- "):
            return indent - previous[0]
        previous = (indent, stripped.endswith(":") and not stripped.startswith("- "))
    return 2


class Locator:
    """Finds the line and column of a key path in one YAML text.

    The round-trip parse that carries positions is done once, on first use: files
    without problems never pay for it.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._data: Any = None
        self._parsed = False

    def position(self, keypath: KeyPath, *, at: str = "value") -> tuple[int, int]:
        """Return the 1-based (line, column) of ``keypath``.

        ``at="key"`` points at a mapping key instead of its value. When the path is
        missing (say, a required key), the deepest container that exists is returned.
        """
        if not self._parsed:
            self._parsed = True
            try:
                self._data = _roundtrip_yaml().load(self._text)
            except (YAMLError, RecursionError, ValueError, TypeError):
                self._data = None
        node = self._data
        if not hasattr(node, "lc"):
            return (1, 1)
        line, column = node.lc.line, node.lc.col
        for index, step in enumerate(keypath):
            last = index == len(keypath) - 1
            if isinstance(node, CommentedMap) and step in node:
                key_pos = node.lc.key(step)
                child = node[step]
                if last:
                    line, column = key_pos if at == "key" else node.lc.value(step)
                elif isinstance(child, CommentedMap | CommentedSeq):
                    line, column = key_pos
                node = child
            elif isinstance(node, CommentedSeq) and isinstance(step, int) and 0 <= step < len(node):
                line, column = node.lc.item(step)
                node = node[step]
            else:
                break
        return (line + 1, column + 1)


# --------------------------------------------------------------------------- building


def text_scalar(value: str, like: Any = None) -> Any:
    """Wrap text for the round-trip dumper so that it reads back exactly as given.

    Multi-line text becomes a literal block (``|``) so it stays readable in the file; a
    replaced value keeps the style of the one it replaces (``>-`` stays folded) when that
    style can carry the new text. Text that only escapes can carry is double-quoted.
    The returned type is explicit whenever it matters: ruamel gives a plain string that
    replaces a styled one the old style, which cannot carry every text.
    """
    if _NEEDS_ESCAPES.search(value):
        return DoubleQuotedScalarString(value)
    if "\n" in value.rstrip("\n"):
        # A block scalar takes its indentation from its first non-empty line: a tab there
        # is a syntax error on reading.
        return DoubleQuotedScalarString(value) if value.lstrip("\n").startswith("\t") else LiteralScalarString(value)
    if isinstance(like, FoldedScalarString | LiteralScalarString):
        if not _foldable(value):
            return DoubleQuotedScalarString(value)
        return FoldedScalarString(value) if isinstance(like, FoldedScalarString) else LiteralScalarString(value)
    return value


def _foldable(value: str) -> bool:
    # One line of words: as a block scalar it reads back the same (folding only at spaces).
    return bool(value) and value == value.strip() and "\n" not in value and "\t" not in value


def flow_list(items: Sequence[Any]) -> CommentedSeq:
    """A list written inline (``[a, b]``), as citation keys are.

    Items holding a colon are quoted: ruamel writes ``[Smith:2020]`` plain, and then
    cannot read the file back ("found unexpected ':'").
    """
    seq = CommentedSeq(SingleQuotedScalarString(item) if isinstance(item, str) and ":" in item
                       and type(item) is str else item for item in items)
    seq.fa.set_flow_style()
    return seq


def flow_mapping(items: Mapping[str, Any]) -> CommentedMap:
    """A mapping written inline (``{alice: E, bob: P}``)."""
    mapping = CommentedMap(items)
    mapping.fa.set_flow_style()
    return mapping


def new_mapping(items: Sequence[tuple[str, Any]] = ()) -> CommentedMap:
    """An ordered mapping the round-trip dumper writes in block style."""
    return CommentedMap(items)


def plain(data: Any) -> Any:
    """Convert round-trip containers and scalars to plain dicts, lists and strs."""
    if isinstance(data, dict):
        return {str(k): plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [plain(v) for v in data]
    if isinstance(data, str):
        return str(data)
    return data


# --------------------------------------------------------------------------- writing


def atomic_write_bytes(path: Path, payload: bytes, *, sweep: bool = False) -> None:
    """Replace ``path`` with ``payload`` so that readers see the old or the new file only.

    A writer killed at the wrong moment leaves its temporary file (``.NAME.*.tmp``)
    behind; it never replaces the target, and loaders skip dot files. With ``sweep``
    (for callers that hold the workspace lock, so that no other writer of ``path`` can be
    running) such leftovers of the same target are removed first, so they cannot pile up.
    """
    try:
        kind = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        pass
    else:
        if not stat.S_ISREG(kind):
            # Renaming over a device or a pipe would replace it (as root: /dev/null itself).
            raise InvalidInput([Problem(str(path), 0, 0, "not a regular file; protocoder only writes regular files")])
    path.parent.mkdir(parents=True, exist_ok=True)
    if sweep:
        remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, sweep: bool = False) -> None:
    """UTF-8 variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), sweep=sweep)


def remove_stale_temporaries(path: Path) -> None:
    """Delete temporary files that killed writers of ``path`` left (call under the lock)."""
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; not possible (nor needed) on every platform.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fingerprint(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist."""
    if not os.path.lexists(path):
        return None
    try:
        return hashlib.sha256(read_capped(path, str(path), 2 * MAX_FILE_BYTES)).hexdigest()
    except InvalidInput:
        return "unreadable"  # never anyone's expected fingerprint: a save reports a conflict


# --------------------------------------------------------------------------- locking


@contextlib.contextmanager
def exclusive_lock(lock_path: Path, *, timeout: float = 10.0, what: str = "the workspace") -> Iterator[None]:
    """Hold an advisory exclusive lock on ``lock_path`` for the duration of the block.

    Waits up to ``timeout`` seconds, then raises :class:`LockedError`. The lock dies with
    its process, so a killed writer never leaves a stale lock behind.
    """
    handle = _open_lock(lock_path)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(handle):
            if time.monotonic() >= deadline:
                raise LockedError(
                    f"another protocoder process is writing to {what} "
                    f"(waited {timeout:g} s for {lock_path}); try again when it has finished"
                )
            time.sleep(0.05)
        yield
    finally:
        handle.close()


def try_hold_lock(lock_path: Path) -> Any | None:
    """Take a lock without waiting; return a handle to keep it, or None if it is held (or
    cannot be taken inside the workspace: the caller then works read-only)."""
    if _lock_folder_leaves(lock_path):
        return None
    handle = _open_lock(lock_path)
    if _try_lock(handle):
        return handle
    handle.close()
    return None


def _lock_folder_leaves(lock_path: Path) -> bool:
    # Locks live in the workspace's .protocoder/; one that is a link out of the workspace
    # must not make protocoder create files there.
    folder = lock_path.parent
    try:
        return folder.is_symlink() and not folder.resolve().is_relative_to(folder.parent.resolve())
    except (OSError, RuntimeError):
        return True


def _open_lock(lock_path: Path) -> Any:
    if _lock_folder_leaves(lock_path):
        raise LockedError(f"{lock_path.parent} is a symbolic link that leads outside the workspace; protocoder "
                          "keeps its locks only inside it (remove the link)")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    return open(lock_path, "a+b")  # noqa: SIM115 - the caller owns the handle


def _try_lock(handle: Any) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True
