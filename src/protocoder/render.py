"""Render a :class:`~protocoder.lifecycle.view.View` to Markdown and LaTeX through Jinja2 templates.

Templates hold layout only. Everything they print passes through an escaping
``finalize`` hook (Markdown or LaTeX), so a template cannot forget to escape; the
filters that build markup themselves (basis text, citations) return marker strings that
the hook leaves alone. Counting, ordering and citation numbering happen here, in Python.

A workspace's own ``templates/`` folder overrides the built-in templates file by file.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from .errors import InvalidInput, Problem
from .escape import (
    Latex,
    Markdown,
    inline_to_latex,
    inline_to_markdown,
    latex_escape,
    latex_url,
    md_escape,
    shared_inline_parse,
)
from .lifecycle.view import View
from .storage.yamlio import atomic_write_text

BUILTIN_TEMPLATES = Path(__file__).parent / "templates"
FORMATS = ("md", "latex")
TABLES = ("summary", "matrix", "ledger")
# Every file name render may write; files of these names that a render did not produce
# are removed from the output folder, so that no stale table survives (say, agreement
# tables after a reviewer left).
KNOWN_OUTPUTS = tuple(f"{name}.{ext}" for name in (*TABLES, "agreement", "corrections")
                      for ext in ("md", "tex")) + ("methods.md",)


# --------------------------------------------------------------------------- environments


# Templates in a workspace's templates/ come with the workspace, which may be someone
# else's: the sandbox keeps them to laying out (no attribute walk to os.popen, ranges of
# at most 100,000), so rendering a cloned review cannot run code.


def _loader(template_dirs: Sequence[Path]) -> jinja2.BaseLoader:
    return jinja2.FileSystemLoader([str(d) for d in template_dirs if d.is_dir()] + [str(BUILTIN_TEMPLATES)])


def _finalize_md(value: Any) -> str:
    return value if isinstance(value, Markdown) else md_escape(str(value))


def _finalize_tex(value: Any) -> str:
    return value if isinstance(value, Latex) else latex_escape(str(value))


def markdown_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for Markdown templates (``*.md.j2``)."""
    env = SandboxedEnvironment(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_md)
    env.filters.update(basis=lambda text: inline_to_markdown(text), cites=_cites_md,
                       raw=lambda text: Markdown(str(text)), num=_num)
    return env


