"""The workspace bibliography (``references.bib``), parsed with bibtexparser.

Citation numbers follow the order of the whole bibliography sorted by first author's
surname (then given names, year and title), as numeric author-sorted styles do; so a
review that carries its paper's full reference list reproduces the paper's numbers.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, Problem
from .cache import read_cache, write_cache
from .files import read_text

if TYPE_CHECKING:
    from bibtexparser import model as bibmodel

# bibtexparser (~10 ms of import) is loaded by the functions that parse BibTeX or split names, not here:
# a command that loads the workspace but whose bibliography has no entry (or that never sorts it) skips it.

REQUIRED_FIELDS = {
    "article": ("author", "title", "journal", "year"),
    "inproceedings": ("author", "title", "booktitle", "year"),
    "book": ("title", "publisher", "year"),
    "misc": ("title", "year"),
}
DEFAULT_REQUIRED = ("title", "year")
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_:.+/-]+$")


@dataclass(frozen=True)
class BibEntry:
    """One bibliography entry, with the raw text it was parsed from."""

    key: str
    entry_type: str
    fields: Mapping[str, str]
    line: int
    raw: str = ""

    @cached_property  # sorting the entries and listing them both read it
    def authors(self) -> tuple[tuple[str, str], ...]:
        """(surname, given names) of each author, braces removed."""
        from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

        value = self.fields.get("author") or self.fields.get("editor") or ""
        people = []
        for name in split_multiple_persons_names(value) if value.strip() else []:
            if name.strip().startswith("{") and name.strip().endswith("}"):
                people.append((latex_text(name), ""))  # a corporate author
                continue
            parts = parse_single_name_into_parts(name, strict=False)
            surname = " ".join(parts.von + parts.last)
            people.append((latex_text(surname), latex_text(" ".join(parts.first))))
        return tuple(people)

    def text(self, name: str) -> str:
        """A field's value as text (empty when absent): LaTeX accents and commands decoded to
        Unicode (``Balunovi{\\'c}`` → ``Balunović``, ``--`` → an en dash); a URL or DOI only loses
        its braces and escapes (a ``%`` or ``~`` in it is no LaTeX)."""
        value = self.fields.get(name, "")
        return strip_braces(value) if name in _VERBATIM_FIELDS else latex_text(value)


@dataclass(frozen=True)
class Bibliography:
    """All entries of a workspace's ``references.bib``."""

    entries: Mapping[str, BibEntry] = field(default_factory=dict)

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def sorted_entries(self) -> list[BibEntry]:
        """Entries in citation-number order (first author's surname, given names, year, title)."""
        return sorted(self.entries.values(), key=_sort_key)

    def numbers(self) -> dict[str, int]:
        """Citation number of every key, 1-based."""
        return {entry.key: number for number, entry in enumerate(self.sorted_entries(), start=1)}


_TEX_ESCAPES = re.compile(r"\\([&%$#_{}])")
_VERBATIM_FIELDS = frozenset({"url", "doi", "eprint", "file", "urldate"})
"""Fields that are not LaTeX text: only their braces and escapes are removed."""
_MACRO = re.compile(r"\\([A-Za-z]+|[^A-Za-z\s])")


def latex_text(value: str) -> str:
    """A BibTeX value as Unicode text, decoded by pylatexenc (the decoder bibtexparser's own
    LaTeX middleware uses): accents (``{\\'c}``, ``\\"o``, ``{\\ss}``), dashes (``--``), escapes
    (``\\&``), font commands (``\\emph{x}`` → ``x``); grouping braces removed. Math stays as
    written; a command the decoder does not know is dropped (see :func:`undecoded`)."""
    if "\\" not in value and "--" not in value and "~" not in value and "$" not in value:
        return strip_braces(value)  # nothing to decode: the common case, without the parser
    try:
        text = _decoder().latex_to_text(value)
    except Exception:  # noqa: BLE001 - pylatexenc's errors have no common base; the value is shown as written
        return strip_braces(value)
    return " ".join(text.replace("\u00a0", " ").split())


@functools.cache
def _decoder() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


def decoding_warnings(entries: Iterable[BibEntry], display: str) -> list[Problem]:
    """A warning per field of ``entries`` holding a LaTeX command that prints as nothing."""
    problems = []
    for entry in entries:
        for name, value in entry.fields.items():
            if name in _VERBATIM_FIELDS:
                continue
            unknown = undecoded(value)
            if unknown:
                problems.append(Problem(
                    display, entry.line, 1, f"entry {entry.key!r}, field {name}: cannot decode {', '.join(unknown)} "
                    "(the reference lists print the field without it); write the character itself, or a LaTeX "
                    "accent such as {\\'c}", "warning"))
    return problems


def undecoded(value: str) -> list[str]:
    """The LaTeX commands of ``value`` that :func:`latex_text` cannot turn into text (``\\foo``)."""
    if "\\" not in value:
        return []
    from pylatexenc.latex2text import get_default_latex_context_db

    known = get_default_latex_context_db()
    unknown = []
    for match in _MACRO.finditer(value):
        name = match.group(1)
        if name.isalpha() and known.get_macro_spec(name) is None and f"\\{name}" not in unknown:
            unknown.append(f"\\{name}")
    return unknown


def strip_braces(value: str) -> str:
    """Plain text of a BibTeX value: grouping braces removed, simple escapes (``\\&``) undone."""
    value = _TEX_ESCAPES.sub(lambda m: "\x00" + m.group(1) + "\x00", value)
    parts = value.split("\x00")
    # Odd parts are escaped characters: keep them even when they are braces.
    text = "".join(part if i % 2 else part.replace("{", "").replace("}", "") for i, part in enumerate(parts))
    return " ".join(text.replace("--", "\u2013").split())


def _fold(value: str) -> str:
    if value.isascii():  # NFKD leaves ASCII as it is, and it has no combining marks
        return value.casefold()
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _sort_key(entry: BibEntry) -> tuple[str, str, str, str, str]:
    authors = entry.authors
    surname, given = authors[0] if authors else (entry.text("title"), "")
    return (_fold(surname), _fold(given), entry.text("year"), _fold(entry.text("title")), entry.key)


def parse_bibtex(text: str, display: str, *, first_line: int = 1) -> tuple[list[BibEntry], list[Problem]]:
    """Parse BibTeX text into entries, and problems naming the line of each bad block.

    ``first_line`` is the line number of the text's first line in its file, so that a
    pasted entry can be reported where it would land.
    """
    if "@" not in text:
        return [], []  # BibTeX blocks all start at an "@"; the rest is comment: nothing to parse, no parser loaded
    import bibtexparser
    from bibtexparser import model as bibmodel

    library = bibtexparser.parse_string(text)
    problems: list[Problem] = []
    for block in library.failed_blocks:
        line = first_line + (block.start_line or 0)
        if isinstance(block, bibmodel.DuplicateBlockKeyBlock):
            problems.append(Problem(display, line, 1, f"duplicate citation key {block.key!r}"))
        else:
            problems.append(Problem(display, line, 1, f"cannot parse BibTeX entry: {_first_line(block)}"))
    entries = []
    for entry in library.entries:
        line = first_line + entry.start_line
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        entries.append(BibEntry(entry.key, entry.entry_type.lower(), fields, line, entry.raw))
        if not KEY_PATTERN.match(entry.key):
            problems.append(Problem(display, line, 1,
                                    f"citation key {entry.key!r} has characters BibTeX keys cannot use"))
        required = REQUIRED_FIELDS.get(entry.entry_type.lower(), DEFAULT_REQUIRED)
        missing = [name for name in required if not fields.get(name, "").strip()]
        if missing:
            problems.append(Problem(display, line, 1,
                                    f"entry {entry.key!r} lacks required field(s): {', '.join(missing)}"))
    return entries, problems


def _first_line(block: bibmodel.Block) -> str:
    error = getattr(block, "error", None)
    message = str(error) if error else (block.raw or "").strip()
    return message.strip().splitlines()[0][:120] if message.strip() else "malformed block"


def load_bibliography(path: Path, display: str, *, state_dir: Path | None = None) -> tuple[Bibliography, list[Problem]]:
    """Load ``references.bib``; a missing file is an empty bibliography.

    With ``state_dir`` (the workspace's ``.protocoder/``), what the parse found is kept in
    ``.protocoder/cache/bibliography.json`` under a key of the file's SHA-256 and the parser's
    files, and read from there while neither changed: a command that loads a review but never
    prints a reference (``quote add``, ``cell set``) then does not load bibtexparser (about a
    tenth of such a process). Same entries, same problems, either way.
    """
    if not path.exists():
        return Bibliography({}), []
    try:
        text = read_text(path, display)
    except InvalidInput as exc:
        return Bibliography({}), list(exc.problems)
    key = _cache_key(text) if state_dir is not None and "@" in text else None
    kept = _cached(state_dir, key, display) if key is not None and state_dir is not None else None
    if kept is not None:
        entries, problems = kept
    else:
        entries, problems = parse_bibtex(text, display)
        if key is not None and state_dir is not None and all(p.path == display for p in problems):
            write_cache(state_dir, CACHE_FILE, {
                "format": CACHE_FORMAT, "key": key,
                # with each entry's authors, which sorting needs (render): split by bibtexparser, so
                # that a render whose bibliography is cached does not load it either
                "entries": [[e.key, e.entry_type, dict(e.fields), e.line, e.raw, [list(a) for a in e.authors]]
                            for e in entries],
                # every problem names ``display``, which is not kept: the file may be shown otherwise next time
                "problems": [[p.line, p.column, p.message, p.severity] for p in problems]})
    return Bibliography({entry.key: entry for entry in entries}), problems


CACHE_FILE = "bibliography.json"
"""The parsed bibliography's name in ``.protocoder/cache/`` (see :mod:`.cache`)."""

CACHE_FORMAT = 2
"""Bumped when what :func:`parse_bibtex` reports changes, so that an older parse is never reused."""


def _cache_key(text: str) -> str:
    """The file's SHA-256, with where bibtexparser and pylatexenc (which decodes the authors' names) are
    installed and when their files were written (an upgrade that parses differently changes them)."""
    import hashlib
    import importlib.util

    digest = hashlib.sha256(f"{CACHE_FORMAT}\0".encode())
    for package, names in (("bibtexparser", ("__init__.py", "splitter.py", "library.py", "model.py",
                                             "middlewares/names.py")),
                           ("pylatexenc", ("__init__.py", "version.py", "latex2text/__init__.py"))):
        try:
            spec = importlib.util.find_spec(package)
            origin = Path(spec.origin) if spec is not None and spec.origin else None
            if origin is not None:
                for name in names:
                    stat = (origin.parent / name).stat()
                    digest.update(f"{origin.parent / name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        except (OSError, ImportError, ValueError):
            digest.update(f"{package} not found\0".encode())
    digest.update(text.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _cached(state_dir: Path, key: str, display: str) -> tuple[list[BibEntry], list[Problem]] | None:
    """The entries and problems a parse of the text keyed ``key`` found, when the cache holds them."""
    data = read_cache(state_dir, CACHE_FILE, MAX_CACHE_BYTES)
    if data is None or data.get("format") != CACHE_FORMAT or data.get("key") != key:
        return None
    try:
        entries = []
        for entry_key, entry_type, fields, line, raw, authors in data["entries"]:
            if not (isinstance(entry_key, str) and isinstance(entry_type, str) and isinstance(raw, str)
                    and type(line) is int and isinstance(fields, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in fields.items())
                    and isinstance(authors, list) and all(isinstance(a, list) and len(a) == 2
                                                          and all(isinstance(n, str) for n in a) for a in authors)):
                return None
            entry = BibEntry(entry_key, entry_type, fields, line, raw)
            entry.__dict__["authors"] = tuple((surname, given) for surname, given in authors)  # the cached_property
            entries.append(entry)
        problems = []
        for line, column, message, severity in data["problems"]:
            if not (type(line) is int and type(column) is int and isinstance(message, str)
                    and severity in ("error", "warning")):
                return None
            problems.append(Problem(display, line, column, message, severity))
    except (ValueError, TypeError, KeyError):
        return None
    return entries, problems


MAX_CACHE_BYTES = 16 << 20
"""A larger cache is not ours (a bibliography of tens of thousands of entries stays well below)."""


def cite_numbers(keys: Iterable[str], numbers: Mapping[str, int]) -> list[int]:
    """Citation numbers for ``keys``, ascending, each once; unknown keys are skipped."""
    return sorted({numbers[key] for key in keys if key in numbers})
