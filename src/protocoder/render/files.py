"""The renderer's entry points: a view into ``{file name: text}``, the agreement table alone, and
writing rendered files into an output folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import visible_text
from ..lifecycle.view import View
from ..storage.outputs import OutputResult, write_output_folder
from . import FORMATS, KNOWN_OUTPUTS, TABLES
from .agreement_table import agreement_charts, agreement_context
from .environments import html_environment, latex_environment, markdown_environment, render_template
from .escape import Latex, shared_inline_parse
from .latex_text import CJK_FONT_COMMAND, unicode_text
from .tables import table_context


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
        files = _render_files(context, names, formats, standalone, template_dirs, engine)
    # What reviewers typed is printed as text: a control character (ESC, BEL, an OSC sequence)
    # becomes [U+XXXX] in every format, as pdflatex's text already shows it.
    return {name: visible_text(text) for name, text in files.items()}


def _render_files(context: dict[str, Any], names: list[str], formats: Sequence[str], standalone: bool,
                  template_dirs: Sequence[Path], engine: str = "pdflatex") -> dict[str, str]:
    files: dict[str, str] = {}
    if "md" in formats:
        env = markdown_environment(template_dirs)
        for name in names:
            files[f"{name}.md"] = render_template(env, f"{name}.md.j2", context)
        files["methods.md"] = render_template(env, "methods.md.j2", context)
    if "latex" in formats:
        env = latex_environment(template_dirs)
        for name in names:
            body = render_template(env, f"{name}.tex.j2", context)
            if standalone:
                body = render_template(env, "standalone.tex.j2",
                                       {**context, "body": Latex(body), "with_references": "\\cite{" in body})
            if engine != "pdflatex":
                body = unicode_text(body)
                if not standalone and CJK_FONT_COMMAND in body:
                    body = f"\\providecommand{{{CJK_FONT_COMMAND}}}{{}}\n{body}"
            files[f"{name}.tex"] = body
    if "html" in formats:
        methods = files.get("methods.md") or render_template(markdown_environment(template_dirs), "methods.md.j2",
                                                             context)
        charts = agreement_charts(context["agreement"]) if context["agreement"] else []
        files["report.html"] = render_template(html_environment(template_dirs), "report.html.j2",
                                               {**context, "charts": charts,
                                                "methods_paragraphs": [line for line in methods.splitlines() if line]})
    return files


def write_outputs(files: dict[str, str], out_dir: Path, *, force: bool = False,
                  meta: dict[str, Any] | None = None, show: Any = str) -> OutputResult:
    """Write rendered files atomically and remove stale ones protocoder wrote before
    (never a file it did not write: see :mod:`protocoder.storage.outputs`)."""
    return write_output_folder(out_dir, files, force=force, meta=meta, stale_names=KNOWN_OUTPUTS, show=show)


def render_agreement(report: dict[str, Any], labels: dict[str, str], fmt: str) -> str:
    """Render only the agreement table of a report, as Markdown (``md``) or LaTeX (``agree --format``)."""
    agreement = {"report": report, "labels": labels}
    # No review title here: the caption is "Inter-rater agreement." and says nothing twice.
    context = {"agreement": agreement_context(agreement), "title": ""}
    if fmt == "md":
        return render_template(markdown_environment(), "agreement.md.j2", context)
    return render_template(latex_environment(), "agreement.tex.j2", context)