def latex_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for LaTeX templates (``*.tex.j2``), with LaTeX-safe delimiters."""
    env = SandboxedEnvironment(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               block_start_string=r"\BLOCK{", block_end_string="}",
                               variable_start_string=r"\VAR{", variable_end_string="}",
                               comment_start_string=r"\#{", comment_end_string="}",
                               line_statement_prefix=None, line_comment_prefix="%#",
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_tex)
    env.filters.update(basis=lambda text: inline_to_latex(text), cites=_cites_tex, url=latex_url,
                       raw=lambda text: Latex(str(text)), num=_num)
    return env


def _cites_md(keys: Iterable[str], numbers: dict[str, int]) -> Markdown:
    found = sorted({numbers[key] for key in keys if key in numbers})
    return Markdown(f"[{', '.join(str(n) for n in found)}]" if found else "")


def _cites_tex(keys: Iterable[str], numbers: dict[str, int]) -> Latex:
    keys = [key for key in keys if key in numbers]
    return Latex(rf"\cite{{{','.join(keys)}}}" if keys else "")


def _num(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


# --------------------------------------------------------------------------- context


def display_code(cell: dict[str, Any]) -> str:
    """What a table shows for a final cell: its code, ``unresolved`` or ``not coded``."""
    return cell["code"] if cell["code"] is not None else cell["status"]


def table_context(view: View) -> dict[str, Any]:
    """Everything the table templates print, computed once."""
    fields = view.rubric["fields"]
    codes = view.rubric["codes"]
    by_key = {(c["protocol"], c["field"]): c for c in view.cells}
    numbers = {ref["key"]: ref["number"] for ref in view.references}
    n_protocols = len(view.protocols)

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

    matrix = []
    ledger = []
    for protocol in view.protocols:
        row_cells = []
        for index, fld in enumerate(fields):
            cell = by_key.get((protocol["id"], fld["id"]),
                              {"status": "not coded", "code": None, "source": "", "basis": "", "cites": [],
                               "codes": {}})
            row_cells.append({"text": display_code(cell), "status": cell["status"]})
            disagreement = ""
            if cell["status"] == "unresolved":
                disagreement = "Reviewers disagree: " + "; ".join(
                    f"{reviewer} {code}" for reviewer, code in sorted(cell["codes"].items())) + "."
            elif cell["status"] == "incomplete":
                disagreement = "Incomplete: " + "; ".join(
                    f"{reviewer}'s {code} lacks {' and '.join(cell.get('missing', {}).get(reviewer, ())) or 'evidence'}"
                    for reviewer, code in sorted(cell["codes"].items())
                    if reviewer in cell.get("missing", {})) + "."
            ledger.append({
                "protocol": protocol["name"], "first": index == 0, "field": fld["label"],
                "code": display_code(cell), "status": cell["status"], "source": cell["source"],
                "basis": cell["basis"], "cites": cell["cites"], "note": disagreement,
                "corrected": bool(cell.get("corrected")),
            })
        matrix.append({"name": protocol["name"], "cells": row_cells})

    statuses = sorted({c["status"] for c in view.cells})
    return {
        "view": view, "title": view.title, "fields": fields, "codes": codes, "summary": summary,
        "matrix": matrix, "ledger": ledger, "numbers": numbers, "references": view.references,
        "n_protocols": n_protocols, "n_fields": len(fields), "reviewers": view.reviewers,
        "n_reviewers": len(view.reviewers), "rubric": view.rubric, "cutoff": view.cutoff,
        "statuses": statuses, "corrections": view.corrections, "release": view.release,
        # The incomplete column appears only when some cell is incomplete, so that tables of
        # reviews without half-done cells (and their golden files) stay as they were.
        "show_incomplete": "incomplete" in statuses,
        "agreement": agreement_context(view.agreement) if view.agreement else None,
        "methods": methods_lines(view.agreement) if view.agreement else [],
    }


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
    searchpath = getattr(env.loader, "searchpath", [])
    path = next((Path(folder) / name for folder in searchpath if (Path(folder) / name).is_file()), Path(name))
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw.count(b"\n", 0, exc.start) + 1
    return Problem(str(path), line, 1, f"template is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
                   if raw else "template is not valid UTF-8")


def render_view(view: View, *, formats: Sequence[str] = FORMATS, standalone: bool = False,
                template_dirs: Sequence[Path] = ()) -> dict[str, str]:
    """Render every table of ``view``; return ``{file name: text}``.

    Raises :class:`InvalidInput` naming the template file and line when a template fails.
    """
    context = table_context(view)
    names = list(TABLES)
    if view.agreement is not None:
        names.append("agreement")
    if view.corrections:
        names.append("corrections")
    with shared_inline_parse():
        return _render_files(context, names, formats, standalone, template_dirs)


def _render_files(context: dict[str, Any], names: list[str], formats: Sequence[str], standalone: bool,
                  template_dirs: Sequence[Path]) -> dict[str, str]:
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
            files[f"{name}.tex"] = body
    return files


def write_outputs(files: dict[str, str], out_dir: Path) -> list[Path]:
    """Write rendered files atomically and remove stale ones protocoder wrote before."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = out_dir / name
        atomic_write_text(path, text)
        written.append(path)
    produced_exts = {Path(name).suffix for name in files}
    for name in KNOWN_OUTPUTS:
        path = out_dir / name
        if name not in files and path.suffix in produced_exts and path.exists():
            path.unlink()
    return written


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
}


