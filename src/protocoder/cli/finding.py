"""Finding evidence: ``protocoder find`` ranks the passages of a protocol's pinned sources
that may answer one rubric field (see :mod:`protocoder.evidence.search`)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import click

from .common import batch, load, workspace_option

TABLE_WIDTH = 80
"""The table fits a standard terminal."""

TEXT_LINES = 4
"""Lines of a passage's text the table shows (JSON carries it whole)."""


@click.command("find")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD",
              help="The cell whose field the passages should answer.")
@click.option("--query", default="", metavar="TEXT", help="Words of your own, added to the field's query.")
@click.option("--reviewer", default=None, metavar="NAME",
              help="Also learn from the passages NAME quoted for this field in the review's other protocols "
                   "(everyone's with team_quotes: true in protocoder.yaml).")
@click.option("--limit", type=click.IntRange(min=1, max=1000), default=10, show_default=True,
              help="How many passages to list.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="table: for reading; json: every field, the full text.")
def find(workspace: Path, cell_key: str, query: str, reviewer: str | None, limit: int, output_format: str) -> None:
    """Rank the passages of a protocol's pinned sources that may answer one rubric field.

    The query is the field's question, definition and guidance, the rubric's search_terms,
    --query and, with --reviewer, the passages that reviewer quoted for the field in the
    review's other protocols. Showing candidates does not mark the cell: the coding app
    records `assisted: true` when it shows them before a code is chosen.
    """
    from ..evidence.search import search_field
    from ..lifecycle.cellref import CellRef

    batch()
    review = load(workspace)
    ref = CellRef.parse(cell_key, review)
    result = search_field(review, ref.protocol, ref.field, query=query, limit=limit, reviewer=reviewer)
    if result.missing:
        click.echo(f"protocoder: warning: not searched, snapshot not present here: {', '.join(result.missing)} "
                   f"(copy the files into sources/, or pin them again with: protocoder source update "
                   f"{ref.protocol} {result.missing[0]} FILE)", err=True)
    if output_format == "json":
        click.echo(json.dumps([c.to_dict() for c in result.candidates], ensure_ascii=False, indent=2))
        return
    searched = f"{len(result.sources)} source{'s' if len(result.sources) != 1 else ''}"
    if not result.candidates:
        click.echo(f"No passage of {ref.protocol}'s {searched} shares a word with the query of {ref.field}; "
                   "add words with --query.")
        return
    click.echo(_fit(f"Candidates for {ref} ({searched} searched)"))
    if result.learned:
        whose = "the team" if result.team else reviewer
        plural = "s" if result.learned != 1 else ""
        click.echo(_fit(f"Learning from {result.learned} quote{plural} by {whose} for {ref.field} in other protocols"))
    for rank, candidate in enumerate(result.candidates, 1):
        click.echo(_table_entry(rank, candidate))


def _table_entry(rank: int, candidate: Any) -> str:
    from ..evidence.quotes import printable

    where = f"{candidate.source}:{candidate.start}-{candidate.end}"
    head = f"{rank:>3}. {candidate.score:6.2f}  {where}"
    if candidate.heading:
        head += f"  {printable(candidate.heading)}"
    place = candidate.focus_place()
    # A table is one passage: its best row (the flag or option that matched) comes first, not its header.
    body = ["      " + line for line in wrap_columns(printable(candidate.shown_text), TABLE_WIDTH - 6, TEXT_LINES)]
    if place:
        unit, whole = candidate.row_name, candidate.whole_name
        body.append(click.style(_fit(f"      ({unit} {place[0]} of {place[1]} in the {whole}; the {unit}: "
                                      f"{candidate.source}:{candidate.focus_start}-{candidate.focus_end})"), dim=True))
    return "\n".join([_fit(head), *body])


def _columns(char: str) -> int:
    """Terminal columns of one character: two for wide ones (CJK, emoji), one for the rest."""
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _fit(line: str) -> str:
    """``line`` cut to TABLE_WIDTH terminal columns (wide characters, such as emoji in headings, take two)."""
    used = 0
    for index, char in enumerate(line):
        used += _columns(char)
        if used > TABLE_WIDTH - 1 and index < len(line) - 1:
            return line[:index] + "…"
    return line


def wrap_columns(text: str, width: int, max_lines: int) -> list[str]:
    """``text`` filled into lines of at most ``width`` terminal columns, at most ``max_lines`` of them (the last
    ending in " …" when text is left over). Breaks between words; a word wider than a line (a Chinese or
    Japanese sentence, written without spaces) is broken between its characters. textwrap counts characters,
    so a line of Chinese it made took twice the columns it was given."""
    lines: list[str] = []
    line, used = "", 0
    for word in text.split():
        wide = sum(_columns(char) for char in word)
        if line and used + 1 + wide > width and wide <= width:
            lines.append(line)
            line, used = "", 0
        if line:
            line, used = line + " ", used + 1
        for char in word:
            if used + _columns(char) > width:
                lines.append(line.rstrip())
                line, used = "", 0
            line, used = line + char, used + _columns(char)
    if line.strip():
        lines.append(line.rstrip())
    if len(lines) <= max_lines:
        return lines
    last, used = "", 0
    for char in lines[max_lines - 1]:
        if used + _columns(char) > width - 2:
            break
        last, used = last + char, used + _columns(char)
    return [*lines[:max_lines - 1], last.rstrip() + " …"]
