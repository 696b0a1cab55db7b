"""Reading long-format rating CSVs, with errors that name the file and the CSV row."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ._errors import AgreementInputError

REQUIRED_COLUMNS: tuple[str, ...] = ("unit", "rater", "code")
KNOWN_COLUMNS: tuple[str, ...] = ("unit", "rater", "code", "group", "source", "cites")
_BOM = b"\xef\xbb\xbf"
MAX_RATINGS_BYTES = 256 * 1024**2
"""No ratings file is read beyond this (256 MiB: over ten million ratings)."""


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
    path = Path(path)
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

    try:
        # Everything as text: "NA" is a code here, not a missing value, and "=1+2" is text.
        frame = pd.read_csv(
            io.StringIO(text),
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=False,
        )
    except (pd.errors.ParserError, ValueError) as exc:
        row = _row_from_parser_message(str(exc))
        where = f", row {row}" if row is not None else ""
        raise AgreementInputError(
            f"{path}{where}: malformed CSV: {exc}", path=path, row=row
        ) from exc

    frame.columns = [str(c).strip() for c in frame.columns]
    lower = {c.lower(): c for c in frame.columns}
    rename = {lower[k]: k for k in KNOWN_COLUMNS if k in lower and lower[k] != k}
    if rename:
        frame = frame.rename(columns=rename)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise AgreementInputError(
            f"{path}, row 1: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (found: {', '.join(frame.columns) or 'none'})",
            path=path,
            row=1,
        )

    frame = frame.fillna("")
    for col in ("unit", "rater", "code", "group"):
        if col in frame.columns:
            frame[col] = frame[col].str.strip()
    # The index is the data-record number, so row = index + 2 survives dropping blank lines.
    candidates = (frame["unit"] == "").to_numpy()
    if candidates.any():
        sub = frame.loc[candidates]
        blank = (sub.apply(lambda col: col.str.strip()) == "").all(axis=1)
        frame = frame.drop(index=sub.index[blank.to_numpy()])
    if frame.empty:
        raise AgreementInputError(f"{path}, row 2: no ratings after the header", path=path, row=2)

    for col in REQUIRED_COLUMNS:
        empty = (frame[col] == "").to_numpy()
        if empty.any():
            row = int(frame.index[empty.argmax()]) + 2
            raise AgreementInputError(f"{path}, row {row}: empty {col}", path=path, row=row)

    if categories is not None:
        allowed = [str(c) for c in categories]
        bad = (~frame["code"].isin(allowed)).to_numpy()
        if bad.any():
            pos = int(bad.argmax())
            row = int(frame.index[pos]) + 2
            rec = frame.iloc[pos]
            raise AgreementInputError(
                f"{path}, row {row}: code {rec['code']!r} (unit {rec['unit']!r}, rater "
                f"{rec['rater']!r}) is not one of the categories: {', '.join(allowed)}",
                path=path,
                row=row,
                unit=str(rec["unit"]),
                rater=str(rec["rater"]),
            )

    keys = ["group", "unit", "rater"] if "group" in frame.columns else ["unit", "rater"]
    later = frame.duplicated(subset=keys, keep="first").to_numpy()
    if later.any():
        pos = int(later.argmax())
        rec = frame.iloc[pos]
        same = (frame[keys] == rec[keys]).all(axis=1).to_numpy()
        first_row = int(frame.index[same.argmax()]) + 2
        row = int(frame.index[pos]) + 2
        in_group = f" in group {rec['group']!r}" if "group" in keys else ""
        raise AgreementInputError(
            f"{path}, rows {first_row} and {row}: rater {rec['rater']!r} rated unit "
            f"{rec['unit']!r}{in_group} twice",
            path=path,
            row=row,
            unit=str(rec["unit"]),
            rater=str(rec["rater"]),
        )

    frame = frame.reset_index(drop=True)
    frame.attrs["path"] = str(path)
    return frame


def _row_of_offset(raw: bytes, offset: int) -> int:
    """CSV record number (header = 1) holding byte ``offset``; quoted newlines respected."""
    prefix = raw[:offset].decode("utf-8", errors="replace")
    records = sum(1 for _ in csv.reader(io.StringIO(prefix, newline="")))
    if not prefix or prefix.endswith(("\n", "\r")):
        return records + 1
    return max(records, 1)


def _row_from_parser_message(message: str) -> int | None:
    # pandas reports e.g. "Expected 3 fields in line 4, saw 4"; its line counts the header.
    match = re.search(r"\b(?:line|row) (\d+)", message)
    return int(match.group(1)) if match else None
