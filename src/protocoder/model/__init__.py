"""The review's data model: plain frozen dataclasses, no I/O.

A *rubric* declares fields and codes; a *protocol* is one benchmark under review; a
*cell* is one reviewer's code for one (protocol, field), with its evidence; a *sheet* is
the file holding one reviewer's cells (and descriptive notes) for one protocol; an
*adjudication* is the recorded decision on one disagreeing cell. The records are here,
below the storage layer that reads and writes them; what they mean for the tables (the
consensus rule) is in :mod:`protocoder.lifecycle`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from .reading import (  # noqa: F401 - part of the model's names
    SourceReading,
    merge_ranges,
    parse_ranges,
    ranges_text,
)

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
"""Protocol, reviewer, field and rubric ids: lowercase letters and digits, joined by
single ``.``, ``_`` or ``-``. Such ids are safe as file and folder names and in LaTeX
labels; ``../x`` or ``a/b`` can never be one."""

CODE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]{0,15}$")
"""Code ids (``E``, ``NR``, ``NA``): short, no spaces, safe in CSV and file names."""

MAX_ID_LENGTH = 64

REQUIREMENT_NAMES = ("source", "basis", "cites")
"""What a rubric code may require a cell to carry besides the code itself."""

NOT_APPLICABLE = "not-applicable"
"""The role of a code that says the field does not apply to a protocol. Agreement's
``--na exclude`` drops these codes, an ordinal ``order`` leaves them out, and tables colour
them neutral: what a code means is declared, never guessed from its id."""

CODE_ROLES = (NOT_APPLICABLE,)
"""Roles a rubric code may declare."""

COLOR_PATTERN = re.compile(r"^#[0-9A-Fa-f]{6}$")
"""A code's colour in tables: ``#RRGGBB``."""

MAX_SHORT_LABEL = 24
"""Short labels head matrix columns, so they must stay short."""


def is_slug(value: str) -> bool:
    """True when ``value`` can be used as a protocol, reviewer, field or rubric id."""
    return len(value) <= MAX_ID_LENGTH and SLUG_PATTERN.match(value) is not None


def slugify(text: str) -> str:
    """Propose an id from a display name: ``τ-bench`` → ``tau-bench``, ``RE-Bench`` → ``re-bench``."""
    import unicodedata

    greek = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "λ": "lambda",
             "μ": "mu", "π": "pi", "σ": "sigma", "τ": "tau", "φ": "phi", "ω": "omega"}
    text = "".join(greek.get(ch, ch) for ch in text.lower())
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-")
    return slug[:MAX_ID_LENGTH].strip("-")


@lru_cache(maxsize=256)  # every cell's rubric_version is compared with its field's: a handful of values
def version_key(version: str) -> tuple[int, ...]:
    """Order rubric versions such as ``1``, ``1.0`` and ``1.10`` numerically."""
    return tuple(int(part) for part in version.split("."))


# --------------------------------------------------------------------------- rubric


@dataclass(frozen=True)
class Code:
    """One code of a rubric (``E`` = explicit, ...)."""

    id: str
    label: str
    definition: str
    guidance: str = ""
    requires: tuple[str, ...] = ("source", "basis")
    role: str = ""
    """``not-applicable`` (see :data:`NOT_APPLICABLE`), or empty for an ordinary code."""
    short: str = ""
    """A short label for table headers and legends (the label when empty)."""
    color: str = ""
    """``#RRGGBB`` for coloured tables (a palette colour when empty)."""
    search_terms: tuple[str, ...] = ()
    """Extra words ``protocoder find`` adds to the query of every field that allows this code."""

    @property
    def short_label(self) -> str:
        """The label tables use where space is tight."""
        return self.short or self.label


@dataclass(frozen=True)
class Answer:
    """One answer to a decision question: it proposes a code or leads to another question."""

    label: str
    code: str | None = None
    next: str | None = None


@dataclass(frozen=True)
class Question:
    """One step of a field's decision procedure (guided coding)."""

    id: str
    ask: str
    answers: tuple[Answer, ...]
    help: str = ""


@dataclass(frozen=True)
class Field:
    """One coded field of a rubric (a column of the matrix)."""

    id: str
    label: str
    codes: tuple[str, ...]
    revised: str
    question: str = ""
    definition: str = ""
    guidance: str = ""
    decision: tuple[Question, ...] = ()
    short: str = ""
    """A short label for column headers (the label when empty)."""
    search_terms: tuple[str, ...] = ()
    """Extra words ``protocoder find`` adds to this field's query (the wording sources use)."""

    @property
    def short_label(self) -> str:
        """The label tables use where space is tight."""
        return self.short or self.label


