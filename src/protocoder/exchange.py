"""Cells in and out of the workspace as CSV or JSON, for spreadsheets and scripts.

Export writes one row per reviewer cell. Import reads the same columns, checks *every*
row before anything is written (one error per bad row, with its row number; the header
is row 1), and then writes through the store: every changed reviewer file, or none.

Import changes only what the CSV says: a column that is absent (``source``, ``basis``,
``cites``) leaves that attribute of every cell as it is; an empty value in a column that
is present clears it. A ``status`` column (as ``export --view cells`` may carry) and a
``quotes`` column (each cell's quotes as a JSON array, as export writes it) are read and
ignored: the cells keep the quotes they have. Text is taken exactly as written, so export
then import changes nothing.

Values a spreadsheet would run as formulas (``=cmd()``, ``+1``, ``-x``, ``@f``) are
neutralised on export with a leading apostrophe, the spreadsheet's own text marker. The
escape is reversible: a value that already starts with apostrophes before a formula
character gets one more, so every text comes back exactly. Import removes that apostrophe
only from values protocoder itself exported with it: the value without it is what the cell
holds now, or the file is an export (its header is exactly ``export``'s columns) and the cell
is new. Any other leading apostrophe (``'-v' flag``, typed by hand) is kept as written.

A header may start with byte-order marks (one or more, as a file saved twice through an
editor has); any other invisible character in a column name is refused, named.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .errors import InvalidInput, Problem
from .model import Cell, is_slug
from .storage.files import MAX_FILE_BYTES, read_capped
from .storage.findings import MAX_TEXT_LENGTH
from .storage.store import CellUpdate, Store, WriteResult, now_iso
from .storage.workspace import Review

CELL_COLUMNS = ("protocol", "field", "reviewer", "code", "source", "basis", "cites", "status")
"""Columns of ``export --view cells``; import reads them too and ignores ``status`` (derived, not data)."""
REQUIRED_COLUMNS = ("protocol", "field", "reviewer", "code")
EXPORT_COLUMNS = (*CELL_COLUMNS, "quotes")
"""Export adds each cell's quotes: in JSON a list of objects, in CSV that list as JSON text."""
IGNORED_COLUMNS = ("status", "quotes")
"""Columns import accepts and ignores: read-only information an export may carry. Quotes are
not imported (``quote add`` checks each against its snapshot); the cells keep theirs."""
TEXT_COLUMNS = ("source", "basis", "cites")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NEUTRALISED = re.compile("'*[=+\\-@\t\r]")
_NEUTRALISED_BY_US = re.compile("'+[=+\\-@\t\r]")


def neutralise(value: str) -> str:
    """Prefix an apostrophe to a value a spreadsheet would execute as a formula.

    Values that start with apostrophes before a formula character get one more, so that
    :func:`unneutralise` can tell them apart: ``unneutralise(neutralise(v)) == v`` always.
    """
    return "'" + value if _NEUTRALISED.match(value) else value


def unneutralise(value: str) -> str:
    """Undo :func:`neutralise`: drop one apostrophe before apostrophes and a formula character."""
    return value[1:] if _NEUTRALISED_BY_US.match(value) else value


