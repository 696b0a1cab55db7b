"""Render a :class:`~protocoder.lifecycle.view.View` to Markdown and LaTeX through Jinja2 templates.

Templates hold layout only. Everything they print passes through an escaping
``finalize`` hook (Markdown or LaTeX), so a template cannot forget to escape; the
filters that build markup themselves (basis text, citations) return marker strings that
the hook leaves alone. Counting, ordering and citation numbering happen here, in Python.

A workspace's own ``templates/`` folder overrides the built-in templates file by file.
"""

from __future__ import annotations

import re
import traceback
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from .errors import InvalidInput, Problem
from .escape import (
    Latex,
    Markdown,
    inline_html,
    inline_plain,
    inline_to_latex,
    inline_to_markdown,
    latex_escape,
    latex_url,
    md_escape,
    shared_inline_parse,
)
from .layout import (
    COLUMN_GAP_EM,
    MIN_LABEL_EM,
    ROTATED_EM,
    SMALL,
    TEXT_EM,
    choose_matrix_layout,
    columns_em,
    id_em,
    longest_word_em,
    pack,
    text_em,
)
from .lifecycle.view import View
from .model import MAX_SHORT_LABEL
from .palette import code_colors
from .storage.outputs import OutputResult, workspace_template_loader, write_output_folder

BUILTIN_TEMPLATES = Path(__file__).parent / "templates"
FORMATS = ("md", "latex")
"""What ``render`` and ``freeze`` write by default; ``html`` (one ``report.html``) is asked for by name."""
ALL_FORMATS = ("md", "latex", "html")
ENGINES = ("pdflatex", "xelatex", "lualatex")
TABLES = ("summary", "matrix", "ledger")
# Every file name render may write; files of these names that a render did not produce
# are removed from the output folder, so that no stale table survives (say, agreement
# tables after a reviewer left).
KNOWN_OUTPUTS = tuple(f"{name}.{ext}" for name in (*TABLES, "agreement", "corrections")
                      for ext in ("md", "tex")) + ("methods.md", "report.html")


# --------------------------------------------------------------------------- environments


# Templates in a workspace's templates/ come with the workspace, which may be someone
# else's: the sandbox keeps them to laying out (no attribute walk to os.popen, ranges of
# at most 100,000), so rendering a cloned review cannot run code.


