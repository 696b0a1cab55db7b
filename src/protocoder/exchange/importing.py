"""Cells in: every row of a cells CSV checked against the workspace, then written through the
store, every changed reviewer file or none (``import``).

Two streaming passes: :func:`check_cells_csv` checks every row (one problem per bad row, up
to :data:`MAX_REPORTED`), :func:`import_cells_csv` reads the file again and hands each
reviewer file's rows to the store as soon as its last row is read.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, Rejected, control_characters, stored_controls_note
from ..model import Cell, Quote, is_slug
from ..storage.findings import MAX_TEXT_LENGTH
from ..storage.store import CellUpdate, Store, WriteResult, now_iso
from ..storage.workspace import Review
from .columns import (
    ASSISTED_VALUES,
    CELL_COLUMNS,
    EARLIER_EXPORT_COLUMNS,
    EXPORT_COLUMNS,
    IMPORT_COLUMNS,
    REQUIRED_COLUMNS,
    TEXT_COLUMNS,
    unescape,
)
from .csvread import stream_csv_rows

MAX_REPORTED = 1000
"""Problems listed one by one; beyond them, one line counts the rest (a wrong file of a million rows
must not print a million lines or hold them all)."""


class _Problems:
    """Problems of an import, listed up to :data:`MAX_REPORTED`, the rest counted."""

    def __init__(self, display: str) -> None:
        self.display, self.listed, self.more = display, [], 0
        self.controls: set[str] = set()  # control characters stored as given (said after the import)
        self.control_rows: list[int] = []

    def stored_controls(self, number: int, texts: Iterable[str]) -> None:
        """Note a row whose text values hold control characters (stored, and shown as [U+XXXX])."""
        if found := control_characters("".join(texts)):
            self.controls.update(found)
            if len(self.control_rows) < 5:
                self.control_rows.append(number)

    def notes(self) -> tuple[str, ...]:
        """What the import says besides its count: the rows whose text holds control characters."""
        if not self.control_rows:
            return ()
        rows = ", ".join(str(number) for number in self.control_rows)
        return (stored_controls_note(sorted(self.controls), f"row{'s' if len(self.control_rows) > 1 else ''} "
                                     f"{rows}{' and more' if len(self.control_rows) == 5 else ''}"),)

    def add(self, number: int, message: str) -> None:
        if len(self.listed) < MAX_REPORTED:
            self.listed.append(Problem(self.display, 0, 0, f"row {number}: {message}"))
        else:
            self.more += 1

    def __len__(self) -> int:
        return len(self.listed) + self.more

    def raise_any(self) -> None:
        if self.listed:
            extra = [Problem(self.display, 0, 0, f"and {self.more:,} more rows with problems")] if self.more else []
            raise InvalidInput(self.listed + extra)


def checked_cell_rows(path: Path, review: Review, problems: _Problems, *,
                      progress: Callable[[int], None] | None = None, digest: Any = None, trusted: bool = False
                      ) -> Iterator[tuple[int, CellUpdate]]:
    """Each good row of a cells CSV as the update it makes, checked against the workspace, in file
    order; bad rows go to ``problems`` (one per row, naming it). Streams: memory grows only with
    the (protocol, reviewer, field) triples seen, for the duplicate check.

    ``trusted``: the second pass over a file the first pass found good, against the same review
    (the caller compares the two passes' digests): the checks, which depend only on the row and the
    review, are not repeated; only the updates are computed (a third of an import's time).
    """
    rubric = review.require_valid()
    display = problems.display
    header, rows = stream_csv_rows(path, display, REQUIRED_COLUMNS, IMPORT_COLUMNS, progress, digest)
    exported = header in (list(EXPORT_COLUMNS), list(CELL_COLUMNS), *map(list, EARLIER_EXPORT_COLUMNS))
    protocols = {p.id for p in review.protocols}
    allowed = {fld.id: fld.codes for fld in rubric.fields}  # rubric.field() searches the list
    snapshots = _LazySnapshots(review)
    # file -> field -> first row: the few distinct ids are interned, so a million rows stay small.
    seen: dict[tuple[str, str], dict[str, int]] = {}
    bad = problems.add
    intern = sys.intern
    for number, row in rows:
        if "" in row:
            bad(number, row[""])
            continue
        protocol = intern(unescape(row["protocol"], None, True).strip())
        field_id = intern(unescape(row["field"], None, True).strip())
        reviewer = intern(unescape(row["reviewer"], None, True).strip())
        code = unescape(row["code"], None, True).strip() or None
        on_file = review.cells(protocol, field_id).get(reviewer) if protocol in protocols else None
        values, wrong = _row_values(row, on_file, exported, code)
        if trusted:
            if "quotes" in row:
                quotes = _imported_quotes(row["quotes"], review, protocol, on_file, snapshots)
                if isinstance(quotes, str):  # the snapshot changed since the check
                    bad(number, quotes)
                elif on_file is None or quotes != on_file.quotes:
                    values["quotes"] = quotes
            yield number, CellUpdate(protocol, field_id, reviewer, values)
            continue
        before = len(problems)
        if protocol not in protocols:
            bad(number, f"unknown protocol {protocol!r}" if is_slug(protocol) or not protocol
                else f"protocol id {protocol!r} is not a safe id")
        if field_id not in allowed:
            bad(number, f"unknown field {field_id!r} (the rubric has: {', '.join(rubric.field_ids)})")
        if not is_slug(reviewer):
            bad(number, f"reviewer name {reviewer!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
        if code is not None and field_id in allowed:
            if code not in rubric.code_ids:
                bad(number, f"unknown code {code!r} (the rubric has: {', '.join(rubric.code_ids)})")
            elif code not in allowed[field_id]:
                bad(number, f"code {code!r} is not allowed for field {field_id!r} "
                            f"(allowed: {', '.join(allowed[field_id])})")
        for message in wrong:
            bad(number, message)
        for key in values.get("cites", ()):
            if key not in review.bibliography:
                bad(number, f"citation key {key!r} is not in references.bib")
        if "quotes" in row and protocol in protocols and len(problems) == before:
            quotes = _imported_quotes(row["quotes"], review, protocol, on_file, snapshots)
            if isinstance(quotes, str):
                bad(number, quotes)
            elif on_file is None or quotes != on_file.quotes:
                values["quotes"] = quotes
        fields = seen.setdefault((protocol, reviewer), {})
        if field_id in fields:
            bad(number, f"duplicate of row {fields[field_id]} (same protocol, field and reviewer)")
        fields.setdefault(field_id, number)
        if len(problems) > before:
            continue
        problems.stored_controls(number, [*(values.get(name, "") for name in ("source", "basis")),
                                          *(quote.text for quote in values.get("quotes", ()))])
        # A new cell is made whole (replace() of an empty one costs twice as much, a million times).
        cell = Cell(protocol, field_id, reviewer, **values) if on_file is None else replace(on_file, **values)
        missing = [name for name in cell.missing(rubric) if name != "code"]
        if code is not None and missing:
            bad(number, f"code {code!r} requires: {', '.join(missing)}")
            continue
        yield number, CellUpdate(protocol, field_id, reviewer, values)


def _row_values(row: dict[str, str], on_file: Cell | None, exported: bool, code: str | None
                ) -> tuple[dict[str, Any], list[str]]:
    """The values a row sets (its text columns and ``assisted``; quotes apart), and what is wrong with them."""
    values: dict[str, Any] = {"code": code}
    wrong: list[str] = []
    for name in TEXT_COLUMNS:
        if name not in row:
            continue  # an absent column leaves the attribute as it is on file
        stored = None if on_file is None else (";".join(on_file.cites) if name == "cites" else
                                               getattr(on_file, name))
        value = unescape(row[name], stored, exported)
        if len(value) > MAX_TEXT_LENGTH:
            wrong.append(f"{name} is {len(value):,} characters long; the limit is {MAX_TEXT_LENGTH:,}")
        values[name] = tuple(k.strip() for k in value.split(";") if k.strip()) if name == "cites" else value
    if "assisted" in row:
        flag = ASSISTED_VALUES.get(row["assisted"].strip().lower())
        if flag is None:
            wrong.append(f"assisted is 'yes' or empty, not {row['assisted']!r}")
        else:
            values["assisted"] = flag
    return values, wrong


class _LazySnapshots:
    """The workspace's snapshots, opened when a first quote needs checking."""

    def __init__(self, review: Review) -> None:
        self.review, self._snapshots = review, None

    def get(self) -> Any:
        if self._snapshots is None:
            from ..evidence.snapshots import Snapshots

            self._snapshots = Snapshots(self.review.paths)
        return self._snapshots


def _imported_quotes(text: str, review: Review, protocol_id: str, on_file: Cell | None,
                     snapshots: _LazySnapshots) -> tuple[Quote, ...] | str:
    """The quotes a ``quotes`` value gives a cell, each checked; or why the row is refused."""
    from ..evidence.quotes import admit_quote

    if not text.strip():
        return ()
    try:
        records = json.loads(text)
    except ValueError as exc:
        return f"quotes is not a JSON array of quotes ({exc.msg} at character {exc.pos + 1})"
    if not isinstance(records, list):
        return "quotes is not a JSON array of quotes"
    keys = {item.name for item in fields(Quote)}
    kept = {quote: True for quote in (on_file.quotes if on_file is not None else ())}
    quotes = []
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict) or not isinstance(record.get("source"), str) or \
                not isinstance(record.get("text"), str):
            return f"quote {index}: expected an object with a source id and a text"
        unknown = sorted(set(record) - keys)
        if unknown:
            return f"quote {index}: unknown key(s) {', '.join(unknown)} (a quote has: {', '.join(sorted(keys))})"
        try:
            quote = Quote(**{key: record[key] if record[key] is not None or key in ("start", "end") else ""
                             for key in record})
        except TypeError as exc:
            return f"quote {index}: {exc}"
        if quote.lines is not None:
            # Where a quote's lines are is recomputed when it is checked below; a list cannot be hashed.
            quote = replace(quote, lines=None)
        if quote in kept:
            quotes.append(quote)  # the cell holds it already: kept exactly
            continue
        try:  # judged as validate judges it (one verification path)
            quotes.append(admit_quote(quote, review.protocol(protocol_id), snapshots.get()))
        except Rejected as exc:
            return f"quote {index}: {exc}"
    return tuple(quotes)


def read_cells_csv(path: Path, review: Review) -> list[CellUpdate]:
    """Check every row of a cells CSV against the workspace and return the updates it makes.

    Raises :class:`InvalidInput` with one problem per bad row; nothing is returned (so
    nothing can be written) unless every row is good. Only the columns the CSV has are
    set; the requirement check (a code's source, basis) uses the cell on file for the others.
    """
    problems = _Problems(str(path))
    updates = [update for _, update in checked_cell_rows(path, review, problems)]
    problems.raise_any()
    return updates


@dataclass(frozen=True)
class CsvCheck:
    """What a first pass over a cells CSV found: every row good, how many, and where each file's rows end."""

    rows: int
    last_row: dict[tuple[str, str], int]
    digest: str
    notes: tuple[str, ...] = ()
    """Said after the import: rows whose text holds control characters (stored as given)."""


def check_cells_csv(path: Path, review: Review, *, progress: Callable[[int], None] | None = None) -> CsvCheck:
    """Check every row (streaming); raise :class:`InvalidInput` naming each bad row, else return
    what :func:`import_cells_csv` needs to write the file in one more pass."""
    problems = _Problems(str(path))
    digest = hashlib.sha256()
    last_row: dict[tuple[str, str], int] = {}
    rows = 0
    for number, update in checked_cell_rows(path, review, problems, progress=progress, digest=digest):
        last_row[(update.protocol, update.reviewer)] = number
        rows += 1
    problems.raise_any()
    return CsvCheck(rows, last_row, digest.hexdigest(), problems.notes())


def import_cells_csv(path: Path, review: Review, check: CsvCheck, *,
                     progress: Callable[[int], None] | None = None) -> WriteResult:
    """Write a checked cells CSV (see :func:`check_cells_csv`): every changed file, or none.

    The second pass reads the file again and hands each reviewer file's rows to the store as
    soon as its last row is read, so a CSV in export order (grouped by protocol and reviewer)
    is written in memory bounded by its largest file. A file that changed since the check is
    refused, and nothing is written.
    """
    rubric = review.require_valid()
    display = str(path)

    def groups() -> Iterator[tuple[str, str, list[CellUpdate]]]:
        problems = _Problems(display)
        digest = hashlib.sha256()
        pending: dict[tuple[str, str], list[CellUpdate]] = {}
        for number, update in checked_cell_rows(path, review, problems, progress=progress, digest=digest,
                                                trusted=True):
            key = (update.protocol, update.reviewer)
            pending.setdefault(key, []).append(update)
            if check.last_row.get(key) == number:
                yield update.protocol, update.reviewer, pending.pop(key)
        if digest.hexdigest() != check.digest or len(problems):
            # Raised inside the store's transaction: nothing staged becomes visible.
            raise InvalidInput([Problem(display, 0, 0, "the file changed while it was being imported; nothing "
                                                       "was written: import it again")])
        for (protocol, reviewer), group in pending.items():
            yield protocol, reviewer, group

    return Store(review.paths).write_cell_groups(groups(), rubric, stamp=now_iso())


def import_cells(review: Review, updates: Iterable[CellUpdate]) -> WriteResult:
    """Write imported cells: every changed file, or (raising) none of them.

    What changes is decided under the workspace lock from the files as they are then;
    unchanged cells keep their file, rubric version and time.
    """
    rubric = review.require_valid()
    return Store(review.paths).write_cells(list(updates), rubric, stamp=now_iso())


def released_changes(file: Path, review: Review) -> list[tuple[str, str]]:
    """(cell, reviewer) of every row that changes a reviewer's cell of the latest release (a third
    pass over the file, made only when something is released)."""
    from ..lifecycle.changes import current_released_cells

    current = current_released_cells(review.paths)
    if not current:
        return []
    changes = []
    for _, update in checked_cell_rows(file, review, _Problems(str(file))):
        key = f"{update.protocol}/{update.field}"
        if key not in current:
            continue
        on_file = review.cells(update.protocol, update.field).get(update.reviewer)
        for name, value in update.values.items():
            if name not in ("code", "source", "basis", "cites"):
                continue
            before = getattr(on_file, name) if on_file is not None else (() if name == "cites" else
                                                                           None if name == "code" else "")
            if (tuple(value) if name == "cites" else value) != (tuple(before) if name == "cites" else before):
                changes.append((key, update.reviewer))
                break
    return changes
