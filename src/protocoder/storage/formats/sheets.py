"""A reviewer's sheet: one cell per field, with its quotes, checked against the rubric."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from ...model import (
    SHA256_PATTERN,
    SNAPSHOT_REF_PATTERN,
    Cell,
    Field,
    Quote,
    Rubric,
    Sheet,
    SourceReading,
    parse_ranges,
    version_key,
)
from ..findings import MAX_TEXT_LENGTH, Findings, Reader, describe
from ..yamlio import KeyPath
from .settings import flag

CELL_KEYS = ("code", "source", "basis", "cites", "quotes", "assisted", "rubric_version", "coded_at")
QUOTE_KEYS = ("source", "text", "page", "section", "span", "snapshot", "confirmed", "raw_start", "raw_end",
              "exact", "prefix", "suffix", "lines")


def parse_sheet(data: Any, findings: Findings, protocol_id: str, reviewer: str, path: Path,
                rubric: Rubric | None) -> Sheet:
    """Parse one reviewer's file for one protocol (``protocols/<id>/codes/<reviewer>.yaml``).

    Rubric checks (known fields and codes, requirements, staleness) run when the rubric
    is available.
    """
    r = Reader(findings)
    if data is None:
        return Sheet(protocol_id, reviewer, path)
    top = r.mapping(data, [], optional=("cells", "notes", "reading"), what="a mapping with 'cells' and 'notes'")
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
        cell = plain_cell(raw, protocol_id, field_id, reviewer)
        if cell is None:
            item = r.mapping(raw, cpath, optional=CELL_KEYS, what="a cell mapping")
            if item is None:
                continue
            code = r.text(item, "code", cpath) or None
            cell = Cell(protocol_id, field_id, reviewer, code, r.text(item, "source", cpath),
                        r.text(item, "basis", cpath), r.text_list(item, "cites", cpath),
                        r.text(item, "rubric_version", cpath, version=True), r.moment(item, "coded_at", cpath),
                        _parse_quotes(r, item, cpath), flag(r, item, "assisted", cpath, default=False))
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
    return Sheet(protocol_id, reviewer, path, cells, notes, _parse_reading(r, top.get("reading")))


_PLAIN_CELL_KEYS = frozenset(("code", "source", "basis", "cites", "rubric_version", "coded_at"))


def plain_cell(raw: Any, protocol_id: str, field_id: str, reviewer: str) -> Cell | None:
    """The cell the readers in :func:`parse_sheet` make of ``raw`` when it holds only plain values,
    without a finding on the way; None for anything else (those readers then read it).

    Plain: a mapping of the keys below only, each text of at most ``MAX_TEXT_LENGTH`` characters
    or absent or empty, ``cites`` a list of non-blank text, ``coded_at`` a date. That is every cell
    protocoder writes without quotes; reading one took a dozen calls, a third of loading a sheet.
    ``tests/test_storage.py`` checks it against the readers on every cell of a generated review and
    on arbitrary values.
    """
    if type(raw) is not dict or not _PLAIN_CELL_KEYS.issuperset(raw):
        return None
    texts = []
    for key in ("code", "source", "basis", "rubric_version"):
        value = raw.get(key)
        if value is None:
            value = ""
        elif type(value) is not str or len(value) > MAX_TEXT_LENGTH:
            return None
        texts.append(value)
    cites = raw.get("cites")
    if cites is None:
        cites = ()
    elif type(cites) is list and all(type(key) is str and key.strip() for key in cites):
        cites = tuple(key.strip() for key in cites)
    else:
        return None
    moment = raw.get("coded_at")
    if moment is None:
        moment = ""
    elif type(moment) is date:
        moment = moment.isoformat()
    else:
        return None
    code, source, basis, version = texts
    return Cell(protocol_id, field_id, reviewer, code or None, source, basis, cites, version, moment)


def _parse_reading(r: Reader, raw: Any) -> dict[str, SourceReading]:
    """``reading: {<snapshot sha256>: {blocks: N, read: "0-12,15"}}``: what the reviewer had on screen."""
    reading: dict[str, SourceReading] = {}
    if raw is None or r.mapping(raw, ["reading"], what="a mapping of snapshot SHA-256s to what was read") is None:
        return reading
    for sha, entry in raw.items():
        path: KeyPath = ["reading", sha]
        if not isinstance(sha, str) or not SHA256_PATTERN.match(sha):
            r.add(path, f"{sha!r} is not a snapshot's SHA-256 (64 hexadecimal digits)", at="key")
            continue
        item = r.mapping(entry, path, required=("blocks", "read"), what="a mapping with 'blocks' and 'read'")
        if item is None:
            continue
        blocks = item.get("blocks")
        if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < 1:
            r.add([*path, "blocks"], "blocks must be a whole number of blocks, at least 1")
            continue
        text = item.get("read")
        ranges = parse_ranges(str(text)) if isinstance(text, str | int) and not isinstance(text, bool) else None
        if ranges is None:
            r.add([*path, "read"], "read must be block numbers and ranges joined by commas, such as \"0-12,15\"")
            continue
        if ranges and ranges[-1][1] >= blocks:
            r.add([*path, "read"], f"read names block {ranges[-1][1]}, but the snapshot has {blocks} blocks "
                                   f"(numbered 0 to {blocks - 1})")
            continue
        reading[sha] = SourceReading(blocks, ranges)
    return reading


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
        lines = entry.get("lines")
        if lines is not None:
            if (isinstance(lines, list) and len(lines) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                    for v in lines) and 1 <= lines[0] <= lines[1]):
                lines = (lines[0], lines[1])
            else:
                r.add([*qpath, "lines"], "lines must be [first, last]: two line numbers from 1, first not after last")
                lines = None
        quotes.append(Quote(source, text, r.text(entry, "page", qpath), r.text(entry, "section", qpath),
                            start, end, refs[0], refs[1], raw_start, raw_end, *selector, lines))
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
