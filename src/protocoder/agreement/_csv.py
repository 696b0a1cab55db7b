"""Reading long-format rating CSVs, with errors that name the file and the CSV row."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._errors import AgreementInputError
from ._formulas import IntArray

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for
    import pandas as pd

REQUIRED_COLUMNS: tuple[str, ...] = ("unit", "rater", "code")
KNOWN_COLUMNS: tuple[str, ...] = ("unit", "rater", "code", "group", "source", "cites")
_BOM = b"\xef\xbb\xbf"
MAX_RATINGS_BYTES = 256 * 1024**2
"""No ratings file is read beyond this (256 MiB: over ten million ratings)."""


class RatingsTable:
    """A ratings CSV as plain columns of text, checked: what :func:`read_ratings_csv` returns as a
    DataFrame, without the cost of importing pandas (the command line reads CSVs this way).

    ``names`` lists the columns (known ones in lower case); ``columns`` maps each to its
    values in file order; ``rows`` holds each rating's CSV record number (header = 1),
    blank lines skipped. A simple file's unit, rater, code and group columns are read
    straight into numbers (``factor``): their text is made only if asked for.
    """

    def __init__(self, path: Path, names: list[str], rows: Sequence[int], columns: dict[str, list[str]],
                 factors: dict[str, tuple[IntArray, list[str]]] | None = None) -> None:
        self.path, self.names, self.rows = path, names, rows
        self._columns, self._factors = columns, factors or {}

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def columns(self) -> dict[str, list[str]]:
        """Every column's values."""
        return {name: self.column(name) for name in self.names}

    def column(self, name: str) -> list[str]:
        """One column's values (KeyError if there is no such column)."""
        if name not in self._columns:
            ids, values = self._factors[name]
            self._columns[name] = list(map(values.__getitem__, ids.tolist()))
        return self._columns[name]

    def factor(self, name: str) -> tuple[IntArray, list[str]] | None:
        """A column read as numbers: each rating's index into the distinct values (in order
        of first appearance), and those values; None when it was read as text."""
        return self._factors.get(name)

    def keep(self, mask: Sequence[bool]) -> RatingsTable:
        """The ratings where ``mask`` is true (e.g. one group)."""
        return RatingsTable(self.path, self.names, [row for row, m in zip(self.rows, mask, strict=True) if m],
                            {name: list(compress(values, mask)) for name, values in self.columns.items()})

    def to_frame(self) -> pd.DataFrame:
        """The same ratings as a DataFrame of ``str`` columns (index 0..n-1)."""
        import pandas as pd

        frame = pd.DataFrame(self.columns, columns=self.names, dtype=str)
        frame.attrs["path"] = str(self.path)
        return frame


