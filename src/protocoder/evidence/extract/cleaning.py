"""Decoding and cleaning extracted text: control characters out, PDF ligatures spelled out.

Extracted text is data: it is stored, searched and shown, never evaluated, so nothing in a
document may drive the terminal that shows it.
"""

from __future__ import annotations

import re
import unicodedata

_T1_LIGATURES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean(text: str, *, pdf: bool = False) -> str:
    """NFC text with Unix line ends and no control characters (tab and newline aside).

    In PDF text the codes 0x1B–0x1F are ligatures of TeX's T1 fonts, so they become the
    letters; anywhere else they are controls like the rest and are dropped.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if pdf:
        for code, letters in _T1_LIGATURES.items():
            text = text.replace(code, letters)
    text = _CONTROL.sub("", text)
    return unicodedata.normalize("NFC", text)


def error_reason(exc: BaseException) -> str:
    """An exception as one short line (its type when it has no message)."""
    message = " ".join(str(exc).split())
    if not message:
        return type(exc).__name__
    return message[:200]


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped, at most 200 characters (a title of last resort)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks of UTF-16 (little- and big-endian): what Windows PowerShell 5's ``>`` and Notepad's
"Unicode" write. Read as Windows-1252, such a file was every other character a NUL."""


def decode_text(data: bytes) -> str:
    """Bytes of a text file as text: UTF-16 when it starts with its byte-order mark, else UTF-8 (a byte-order mark
    dropped), else Windows-1252."""
    if data[:2] in UTF16_MARKS:
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")
