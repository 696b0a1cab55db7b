"""Cells in and out of the workspace as CSV or JSON, for spreadsheets and scripts.

Export writes one row per reviewer cell. Import reads the same columns, checks *every*
row before anything is written (one error per bad row, with its row number; the header
is row 1), and then writes through the store: every changed reviewer file, or none.

Import changes only what the CSV says: a column that is absent (``source``, ``basis``,
``cites``, ``quotes``) leaves that attribute of every cell as it is; an empty value in a
column that is present clears it. A ``status`` column (as ``export --view cells`` may carry)
is read and ignored. The ``assisted`` column (``yes`` or empty, as export writes it) is applied:
``yes`` marks the cell as coded with candidate passages shown, an empty value clears the mark,
and no column leaves it as it is; changing it alone keeps the cell's rubric version and time.
The ``quotes`` column holds each cell's quotes as a JSON array of quote
records, as export writes it (at least ``source`` and ``text`` per quote): a quote the cell
already holds is kept as it is; any other is checked against its source's snapshot, as
``quote add`` checks one, and a row with a quote that is not there is refused, naming the
closest passage. Text is taken exactly as written, so export then import changes nothing.

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
import hashlib
import io
import json
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import InvalidInput, Problem, Rejected, control_characters, stored_controls_note, visible_text
from .model import Cell, Quote, is_slug
from .storage.findings import MAX_TEXT_LENGTH
from .storage.store import CellUpdate, Store, WriteResult, now_iso
from .storage.workspace import Review

CELL_COLUMNS = ("protocol", "field", "reviewer", "code", "source", "basis", "cites", "status")
"""Columns of ``export --view cells``; import reads them too and ignores ``status`` (derived, not data)."""
REQUIRED_COLUMNS = ("protocol", "field", "reviewer", "code")
EXPORT_COLUMNS = (*CELL_COLUMNS, "quotes", "assisted")
"""Export adds each cell's quotes (in JSON a list of objects, in CSV that list as JSON text) and
``assisted`` (``yes`` when candidate passages were shown before the code was chosen, else empty)."""
EARLIER_EXPORT_COLUMNS = ((*CELL_COLUMNS, "quotes"),)
"""Headers earlier versions' exports have: their formula escapes are protocoder's too."""
IGNORED_COLUMNS = ("status",)
"""Columns import accepts and ignores: read-only information an export may carry."""
IMPORT_COLUMNS = (*CELL_COLUMNS, "quotes", "assisted")
"""What import reads: the cell columns and ``quotes`` (a JSON array of quote records, as export
writes it; each quote that is not already the cell's is checked against its snapshot) and
``assisted`` (``yes``/empty; ``true``/``false``, ``no`` and ``1``/``0`` are read too)."""
ASSISTED_VALUES = {"yes": True, "true": True, "1": True, "": False, "no": False, "false": False, "0": False}
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
    its quotes, and ``assisted`` (``yes`` or empty)."""
    from .evidence.quotes import quote_record

    rubric = review.require_valid()

    def status(cell: Cell) -> str:
        return "draft" if cell.code is None else "complete" if cell.is_complete(rubric) else "incomplete"

    return [{"protocol": c.protocol, "field": c.field, "reviewer": c.reviewer, "code": c.code or "",
             "source": c.source, "basis": c.basis, "cites": list(c.cites), "status": status(c),
             "quotes": [quote_record(q) for q in c.quotes], "assisted": "yes" if c.assisted else ""}
            for c in review.all_cells()]


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
                value = json.dumps(_visible(list(value)), ensure_ascii=False)  # quotes: one JSON array per cell
            elif isinstance(value, list | tuple):
                value = ";".join(str(v) for v in value)
            values.append(neutralise(visible_text("" if value is None else str(value))))
        (quoting_all if any("\r" in value for value in values) else writer).writerow(values)
    return buffer.getvalue()


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """JSON text of rows (UTF-8, no NaN), control characters in values shown as ``[U+XXXX]``."""
    return json.dumps(_visible(list(rows)), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _visible(value: Any) -> Any:
    """``value`` with :func:`visible_text` applied to every string in it (keys and values)."""
    if isinstance(value, str):
        return visible_text(value)
    if isinstance(value, dict):
        return {_visible(key): _visible(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_visible(item) for item in value]
    return value


# --------------------------------------------------------------------------- reading CSV


IMPORT_LIMIT = 4 * 1024 ** 3
"""The largest CSV import reads (it streams: memory does not grow with the file)."""
MAX_REPORTED = 1000
"""Problems listed one by one; beyond them, one line counts the rest (a wrong file of a million rows
must not print a million lines or hold them all)."""


class _Counting(io.RawIOBase):
    """A binary file that counts the bytes read from it (for the progress bar)."""

    def __init__(self, handle: Any, progress: Callable[[int], None] | None, digest: Any = None) -> None:
        self._handle, self._progress, self._digest = handle, progress, digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._handle.readinto(buffer)
        if count:
            if self._digest is not None:
                self._digest.update(memoryview(buffer)[:count])
            if self._progress is not None:
                self._progress(count)
        return count


def _open_csv(path: Path, display: str) -> tuple[Any, int]:
    """The file opened for reading (a regular file only, never blocking on a pipe), and its size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InvalidInput([Problem(display, 0, 0, "no such file")]) from None
    except OSError as exc:
        raise InvalidInput([Problem(display, 0, 0, f"cannot be read ({exc.strerror or exc})")]) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InvalidInput([Problem(display, 0, 0, "not a regular file")])
    if info.st_size > IMPORT_LIMIT:
        os.close(fd)
        raise InvalidInput([Problem(display, 0, 0, f"file is {info.st_size:,} bytes; the limit is {IMPORT_LIMIT:,}")])
    return os.fdopen(fd, "rb", buffering=0), info.st_size


def _decoded_lines(binary: Any, display: str, emitted: list[int]) -> Iterator[str]:
    """The file's lines decoded as UTF-8 (one leading byte-order mark dropped), each split at a lone
    carriage return too, as ``newline=""`` would; a bad byte names the row it is in."""
    first = True
    for raw in io.BufferedReader(binary, buffer_size=1 << 20):
        if first:
            raw, first = raw.removeprefix(b"\xef\xbb\xbf"), False
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput([Problem(display, 0, 0, f"row {emitted[0] + 1}: not valid UTF-8 (byte "
                                                       f"0x{raw[exc.start]:02x}); save the file as UTF-8")]) from None
        if "\r" in line.rstrip("\r\n"):
            yield from _LONE_CR.split(line)
        else:
            yield line


_LONE_CR = re.compile("(?<=\r)(?!\n)")


def stream_csv_rows(path: Path, display: str, required: Sequence[str], allowed: Sequence[str],
                    progress: Callable[[int], None] | None = None, digest: Any = None
                    ) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """The header of a CSV and an iterator over its ``(row number, {column: value})`` pairs, read as
    they are needed (the header is row 1; blank rows are skipped).

    Raises :class:`InvalidInput` naming the row for a file that is empty, not UTF-8, too large,
    or lacks a required column (at once), and for a malformed row (as the iterator reaches it).
    ``progress`` is called with the count of bytes each read took; ``digest`` (a hashlib object)
    is updated with the bytes read.
    """
    handle, _ = _open_csv(path, display)
    emitted = [0]  # records the reader returned: the row a bad byte or a bad quote is in is the next one
    # Strict: a quote left open at the end of the file is an error (else the reader silently takes
    # the rest of the file as one value, and the row is misreported as a short one).
    reader = csv.reader(_decoded_lines(_Counting(handle, progress, digest), display, emitted), strict=True)

    def records() -> Iterator[list[str]]:
        try:
            for record in reader:
                emitted[0] += 1
                yield record
        except csv.Error as exc:
            raise InvalidInput([Problem(display, 0, 0, f"row {emitted[0] + 1}: {_csv_error(exc)}")]) from None

    stream = records()
    try:
        first = next(stream, None)
    except BaseException:
        handle.close()
        raise
    if first is None or not any(value.strip() for value in first) and next(stream, None) is None:
        handle.close()
        raise InvalidInput([Problem(display, 0, 0, "row 1: the file is empty; expected a header row with "
                                                   f"columns {', '.join(required)}")])
    header = [column.strip().lower() for column in first]
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
        # A file that is not text at all is reported as such, not by the names its first bytes make.
        try:
            next(stream, None)
        finally:
            handle.close()
        raise InvalidInput(problems)

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        with handle:
            width = len(header)
            for record in stream:
                number = emitted[0]
                if len(record) != width:
                    if any(value.strip() for value in record):
                        yield number, {"": f"{len(record)} values for {width} columns"}
                    continue
                if not any(value.strip() for value in record):
                    continue
                yield number, dict(zip(header, record, strict=True))

    return header, rows()


def _csv_error(exc: csv.Error) -> str:
    """What a CSV reader's error means, in the words of someone who writes CSV."""
    text = str(exc)
    if "unexpected end of data" in text:
        return ("a quoted value opened in this row is never closed: the file ends inside it (add the closing \", "
                "and double any \" inside the value)")
    if "expected after" in text:
        return ("text follows the closing quote of a value (quote the whole value, and double any \" inside it)")
    return f"malformed CSV: {text}"


def read_csv_rows(path: Path, display: str, required: Sequence[str], allowed: Sequence[str]
                  ) -> list[tuple[int, dict[str, str]]]:
    """All rows of a CSV with a header, as :func:`stream_csv_rows` reads them, checked for width."""
    _, rows = stream_csv_rows(path, display, required, allowed)
    problems, result = [], []
    for number, row in rows:
        if "" in row:
            problems.append(Problem(display, 0, 0, f"row {number}: {row['']}"))
        else:
            result.append((number, row))
    if problems:
        raise InvalidInput(problems)
    return result


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
    if stored is not None:  # export shows control characters as [U+XXXX]: that too is the stored value
        return plain if plain in (stored, visible_text(stored)) else value
    return plain if exported else value


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
                      progress: Callable[[int], None] | None = None, digest: Any = None
                      ) -> Iterator[tuple[int, CellUpdate]]:
    """Each good row of a cells CSV as the update it makes, checked against the workspace, in file
    order; bad rows go to ``problems`` (one per row, naming it). Streams: memory grows only with
    the (protocol, reviewer, field) triples seen, for the duplicate check."""
    rubric = review.require_valid()
    display = problems.display
    header, rows = stream_csv_rows(path, display, REQUIRED_COLUMNS, IMPORT_COLUMNS, progress, digest)
    exported = header in (list(EXPORT_COLUMNS), list(CELL_COLUMNS), *map(list, EARLIER_EXPORT_COLUMNS))
    protocols = {p.id for p in review.protocols}
    field_ids = set(rubric.field_ids)
    snapshots = _LazySnapshots(review)
    # file -> field -> first row: the few distinct ids are interned, so a million rows stay small.
    seen: dict[tuple[str, str], dict[str, int]] = {}
    bad = problems.add
    for number, row in rows:
        if "" in row:
            bad(number, row[""])
            continue
        protocol, field_id, reviewer = (sys.intern(unescape(row[name], None, True).strip())
                                        for name in ("protocol", "field", "reviewer"))
        code = unescape(row["code"], None, True).strip() or None
        before = len(problems)
        if protocol not in protocols:
            bad(number, f"unknown protocol {protocol!r}" if is_slug(protocol) or not protocol
                else f"protocol id {protocol!r} is not a safe id")
        if field_id not in field_ids:
            bad(number, f"unknown field {field_id!r} (the rubric has: {', '.join(rubric.field_ids)})")
        if not is_slug(reviewer):
            bad(number, f"reviewer name {reviewer!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
        if code is not None and field_id in field_ids:
            if code not in rubric.code_ids:
                bad(number, f"unknown code {code!r} (the rubric has: {', '.join(rubric.code_ids)})")
            elif code not in rubric.field(field_id).codes:
                bad(number, f"code {code!r} is not allowed for field {field_id!r} "
                            f"(allowed: {', '.join(rubric.field(field_id).codes)})")
        on_file = review.cells(protocol, field_id).get(reviewer) if protocol in protocols else None
        values: dict[str, Any] = {"code": code}
        for name in TEXT_COLUMNS:
            if name not in row:
                continue  # an absent column leaves the attribute as it is on file
            stored = None if on_file is None else (";".join(on_file.cites) if name == "cites" else
                                                   getattr(on_file, name))
            value = unescape(row[name], stored, exported)
            if len(value) > MAX_TEXT_LENGTH:
                bad(number, f"{name} is {len(value):,} characters long; the limit is {MAX_TEXT_LENGTH:,}")
            values[name] = tuple(k.strip() for k in value.split(";") if k.strip()) if name == "cites" else value
        if "assisted" in row:
            flag = ASSISTED_VALUES.get(row["assisted"].strip().lower())
            if flag is None:
                bad(number, f"assisted is 'yes' or empty, not {row['assisted']!r}")
            else:
                values["assisted"] = flag
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
        cell = replace(on_file or Cell(protocol, field_id, reviewer, None), **values)
        missing = [name for name in cell.missing(rubric) if name != "code"]
        if code is not None and missing:
            bad(number, f"code {code!r} requires: {', '.join(missing)}")
            continue
        yield number, CellUpdate(protocol, field_id, reviewer, values)


class _LazySnapshots:
    """The workspace's snapshots, opened when a first quote needs checking."""

    def __init__(self, review: Review) -> None:
        self.review, self._snapshots = review, None

    def get(self) -> Any:
        if self._snapshots is None:
            from .evidence.snapshots import Snapshots

            self._snapshots = Snapshots(self.review.paths)
        return self._snapshots


def _imported_quotes(text: str, review: Review, protocol_id: str, on_file: Cell | None,
                     snapshots: _LazySnapshots) -> tuple[Quote, ...] | str:
    """The quotes a ``quotes`` value gives a cell, each checked; or why the row is refused."""
    from .evidence.quotes import locate_quote, not_found_message, pinned_source, usable_snapshot

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
        if quote in kept:
            quotes.append(quote)  # the cell holds it already: kept exactly
            continue
        protocol = review.protocol(protocol_id)
        try:
            source = usable_snapshot(protocol, quote.source, snapshots.get())
        except Rejected as exc:
            return f"quote {index}: {exc}"
        located = locate_quote(quote, source, snapshots.get())
        if located is None:
            haystack = snapshots.get().haystack(source.sha256, source.media_type)
            return f"quote {index}: {not_found_message(quote, source, haystack, snapshots.get())}"
        assert pinned_source(protocol, quote.source) is not None
        quotes.append(located)
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
        for number, update in checked_cell_rows(path, review, problems, progress=progress, digest=digest):
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
