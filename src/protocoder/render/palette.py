"""Cell colours of the coloured matrix: the rubric's own, else a colour-blind-safe palette.

* A code that declares ``color`` keeps it.
* Codes on the rubric's ordinal ``order`` get a sequential single-hue ramp, light (lowest)
  to dark (highest): readable by every kind of colour vision and in greyscale.
* The not-applicable code (``role: not-applicable``) is a neutral grey.
* Any other code takes the next tint of the Okabe–Ito palette (distinguishable with
  deuteranopia, protanopia and tritanopia).
* Unresolved and not coded cells are not filled: they print a mark (and, in HTML, hatching).

Each colour comes with the text colour (black or white) that contrasts with it best.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import NOT_APPLICABLE

# ColorBrewer "Blues", light to dark: a sequential ramp safe for colour-blind readers.
_BLUES = ("#DEEBF7", "#C6DBEF", "#9ECAE1", "#6BAED6", "#4292C6", "#2171B5", "#08519C")
# Okabe & Ito (2008), as tints light enough for black text.
_OKABE_ITO_TINTS = ("#F5CF80", "#ABD9F4", "#80CEB9", "#F7F1A1", "#80B8D8", "#EAAE80", "#E5BCD3")
NEUTRAL = "#D9D9D9"


def _rgb(color: str) -> tuple[float, float, float]:
    value = color.lstrip("#")
    return tuple(int(value[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def luminance(color: str) -> float:
    """WCAG relative luminance of ``#RRGGBB``."""
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(color)]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def text_on(color: str) -> str:
    """``#000000`` or ``#FFFFFF``, whichever contrasts more with ``color``."""
    light = luminance(color)
    return "#000000" if (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) else "#FFFFFF"


def ramp(n: int) -> list[str]:
    """``n`` colours along the sequential ramp, light to dark, spread as widely as it allows."""
    if n <= 0:
        return []
    if n == 1:
        return [_BLUES[3]]
    last = len(_BLUES) - 1
    if n > len(_BLUES):
        return [_BLUES[min(round(i * last / (n - 1)), last)] for i in range(n)]
    return [_BLUES[round(i * last / (n - 1))] for i in range(n)]


def code_colors(codes: Sequence[Mapping[str, Any]], order: Sequence[str] | None) -> dict[str, dict[str, str]]:
    """``{code id: {"fill": "#RRGGBB", "text": "#RRGGBB", "source": how it was chosen}}``."""
    ordered = [code for code in order or () if any(c["id"] == code for c in codes)]
    ramp_colors = dict(zip(ordered, ramp(len(ordered)), strict=True))
    result: dict[str, dict[str, str]] = {}
    nominal = 0
    for code in codes:
        declared = str(code.get("color") or "")
        if declared:
            fill, source = declared.upper(), "rubric"
        elif code.get("role") == NOT_APPLICABLE:
            fill, source = NEUTRAL, "not applicable"
        elif code["id"] in ramp_colors:
            fill, source = ramp_colors[code["id"]], "ordinal"
        else:
            fill, source = _OKABE_ITO_TINTS[nominal % len(_OKABE_ITO_TINTS)], "nominal"
            nominal += 1
        result[code["id"]] = {"fill": fill, "text": text_on(fill), "source": source}
    return result


def xcolor_name(index: int) -> str:
    """An xcolor name for the index-th code (letters only: ids may hold ``-``, which xcolor reads as an operator)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return f"protocoder{letters}"
