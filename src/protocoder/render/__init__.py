"""Render a :class:`~protocoder.lifecycle.view.View` to Markdown, LaTeX and one HTML report through Jinja2 templates.

The rest of protocoder imports the renderer from here only. The modules, by idea:

* :mod:`.files` — the entry points: :func:`render_view`, :func:`render_agreement`, :func:`write_outputs`;
* :mod:`.environments` — the sandboxed Jinja2 environments, their escaping hooks and filters, template errors;
* :mod:`.tables` — what the summary, matrix and ledger templates print (rows, marks, legends, widths);
* :mod:`.agreement_table` — what the agreement table, its charts and the methods paragraph print;
* :mod:`.latex_text` — long-word breaking in LaTeX, and the xelatex/lualatex font fallback;
* :mod:`.escape` — escaping user text for Markdown and LaTeX, and basis text's inline Markdown for each target;
* :mod:`.layout` — estimated printed widths, and which matrix layout fits the page;
* :mod:`.palette` — the cell colours of the coloured matrix.

The constants below cost nothing to import; the functions load the renderer (Jinja2,
markdown-it) on first use, so that commands which never render (``--version``,
``validate``, ``status``) never load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

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

if TYPE_CHECKING:
    from .escape import parse_inline_ahead, shared_inline_parse
    from .files import render_agreement, render_view, write_outputs

# Loaded on first use (see the module docstring): name -> the submodule that defines it.
_LAZY = {"render_view": "files", "render_agreement": "files", "write_outputs": "files",
         "shared_inline_parse": "escape", "parse_inline_ahead": "escape"}

__all__ = ["ALL_FORMATS", "ENGINES", "FORMATS", "KNOWN_OUTPUTS", "TABLES", "parse_inline_ahead", "render_agreement",
           "render_view", "shared_inline_parse", "write_outputs"]


__getattr__ = lazy_names(__name__, globals(), _LAZY)
