"""YAML text ⇄ Python data, by protocoder's rules (files themselves: :mod:`.files`).

* Reading for analysis (validate, render, agree, export) gives plain Python data, fast
  (:mod:`.fastload`: ruamel's safe loading with the libyaml parser). Duplicate keys,
  anchors and aliases, explicit tags and deep nesting are refused at their line.
* Reading for editing uses ruamel's round-trip loader (:class:`Document`), so that a save
  keeps the user's comments, key order, quoting and indentation.
* Line numbers are only needed when something is wrong, so they are looked up lazily
  (:class:`Locator`) with the round-trip loader instead of being carried on every value.
* Values for the round-trip writer (:func:`text_scalar`, :func:`flow_list`, ...) are
  built so that they read back exactly as given.

Only this module, :mod:`.fastload` and :mod:`.emit` import ruamel.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import Reader, ReaderError
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.util import load_yaml_guess_indent

from ..errors import InvalidInput, Problem
from .fastload import MAX_DEPTH, Refused, safe_load
from .files import atomic_write_bytes, read_text

# protocoder reads YAML by the 1.2 rules, under which "1e3" is a float like any other: ruamel's
# 14-line warning about the 1.1 rules (with a site-packages path) is noise to a reviewer.
with contextlib.suppress(ImportError):
    import warnings

    from ruamel.yaml.error import MantissaNoDotYAML1_1Warning

    warnings.filterwarnings("ignore", category=MantissaNoDotYAML1_1Warning)

# ruamel's round-trip reader looks for characters YAML does not allow with a class negated over all of
# Unicode, which Python compiles in about 4 ms on first use (a tenth of a one-cell save such as quote
# add); the same characters, listed (the class's complement up to U+10FFFF), compile at once.
# tests/test_storage.py checks that both match the same code points.
RUAMEL_NON_PRINTABLE = Reader.NON_PRINTABLE
Reader.NON_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")

KeyPath = Sequence[str | int]


NEEDS_ESCAPES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
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
        if NEEDS_ESCAPES.search(data):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)


_Representer.add_representer(str, _Representer.represent_str)


def roundtrip_yaml() -> YAML:
    """A round-trip YAML object that keeps comments, quotes and layout, and never re-wraps text."""
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
        data, shape_checked = safe_load(text)
    except Refused as exc:
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
        yaml = roundtrip_yaml()
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
        data, seq_indent, offset = load_yaml_guess_indent(text, yaml=roundtrip_yaml())
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
                self._data = roundtrip_yaml().load(self._text)
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
    if NEEDS_ESCAPES.search(value):
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
