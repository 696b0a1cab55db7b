"""Reading long-format rating CSVs, with errors that name the file and the CSV row."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from ._errors import AgreementInputError

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for
    import pandas as pd

REQUIRED_COLUMNS: tuple[str, ...] = ("unit", "rater", "code")
KNOWN_COLUMNS: tuple[str, ...] = ("unit", "rater", "code", "group", "source", "cites")
_BOM = b"\xef\xbb\xbf"
MAX_RATINGS_BYTES = 256 * 1024**2
"""No ratings file is read beyond this (256 MiB: over ten million ratings)."""


@dataclass
class RatingsTable:
    """A ratings CSV as plain columns of text, checked: what :func:`read_ratings_csv` returns as a
    DataFrame, without the cost of importing pandas (the command line reads CSVs this way).

    ``columns`` maps each column name (known ones in lower case) to its values in file order;
    ``rows`` holds each rating's CSV record number (header = 1), blank lines skipped.
    """

    path: Path
    columns: dict[str, list[str]]
    rows: Sequence[int]

    def __len__(self) -> int:
        return len(self.rows)

    def keep(self, mask: Sequence[bool]) -> RatingsTable:
        """The ratings where ``mask`` is true (e.g. one group)."""
        return RatingsTable(self.path, {name: [v for v, m in zip(values, mask, strict=True) if m]
                                        for name, values in self.columns.items()},
                            [row for row, m in zip(self.rows, mask, strict=True) if m])

    def to_frame(self) -> pd.DataFrame:
        """The same ratings as a DataFrame of ``str`` columns (index 0..n-1)."""
        import pandas as pd

        frame = pd.DataFrame(self.columns, columns=list(self.columns), dtype=str)
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
    header, data = _split(text, path)
    header = _unique_names([name.strip() for name in header])
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
            columns = {name: [v for v, k in zip(values, keep, strict=True) if k] for name, values in columns.items()}
            rows = [row for row, k in zip(rows, keep, strict=True) if k]
    if not rows:
        raise AgreementInputError(f"{path}, row 2: no ratings after the header", path=path, row=2)

    for name in REQUIRED_COLUMNS:
        values = columns[name]
        if "" in values:
            row = rows[values.index("")]
            raise AgreementInputError(f"{path}, row {row}: empty {name}", path=path, row=row)

    if categories is not None:
        allowed = [str(c) for c in categories]
        allowed_set = set(allowed)
        codes = columns["code"]
        if not allowed_set.issuperset(codes):
            pos = next(i for i, code in enumerate(codes) if code not in allowed_set)
            unit, rater = columns["unit"][pos], columns["rater"][pos]
            raise AgreementInputError(
                f"{path}, row {rows[pos]}: code {codes[pos]!r} (unit {unit!r}, rater "
                f"{rater!r}) is not one of the categories: {', '.join(allowed)}",
                path=path,
                row=rows[pos],
                unit=unit,
                rater=rater,
            )

    keys = ["group", "unit", "rater"] if "group" in columns else ["unit", "rater"]
    seen = list(zip(*(columns[k] for k in keys), strict=True))
    if len(set(seen)) != len(seen):
        first: dict[tuple[str, ...], int] = {}
        for pos, key in enumerate(seen):
            earlier = first.setdefault(key, pos)
            if earlier != pos:
                record = dict(zip(keys, key, strict=True))
                in_group = f" in group {record['group']!r}" if "group" in keys else ""
                raise AgreementInputError(
                    f"{path}, rows {rows[earlier]} and {rows[pos]}: rater {record['rater']!r} rated unit "
                    f"{record['unit']!r}{in_group} twice",
                    path=path,
                    row=rows[pos],
                    unit=record["unit"],
                    rater=record["rater"],
                )
    return RatingsTable(path, columns, rows)


def _fields_per_line(text: str) -> set[int]:
    """The distinct numbers of comma-separated fields on the lines of ``text`` (no quotes)."""
    import numpy as np  # already loaded by the agreement engine

    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # In UTF-8 the bytes of ',' and '\n' never occur inside another character.
    ends = np.flatnonzero(data == 10)
    commas = np.flatnonzero(data == 44)
    per_line = np.bincount(np.searchsorted(ends, commas), minlength=len(ends) + 1)
    return set((per_line + 1).tolist())


def _split(text: str, path: Path) -> tuple[list[str], list[list[str]]]:
    """The header's fields and the data as columns (short records padded with empty fields).

    A file without quotes, carriage returns other than in CRLF, or NUL bytes, whose records
    all have the header's number of fields, is split with ``str.split``: the same fields as
    the ``csv`` module finds, several times faster. Anything else goes through ``csv``.
    """
    plain = text.replace("\r\n", "\n") if "\r" in text else text
    if '"' not in plain and "\r" not in plain and "\0" not in plain:
        body = plain[:-1] if plain.endswith("\n") else plain
        width = body.split("\n", 1)[0].count(",") + 1
        if width >= 2 and _fields_per_line(body) == {width}:
            fields = body.replace("\n", ",").split(",")
            return fields[:width], [fields[width + i :: width] for i in range(width)]
    records = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(records)
        body_records = list(records)
    except csv.Error as exc:
        # The csv module counts physical lines; that is the best position it gives.
        row = records.line_num
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