class _Sandbox(SandboxedEnvironment):
    """The sandbox, with a shorter way to a key of a plain dict (every row the templates print).

    ``row.basis`` first asks the dict for an attribute ``basis``: a plain dict has only its
    class's attributes, so for any other name that try can only fail (raising an exception
    each time) before the key is looked up, which is what is done here directly.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                pass
        return super().getattr(obj, attribute)


_DICT_ATTRIBUTES = frozenset(dir(dict))


def _loader(template_dirs: Sequence[Path]) -> jinja2.BaseLoader:
    return jinja2.ChoiceLoader([*(workspace_template_loader(d) for d in template_dirs if d.is_dir()),
                                jinja2.FileSystemLoader(str(BUILTIN_TEMPLATES))])


def _finalize_md(value: Any) -> str:
    return value if isinstance(value, Markdown) else md_escape(str(value))


def _finalize_tex(value: Any) -> str:
    return value if isinstance(value, Latex) else latex_escape(str(value))


def markdown_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for Markdown templates (``*.md.j2``)."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_md)
    env.filters.update(basis=lambda text: inline_to_markdown(text), cites=_cites_md,
                       raw=lambda text: Markdown(str(text)), num=_num, autolink=_autolink_md,
                       capitalize_first=capitalize_first, sentence=sentence)
    return env


def latex_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for LaTeX templates (``*.tex.j2``), with LaTeX-safe delimiters."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               block_start_string=r"\BLOCK{", block_end_string="}",
                               variable_start_string=r"\VAR{", variable_end_string="}",
                               comment_start_string=r"\#{", comment_end_string="}",
                               line_statement_prefix=None, line_comment_prefix="%#",
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_tex)
    env.filters.update(basis=lambda text: Latex(break_long_words(inline_to_latex(text))), cites=_cites_tex,
                       url=latex_url, raw=lambda text: Latex(str(text)), num=_num,
                       breakable=lambda text: Latex(break_long_words(latex_escape(str(text)))),
                       capitalize_first=capitalize_first, sentence=sentence, idbreak=_id_breaks)
    return env


def _id_breaks(identifier: str) -> Latex:
    """An id that may break after each ``.``, ``_`` or ``-`` (ids are short, but a column of them is narrow)."""
    pieces = [piece for piece in re.findall(r"[^._-]*[._-]?", str(identifier)) if piece]
    return Latex(_BREAK.join(latex_escape(piece) for piece in pieces))


def html_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for the HTML report (``*.html.j2``): autoescaped, basis Markdown rendered to HTML."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=True)
    env.filters.update(basis=inline_to_html, num=_num, capitalize_first=capitalize_first, sentence=sentence,
                       web_url=lambda url: str(url) if str(url).lower().startswith(("http://", "https://")) else "")
    return env


def inline_to_html(text: str) -> Markup:
    """Basis text (inline Markdown) as HTML; raw HTML in it is escaped, links only to http(s) and mailto."""
    html = inline_html(text)
    # markdown-it's own link check already drops javascript: and data: links; keep only the schemes the
    # other targets allow, so the report links to nothing the tables would not.
    html = re.sub(r'<a href="(?!https?://|mailto:)[^"]*">', "<a>", html)
    return Markup(html.replace("<a href=", '<a rel="noreferrer" href='))


# Characters after which a long unbroken token (a URL, a path, an identifier) may break.
_BREAK_AFTER = frozenset("/.-_:?&=#,;@+")
_BREAK_RUN = 12  # a token breaks only once it is this long
_FORCE_BREAK = 18  # ... and anywhere after this many characters without a break point
_TEXT_MACROS = frozenset({"emph", "textbf", "texttt", "textit", "textsf"})
_BREAK = r"\hspace{0pt}"


def break_long_words(latex: str) -> str:
    """Allow line breaks inside long unbroken tokens of escaped LaTeX text.

    Inserts a zero-width glue (``\\hspace{0pt}``) after URL punctuation in a token longer
    than 12 characters, and every 18 characters where there is none, so such a token breaks
    inside its column instead of printing over the next. Arguments that are not text (the
    URL of ``\\href``, anything inside ``\\ensuremath`` or another macro's argument) are
    left as they are.
    """
    if len(latex) < _BREAK_RUN and "U+" not in latex:
        return latex
    out: list[str] = []
    run = since_break = 0
    i, n = 0, len(latex)
    while i < n:
        ch = latex[i]
        if ch == "\\":
            placeholder = _PLACEHOLDER.match(latex, i)
            if placeholder is not None:  # one character the engine cannot print: keep it whole
                out.append(placeholder.group(0))
                i = placeholder.end()
                run, since_break = run + 1, since_break + 1
                # CJK text has no spaces: a line may break after any wide character.
                if unicodedata.east_asian_width(chr(int(placeholder.group(1), 16))) in ("W", "F"):
                    out.append(_BREAK)
                    since_break = 0
                continue
            match = _MACRO.match(latex, i)
            if match is None:  # a trailing backslash cannot come from the escaper; keep it
                out.append(ch)
                i += 1
                continue
            name = match.group(1)
            end = match.end()
            if name and name.isalpha() and name not in _TEXT_MACROS:
                if name == "href":
                    end = _skip_group(latex, end)  # the URL; the link text that follows is text
                elif latex.startswith("{}", end):
                    end += 2  # \textbackslash{} and friends print one character
                    run, since_break = run + 1, since_break + 1
                elif end < n and latex[end] in "{[":
                    end = _skip_group(latex, end)  # \ensuremath{...}, \includegraphics[...]{...}
                    if end < n and latex[end] == "{" and name not in ("ensuremath",):
                        end = _skip_group(latex, end)
                    run, since_break = run + 1, since_break + 1
            elif not name.isalpha():  # \%, \_, \#, \&, \{, \}, \,
                run, since_break = run + 1, since_break + 1
            out.append(latex[i:end])
            if not name.isalpha() and name in "_#&" and run >= _BREAK_RUN:
                out.append(_BREAK)
                since_break = 0
            i = end
            continue
        # Words too short to reach a break, and the spaces after them, are copied whole (the
        # loop below would add nothing to them): most of a text, many words at a time.
        words = _SHORT_WORDS.match(latex, i) if run == 0 else None
        if words is not None:
            out.append(words.group())
            i = words.end()
            continue
        plain = _PLAIN_WORD.match(latex, i)
        if plain is not None:
            end = plain.end(1)
            if run + (end - i) < _BREAK_RUN:
                out.append(latex[i:end])
                run, since_break = run + end - i, since_break + end - i
            else:
                # A long word: its first characters keep the run below the break length; each
                # one after may end with a break.
                head = i + max(0, _BREAK_RUN - 1 - run)
                out.append(latex[i:head])
                run, since_break = run + head - i, since_break + head - i
                for ch in latex[head:end]:
                    out.append(ch)
                    run += 1
                    since_break += 1
                    if ch in _BREAK_AFTER or since_break >= _FORCE_BREAK:
                        out.append(_BREAK)
                        since_break = 0
            if plain.end(2) > end:
                out.append(latex[end:plain.end(2)])
                run = since_break = 0
            i = plain.end()
            continue
        if ch.isspace():
            run = since_break = 0
        elif ch not in "{}":
            run += 1
            since_break += 1
        out.append(ch)
        i += 1
        if ch.isspace() or ch in "{}":
            continue
        if run >= _BREAK_RUN and (ch in _BREAK_AFTER or since_break >= _FORCE_BREAK):
            out.append(_BREAK)
            since_break = 0
    return "".join(out)


_MACRO = re.compile(r"\\([A-Za-z]+|.)", re.DOTALL)
# Plain characters (no macro, space or brace), then any spaces: \s is exactly str.isspace.
_PLAIN_WORD = re.compile(r"([^\\\s{}]+)(\s*)")
_SHORT_WORDS = re.compile(rf"(?:[^\\\s{{}}]{{1,{_BREAK_RUN - 1}}}\s+)+")


# A group with no group inside it, as _skip_group's loop reads one (a backslash escapes the next character).
_FLAT_GROUP = {"{": re.compile(r"\{(?:[^\\{}]|\\.)*\}", re.DOTALL),
               "[": re.compile(r"\[(?:[^\\\[\]]|\\.)*\]", re.DOTALL)}


def _skip_group(text: str, start: int) -> int:
    """Index just after the balanced ``{...}`` or ``[...]`` group that starts at ``start``."""
    if start >= len(text) or text[start] not in "{[":
        return start
    flat = _FLAT_GROUP[text[start]].match(text, start)
    if flat is not None:  # no group inside it (a URL, most often)
        return flat.end()
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def sentence(text: str) -> str:
    """The text ending with a full stop, unless it already ends with one (or ``?``, ``!``)."""
    text = str(text).strip()
    return text if not text or text[-1] in ".?!" else text + "."


def capitalize_first(text: str) -> str:
    """The text with its first letter upper-cased and the rest as written (unlike Jinja's ``capitalize``)."""
    text = str(text)
    return text[:1].upper() + text[1:]


def _autolink_md(url: str) -> Markdown:
    """A URL as a Markdown autolink when it is a web address, else as escaped text."""
    url = str(url).strip()
    if url.lower().startswith(("http://", "https://")):
        return Markdown(f"<{quote(url, safe=_URL_SAFE)}>")
    return md_escape(url)


_URL_SAFE = "/:?&=+-_.~,;@!*#%'[]$()"


def _cites_md(keys: Iterable[str], numbers: dict[str, int]) -> Markdown:
    found = sorted({numbers[key] for key in keys if key in numbers})
    return Markdown(f"[{', '.join(str(n) for n in found)}]" if found else "")


def _cites_tex(keys: Iterable[str], numbers: dict[str, int]) -> Latex:
    keys = [key for key in keys if key in numbers]
    return Latex(rf"\cite{{{','.join(keys)}}}" if keys else "")


def _num(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


# --------------------------------------------------------------------------- context

STATUS_MARKS = {"unresolved": "?", "incomplete": "!", "not coded": "–"}
"""What a LaTeX or HTML matrix cell without a code prints (Markdown prints the status itself)."""
STATUS_LEGEND = {
    "unresolved": "reviewers disagree and no adjudication has settled the cell",
    "incomplete": "a reviewer coded the cell without what the rubric requires",
    "not coded": "no reviewer has coded the cell yet",
}
CELL_MARKS = {
    "corrected": ("c", "corrected after the release (see the corrections table)"),
    "adjudicated": ("a", "adjudicated: reviewers disagreed and a recorded decision settled the code"),
    "single-coded": ("s", "coded by one reviewer only"),
}
"""Superscript marks of the ledger's Code column, and what the legend says they mean."""
BASIS_CHUNK = 360
"""A basis longer than this (characters) is set over several table rows, split at sentence
ends, so that a page can break inside a long cell instead of being left nearly empty."""


def display_code(cell: dict[str, Any]) -> str:
    """What a table shows for a final cell: its code, ``unresolved`` or ``not coded``."""
    return cell["code"] if cell["code"] is not None else cell["status"]


def _color_name(index: int) -> str:
    """An xcolor name for the index-th code (letters only: ids may hold ``-``, which xcolor reads as an operator)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return f"protocoder{letters}"


def _field_head(fld: dict[str, Any]) -> str:
    """What a column header prints for a field: its short label, else its label when short enough, else nothing
    (the id, printed beside it, then stands alone and the legend gives the label)."""
    if fld.get("short"):
        return fld["short"]
    return fld["label"] if len(fld["label"]) <= MAX_SHORT_LABEL else ""


def _cell_mark(cell: dict[str, Any], n_reviewers: int) -> str:
    if cell.get("corrected"):
        return "corrected"
    if cell["status"] == "adjudicated":
        return "adjudicated"
    if cell["status"] == "single-coded" and n_reviewers > 1:
        return "single-coded"
    return ""


def _basis_chunks(text: str, limit: int = BASIS_CHUNK) -> list[str]:
    """Split basis text at sentence ends into pieces of about ``limit`` characters, never inside markup."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit * 1.25:
        ends = [m.end() for m in _SENTENCE_END.finditer(rest) if limit * 0.3 <= m.end() <= len(rest) - limit * 0.25]
        # The last sentence end within the limit, else the first one after it.
        ends = sorted(ends, key=lambda end: (end > limit, abs(limit - end)))
        for end in ends:
            head, tail = rest[:end].strip(), rest[end:].strip()
            # Only where the markup is balanced: the two halves show the same text as the whole.
            if _plain_words(head) + _plain_words(tail) == _plain_words(rest):
                pieces.append(head)
                rest = tail
                break
        else:
            break
    pieces.append(rest)
    return pieces


def _plain_words(text: str) -> list[str]:
    return inline_plain(text).split()


_SENTENCE_END = re.compile(r"(?<=[.;:!?])[)\]\"'’”]*\s+(?=\S)")


def table_context(view: View, *, matrix_layout: str = "auto", quotes: bool = False) -> dict[str, Any]:
    """Everything the table templates print, computed once (``quotes``: each ledger row's quoted passages)."""
    fields = [{**fld, "head": _field_head(fld), "short": fld.get("short") or ""} for fld in view.rubric["fields"]]
    for fld in fields:
        fld["abbreviated"] = fld["head"] != fld["label"]
    colors = code_colors(view.rubric["codes"], view.rubric.get("order"))
    codes = [{**code, "short": code.get("short") or "", "role": code.get("role") or "",
              "fill": colors[code["id"]]["fill"], "ink": colors[code["id"]]["text"],
              "color_source": colors[code["id"]]["source"], "xcolor": _color_name(index),
              "fill_hex": colors[code["id"]]["fill"].lstrip("#"), "ink_white": colors[code["id"]]["text"] != "#000000"}
             for index, code in enumerate(view.rubric["codes"])]
    code_by_id = {code["id"]: code for code in codes}
    by_key = {(c["protocol"], c["field"]): c for c in view.cells}
    numbers = {ref["key"]: ref["number"] for ref in view.references}
    n_protocols = len(view.protocols)
    n_reviewers = len(view.reviewers)
    empty = {"status": "not coded", "code": None, "source": "", "basis": "", "cites": [], "codes": {}}

    summary = []
    for fld in fields:
        cells = [by_key[(p["id"], fld["id"])] for p in view.protocols if (p["id"], fld["id"]) in by_key]
        counts = []
        for code in codes:
            allowed = code["id"] in fld["codes"]
            counts.append({"code": code["id"], "allowed": allowed,
                           "count": sum(1 for c in cells if c["code"] == code["id"])})
        unresolved = sum(1 for c in cells if c["status"] == "unresolved")
        incomplete = sum(1 for c in cells if c["status"] == "incomplete")
        coded = sum(item["count"] for item in counts)
        summary.append({
            "id": fld["id"], "label": fld["label"], "counts": counts, "unresolved": unresolved,
            "incomplete": incomplete,
            # Every protocol stays in the denominator: what is neither coded, unresolved nor
            # incomplete is counted as not coded, never dropped and never read as NR.
            "not_coded": n_protocols - coded - unresolved - incomplete, "total": n_protocols,
        })

    def matrix_cell(protocol: dict[str, Any], fld: dict[str, Any]) -> dict[str, Any]:
        cell = by_key.get((protocol["id"], fld["id"]), empty)
        code = code_by_id.get(cell["code"]) if cell["code"] is not None else None
        return {"text": display_code(cell), "status": cell["status"], "code": code,
                "mark": cell["code"] if cell["code"] is not None else STATUS_MARKS.get(cell["status"], cell["status"])}

    matrix = [{"name": p["name"], "cells": [matrix_cell(p, fld) for fld in fields]} for p in view.protocols]
    ledger = []
    marks_used: set[str] = set()
    for protocol in view.protocols:
        for index, fld in enumerate(fields):
            cell = by_key.get((protocol["id"], fld["id"]), empty)
            disagreement = ""
            if cell["status"] == "unresolved":
                disagreement = "Reviewers disagree: " + "; ".join(
                    f"{reviewer} {code}" for reviewer, code in sorted(cell["codes"].items())) + "."
            elif cell["status"] == "incomplete":
                disagreement = "Incomplete: " + "; ".join(
                    f"{reviewer}'s {code} lacks {' and '.join(cell.get('missing', {}).get(reviewer, ())) or 'evidence'}"
                    for reviewer, code in sorted(cell["codes"].items())
                    if reviewer in cell.get("missing", {})) + "."
            mark = _cell_mark(cell, n_reviewers)
            if mark:
                marks_used.add(mark)
            ledger.append({
                "protocol": protocol["name"], "first": index == 0, "field": fld["label"], "field_head": fld["head"],
                "field_id": fld["id"], "code": display_code(cell), "status": cell["status"], "source": cell["source"],
                "basis": cell["basis"], "basis_chunks": _basis_chunks(cell["basis"]), "cites": cell["cites"],
                "note": disagreement, "corrected": bool(cell.get("corrected")),
                "mark": CELL_MARKS[mark][0] if mark else "",
                "quotes": list(cell.get("quotes", ())) if quotes else [],
            })

    statuses = sorted({c["status"] for c in view.cells} | ({"not coded"} if len(view.cells) < n_protocols * len(fields)
                                                            else set()))
    cited = sorted({key for c in view.cells for key in c["cites"] if key in numbers}, key=lambda k: numbers[k])
    adjudicated = sum(1 for c in view.cells if c["status"] == "adjudicated" and not c.get("corrected"))
    return {
        "view": view, "title": view.title, "fields": fields, "codes": codes, "summary": summary,
        "summary_layout": summary_layout(fields, codes, n_protocols, incomplete="incomplete" in statuses),
        "matrix": matrix, "matrix_view": matrix_context(view, fields, matrix, codes, matrix_layout),
        "ledger": ledger, "ledger_layout": ledger_layout(fields, codes, {row["status"] for row in ledger}),
        "numbers": numbers, "references": view.references,
        "cited_references": [ref for ref in view.references if ref["key"] in set(cited)],
        "ledger_marks": [{"mark": CELL_MARKS[name][0], "text": CELL_MARKS[name][1]}
                         for name in CELL_MARKS if name in marks_used],
        "n_protocols": n_protocols, "n_fields": len(fields), "reviewers": view.reviewers,
        "n_reviewers": n_reviewers, "rubric": view.rubric, "cutoff": view.cutoff,
        "statuses": statuses, "status_legend": [{"status": s, "mark": STATUS_MARKS.get(s, s), "text": STATUS_LEGEND[s]}
                                                for s in STATUS_LEGEND if s in statuses],
        "corrections": view.corrections, "release": view.release,
        "n_adjudicated": adjudicated, "n_corrected": sum(1 for c in view.cells if c.get("corrected")),
        # The incomplete column appears only when some cell is incomplete, so that tables of
        # reviews without half-done cells (and their golden files) stay as they were.
        "show_incomplete": "incomplete" in statuses,
        "quotes": quotes and any(row["quotes"] for row in ledger),
        "agreement": agreement_context(view.agreement) if view.agreement else None,
        "methods": methods_lines(view.agreement) if view.agreement else [],
        "field_list_limit": METHODS_FIELD_LIST,
    }


METHODS_FIELD_LIST = 8
"""The methods paragraph names the fields up to this many; beyond, it gives their number."""


def matrix_context(view: View, fields: list[dict[str, Any]], matrix: list[dict[str, Any]],
                   codes: list[dict[str, Any]], requested: str = "auto") -> dict[str, Any]:
    """The matrix as one or more tables, laid out by :func:`layout.choose_matrix_layout`."""
    marks = [code["id"] for code in codes] + list(STATUS_MARKS.values())
    cell_em = max((text_em(mark) for mark in marks), default=1.0)
    layout = choose_matrix_layout(protocols=[p["name"] for p in view.protocols],
                                  headers=[(fld["head"], fld["id"]) for fld in fields], cell_em=cell_em,
                                  requested=requested)
    tables = []
    if layout.name == "transposed":
        columns = [{"head": p["name"], "id": "", "em": f"{width:.2f}"}
                   for p, width in zip(view.protocols, layout.column_em, strict=True)]
        rows = [{"label": fld["short"] or fld["label"], "id": fld["id"],
                 "cells": [row["cells"][index] for row in matrix]} for index, fld in enumerate(fields)]
        tables.append({"corner": "Field", "columns": columns, "rows": rows,
                       "fixed_em": f"{sum(layout.column_em) + COLUMN_GAP_EM * len(layout.column_em):.2f}"})
    else:
        for group in layout.groups:
            columns = [{"head": fields[i]["head"], "id": fields[i]["id"], "em": f"{layout.column_em[i]:.2f}"}
                       for i in group]
            rows = [{"label": row["name"], "id": "", "cells": [row["cells"][i] for i in group]} for row in matrix]
            tables.append({"corner": "Protocol", "columns": columns, "rows": rows, "fixed_em": ""})
    shown = {fld["id"] for fld in fields} if layout.name != "transposed" else set()
    return {"layout": layout.name, "rotate": layout.rotate, "row_em": f"{layout.row_em:.2f}", "tables": tables,
            "transposed": layout.name == "transposed",
            # Full labels of the fields whose header is abbreviated (or the id alone).
            "legend": [fld for fld in fields if fld["id"] in shown and fld["abbreviated"]],
            "code_legend": [code for code in codes],
            "status_legend": [{"status": status, "mark": mark, "text": STATUS_LEGEND[status]}
                              for status, mark in STATUS_MARKS.items()
                              if any(cell["status"] == status for row in matrix for cell in row["cells"])]}


def ledger_layout(fields: list[dict[str, Any]], codes: list[dict[str, Any]], statuses: Iterable[str]) -> dict[str, str]:
    """Widths (em) of the ledger's Field and Code columns, from what they print; Source and Basis share the rest."""
    field_em = max([text_em("Field"), *(max(longest_word_em(f["head"]), id_em(f["id"])) for f in fields)])
    code_em = max([text_em("Code"), *(text_em(c["id"]) + 0.6 for c in codes),
                   *(longest_word_em(status) for status in statuses if status in STATUS_MARKS)])
    field_em, code_em = min(field_em, 9.0), min(code_em, 6.0)
    return {"field_em": f"{field_em:.2f}", "code_em": f"{code_em:.2f}",
            "fixed_em": f"{field_em + code_em + 3 * COLUMN_GAP_EM:.2f}"}


def summary_layout(fields: list[dict[str, Any]], codes: list[dict[str, Any]], n_protocols: int, *,
                   incomplete: bool = False) -> dict[str, Any]:
    """Column widths (em) of the summary: count columns as narrow as their headers allow, the label column the rest."""
    digits = text_em(str(max(n_protocols, 10)))
    heads = [code["id"] for code in codes] + ["Unresolved", *(["Incomplete"] if incomplete else []), "Not coded",
                                              "Protocols"]
    # A little over the estimate: fontspec's Latin Modern is a hair wider than the Type 1 metrics.
    upright = [max(digits, longest_word_em(head)) + 0.2 for head in heads]
    rotate = columns_em([MIN_LABEL_EM, *upright]) > TEXT_EM
    widths = [max(digits, ROTATED_EM) for _ in heads] if rotate else upright
    return {"rotate": rotate, "count_em": [f"{w:.2f}" for w in widths],
            "fixed_em": f"{sum(widths) + COLUMN_GAP_EM * len(widths):.2f}"}


# --------------------------------------------------------------------------- rendering


def _template_problem(exc: Exception) -> Problem:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return Problem(exc.filename or exc.name or "template", exc.lineno or 0, 1,
                       f"template syntax error: {exc.message}")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2")]
    if frames:
        frame = frames[-1]
        return Problem(frame.filename, frame.lineno or 0, 1, f"template failed: {type(exc).__name__}: {exc}")
    return Problem("template", 0, 0, f"template failed: {type(exc).__name__}: {exc}")


def _render(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    try:
        return env.get_template(name).render(context)
    except jinja2.TemplateNotFound as exc:
        raise InvalidInput([Problem(name, 0, 0, f"template not found: {exc.name}")]) from None
    except UnicodeDecodeError as exc:
        raise InvalidInput([_undecodable_template(env, name, exc)]) from None
    except Exception as exc:  # noqa: BLE001 - a user's template may raise anything
        raise InvalidInput([_template_problem(exc)]) from None


def _undecodable_template(env: jinja2.Environment, name: str, exc: UnicodeDecodeError) -> Problem:
    """Name the template file (and line) holding bytes that are not UTF-8."""
    loaders = getattr(env.loader, "loaders", [env.loader])
    searchpath = [folder for loader in loaders for folder in getattr(loader, "searchpath", [])]
    path = next((Path(folder) / name for folder in searchpath if (Path(folder) / name).is_file()), Path(name))
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw.count(b"\n", 0, exc.start) + 1
    return Problem(str(path), line, 1, f"template is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
                   if raw else "template is not valid UTF-8")


def render_view(view: View, *, formats: Sequence[str] = FORMATS, standalone: bool = False,
                template_dirs: Sequence[Path] = (), engine: str = "pdflatex",
                matrix_layout: str = "auto", quotes: bool = False) -> dict[str, str]:
    """Render every table of ``view``; return ``{file name: text}``.

    ``formats`` may hold ``md``, ``latex`` and ``html`` (one self-contained ``report.html``).
    ``engine`` is the LaTeX engine the ``.tex`` files are for: with ``xelatex`` or ``lualatex``
    text in any script prints as itself (standalone files load ``fontspec`` and a Noto CJK
    font); with ``pdflatex`` what it cannot typeset prints as a visible ``[U+XXXX]``. With
    ``quotes`` the ledger prints each cell's quoted passages.

    Raises :class:`InvalidInput` naming the template file and line when a template fails.
    """
    context = table_context(view, matrix_layout=matrix_layout, quotes=quotes)
    context["engine"] = engine
    names = list(TABLES)
    if view.agreement is not None:
        names.append("agreement")
    if view.corrections:
        names.append("corrections")
    with shared_inline_parse():
        return _render_files(context, names, formats, standalone, template_dirs, engine)


def _render_files(context: dict[str, Any], names: list[str], formats: Sequence[str], standalone: bool,
                  template_dirs: Sequence[Path], engine: str = "pdflatex") -> dict[str, str]:
    files: dict[str, str] = {}
    if "md" in formats:
        env = markdown_environment(template_dirs)
        for name in names:
            files[f"{name}.md"] = _render(env, f"{name}.md.j2", context)
        files["methods.md"] = _render(env, "methods.md.j2", context)
    if "latex" in formats:
        env = latex_environment(template_dirs)
        for name in names:
            body = _render(env, f"{name}.tex.j2", context)
            if standalone:
                body = _render(env, "standalone.tex.j2",
                               {**context, "body": Latex(body), "with_references": "\\cite{" in body})
            if engine != "pdflatex":
                body = unicode_text(body)
                if not standalone and CJK_FONT_COMMAND in body:
                    body = f"\\providecommand{{{CJK_FONT_COMMAND}}}{{}}\n{body}"
            files[f"{name}.tex"] = body
    if "html" in formats:
        methods = files.get("methods.md") or _render(markdown_environment(template_dirs), "methods.md.j2", context)
        charts = agreement_charts(context["agreement"]) if context["agreement"] else []
        files["report.html"] = _render(html_environment(template_dirs), "report.html.j2",
                                       {**context, "charts": charts,
                                        "methods_paragraphs": [line for line in methods.splitlines() if line]})
    return files


_PLACEHOLDER = re.compile(r"\\texttt\{\{\[\}U\+([0-9A-F]{4,6})\{\]\}\}")
_PLACEHOLDER_RUN = re.compile(rf"(?:{_PLACEHOLDER.pattern}(?:\\hspace\{{0pt\}})?)+")
# What the unicode engines print with the standalone files' fonts: Latin Modern (through fontspec) has
# Latin with its accents; Noto Serif CJK, switched to by \protocoderCJK, has Greek, Cyrillic, CJK, kana and
# Hangul. Anything else (emoji, scripts neither font has) keeps its visible [U+XXXX] placeholder.
_LATIN_RANGES = ((0x00A0, 0x024F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20BF), (0x2100, 0x214F))
_FALLBACK_RANGES = (
    (0x0370, 0x03FF), (0x0400, 0x04FF), (0x2190, 0x21FF), (0x2460, 0x24FF), (0x2E80, 0x2FDF),
    (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x312F), (0x3130, 0x318F), (0x31F0, 0x31FF),
    (0x3200, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
)
CJK_FONT_COMMAND = r"\protocoderCJK"


def _font_class(point: int) -> str:
    if unicodedata.category(chr(point)) in ("Cn", "Co", "Cs", "Cc"):
        return ""
    if any(low <= point <= high for low, high in _LATIN_RANGES):
        return "latin"
    if any(low <= point <= high for low, high in _FALLBACK_RANGES):
        return "cjk"
    return ""


def unicode_text(latex: str) -> str:
    """Turn the escaper's ``[U+XXXX]`` placeholders back into the characters, for xelatex and lualatex.

    Characters outside Latin go in a ``{\\protocoderCJK ...}`` group (the standalone files define it
    as Noto Serif CJK; a fragment provides an empty one). Only the escaper writes a placeholder
    inside ``\\texttt`` with bracket groups; text a user typed as ``[U+4E2D]`` stays as typed.
    """
    def restore(match: re.Match[str]) -> str:
        out: list[str] = []
        cjk: list[str] = []
        for item in re.finditer(rf"({_PLACEHOLDER.pattern})(\\hspace\{{0pt\}})?", match.group(0)):
            point = int(item.group(2), 16)
            kind = _font_class(point)
            if kind != "cjk" and cjk:
                out.append(f"{{{CJK_FONT_COMMAND} {''.join(cjk)}}}")
                cjk = []
            text = chr(point) if kind else item.group(1)
            if kind == "cjk":
                cjk.append(text + (item.group(3) or ""))
            else:
                out.append(text + (item.group(3) or ""))
        if cjk:
            out.append(f"{{{CJK_FONT_COMMAND} {''.join(cjk)}}}")
        return "".join(out)

    return _PLACEHOLDER_RUN.sub(restore, latex)


def write_outputs(files: dict[str, str], out_dir: Path, *, force: bool = False,
                  meta: dict[str, Any] | None = None, show: Any = str) -> OutputResult:
    """Write rendered files atomically and remove stale ones protocoder wrote before
    (never a file it did not write: see :mod:`protocoder.storage.outputs`)."""
    return write_output_folder(out_dir, files, force=force, meta=meta, stale_names=KNOWN_OUTPUTS, show=show)


# --------------------------------------------------------------------------- agreement

COEFFICIENT_LABELS = {
    "percent_agreement": "Percent agreement",
    "cohen_kappa": "Cohen's κ",
    "cohen_kappa_linear": "Cohen's κ, linear weights",
    "cohen_kappa_quadratic": "Cohen's κ, quadratic weights",
    "fleiss_kappa": "Fleiss' κ",
    "krippendorff_alpha": "Krippendorff's α",
    "gwet_ac1": "Gwet's AC1",
    "brennan_prediger": "Brennan–Prediger",
}
EVIDENCE_LABELS = {
    "same_source": "Same source location",
    "same_cites": "Same citation keys",
    "same_source_and_cites": "Same source and citations",
    "quote_overlap": "Quoted passages overlap",
}


COEFFICIENT_SHORT = {
    "percent_agreement": "Agreement", "cohen_kappa": "Cohen κ", "cohen_kappa_linear": "κ linear",
    "cohen_kappa_quadratic": "κ quadratic", "fleiss_kappa": "Fleiss κ", "krippendorff_alpha": "Kripp. α",
    "gwet_ac1": "AC1", "brennan_prediger": "B–P", "same_source": "Same source", "same_cites": "Same keys",
    "same_source_and_cites": "Both", "quote_overlap": "Quotes overlap",
}
"""Column headers of the agreement table; the legend below it gives the full names."""
_DROPPED = re.compile(r"^(\d+) of (\d+) bootstrap resamples dropped\b")


def _letter(index: int) -> str:
    return _color_name(index).removeprefix("protocoder")


def _estimate(coefficient: dict[str, Any] | None, notes: dict[str, list[int]]) -> dict[str, Any]:
    """One cell of the agreement table: value, interval, resamples dropped, and letters of its notes.

    ``notes`` gathers every other remark once, keyed by its text without a leading count
    ("3 units with ..." and "5 units with ..." are one note), with the counts seen.
    """
    if coefficient is None:
        return {"value": "", "defined": False, "absent": True, "ci": "", "ci_dash": "", "dropped": 0, "marks": ""}
    letters = []
    dropped = 0
    for part in filter(None, (coefficient.get("note") or "").split("; ")):
        match = _DROPPED.match(part)
        if match:
            dropped = int(match.group(1))
            continue
        counted = _LEADING_COUNT.match(part)
        key = f"\0{counted.group(2)}" if counted else part
        notes.setdefault(key, [])
        if counted:
            notes[key].append(int(counted.group(1)))
        letters.append(_letter(list(notes).index(key)))
    value = coefficient.get("value")
    low, high = coefficient.get("ci_low"), coefficient.get("ci_high")
    has_ci = value is not None and low is not None and high is not None
    return {"value": _num(value), "defined": value is not None, "absent": False,
            # Our own text, safe in every target; brackets need no escaping here.
            "ci": f"[{low:.2f}, {high:.2f}]" if has_ci else "",
            "ci_dash": f"{low:.2f}–{high:.2f}".replace("-", "−") if has_ci else "",
            "low": low if has_ci else None, "high": high if has_ci else None, "point": value,
            "dropped": dropped, "marks": ",".join(sorted(set(letters), key=letters.index))}


_LEADING_COUNT = re.compile(r"^(\d+) (\D.*)$")


def _note_texts(notes: dict[str, list[int]]) -> list[str]:
    """The gathered notes as sentences; a note seen with several counts gives their range."""
    texts = []
    for key, counts in notes.items():
        if not key.startswith("\0"):
            texts.append(key)
            continue
        low, high = min(counts), max(counts)
        texts.append(f"{low if low == high else f'{low} to {high}'} {key[1:]}"
                     + ("" if low == high else " (the number differs between cells)"))
    return texts


def _group_label(group: str, labels: dict[str, str]) -> tuple[str, str]:
    """(label, id) of an agreement row: a long label gives way to the id (the rubric table has it in full)."""
    if group == "all":
        return "All fields", ""
    label = labels.get(group, group)
    if label == group:
        return "", group
    return (label if len(label) <= MAX_SHORT_LABEL else ""), group


def agreement_context(agreement: dict[str, Any]) -> dict[str, Any]:
    """Rows (fields, then pooled) and columns (coefficients) for the agreement templates.

    ``agreement`` is a stored report with its field labels (``{"report", "labels"}``). Notes
    are gathered into one legend: resamples dropped from an interval are counted in brackets
    beside it, and every other remark gets a letter, once however many cells share it.
    """
    report, labels = agreement["report"], agreement.get("labels", {})
    groups = report["groups"]
    notes: dict[str, list[int]] = {}
    names = [name for name in (*COEFFICIENT_LABELS, *EVIDENCE_LABELS)
             if any(name in g["coefficients"] or name in g.get("evidence", {}) for g in groups)]
    full = {**COEFFICIENT_LABELS, **EVIDENCE_LABELS}
    columns = [{"name": name, "label": full[name], "short": COEFFICIENT_SHORT[name],
                "evidence": name in EVIDENCE_LABELS} for name in names]
    rows = []
    for g in groups:
        label, gid = _group_label(g["group"], labels)
        cells = [_estimate(g["coefficients"].get(name) if name in COEFFICIENT_LABELS
                           else g.get("evidence", {}).get(name), notes) for name in names]
        rows.append({"label": label, "id": gid, "pooled": g["group"] == "all", "units": g["n_units"],
                     "paired": g["n_units_paired"], "raters": g["n_raters"],
                     "distribution": " · ".join(f"{code} {n}" for code, n in g["code_counts"].items()) or "–",
                     "counts": dict(g["code_counts"]), "cells": cells})
    settings = report["settings"]
    dropped_any = any(cell["dropped"] for row in rows for cell in row["cells"])
    codes = list(dict.fromkeys(code for g in groups for code in g["code_counts"]))
    raters = sorted({rater for d in report["disagreements"] for rater in d["codes"]})
    disagreements = [{"unit": d["unit"], "group": labels.get(d["group"], d["group"]),
                      "codes": [d["codes"].get(rater, "–") for rater in raters]} for d in report["disagreements"]]
    rater_em = min(max([2.0, *(text_em(r) for r in raters), *(text_em(c) for c in codes)]), 8.0)
    return {"columns": columns, "rows": rows, "codes": codes, "raters": raters, "rater_em": f"{rater_em:.2f}",
            "raters_em": f"{len(raters) * (rater_em + COLUMN_GAP_EM):.2f}",
            "groups": _agreement_groups(columns, rows),
            "letters": [{"letter": _letter(i), "text": note} for i, note in enumerate(_note_texts(notes))],
            "report_notes": [note for note in report.get("notes", []) if note],
            "dropped_text": (f"A number in brackets after a value counts the bootstrap resamples (of "
                             f"{settings.get('bootstrap')}) left out of it because the coefficient is undefined "
                             "in them." if dropped_any else ""),
            "disagreements": disagreements, "settings": settings,
            "na_text": _na_text(settings),
            "bootstrap_text": (f"95% percentile bootstrap intervals over units, {settings.get('bootstrap')} "
                               f"resamples, seed {settings.get('seed')}" if settings.get("bootstrap")
                               else "point estimates only (no bootstrap)")}


def _agreement_groups(columns: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Split the coefficient columns into tables that fit the text block (evidence agreement on its own)."""
    def width(index: int) -> float:
        cells = [row["cells"][index] for row in rows]
        value = max((text_em(c["value"]) + (0.4 * len(c["marks"]) if c["marks"] else 0)
                     + (text_em(f" [{c['dropped']}]") if c["dropped"] else 0) for c in cells), default=0.0)
        interval = max((SMALL * text_em(c["ci_dash"]) for c in cells), default=0.0)
        return max(value, interval, longest_word_em(columns[index]["short"], bold=False)) + 0.2

    label_em = max([text_em("Field"), *(max(longest_word_em(r["label"]), id_em(r["id"]),
                                             SMALL * text_em(r["distribution"])) for r in rows)])
    label_em = min(max(label_em, 5.0), 12.0)
    cells_em = max([text_em("Cells"), *(text_em(f"{row['paired']}/{row['units']}") for row in rows)])
    room = TEXT_EM - label_em - cells_em - 2 * COLUMN_GAP_EM
    tables = []
    for evidence in (False, True):
        indices = [i for i, column in enumerate(columns) if column["evidence"] == evidence]
        if not indices:
            continue
        widths = [width(i) for i in indices]
        for group in pack(widths, room):
            fixed = cells_em + sum(widths[i] for i in group) + COLUMN_GAP_EM * (len(group) + 1)
            tables.append({"evidence": evidence, "columns": [indices[i] for i in group],
                           "em": [f"{widths[i]:.2f}" for i in group], "cells_em": f"{cells_em:.2f}",
                           "fixed_em": f"{fixed:.2f}"})
    return tables


def _na_text(settings: dict[str, Any]) -> str:
    codes = settings.get("na_code") or ""
    if not codes:
        return "no code is declared not applicable"
    if settings.get("na") == "category":
        return f"the not-applicable code {codes} counted as an ordinary code"
    return f"ratings with the not-applicable code {codes} excluded"


CHART_WIDTH = 220
CHART_ROW = 13
CHART_LEFT = 64


def agreement_charts(agreement: dict[str, Any]) -> list[dict[str, Any]]:
    """One small chart per agreement row: each coefficient's point estimate and interval on a shared scale.

    Coordinates are computed here so that the template only draws them (inline SVG in report.html).
    """
    columns = [(index, column) for index, column in enumerate(agreement["columns"]) if not column["evidence"]]
    lows = [cell["low"] for row in agreement["rows"] for cell in row["cells"] if cell.get("low") is not None]
    points = [cell["point"] for row in agreement["rows"] for cell in row["cells"] if cell.get("point") is not None]
    lowest = min([0.0, *lows, *points])
    start = -1.0 if lowest < -0.5 else (-0.5 if lowest < 0 else 0.0)

    def x(value: float) -> float:
        # Alpha and a bootstrap bound can fall below -1 on few units: such a point sits at the edge.
        value = min(max(value, start), 1.0)
        return round(CHART_LEFT + (value - start) / (1.0 - start) * (CHART_WIDTH - CHART_LEFT - 8), 1)

    ticks = [{"x": x(v), "label": f"{v:g}"} for v in (start, *(t for t in (0.0, 0.5) if t > start), 1.0)]
    charts = []
    for row in agreement["rows"]:
        marks = []
        for position, (index, column) in enumerate(columns):
            cell = row["cells"][index]
            y = 10 + position * CHART_ROW
            mark = {"y": y, "label": column["short"], "title": column["label"], "defined": cell["defined"]}
            if cell["defined"]:
                mark.update(cx=x(cell["point"]), value=cell["value"],
                            x1=x(cell["low"]) if cell.get("low") is not None else None,
                            x2=x(cell["high"]) if cell.get("high") is not None else None)
            marks.append(mark)
        grid_bottom = 4 + len(columns) * CHART_ROW
        charts.append({"width": CHART_WIDTH, "height": grid_bottom + 12, "ticks": ticks, "marks": marks,
                       "grid_bottom": grid_bottom, "label_y": grid_bottom + 10})
    return charts


def methods_lines(agreement: dict[str, Any]) -> list[str]:
    """Sentences for the methods paragraph stating the pooled coefficients with their intervals."""
    context = agreement_context(agreement)
    pooled = context["rows"][-1]
    lines = [f"Agreement was computed over the {pooled['paired']} cells (protocol × field) that at "
             f"least two reviewers coded, per field and pooled ({context['na_text']}; "
             f"{context['bootstrap_text']})."]
    parts = []
    for column, cell in zip(context["columns"], pooled["cells"], strict=True):
        if column["evidence"] or cell["absent"]:
            continue
        label = "percent agreement" if column["name"] == "percent_agreement" else column["label"]
        if cell["defined"]:
            interval = f", 95% CI {cell['ci_dash']}" if cell["ci_dash"] else ""
            parts.append(f"{label} {cell['value']}{interval}")
        else:
            parts.append(f"{label} undefined")
    lines.append("Pooled over all fields: " + "; ".join(parts) + ".")
    return lines


def render_agreement(report: dict[str, Any], labels: dict[str, str], fmt: str) -> str:
    """Render only the agreement table of a report, as Markdown (``md``) or LaTeX (``agree --format``)."""
    agreement = {"report": report, "labels": labels}
    # No review title here: the caption is "Inter-rater agreement." and says nothing twice.
    context = {"agreement": agreement_context(agreement), "title": ""}
    if fmt == "md":
        return _render(markdown_environment(), "agreement.md.j2", context)
    return _render(latex_environment(), "agreement.tex.j2", context)