def cell_rows(review: Review) -> list[dict[str, Any]]:
    """One row per reviewer cell (drafts have an empty code), in table order, with its status:
    ``complete``, ``incomplete`` (coded without what the rubric requires) or ``draft`` (no code),
    and its quotes."""
    from .evidence.quotes import quote_record

    rubric = review.require_valid()

    def status(cell: Cell) -> str:
        return "draft" if cell.code is None else "complete" if cell.is_complete(rubric) else "incomplete"

    return [{"protocol": c.protocol, "field": c.field, "reviewer": c.reviewer, "code": c.code or "",
             "source": c.source, "basis": c.basis, "cites": list(c.cites), "status": status(c),
             "quotes": [quote_record(q) for q in c.quotes]} for c in review.all_cells()]


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """CSV text with formula-looking cells neutralised and list values joined by ``;``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # With "\n" line ends the writer quotes fields holding "\n" but not a bare "\r", which
    # then splits the row on reading: rows holding one are written fully quoted.
    quoting_all = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(columns)
    for row in rows:
        values = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
                value = json.dumps(list(value), ensure_ascii=False)  # quotes: one JSON array per cell
            elif isinstance(value, list | tuple):
                value = ";".join(str(v) for v in value)
            values.append(neutralise("" if value is None else str(value)))
        (quoting_all if any("\r" in value for value in values) else writer).writerow(values)
    return buffer.getvalue()


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """JSON text of rows (UTF-8, no NaN)."""
    return json.dumps(list(rows), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- reading CSV


def read_csv_rows(path: Path, display: str, required: Sequence[str], allowed: Sequence[str]
                  ) -> list[tuple[int, dict[str, str]]]:
    """Read a CSV with a header into ``(row number, {column: value})`` pairs.

    Raises :class:`InvalidInput` naming the row for a file that is empty, not UTF-8,
    too large, or lacks a required column.
    """
    raw = read_capped(path, display, 50 * MAX_FILE_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        prefix = raw[:exc.start].decode("utf-8-sig", errors="replace")
        try:
            row = len(list(csv.reader(io.StringIO(prefix, newline="")))) or 1
        except csv.Error:  # the text before the bad byte is no CSV either: count lines
            row = prefix.count("\n") + 1
        else:
            if prefix.endswith(("\n", "\r")):
                row += 1
        raise InvalidInput([Problem(display, 0, 0, f"row {row}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}); "
                                                   "save the file as UTF-8")]) from None
    if not text.strip():
        raise InvalidInput([Problem(display, 0, 0, "row 1: the file is empty; expected a header row with "
                                                   f"columns {', '.join(required)}")])
    records: list[list[str]] = []
    try:
        records.extend(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        # The header is row 1; the reader stopped in the row after the last one it returned.
        raise InvalidInput([Problem(display, 0, 0, f"row {len(records) + 1}: malformed CSV: {exc}")]) from None
    header = [column.strip().lower() for column in records[0]]
    # Each save through some editors adds a byte-order mark; all of them are the file's, not the name's.
    if header:
        header[0] = header[0].lstrip("\ufeff").strip()
    problems = [Problem(display, 0, 0, f"row 1: column name {name!r} holds an invisible character "
                                       f"{_invisible(name)}; delete it (retype the name)")
                for name in header if _invisible(name)]
    missing = [column for column in required if column not in header]
    if missing and not problems:
        problems.append(Problem(display, 0, 0, f"row 1: missing column(s) {', '.join(missing)} "
                                               f"(the header has: {', '.join(header) or 'nothing'})"))
    unknown = [column for column in header if column not in allowed and column not in IGNORED_COLUMNS
               and not _invisible(column)]
    if unknown:
        problems.append(Problem(display, 0, 0, f"row 1: unknown column(s) {', '.join(unknown)} "
                                               f"(expected: {', '.join(allowed)})"))
    if len(set(header)) != len(header):
        problems.append(Problem(display, 0, 0, "row 1: a column name appears twice"))
    if problems:
        raise InvalidInput(problems)
    rows = []
    for number, record in enumerate(records[1:], start=2):
        if not any(value.strip() for value in record):
            continue
        if len(record) != len(header):
            problems.append(Problem(display, 0, 0, f"row {number}: {len(record)} values for {len(header)} columns"))
            continue
        rows.append((number, dict(zip(header, record, strict=True))))
    if problems:
        raise InvalidInput(problems)
    return rows


def _invisible(name: str) -> str:
    """The first invisible character in a column name, described (U+200B ZERO WIDTH SPACE), or ''."""
    for char in name:
        if unicodedata.category(char) in ("Cf", "Cc", "Co", "Cn") or (char.isspace() and char != " "):
            return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"
    return ""


def unescape(value: str, stored: str | None, exported: bool) -> str:
    """A CSV value as the cell should hold it: without protocoder's formula escape only when
    protocoder wrote that escape (see the module's docstring)."""
    if not _NEUTRALISED_BY_US.match(value):
        return value
    plain = value[1:]
    if stored is not None:
        return plain if stored == plain else value
    return plain if exported else value


def read_cells_csv(path: Path, review: Review) -> list[CellUpdate]:
    """Check every row of a cells CSV against the workspace and return the updates it makes.

    Raises :class:`InvalidInput` with one problem per bad row; nothing is returned (so
    nothing can be written) unless every row is good. Only the columns the CSV has are
    set; the requirement check (a code's source, basis) uses the cell on file for the others.
    """
    rubric = review.require_valid()
    display = str(path)
    rows = read_csv_rows(path, display, REQUIRED_COLUMNS, CELL_COLUMNS)
    exported = bool(rows) and list(rows[0][1]) in (list(EXPORT_COLUMNS), list(CELL_COLUMNS))
    protocols = {p.id for p in review.protocols}
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str], int] = {}
    updates = []

    def bad(number: int, message: str) -> None:
        problems.append(Problem(display, 0, 0, f"row {number}: {message}"))

    for number, row in rows:
        protocol, field_id, reviewer = (unescape(row[name], None, True).strip()
                                        for name in ("protocol", "field", "reviewer"))
        code = unescape(row["code"], None, True).strip() or None
        before = len(problems)
        if protocol not in protocols:
            bad(number, f"unknown protocol {protocol!r}" if is_slug(protocol) or not protocol
                else f"protocol id {protocol!r} is not a safe id")
        if field_id not in rubric.field_ids:
            bad(number, f"unknown field {field_id!r} (the rubric has: {', '.join(rubric.field_ids)})")
        if not is_slug(reviewer):
            bad(number, f"reviewer name {reviewer!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
        if code is not None and field_id in rubric.field_ids:
            if code not in rubric.code_ids:
                bad(number, f"unknown code {code!r} (the rubric has: {', '.join(rubric.code_ids)})")
            elif code not in rubric.field(field_id).codes:
                bad(number, f"code {code!r} is not allowed for field {field_id!r} "
                            f"(allowed: {', '.join(rubric.field(field_id).codes)})")
        values: dict[str, Any] = {"code": code}
        for name in TEXT_COLUMNS:
            if name not in row:
                continue  # an absent column leaves the attribute as it is on file
            on_file = review.cells(protocol, field_id).get(reviewer) if protocol in protocols else None
            stored = None if on_file is None else (";".join(on_file.cites) if name == "cites" else
                                                   getattr(on_file, name))
            value = unescape(row[name], stored, exported)
            if len(value) > MAX_TEXT_LENGTH:
                bad(number, f"{name} is {len(value):,} characters long; the limit is {MAX_TEXT_LENGTH:,}")
            values[name] = tuple(k.strip() for k in value.split(";") if k.strip()) if name == "cites" else value
        for key in values.get("cites", ()):
            if key not in review.bibliography:
                bad(number, f"citation key {key!r} is not in references.bib")
        key = (protocol, field_id, reviewer)
        if key in seen:
            bad(number, f"duplicate of row {seen[key]} (same protocol, field and reviewer)")
        seen.setdefault(key, number)
        if len(problems) > before:
            continue
        existing = review.cells(protocol, field_id).get(reviewer) or Cell(protocol, field_id, reviewer, None)
        cell = replace(existing, **values)
        missing = [name for name in cell.missing(rubric) if name != "code"]
        if code is not None and missing:
            bad(number, f"code {code!r} requires: {', '.join(missing)}")
            continue
        updates.append(CellUpdate(protocol, field_id, reviewer, values))
    if problems:
        raise InvalidInput(problems)
    return updates


def import_cells(review: Review, updates: Iterable[CellUpdate]) -> WriteResult:
    """Write imported cells: every changed file, or (raising) none of them.

    What changes is decided under the workspace lock from the files as they are then;
    unchanged cells keep their file, rubric version and time.
    """
    rubric = review.require_valid()
    return Store(review.paths).write_cells(list(updates), rubric, stamp=now_iso())