@dataclass(frozen=True)
class Prompt:
    """A descriptive free-text question answered once per protocol."""

    id: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class Rubric:
    """Fields, codes and their guidance: the coding scheme, as data."""

    id: str
    title: str
    version: str
    codes: tuple[Code, ...]
    fields: tuple[Field, ...]
    order: tuple[str, ...] | None = None
    prompts: tuple[Prompt, ...] = ()
    description: str = ""

    def code(self, code_id: str) -> Code:
        """The code with this id (KeyError if the rubric has none)."""
        for code in self.codes:
            if code.id == code_id:
                return code
        raise KeyError(code_id)

    def field(self, field_id: str) -> Field:
        """The field with this id (KeyError if the rubric has none)."""
        for fld in self.fields:
            if fld.id == field_id:
                return fld
        raise KeyError(field_id)

    @cached_property
    def requirements(self) -> dict[str, tuple[str, ...]]:
        """What each code requires a cell to carry (``Code.requires``), by code id."""
        found: dict[str, tuple[str, ...]] = {}
        for code in self.codes:
            found.setdefault(code.id, code.requires)
        return found

    @cached_property  # asked for every cell a sheet holds
    def code_ids(self) -> tuple[str, ...]:
        """Code ids in declaration order."""
        return tuple(code.id for code in self.codes)

    @property
    def na_codes(self) -> tuple[str, ...]:
        """Ids of the codes whose role is not applicable."""
        return tuple(code.id for code in self.codes if code.role == NOT_APPLICABLE)

    @property
    def field_ids(self) -> tuple[str, ...]:
        """Field ids in declaration order."""
        return tuple(fld.id for fld in self.fields)


# --------------------------------------------------------------------------- protocols


SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")
"""A snapshot's content address: the SHA-256 of its bytes, 64 lowercase hex digits."""

MEDIA_TYPES = {"application/pdf": "pdf", "text/html": "html", "text/markdown": "md", "text/plain": "txt"}
"""Media types a snapshot may have, with the file extension it is stored under."""

SNAPSHOT_REF_PATTERN = re.compile(r"^[0-9a-f]{12,64}$")
"""How a quote names the snapshot it was taken from: the start of its SHA-256 (12 digits
suffice within a workspace and keep the YAML readable)."""


@dataclass(frozen=True)
class SourceVersion:
    """An earlier pinned version of a source, kept when ``source update`` pins a new one."""

    version: str
    accessed: date
    sha256: str
    media_type: str


@dataclass(frozen=True)
class Source:
    """A public source reviewed for a protocol, pinned to the version read.

    A source with a snapshot has an ``id`` (quotes name it), the SHA-256 of the copy
    stored under ``sources/`` and its media type; ``previous`` lists the versions it
    replaced. Sources written before snapshots existed have none of these.
    """

    title: str
    url: str
    version: str
    accessed: date
    id: str = ""
    sha256: str = ""
    media_type: str = ""
    previous: tuple[SourceVersion, ...] = ()
    final_url: str = ""
    """Where a fetched source was read after redirects (``url`` is the address asked for)."""
    retrieved_at: str = ""
    """When a fetched source was read (ISO 8601, UTC)."""
    etag: str = ""
    """The server's ``ETag`` and ``Last-Modified`` for what was read, when it sent them."""
    last_modified: str = ""
    repository: str = ""
    """For a file of a git repository: the repository (a URL, or the local path given), the
    revision asked for (``rev``: a branch, a tag or a commit), the full commit id it was at,
    the file's path in the repository, and its permalink on GitHub or GitLab."""
    rev: str = ""
    commit: str = ""
    path: str = ""
    permalink: str = ""

    @property
    def has_snapshot(self) -> bool:
        """True when a copy of this source is pinned by its hash."""
        return bool(self.sha256)


@dataclass(frozen=True)
class Protocol:
    """One benchmark protocol under review."""

    id: str
    name: str
    cites: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True)
class Quote:
    """A passage of a pinned source that a cell's code rests on.

    ``text`` is what the reviewer quoted, exactly; the rest says where it was found in the
    snapshot's extracted text (``start``/``end`` are character offsets there) and which
    snapshot that was. A hand-written quote may carry the source and text only: ``validate``
    finds it. ``confirmed`` names the snapshot of a later version of the source in which
    the reviewer checked that the code still stands although the passage changed.
    """

    source: str
    text: str
    page: str = ""
    section: str = ""
    start: int | None = None
    end: int | None = None
    snapshot: str = ""
    confirmed: str = ""
    raw_start: int | None = None
    """Where the passage starts in the raw snapshot file's decoded text (None for a PDF, or an
    older quote); ``raw_end`` is where it ends (exclusive)."""
    raw_end: int | None = None
    exact: str = ""
    """The passage exactly as the raw file has it (W3C TextQuoteSelector ``exact``; for a PDF,
    as its extracted text has it), with ``prefix`` and ``suffix``: the text just before and
    after it there (about 32 characters each)."""
    prefix: str = ""
    suffix: str = ""
    lines: tuple[int, int] | None = None
    """The first and last line (counted from 1) of the raw file the passage spans, for a quote of
    code or configuration (a plain-text source); None otherwise."""


