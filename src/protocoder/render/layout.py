"""How wide a table will print, and which layout of the matrix fits the page.

Widths are estimated in *em of the table's own font* from the glyph widths of Latin Modern
Roman (the metrics of Computer Modern, measured with ``\\settowidth`` once and copied here),
so the same estimate holds whatever size the table is set in. A standard ``article`` has a
text block 43 em of ``\\footnotesize`` wide at 10 pt, 40 em at 11 pt and 39 em at 12 pt, on
A4 and US letter alike; tables are laid out to fit :data:`TEXT_EM` em, a little less.

The rule for the matrix (``render --matrix-layout auto``), tried in this order:

1. ``columns``: protocols as rows, one column per field, headed by its short label
   (wrapped) and its id, when that fits;
2. ``rotated``: the same with the field headers turned 90°, when that fits;
3. ``transposed``: fields as rows (short label and id, wrapped), one column per protocol,
   protocol names turned 90° when they are wider than the codes, when that fits;
4. ``groups``: protocols as rows and the fields split into as many column groups as
   needed, each a table of its own that repeats the protocol column.

The Markdown matrix follows the same choice (``rotated`` prints as ``columns``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TEXT_EM = 38.0
"""Width available to a table, in em of its font (a 12 pt article's 39 em, less a margin)."""

COLUMN_GAP_EM = 0.8
"""Space between two columns (``\\tabcolsep`` = 0.4 em on each side)."""

LAYOUTS = ("auto", "columns", "rotated", "transposed", "groups")

# Latin Modern Roman, em per character, for the printable ASCII range (space to tilde).
_ROMAN = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
    (0.333, 0.278, 0.374, 0.833, 0.5, 0.833, 0.778, 0.278, 0.389, 0.389, 0.5, 0.778, 0.278, 0.333, 0.278, 0.5,
     0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.278, 0.278, 0.778, 0.778, 0.778, 0.472, 0.778, 0.75,
     0.708, 0.722, 0.764, 0.681, 0.653, 0.785, 0.75, 0.361, 0.514, 0.778, 0.625, 0.917, 0.75, 0.778, 0.681,
     0.778, 0.736, 0.556, 0.722, 0.75, 0.75, 1.028, 0.75, 0.75, 0.611, 0.278, 0.5, 0.278, 0.556, 0.75, 0.278,
     0.5, 0.556, 0.444, 0.556, 0.444, 0.306, 0.5, 0.556, 0.278, 0.306, 0.528, 0.278, 0.833, 0.556, 0.5, 0.556,
     0.528, 0.392, 0.394, 0.389, 0.556, 0.528, 0.722, 0.528, 0.528, 0.444, 0.5, 0.278, 0.5, 0.556), strict=True))
_MONO = 0.525
_BOLD = 1.12  # bold extended is about this much wider than roman


def char_em(ch: str) -> float:
    """Estimated width of one character in em (roman)."""
    if ch in _ROMAN:
        return _ROMAN[ch]
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    if unicodedata.combining(ch):
        return 0.0
    # Accented Latin, Greek and the [U+XXXX] placeholders' average share: err on the wide side.
    return 0.75


def text_em(text: str, *, mono: bool = False, bold: bool = False) -> float:
    """Estimated width of ``text`` set on one line, in em."""
    if mono:
        return _MONO * sum(0 if unicodedata.combining(ch) else 1 for ch in text)
    width = sum(char_em(ch) for ch in text)
    return width * _BOLD if bold else width


def longest_word_em(text: str, **kwargs: bool) -> float:
    """Width of the widest word: how narrow a column that wraps ``text`` can be."""
    return max((text_em(word, **kwargs) for word in text.split()), default=0.0)


SMALL = 0.9
"""``\\scriptsize`` relative to ``\\footnotesize``: 0.75 in a 10 pt article, 0.89 at 11 pt, 0.8 at 12 pt."""


