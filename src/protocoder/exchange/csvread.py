"""Reading a CSV with a header, streamed: rows as they are needed, each bad one named by its row.

The file is read as bytes (a regular file only, never more than :data:`IMPORT_LIMIT`),
decoded as UTF-8 line by line (a bad byte names its row), and split by the csv module in
strict mode (a quote left open names the row it opens in). The header may start with
byte-order marks; any other invisible character in a column name is refused, named.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem
from .columns import IGNORED_COLUMNS

IMPORT_LIMIT = 4 * 1024 ** 3
"""The largest CSV import reads (it streams: memory does not grow with the file)."""


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
                if not "".join(record).strip():  # a row of blank values (one string, not a generator)
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
