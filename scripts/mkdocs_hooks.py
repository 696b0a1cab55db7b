"""MkDocs hooks for the manual (``hooks:`` in mkdocs.yml).

A table cell's code span that shows a ``|`` (``[--format md|latex]``) must escape it as
``\\|`` for GitHub, which splits table cells before it reads code spans; Python-Markdown,
which builds the site, reads code spans first, so the backslash would be shown. The page
keeps the escape (it reads right on GitHub) and the site gets the bare ``|``.
"""

from __future__ import annotations

import re
from typing import Any

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def unescape_table_pipes(markdown: str) -> str:
    """``markdown`` with ``\\|`` inside the code spans of table rows written as ``|``."""
    lines = markdown.split("\n")
    for index, line in enumerate(lines):
        if line.lstrip().startswith("|") and "\\|" in line:
            lines[index] = _CODE_SPAN.sub(lambda m: m.group(1) + m.group(2).replace("\\|", "|") + m.group(1), line)
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs' hook: called with each page's Markdown before it is converted."""
    return unescape_table_pipes(markdown)