def _estimate(coefficient: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    note = coefficient.get("note") or ""
    ref = None
    if note:
        if note not in notes:
            notes.append(note)
        ref = notes.index(note) + 1
    value = coefficient.get("value")
    low, high = coefficient.get("ci_low"), coefficient.get("ci_high")
    return {"value": _num(value), "defined": value is not None,
            # Our own text, safe in both targets; brackets need no escaping here.
            "ci": f"[{low:.2f}, {high:.2f}]" if value is not None and low is not None and high is not None else "",
            "note": ref}


def _estimate_row(label: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    # LaTeX sets intervals on a line of their own, so that a row with one column per field fits the page.
    return {"label": label, "cells": cells, "has_ci": any(cell["ci"] for cell in cells)}


def agreement_context(agreement: dict[str, Any]) -> dict[str, Any]:
    """Rows for the agreement templates from a stored report (``{"report", "labels"}``)."""
    report, labels = agreement["report"], agreement.get("labels", {})
    groups = report["groups"]
    notes: list[str] = []
    columns = [{"label": labels.get(g["group"], "All fields" if g["group"] == "all" else g["group"]),
                "units": g["n_units"], "paired": g["n_units_paired"], "raters": g["n_raters"],
                "distribution": " · ".join(f"{code} {n}" for code, n in g["code_counts"].items()) or "–",
                "counts": dict(g["code_counts"])}
               for g in groups]
    codes = list(dict.fromkeys(code for g in groups for code in g["code_counts"]))
    rows = [_estimate_row(label, [_estimate(g["coefficients"][name], notes) for g in groups])
            for name, label in COEFFICIENT_LABELS.items() if any(name in g["coefficients"] for g in groups)]
    evidence = [_estimate_row(label, [_estimate(g["evidence"][name], notes) for g in groups])
                for name, label in EVIDENCE_LABELS.items() if all(name in g.get("evidence", {}) for g in groups)]
    raters = sorted({rater for d in report["disagreements"] for rater in d["codes"]})
    disagreements = [{"unit": d["unit"], "group": labels.get(d["group"], d["group"]),
                      "codes": [d["codes"].get(rater, "–") for rater in raters]} for d in report["disagreements"]]
    settings = report["settings"]
    for note in report.get("notes", []):
        if note not in notes:
            notes.append(note)
    return {"columns": columns, "codes": codes, "rows": rows, "evidence": evidence, "notes": notes, "raters": raters,
            "disagreements": disagreements, "settings": settings,
            "na_text": _na_text(settings),
            "bootstrap_text": (f"95% percentile bootstrap intervals over units, {settings.get('bootstrap')} "
                               f"resamples, seed {settings.get('seed')}" if settings.get("bootstrap")
                               else "point estimates only (no bootstrap)")}


def _na_text(settings: dict[str, Any]) -> str:
    codes = settings.get("na_code") or ""
    if not codes:
        return "no code is declared not applicable"
    if settings.get("na") == "category":
        return f"the not-applicable code {codes} counted as an ordinary code"
    return f"ratings with the not-applicable code {codes} excluded"


def methods_lines(agreement: dict[str, Any]) -> list[str]:
    """Sentences for the methods paragraph stating the coefficients with their intervals."""
    context = agreement_context(agreement)
    pooled = agreement["report"]["groups"][-1]
    lines = [f"Agreement was computed over the {pooled['n_units_paired']} cells (protocol × field) that at "
             f"least two reviewers coded, per field and pooled ({context['na_text']}; "
             f"{context['bootstrap_text']})."]
    parts = []
    for row in context["rows"]:
        cell = row["cells"][-1]
        if cell["defined"]:
            interval = f", 95% CI {cell['ci'][1:-1].replace(', ', '–')}" if cell["ci"] else ""
            parts.append(f"{row['label'].lower() if row['label'].startswith('Percent') else row['label']} "
                         f"{cell['value']}{interval}")
        else:
            parts.append(f"{row['label']} undefined")
    lines.append("Pooled over all fields: " + "; ".join(parts) + ".")
    return lines


def render_agreement(report: dict[str, Any], labels: dict[str, str], fmt: str) -> str:
    """Render only the agreement table of a report, as Markdown (``md``) or LaTeX."""
    agreement = {"report": report, "labels": labels}
    context = {"agreement": agreement_context(agreement), "title": "Inter-rater agreement"}
    if fmt == "md":
        return _render(markdown_environment(), "agreement.md.j2", context)
    return _render(latex_environment(), "agreement.tex.j2", context)
