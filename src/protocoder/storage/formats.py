"""Turn the plain data of each workspace file into model objects, collecting problems.

One parser per kind of file: the rubric, ``protocoder.yaml``, a protocol and its sources,
a reviewer's sheet, a protocol's adjudications. Each checks that file's own structure
(keys, types, allowed values) with a :class:`~protocoder.storage.findings.Reader`, which
records problems by key path in :class:`~protocoder.storage.findings.Findings`. Checks that
need several files (citation keys, codes for unknown protocols) live in
:mod:`protocoder.storage.workspace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..model import (
    CODE_PATTERN,
    CODE_ROLES,
    COLOR_PATTERN,
    MAX_SHORT_LABEL,
    MEDIA_TYPES,
    NOT_APPLICABLE,
    REQUIREMENT_NAMES,
    SHA256_PATTERN,
    SNAPSHOT_REF_PATTERN,
    Answer,
    Cell,
    Code,
    Field,
    Prompt,
    Protocol,
    Question,
    Quote,
    Rubric,
    Sheet,
    Source,
    SourceVersion,
    is_slug,
    version_key,
)
from .findings import Findings, Reader, describe
from .yamlio import KeyPath

if TYPE_CHECKING:
    from ..lifecycle.consensus import Adjudication


def _check_version(reader: Reader, value: str, path: KeyPath) -> bool:
    try:
        version_key(value)
    except ValueError:
        reader.add(path, f"version {value!r} must be numbers separated by dots, such as \"1.0\"")
        return False
    return True


# --------------------------------------------------------------------------- rubric


def parse_rubric(data: Any, findings: Findings) -> Rubric | None:
    """Parse a rubric file. Returns None when it is too broken to use."""
    r = Reader(findings)
    top = r.mapping(data, [], required=("id", "title", "version", "codes", "fields"),
                    optional=("description", "order", "prompts"), what="a rubric mapping")
    if top is None:
        return None
    rubric_id = r.slug(top, "id", [], what="rubric id")
    version = r.text(top, "version", [], required=True, version=True)
    if version:
        _check_version(r, version, ["version"])

    codes: list[Code] = []
    raw_codes = top.get("codes")
    if not isinstance(raw_codes, list) or not raw_codes:
        r.add(["codes"], "expected a non-empty list of codes")
        raw_codes = []
    for index, raw in enumerate(raw_codes):
        path = ["codes", index]
        item = r.mapping(raw, path, required=("id", "label", "definition"),
                         optional=("guidance", "requires", "role", "short", "color", "search_terms"),
                         what="a code mapping")
        if item is None:
            continue
        code_id = r.text(item, "id", path, required=True)
        if code_id and not CODE_PATTERN.match(code_id):
            r.add([*path, "id"], f"code id {code_id!r} must be 1-16 letters, digits, '_', '+' or '-'")
        if any(code.id == code_id for code in codes):
            r.add([*path, "id"], f"duplicate code id {code_id!r}")
        requires = r.text_list(item, "requires", path) if "requires" in item else ("source", "basis")
        for req_index, name in enumerate(requires):
            if name not in REQUIREMENT_NAMES:
                r.add([*path, "requires", req_index],
                      f"unknown requirement {name!r} (expected: {', '.join(REQUIREMENT_NAMES)})")
        role = r.text(item, "role", path).strip()
        if role and role not in CODE_ROLES:
            r.add([*path, "role"], f"unknown role {role!r} (expected: {', '.join(CODE_ROLES)})")
            role = ""
        color = r.text(item, "color", path).strip()
        if color and not COLOR_PATTERN.match(color):
            r.add([*path, "color"], f"colour {color!r} must be written #RRGGBB, e.g. \"#1b7837\"")
            color = ""
        short = _short_label(r, item, path)
        code = Code(code_id, r.text(item, "label", path, required=True), r.text(item, "definition", path,
                    required=True), r.text(item, "guidance", path), tuple(requires), role, short, color,
                    r.text_list(item, "search_terms", path))
        if code_id == "NA" and not role:
            r.add([*path, "id"], f"code 'NA' declares no role: add 'role: {NOT_APPLICABLE}' if it means "
                                 "not applicable (agreement's --na exclude and the ordinal scale go by the role)",
                  severity="warning")
        codes.append(code)
    code_ids = {code.id for code in codes}

    order: tuple[str, ...] | None = None
    if top.get("order") is not None:
        order = r.ids(top, "order", [])
        na_ids = {code.id for code in codes if code.role == NOT_APPLICABLE}
        for index, code_id in enumerate(order):
            if code_id not in code_ids:
                r.add(["order", index], f"order names {code_id!r}, which is not a code of this rubric")
            elif code_id in na_ids:
                r.add(["order", index], f"order names {code_id!r}, a not-applicable code: the ordinal scale "
                                        "leaves not-applicable codes out")
        if len(set(order)) != len(order):
            r.add(["order"], "order lists a code twice")

    fields: list[Field] = []
    raw_fields = top.get("fields")
    if not isinstance(raw_fields, list) or not raw_fields:
        r.add(["fields"], "expected a non-empty list of fields")
        raw_fields = []
    for index, raw in enumerate(raw_fields):
        parsed = _parse_field(r, raw, ["fields", index], code_ids, version)
        if parsed is not None:
            if any(f.id == parsed.id for f in fields):
                r.add(["fields", index, "id"], f"duplicate field id {parsed.id!r}")
            fields.append(parsed)

    prompts: list[Prompt] = []
    raw_prompts = top.get("prompts") or []
    if not isinstance(raw_prompts, list):
        r.add(["prompts"], f"expected a list of prompts, found {describe(raw_prompts)}")
        raw_prompts = []
    for index, raw in enumerate(raw_prompts):
        path = ["prompts", index]
        item = r.mapping(raw, path, required=("id", "label"), optional=("help",), what="a prompt mapping")
        if item is None:
            continue
        prompt_id = r.slug(item, "id", path, what="prompt id")
        if any(p.id == prompt_id for p in prompts):
            r.add([*path, "id"], f"duplicate prompt id {prompt_id!r}")
        prompts.append(Prompt(prompt_id, r.text(item, "label", path, required=True), r.text(item, "help", path)))

    return Rubric(rubric_id, r.text(top, "title", [], required=True), version, tuple(codes),
                  tuple(fields), order, tuple(prompts), r.text(top, "description", []))


def _parse_field(r: Reader, raw: Any, path: list[str | int], code_ids: set[str],
                 rubric_version: str) -> Field | None:
    item = r.mapping(raw, path, required=("id", "label", "codes"),
                     optional=("revised", "question", "definition", "guidance", "decision", "short", "search_terms"),
                     what="a field mapping")
    if item is None:
        return None
    field_id = r.slug(item, "id", path, what="field id")
    allowed = r.ids(item, "codes", path)
    if not allowed and isinstance(item.get("codes"), list):
        r.add([*path, "codes"], "a field must allow at least one code, or it can never be coded")
    if len(set(allowed)) != len(allowed):
        r.add([*path, "codes"], "the field lists a code twice")
    for index, code_id in enumerate(allowed):
        if code_id not in code_ids:
            r.add([*path, "codes", index], f"field allows {code_id!r}, which is not a code of this rubric")
    revised = r.text(item, "revised", path, version=True) or rubric_version
    if "revised" in item and revised and _check_version(r, revised, [*path, "revised"]) and rubric_version:
        try:
            if version_key(revised) > version_key(rubric_version):
                r.add([*path, "revised"], f"field revised in {revised}, later than the rubric version {rubric_version}")
        except ValueError:
            pass

    questions: list[Question] = []
    raw_decision = item.get("decision") or []
    if not isinstance(raw_decision, list):
        r.add([*path, "decision"], f"expected a list of questions, found {describe(raw_decision)}")
        raw_decision = []
    question_ids = [q.get("id") for q in raw_decision if isinstance(q, dict)]
    for q_index, raw_q in enumerate(raw_decision):
        q_path = [*path, "decision", q_index]
        q = r.mapping(raw_q, q_path, required=("id", "ask", "answers"), optional=("help",),
                      what="a question mapping")
        if q is None:
            continue
        answers = []
        raw_answers = q.get("answers")
        if not isinstance(raw_answers, list) or not raw_answers:
            r.add([*q_path, "answers"], "expected a non-empty list of answers")
            raw_answers = []
        for a_index, raw_a in enumerate(raw_answers):
            a_path = [*q_path, "answers", a_index]
            a = r.mapping(raw_a, a_path, required=("label",), optional=("code", "next"),
                          what="an answer mapping")
            if a is None:
                continue
            code = r.text(a, "code", a_path) or None
            nxt = r.text(a, "next", a_path) or None
            if (code is None) == (nxt is None):
                r.add(a_path, "an answer needs exactly one of 'code' (the proposed code) or 'next' (a question id)")
            if code is not None and code not in allowed:
                r.add([*a_path, "code"], f"answer proposes {code!r}, which this field does not allow")
            if nxt is not None:
                later = question_ids[q_index + 1:]
                if nxt not in later:
                    r.add([*a_path, "next"], f"'next' must name a later question of this field, not {nxt!r}")
            answers.append(Answer(r.text(a, "label", a_path, required=True), code, nxt))
        questions.append(Question(r.text(q, "id", q_path, required=True), r.text(q, "ask", q_path, required=True),
                                  tuple(answers), r.text(q, "help", q_path)))
    return Field(field_id, r.text(item, "label", path, required=True), allowed, revised,
                 r.text(item, "question", path), r.text(item, "definition", path),
                 r.text(item, "guidance", path), tuple(questions), _short_label(r, item, path),
                 r.text_list(item, "search_terms", path))


def _short_label(r: Reader, item: Mapping[str, Any], path: KeyPath) -> str:
    short = r.text(item, "short", path).strip()
    if len(short) > MAX_SHORT_LABEL:
        r.add([*path, "short"], f"a short label has at most {MAX_SHORT_LABEL} characters; this one has {len(short)}")
        return ""
    return short


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """The workspace file ``protocoder.yaml``."""

    title: str = ""
    rubric: str = ""
    order: tuple[str, ...] = ()
    candidates: bool = True
    """False turns candidate passages (``protocoder find``, the app's pane) off for a blind first pass."""


def parse_settings(data: Any, findings: Findings) -> Settings:
    """Parse ``protocoder.yaml`` (an empty file is valid)."""
    if data is None:
        return Settings()
    r = Reader(findings)
    top = r.mapping(data, [], optional=("title", "rubric", "order", "candidates"),
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
    return Settings(r.text(top, "title", []), rubric, order, _flag(r, top, "candidates", [], default=True))


def _flag(r: Reader, item: Mapping[str, Any], key: str, path: KeyPath, *, default: bool) -> bool:
    """A true/false value (``default`` when the key is absent or empty)."""
    value = item.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        r.add([*path, key], f"expected true or false for {key!r}, found {describe(value)}")
        return default
    return value


# --------------------------------------------------------------------------- protocols


def parse_protocol(data: Any, findings: Findings, folder_id: str) -> Protocol | None:
    """Parse ``protocols/<id>/protocol.yaml``."""
    r = Reader(findings)
    top = r.mapping(data, [], required=("id", "name"), optional=("cites", "sources"),
                    what="a protocol mapping")
    if top is None:
        return None
    protocol_id = r.slug(top, "id", [], what="protocol id")
    if protocol_id and protocol_id != folder_id:
        r.add(["id"], f"protocol id {protocol_id!r} does not match its folder name {folder_id!r}")
    sources = []
    raw_sources = top.get("sources") or []
    if not isinstance(raw_sources, list):
        r.add(["sources"], f"expected a list of sources, found {describe(raw_sources)}")
        raw_sources = []
    for index, raw in enumerate(raw_sources):
        source = _parse_source(r, raw, ["sources", index])
        if source is not None:
            if source.id and any(s.id == source.id for s in sources):
                r.add(["sources", index, "id"], f"duplicate source id {source.id!r}")
            sources.append(source)
    return Protocol(protocol_id or folder_id, r.text(top, "name", [], required=True),
                    r.text_list(top, "cites", []), tuple(sources))


SOURCE_KEYS = ("id", "title", "url", "version", "accessed", "sha256", "media_type", "previous")


def _parse_source(r: Reader, raw: Any, path: KeyPath) -> Source | None:
    """One pinned source; with a snapshot (``sha256``) it needs an id and a media type, and
    the URL may be left out (a local copy of a document is still pinned by its hash)."""
    item = r.mapping(raw, path, required=("title", "version", "accessed"), optional=SOURCE_KEYS,
                     what="a source mapping")
    if item is None:
        return None
    sha256 = _snapshot_hash(r, item, "sha256", path)
    url = r.text(item, "url", path, required=not sha256)
    if "url" not in item and not sha256:
        r.add(path, "missing required key 'url'")
    if url and (problem := url_problem(url)):
        r.add([*path, "url"], problem)
    source_id = r.slug(item, "id", path, what="source id") if "id" in item or sha256 else ""
    if sha256 and "id" not in item:
        r.add(path, "a source with a snapshot (sha256) needs an 'id', the name quotes use")
    media_type = _media_type(r, item, path, required=bool(sha256))
    previous = []
    raw_previous = item.get("previous") or []
    if not isinstance(raw_previous, list):
        r.add([*path, "previous"], f"expected a list of earlier versions, found {describe(raw_previous)}")
        raw_previous = []
    for index, raw_version in enumerate(raw_previous):
        vpath = [*path, "previous", index]
        entry = r.mapping(raw_version, vpath, required=("version", "accessed", "sha256", "media_type"),
                          what="an earlier version mapping")
        if entry is None:
            continue
        previous.append(SourceVersion(r.text(entry, "version", vpath, required=True),
                                      r.day(entry, "accessed", vpath, required=True) or date.min,
                                      _snapshot_hash(r, entry, "sha256", vpath), _media_type(r, entry, vpath)))
    accessed = r.day(item, "accessed", path, required=True)
    return Source(r.text(item, "title", path, required=True), url, r.text(item, "version", path, required=True),
                  accessed or date.min, source_id, sha256, media_type, tuple(previous))


def _snapshot_hash(r: Reader, item: Mapping[str, Any], key: str, path: KeyPath) -> str:
    value = r.text(item, key, path).strip()
    if value and not SHA256_PATTERN.match(value):
        r.add([*path, key], f"{key} must be the 64 hexadecimal digits of a SHA-256, in lowercase")
        return ""
    return value


def _media_type(r: Reader, item: Mapping[str, Any], path: KeyPath, *, required: bool = True) -> str:
    value = r.text(item, "media_type", path).strip()
    if value and value not in MEDIA_TYPES:
        r.add([*path, "media_type"], f"unknown media type {value!r} (expected: {', '.join(MEDIA_TYPES)})")
        return ""
    if required and not value and "media_type" not in item:
        r.add(path, "missing required key 'media_type'")
    return value


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a usable web address, or None when it is."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        return f"URL {url!r} needs a scheme (https://...)"
    if not parts.netloc or any(ch.isspace() for ch in url.strip()):
        return f"URL {url!r} is not a valid web address"
    return None


# --------------------------------------------------------------------------- sheets

CELL_KEYS = ("code", "source", "basis", "cites", "quotes", "assisted", "rubric_version", "coded_at")
QUOTE_KEYS = ("source", "text", "page", "section", "span", "snapshot", "confirmed", "raw_start", "raw_end",
              "exact", "prefix", "suffix")


def parse_sheet(data: Any, findings: Findings, protocol_id: str, reviewer: str, path: Path,
                rubric: Rubric | None) -> Sheet:
    """Parse one reviewer's file for one protocol (``protocols/<id>/codes/<reviewer>.yaml``).

    Rubric checks (known fields and codes, requirements, staleness) run when the rubric
    is available.
    """
    r = Reader(findings)
    if data is None:
        return Sheet(protocol_id, reviewer, path)
    top = r.mapping(data, [], optional=("cells", "notes"), what="a mapping with 'cells' and 'notes'")
    if top is None:
        return Sheet(protocol_id, reviewer, path)
    cells: dict[str, Cell] = {}
    raw_cells = top.get("cells") or {}
    if r.mapping(raw_cells, ["cells"], what="a mapping of field ids to cells") is None:
        raw_cells = {}
    for field_id, raw in raw_cells.items():
        if not isinstance(field_id, str):
            continue
        cpath = ["cells", field_id]
        fld = None
        if rubric is not None:
            try:
                fld = rubric.field(field_id)
            except KeyError:
                r.add(cpath, f"unknown field {field_id!r} (the rubric has: {', '.join(rubric.field_ids)})", at="key")
                continue
        item = r.mapping(raw, cpath, optional=CELL_KEYS, what="a cell mapping")
        if item is None:
            continue
        code = r.text(item, "code", cpath) or None
        cell = Cell(protocol_id, field_id, reviewer, code, r.text(item, "source", cpath),
                    r.text(item, "basis", cpath), r.text_list(item, "cites", cpath),
                    r.text(item, "rubric_version", cpath, version=True), r.moment(item, "coded_at", cpath),
                    _parse_quotes(r, item, cpath), _flag(r, item, "assisted", cpath, default=False))
        if rubric is not None and fld is not None:
            _check_cell(r, cell, cpath, rubric, fld)
        cells[field_id] = cell
    notes: dict[str, str] = {}
    raw_notes = top.get("notes") or {}
    prompt_ids = [p.id for p in rubric.prompts] if rubric is not None else []
    if r.mapping(raw_notes, ["notes"], optional=prompt_ids if rubric is not None else (),
                 what="a mapping of prompt ids to text") is not None:
        for key in raw_notes:
            if isinstance(key, str) and (rubric is None or key in prompt_ids):
                notes[key] = r.text(raw_notes, key, ["notes"])
    return Sheet(protocol_id, reviewer, path, cells, notes)


def _parse_quotes(r: Reader, item: Mapping[str, Any], path: KeyPath) -> tuple[Quote, ...]:
    """A cell's quotes: each names a pinned source by id and gives the exact text, and may say
    where it was found (page, section, character span) in which snapshot."""
    raw = item.get("quotes")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        r.add([*path, "quotes"], f"expected a list of quotes, found {describe(raw)}")
        return ()
    quotes = []
    for index, raw_quote in enumerate(raw):
        qpath = [*path, "quotes", index]
        entry = r.mapping(raw_quote, qpath, required=("source", "text"), optional=QUOTE_KEYS,
                          what="a quote mapping (source, text)")
        if entry is None:
            continue
        source = r.slug(entry, "source", qpath, what="source id")
        text = r.text(entry, "text", qpath, required=True)
        start = end = None
        span = entry.get("span")
        if span is not None:
            if (isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                  for v in span) and 0 <= span[0] < span[1]):
                start, end = span
            else:
                r.add([*qpath, "span"], "span must be [start, end]: two character offsets, start before end")
        refs = []
        for key in ("snapshot", "confirmed"):
            value = r.text(entry, key, qpath).strip()
            if value and not SNAPSHOT_REF_PATTERN.match(value):
                r.add([*qpath, key], f"{key} must be the start (12 to 64 hexadecimal digits) of a snapshot's SHA-256")
                value = ""
            refs.append(value)
        raw_start, raw_end = entry.get("raw_start"), entry.get("raw_end")
        offsets_ok = (all(isinstance(v, int) and not isinstance(v, bool) for v in (raw_start, raw_end))
                      and 0 <= raw_start <= raw_end)
        if (raw_start is not None or raw_end is not None) and not offsets_ok:
            r.add([*qpath, "raw_start" if "raw_start" in entry else "raw_end"],
                  "raw_start and raw_end must both be character offsets, raw_start not after raw_end")
            raw_start = raw_end = None
        selector = [r.text(entry, key, qpath) for key in ("exact", "prefix", "suffix")]
        quotes.append(Quote(source, text, r.text(entry, "page", qpath), r.text(entry, "section", qpath),
                            start, end, refs[0], refs[1], raw_start, raw_end, *selector))
    return tuple(quotes)


def _check_cell(r: Reader, cell: Cell, path: list[str | int], rubric: Rubric, fld: Field) -> None:
    if cell.code is None:
        return
    if cell.code not in rubric.code_ids:
        r.add([*path, "code"], f"unknown code {cell.code!r} (the rubric has: {', '.join(rubric.code_ids)})")
        return
    if cell.code not in fld.codes:
        r.add([*path, "code"], f"code {cell.code!r} is not allowed for field {fld.id!r} "
                               f"(allowed: {', '.join(fld.codes)})")
        return
    # Half-done work is a state (incomplete), not an error: it must never block other
    # reviewers' commands, so it is a warning here and a status in the consensus.
    for name in cell.missing(rubric):
        r.add(path, f"code {cell.code!r} requires a {_requirement_label(name)}: the cell is incomplete until "
                    "it has one", at="key", severity="warning")
    if not cell.rubric_version:
        r.add(path, "missing required key 'rubric_version' (the rubric version the cell was coded under)",
              at="key")
        return
    try:
        stale = version_key(cell.rubric_version) < version_key(fld.revised)
    except ValueError:
        r.add([*path, "rubric_version"], f"rubric_version {cell.rubric_version!r} is not a version such as \"1.0\"")
        return
    if stale:
        r.add([*path, "rubric_version"],
              f"coded under rubric {cell.rubric_version}, but field {fld.id!r} was redefined in "
              f"{fld.revised}: re-check the code and save it again", severity="warning")


def _requirement_label(name: str) -> str:
    return {"source": "source location", "basis": "basis", "cites": "citation"}.get(name, name)


# --------------------------------------------------------------------------- adjudications

ADJUDICATION_KEYS = ("field", "code", "reason", "by", "at", "resolved", "resolved_hash", "taken_from",
                     "source", "basis", "cites")


def parse_consensus(data: Any, findings: Findings, protocol_id: str, rubric: Rubric | None) -> list[Adjudication]:
    """Parse ``protocols/<id>/consensus.yaml``: the adjudications of that protocol, oldest first."""
    from ..lifecycle.consensus import Adjudication, codes_hash

    r = Reader(findings)
    if data is None:
        return []
    top = r.mapping(data, [], optional=("adjudications",), what="a mapping with 'adjudications'")
    if top is None:
        return []
    raw = top.get("adjudications") or []
    if not isinstance(raw, list):
        r.add(["adjudications"], f"expected a list of adjudications, found {describe(raw)}")
        return []
    result = []
    for index, item in enumerate(raw):
        path = ["adjudications", index]
        entry = r.mapping(item, path, required=("field", "code", "reason", "by", "at", "resolved", "resolved_hash"),
                          optional=("taken_from", "source", "basis", "cites"), what="an adjudication mapping")
        if entry is None:
            continue
        field_id = r.text(entry, "field", path, required=True)
        code = r.text(entry, "code", path, required=True)
        if rubric is not None and field_id:
            try:
                fld = rubric.field(field_id)
            except KeyError:
                r.add([*path, "field"], f"unknown field {field_id!r}")
                continue
            if code and code not in fld.codes:
                r.add([*path, "code"], f"code {code!r} is not allowed for field {field_id!r}")
        reason = r.text(entry, "reason", path, required=True)
        resolved_raw = entry.get("resolved")
        resolved: dict[str, str] = {}
        if r.mapping(resolved_raw, [*path, "resolved"], what="a mapping of reviewer to code") is not None:
            resolved = {str(k): str(v) for k, v in resolved_raw.items()}
        stored_hash = r.text(entry, "resolved_hash", path, required=True)
        if stored_hash and resolved and stored_hash != codes_hash(resolved):
            r.add([*path, "resolved_hash"], "resolved_hash does not match the resolved codes (was the entry edited?)")
        result.append(Adjudication(protocol_id, field_id, code, reason, r.text(entry, "by", path, required=True),
                                   r.moment(entry, "at", path), resolved, stored_hash,
                                   r.text(entry, "source", path), r.text(entry, "basis", path),
                                   r.text_list(entry, "cites", path), r.text(entry, "taken_from", path), index))
    return result