def read_ratings_csv(path: Path, *, categories: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a long CSV of ratings with columns ``unit,rater,code`` (and optionally ``group``,
    ``source``, ``cites`` or any other column, kept as text).

    Row numbers in errors count CSV records with the header as row 1 and the first data
    row as row 2. Raises :class:`AgreementInputError` for an empty or non-UTF-8 file,
    missing columns, a malformed row, an empty unit/rater/code, a code outside
    ``categories`` (when given) and a rater rating the same unit (within a group) twice.
    A UTF-8 byte-order mark is dropped and CRLF line ends are accepted. Completely blank
    lines are skipped. Values of ``unit``, ``rater``, ``code`` and ``group`` are stripped
    of surrounding whitespace; every column is returned as ``str``.
    """
    return read_ratings_table(path, categories=categories).to_frame()


def read_ratings_table(path: Path, *, categories: Sequence[str] | None = None) -> RatingsTable:
    """:func:`read_ratings_csv` without pandas: the same checks and errors, plain columns."""
    path = Path(path)
    text = _read_text(path)
    table = _read_plain(text, path)
    if table is None:
        table = _read_text_columns(text, path)
    if categories is not None:
        _check_categories(table, [str(c) for c in categories])
    _check_duplicates(table)
    return table


def _header(fields: list[str], path: Path) -> list[str]:
    """Column names: stripped, made unique, known names in lower case; the required ones present."""
    header = _unique_names([name.strip() for name in fields])
    lower = {name.lower(): name for name in header}
    header = [k if (k := name.lower()) in KNOWN_COLUMNS and lower[k] == name else name for name in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise AgreementInputError(
            f"{path}, row 1: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (found: {', '.join(header) or 'none'})",
            path=path,
            row=1,
        )
    return header


def _read_text_columns(text: str, path: Path) -> RatingsTable:
    """Any CSV: fields as text, blank lines dropped, empty unit/rater/code refused."""
    fields, data = _split(text, path)
    header = _header(fields, path)
    columns = dict(zip(header, data, strict=True))
    rows: Sequence[int] = range(2, len(data[0]) + 2)
    for name in ("unit", "rater", "code", "group"):
        if name in columns:
            columns[name] = list(map(str.strip, columns[name]))

    # A record whose every field is blank is a blank line, not a rating.
    if "" in columns["unit"]:
        blank = [not v and all(not columns[c][i].strip() for c in header) for i, v in enumerate(columns["unit"])]
        if any(blank):
            keep = [not b for b in blank]
            columns = {name: list(compress(values, keep)) for name, values in columns.items()}
            rows = list(compress(rows, keep))
    if not rows:
        raise AgreementInputError(f"{path}, row 2: no ratings after the header", path=path, row=2)

    for name in REQUIRED_COLUMNS:
        values = columns[name]
        if "" in values:
            row = rows[values.index("")]
            raise AgreementInputError(f"{path}, row {row}: empty {name}", path=path, row=row)
    return RatingsTable(path, header, rows, columns)


def _check_categories(table: RatingsTable, allowed: list[str]) -> None:
    factor = table.factor("code")
    values = factor[1] if factor is not None else table.column("code")
    if set(allowed).issuperset(values):
        return
    if factor is not None:
        bad = [i for i, code in enumerate(factor[1]) if code not in allowed]
        pos = int(np.isin(factor[0], bad).argmax())
    else:
        pos = next(i for i, code in enumerate(values) if code not in allowed)
    code, unit, rater, row = table.column("code")[pos], table.column("unit")[pos], table.column("rater")[pos], \
        table.rows[pos]
    raise AgreementInputError(
        f"{table.path}, row {row}: code {code!r} (unit {unit!r}, rater {rater!r}) is not one of the "
        f"categories: {', '.join(allowed)}",
        path=table.path,
        row=row,
        unit=unit,
        rater=rater,
    )


def _check_duplicates(table: RatingsTable) -> None:
    keys = ["group", "unit", "rater"] if "group" in table.names else ["unit", "rater"]
    factors = [table.factor(k) for k in keys]
    earlier = pos = -1
    if all(f is not None for f in factors):
        combined = np.zeros(len(table), dtype=np.int64)
        for ids, values in factors:  # type: ignore[misc]
            combined = combined * max(len(values), 1) + ids
        _, first = np.unique(combined, return_index=True)
        if len(first) < len(combined):
            later = np.ones(len(combined), dtype=bool)
            later[first] = False
            pos = int(later.argmax())
            earlier = int((combined == combined[pos]).argmax())
    else:
        seen = list(zip(*(table.column(k) for k in keys), strict=True))
        if len(set(seen)) != len(seen):
            first_at: dict[tuple[str, ...], int] = {}
            for i, key in enumerate(seen):
                if first_at.setdefault(key, i) != i:
                    earlier, pos = first_at[key], i
                    break
    if pos < 0:
        return
    record = {k: table.column(k)[pos] for k in keys}
    in_group = f" in group {record['group']!r}" if "group" in keys else ""
    raise AgreementInputError(
        f"{table.path}, rows {table.rows[earlier]} and {table.rows[pos]}: rater {record['rater']!r} rated unit "
        f"{record['unit']!r}{in_group} twice",
        path=table.path,
        row=table.rows[pos],
        unit=record["unit"],
        rater=record["rater"],
    )


# Bytes str.strip() removes, among ASCII: tab, line feed, vertical tab, form feed, carriage
# return, the four separators 0x1c-0x1f and space.
_ASCII_SPACE = np.array([9, 10, 11, 12, 13, 28, 29, 30, 31, 32], dtype=np.uint8)
_KEYS = ("unit", "rater", "code", "group")


def _read_plain(text: str, path: Path) -> RatingsTable | None:
    """A simple file read straight into numbers, or None for anything else.

    Simple: no quotes, NUL bytes or lone carriage returns, every line with the header's
    number of fields, and unit, rater, code and group values neither empty nor starting or
    ending in white space (so that the general reader would find the same text). Their
    values are then numbered from the bytes with numpy (``np.unique`` over fixed-width
    byte strings), without making a Python string per rating.
    """
    plain = text.replace("\r\n", "\n") if "\r" in text else text
    if '"' in plain or "\r" in plain or "\0" in plain:
        return None
    body = plain[:-1] if plain.endswith("\n") else plain
    first_line, _, rest = body.partition("\n")
    width = first_line.count(",") + 1
    if width < 2 or not rest:
        return None
    header = _header(first_line.split(","), path)
    data = np.frombuffer(rest.encode("utf-8"), dtype=np.uint8)
    # In UTF-8 the bytes of ',' and '\n' never occur inside another character.
    bounds = np.flatnonzero((data == 44) | (data == 10))
    if (len(bounds) + 1) % width or not (data[bounds[width - 1 :: width]] == 10).all() \
            or (data[bounds] == 10).sum() != (len(bounds) + 1) // width - 1:
        return None  # some line has another number of fields
    starts = np.concatenate(([0], bounds + 1))
    ends = np.concatenate((bounds, [len(data)]))
    factors = {}
    for column, name in enumerate(header):
        if name in _KEYS:
            found = _number_bytes(data, starts[column::width], ends[column::width])
            if found is None:
                return None
            factors[name] = found
    columns: dict[str, list[str]] = {}
    others = [i for i, name in enumerate(header) if name not in _KEYS]
    if others:
        fields = rest.replace("\n", ",").split(",")
        columns = {header[i]: fields[i::width] for i in others}
    return RatingsTable(path, header, range(2, (len(bounds) + 1) // width + 2), columns, factors)


def _number_bytes(data: np.ndarray, starts: IntArray, ends: IntArray) -> tuple[IntArray, list[str]] | None:
    """Fields ``data[starts[i]:ends[i]]`` numbered by first appearance, with their distinct
    values as text; None when a field is empty, long, or has white space or non-ASCII at an end."""
    lengths = ends - starts
    if not len(lengths) or lengths.min() == 0:
        return None
    edges = np.concatenate((data[starts], data[ends - 1]))
    width = int(lengths.max())
    if width > 256 or (edges >= 0x80).any() or np.isin(edges, _ASCII_SPACE).any():
        return None
    # Each field as whole 8-byte words, zero-padded (no field holds a zero byte).
    padded = -(-width // 8) * 8
    matrix = np.zeros((len(starts), padded), dtype=np.uint8)
    last = len(data) - 1
    for offset in range(width):  # column by column: memory stays that of the matrix
        matrix[:, offset] = np.where(offset < lengths, data[np.minimum(starts + offset, last)], 0)
    words = matrix.view(np.uint64)
    # One integer per field: the word itself, or a hash of the words, checked for collisions.
    key = words[:, 0].copy()
    for j in range(1, words.shape[1]):
        key = (key ^ (key >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9) + words[:, j]
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if words.shape[1] > 1 and not (words == words[first[inverse]]).all():
        keys = np.ascontiguousarray(matrix).view(f"S{padded}").ravel()  # a collision: compare the bytes
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.intp)
    rank[order] = np.arange(len(uniq))
    distinct = np.ascontiguousarray(matrix[first[order]]).view(f"S{padded}").ravel()
    values = [value.decode("utf-8") for value in distinct.tolist()]  # 'S' drops the zero padding
    return rank[inverse], values


def _split(text: str, path: Path) -> tuple[list[str], list[list[str]]]:
    """The header's fields and the data as columns (short records padded with empty fields)."""
    # Strict: a quote left open is an error (else the rest of the file becomes one value, silently).
    records = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(records)
        body_records = list(records)
    except csv.Error as exc:
        row = _bad_record_row(text)
        if "unexpected end of data" in str(exc):
            raise AgreementInputError(f"{path}, row {row}: a quoted value opened in this row is never closed: the "
                                      "file ends inside it (add the closing \")", path=path, row=row) from exc
        raise AgreementInputError(f"{path}, row {row}: malformed CSV: {exc}", path=path, row=row) from exc
    width = len(header)
    if set(map(len, body_records)) - {width}:
        for number, record in enumerate(body_records, start=2):
            if len(record) > width:
                raise AgreementInputError(
                    f"{path}, row {number}: malformed CSV: expected {width} fields, saw {len(record)}",
                    path=path,
                    row=number,
                )
        # Short records (a blank line is one) are padded with empty fields, as pandas does.
        body_records = [record + [""] * (width - len(record)) for record in body_records]
    return header, [list(map(itemgetter(i), body_records)) for i in range(width)]


def _bad_record_row(text: str) -> int:
    """The physical line where the record the csv module refused starts (read again: errors only)."""
    records = csv.reader(io.StringIO(text, newline=""), strict=True)
    ended = 0
    try:
        for _ in records:
            ended = records.line_num
    except csv.Error:
        pass
    return ended + 1


def _read_text(path: Path) -> str:
    """The file as text: capped in size, UTF-8 (a byte-order mark dropped), not blank."""
    try:
        with path.open("rb") as handle:
            # Capped, so that /dev/zero or an endless pipe ends in an error, not in swap.
            raw = handle.read(MAX_RATINGS_BYTES + 1)
    except OSError as exc:
        raise AgreementInputError(f"{path}: cannot read ratings file: {exc}", path=path) from exc
    if len(raw) > MAX_RATINGS_BYTES:
        raise AgreementInputError(f"{path}: the ratings file is larger than {MAX_RATINGS_BYTES:,} bytes", path=path)
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        row = _row_of_offset(raw, exc.start)
        raise AgreementInputError(
            f"{path}, row {row}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}); save the file as UTF-8",
            path=path,
            row=row,
        ) from exc
    if not text.strip():
        raise AgreementInputError(
            f"{path}, row 1: the file is empty; expected a header with columns "
            f"{', '.join(REQUIRED_COLUMNS)}",
            path=path,
            row=1,
        )
    return text


def _unique_names(header: list[str]) -> list[str]:
    """Header names made unique as pandas makes them (``x``, ``x.1``); blanks named by position."""
    out: list[str] = []
    for position, name in enumerate(header):
        name = name or f"Unnamed: {position}"
        candidate, count = name, 0
        while candidate in out:
            count += 1
            candidate = f"{name}.{count}"
        out.append(candidate)
    return out


def _row_of_offset(raw: bytes, offset: int) -> int:
    """CSV record number (header = 1) holding byte ``offset``; quoted newlines respected."""
    prefix = raw[:offset].decode("utf-8", errors="replace")
    records = sum(1 for _ in csv.reader(io.StringIO(prefix, newline="")))
    if not prefix or prefix.endswith(("\n", "\r")):
        return records + 1
    return max(records, 1)