@dataclass(frozen=True)
class Cell:
    """One reviewer's coding of one (protocol, field).

    ``code`` is None for a draft: text typed before a code was chosen. A draft counts as
    not coded everywhere.
    """

    protocol: str
    field: str
    reviewer: str
    code: str | None
    source: str = ""
    basis: str = ""
    cites: tuple[str, ...] = ()
    rubric_version: str = ""
    coded_at: str = ""
    quotes: tuple[Quote, ...] = ()
    """Passages of the protocol's pinned sources that the code rests on."""
    assisted: bool = False
    """True when candidate passages (``protocoder find``) were shown before the code was chosen:
    agreement can then be reported for assisted and unassisted cells apart."""

    @property
    def is_coded(self) -> bool:
        """True once a code has been chosen."""
        return self.code is not None

    def missing(self, rubric: Rubric) -> tuple[str, ...]:
        """What the rubric requires for this cell's code that the cell lacks."""
        if self.code is None:
            return ("code",)
        required = rubric.requirements.get(self.code)
        if not required:
            return ()
        # Asked twice of every cell a command reads: only what the code requires is looked at.
        return tuple(name for name in required if name in _HAS and not _HAS[name](self))

    def is_complete(self, rubric: Rubric) -> bool:
        """Coded, and carrying everything the rubric requires for its code."""
        return self.code is not None and not self.missing(rubric)


_HAS = {"source": lambda cell: bool(cell.source.strip()), "basis": lambda cell: bool(cell.basis.strip()),
        "cites": lambda cell: bool(cell.cites)}
"""Whether a cell carries each thing a code may require (anything else counts as carried)."""


@dataclass(frozen=True)
class Sheet:
    """One reviewer's file for one protocol: their cells, descriptive notes, and what they read."""

    protocol: str
    reviewer: str
    path: Path
    cells: Mapping[str, Cell] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    reading: Mapping[str, SourceReading] = field(default_factory=dict)
    """What the reviewer has had on screen of each pinned snapshot, by its SHA-256."""


def canonical_hash(value: Any) -> str:
    """``sha256:`` and the hex digest of ``value`` as canonical JSON (values JSON cannot hold, such as
    dates, as their text).

    Every hash the review records (of the codes an adjudication resolved, of a final cell's
    record, of a ledger entry, of a release's metadata) is made here, because later runs
    recompute and compare them: they must agree to the byte across versions, so the JSON
    form is fixed: keys sorted, no spaces, text as written (not ``\\u`` escapes).
    """
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def codes_hash(codes: Mapping[str, str]) -> str:
    """A stable hash of who coded what, to tie an adjudication to the codes it resolved."""
    return canonical_hash(dict(codes))


@dataclass(frozen=True)
class Adjudication:
    """A recorded decision on one disagreeing cell, with its provenance."""

    protocol: str
    field: str
    code: str
    reason: str
    by: str
    at: str
    resolved: Mapping[str, str]
    resolved_hash: str
    source: str = ""
    basis: str = ""
    cites: tuple[str, ...] = ()
    taken_from: str = ""
    entry: int = -1
    """Position in its protocol's consensus.yaml (for messages); -1 before it is saved."""
    kept: tuple[str, ...] | None = None
    """Whose evidence (source, basis, citations, quotes) the decision keeps: one or more reviewers,
    or ``()`` for the adjudicator's own basis. None for an entry recorded before the choice was
    explicit (its evidence was copied from the first reviewer who chose the code)."""

    @property
    def evidence_text(self) -> str:
        """Whose evidence the decision keeps, as a phrase: ``alice's``, ``alice's and bob's``,
        ``the adjudicator's own``; empty when the entry did not record it."""
        if self.kept is None:
            return f"{self.taken_from}'s" if self.taken_from else ""
        if not self.kept:
            return "the adjudicator's own"
        names = [f"{name}'s" for name in self.kept]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"

    def is_current(self, codes: Mapping[str, str]) -> bool:
        """True while the reviewers' codes on file are the ones this adjudication resolved."""
        return codes_hash(codes) == self.resolved_hash


@dataclass(frozen=True)
class Comment:
    """One remark in the discussion of a cell (``protocols/<id>/comments/<by>.yaml``), allowed once the
    cell is ready for adjudication; each person writes only their own file."""

    protocol: str
    field: str
    by: str
    at: str
    text: str