def id_em(identifier: str) -> float:
    """Width of a field id set small in typewriter type, where it may break after ``.``, ``_`` or ``-``."""
    pieces = re.findall(r"[^._-]*[._-]?", identifier)
    return SMALL * max((text_em(piece, mono=True) for piece in pieces), default=0.0)


def columns_em(widths: Iterable[float]) -> float:
    """Width of a table whose columns are ``widths`` wide (gaps between them included)."""
    widths = list(widths)
    return sum(widths) + COLUMN_GAP_EM * max(len(widths) - 1, 0)


def pack(widths: Sequence[float], room: float) -> list[list[int]]:
    """Split columns, in order, into groups whose widths (with gaps) fit ``room``; at least one per group."""
    groups: list[list[int]] = []
    used = room + 1
    for index, width in enumerate(widths):
        if groups and used + COLUMN_GAP_EM + width <= room:
            groups[-1].append(index)
            used += COLUMN_GAP_EM + width
        else:
            groups.append([index])
            used = width
    return groups


@dataclass(frozen=True)
class MatrixLayout:
    """The chosen layout of the matrix and the widths (em) its template needs."""

    name: str
    row_em: float
    """Width of the first column (protocol names, or field labels when transposed)."""
    column_em: tuple[float, ...]
    """Width of each other column, in display order."""
    rotate: bool
    """Column headers turned 90°."""
    groups: tuple[tuple[int, ...], ...]
    """Indices of the fields (columns) in each column group; one group unless ``groups``."""
    width_em: float
    """Estimated width of the widest table."""


MIN_LABEL_EM = 10.0
"""The narrowest a wrapped label column may be (about two words a line)."""
HEADER_WRAP_EM = 5.5
"""A field header wraps to this width (or to its longest word, if wider)."""
ROTATED_EM = 1.2
"""A column whose header is turned 90° needs one line's height."""


def choose_matrix_layout(*, protocols: Sequence[str], headers: Sequence[tuple[str, str]], cell_em: float,
                         requested: str = "auto", room: float = TEXT_EM) -> MatrixLayout:
    """Pick the matrix layout (see the module docstring for the rule).

    ``headers`` are the fields' (short label, id); ``cell_em`` is the widest thing a cell
    prints (a code id or a status mark).
    """
    name_em = max((text_em(name) for name in protocols), default=text_em("Protocol"))
    name_em = min(max(name_em, text_em("Protocol", bold=True)), 12.0)
    upright = [max(cell_em, longest_word_em(short), min(text_em(short), HEADER_WRAP_EM), id_em(fid))
               for short, fid in headers]
    turned = [max(cell_em, ROTATED_EM) for _ in headers]
    every = (tuple(range(len(headers))),)
    candidates: dict[str, MatrixLayout] = {
        "columns": MatrixLayout("columns", name_em, tuple(upright), False, every, columns_em([name_em, *upright])),
        "rotated": MatrixLayout("rotated", name_em, tuple(turned), True, every, columns_em([name_em, *turned])),
    }
    # Transposed: protocol names head the columns, turned when any is wider than a cell.
    names = [text_em(name, bold=False) for name in protocols]
    rotate_names = any(width > max(cell_em, 3.0) for width in names)
    per_protocol = [max(cell_em, ROTATED_EM) if rotate_names else max(cell_em, width) for width in names]
    label_em = max(MIN_LABEL_EM, room - columns_em(per_protocol) - COLUMN_GAP_EM)
    candidates["transposed"] = MatrixLayout("transposed", label_em, tuple(per_protocol), rotate_names, every,
                                            columns_em([label_em, *per_protocol]))
    groups = tuple(tuple(g) for g in pack(turned, room - name_em - COLUMN_GAP_EM))
    candidates["groups"] = MatrixLayout("groups", name_em, tuple(turned), True, groups,
                                        max((columns_em([name_em, *(turned[i] for i in g)]) for g in groups),
                                            default=name_em))
    if requested != "auto":
        return candidates[requested]
    for name in ("columns", "rotated", "transposed"):
        if candidates[name].width_em <= room:
            return candidates[name]
    return candidates["groups"]
