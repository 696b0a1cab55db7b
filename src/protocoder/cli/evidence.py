"""Evidence: pinned snapshots of the sources reviewed (source add, list, update, remove)
and the quoted passages that anchor cells to them (quote add, remove, confirm, list)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import Rejected, UsageError, visible_text
from .common import load, workspace_option


def _day(value: str | None, option: str) -> Any:
    from datetime import date

    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option} {value!r} is not a date (YYYY-MM-DD)") from None


def _pinned_lines(result: Any, paths: Any) -> None:
    extracted = result.extracted
    pages = f", {len(extracted.pages)} pages" if extracted.pages else ""
    click.echo(f"  {paths.show(result.file)} ({result.source.media_type}{pages}, "
               f"{len(extracted.headings)} headings, {len(extracted.text):,} characters of text)")


@click.group()
def source() -> None:
    """Pin local copies (snapshots) of the sources reviewed, by their SHA-256."""


@source.command("add")
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "source_id", default=None, help="The id quotes use [default: a slug of the title].")
@click.option("--title", default=None, help="[default: the document's own title, else the file name]")
@click.option("--url", default=None, help="Where the source is published (https://...).")
@click.option("--version", "version", default=None, help="arXiv v2, a commit... [default: snapshot <hash>]")
@click.option("--accessed", default=None, metavar="YYYY-MM-DD", help="When it was read [default: today].")
def source_add(workspace: Path, protocol_id: str, file: Path, source_id: str | None, title: str | None,
               url: str | None, version: str | None, accessed: str | None) -> None:
    """Store a copy of FILE (PDF, HTML, Markdown or text) and pin it as a source of PROTOCOL."""
    from ..evidence.sources import add_source

    review = load(workspace)
    result = add_source(review, protocol_id, file, source_id=source_id, title=title, url=url, version=version,
                        accessed=_day(accessed, "--accessed"))
    click.echo(f"Pinned source {result.source.id} for {protocol_id}: {result.source.title} "
               f"(sha256 {result.source.sha256[:12]}…)")
    _pinned_lines(result, review.paths)


@source.command("list")
@workspace_option
@click.argument("protocol_ids", metavar="[PROTOCOL]...", nargs=-1)
def source_list(workspace: Path, protocol_ids: tuple[str, ...]) -> None:
    """List pinned sources: id, version, snapshot state, how often each is quoted."""
    from ..evidence.sources import source_rows

    review = load(workspace)
    known = {p.id for p in review.protocols}
    for protocol_id in protocol_ids:
        if protocol_id not in known:
            raise Rejected(f"no protocol {protocol_id!r} in this workspace")
    for row in source_rows(review, protocol_ids or None):
        item = row.source
        snapshot = f"{item.media_type} {item.sha256[:12]} {row.state}" if item.has_snapshot else row.state
        quoted = f"{row.quotes} quotes" + (f" ({row.drifted} drifted)" if row.drifted else "")
        click.echo(visible_text(f"{row.protocol}\t{item.id or '-'}\t{item.title}\t{item.version}\t{snapshot}\t"
                                f"{quoted}"))


@source.command("update")
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.argument("source_id", metavar="SOURCE")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--version", "version", default=None, help="The new version [default: snapshot <hash>].")
@click.option("--accessed", default=None, metavar="YYYY-MM-DD", help="[default: today]")
@click.option("--url", default=None, help="A new URL [default: unchanged].")
@click.option("--title", default=None, help="A new title [default: unchanged].")
def source_update(workspace: Path, protocol_id: str, source_id: str, file: Path, version: str | None,
                  accessed: str | None, url: str | None, title: str | None) -> None:
    """Pin a new version of a source and list every cell whose quotes are no longer found (drifted)."""
    from ..evidence.quotes import printable
    from ..evidence.sources import update_source

    review = load(workspace)
    result = update_source(review, protocol_id, source_id, file, version=version,
                           accessed=_day(accessed, "--accessed"), url=url, title=title)
    if result.unchanged:
        click.echo(f"Source {source_id} of {protocol_id} is pinned to this file already (sha256 "
                   f"{result.source.sha256[:12]}…)")
    else:
        click.echo(f"Pinned {result.source.version} of source {source_id} for {protocol_id} (sha256 "
                   f"{result.source.sha256[:12]}…)")
        _pinned_lines(result, review.paths)
    if result.moved:
        click.echo(f"{len(result.moved)} quote(s) found in this version: moved to it")
    if result.drifted:
        cells = sorted({(ref.key, ref.cell.reviewer) for ref in result.drifted})
        click.echo(f"Drifted evidence: {len(result.drifted)} quote(s) in {len(cells)} cell(s) are not in this "
                   "version; re-quote them, or confirm with protocoder quote confirm:")
        for ref in result.drifted:
            click.echo(f"  {ref.key} ({ref.cell.reviewer}): \"{printable(_short(ref.quote.text))}\"")
    elif not result.unchanged:
        click.echo("No drifted evidence: every quote of this source is in the new version.")


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1].rstrip() + "…"


@source.command("remove")
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.argument("source_id", metavar="SOURCE")
def source_remove(workspace: Path, protocol_id: str, source_id: str) -> None:
    """Unpin a source (refused while quotes use it); its snapshot goes unless another source pins it."""
    from ..evidence.sources import remove_source

    review = load(workspace)
    removed = remove_source(review, protocol_id, source_id)
    click.echo(f"Removed source {source_id} from {protocol_id}"
               + (f"; deleted {', '.join(review.paths.show(p) for p in removed)}" if removed else ""))


@click.group()
def quote() -> None:
    """Anchor cells to passages of pinned sources."""


def _cell(review: Any, cell_key: str) -> Any:
    from ..lifecycle.adjudication import CellRef

    return CellRef.parse(cell_key, review)


def _reviewer(name: str) -> str:
    from ..model import is_slug

    if not is_slug(name):
        raise UsageError(f"reviewer name {name!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
    return name


@quote.command("add")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", required=True, help="Whose cell.")
@click.option("--source", "source_id", required=True, help="The id of a pinned source of the protocol.")
@click.option("--accept-closest", is_flag=True,
              help="When TEXT is not in the source, quote the closest passage instead (the one the refusal shows).")
@click.argument("text")
def quote_add(workspace: Path, cell_key: str, reviewer: str, source_id: str, text: str,
              accept_closest: bool) -> None:
    """Quote TEXT of a pinned source on a cell (refused, writing nothing, when it is not in the snapshot).

    TEXT may be copied from the raw file (Markdown or HTML source, with its markup) or from
    the rendered text; it is stored as given, with where it is in the raw file. TEXT "-"
    reads the passage from standard input; put "--" before a TEXT that starts with "-".
    """
    from ..evidence.quotes import add_quote, printable
    from ..evidence.snapshots import location_text

    if text == "-":
        text = sys.stdin.read()
    review = load(workspace)
    review.require_valid()
    ref = _cell(review, cell_key)
    added, new = add_quote(review, ref.protocol, ref.field, _reviewer(reviewer), source_id, text,
                           accept_closest=accept_closest)
    where = location_text(added.page, added.section) or f"characters {added.start}–{added.end}"
    if accept_closest and added.text != text.strip():
        click.echo(f"Not found as given; the closest passage is quoted: \"{printable(' '.join(added.text.split()))}\"")
    if new:
        click.echo(f"Quoted {source_id} ({where}) on {ref} ({reviewer})")
    else:
        click.echo(f"{ref} ({reviewer}) quotes this passage already ({where}); nothing written")


@quote.command("remove")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", required=True, help="Whose cell.")
@click.option("--source", "source_id", default=None, help="Only quotes of this source.")
@click.option("--number", type=click.IntRange(min=1), default=None, help="The Nth quote of the cell (quote list).")
@click.argument("text", required=False)
def quote_remove(workspace: Path, cell_key: str, reviewer: str, source_id: str | None, number: int | None,
                 text: str | None) -> None:
    """Remove a cell's quote of TEXT (or --number N, or every quote of --source)."""
    from ..evidence.quotes import remove_quotes

    if text is None and number is None and source_id is None:
        raise UsageError("say which quote: its TEXT, --number N, or --source ID for all quotes of a source")
    review = load(workspace)
    review.require_valid()
    ref = _cell(review, cell_key)
    gone = remove_quotes(review, ref.protocol, ref.field, _reviewer(reviewer), text=text, number=number,
                         source_id=source_id)
    click.echo(f"Removed {len(gone)} quote(s) from {ref} ({reviewer})")


@quote.command("confirm")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", required=True, help="Whose cell.")
@click.option("--source", "source_id", default=None, help="Only quotes of this source.")
def quote_confirm(workspace: Path, cell_key: str, reviewer: str, source_id: str | None) -> None:
    """Confirm that a cell's code stands although its quoted passages changed (clears drift)."""
    from ..evidence.quotes import confirm_quotes

    review = load(workspace)
    review.require_valid()
    ref = _cell(review, cell_key)
    confirmed = confirm_quotes(review, ref.protocol, ref.field, _reviewer(reviewer), source_id)
    if not confirmed:
        click.echo(f"{ref} ({reviewer}) has no drifted quotes; nothing written")
        return
    click.echo(f"Confirmed {len(confirmed)} quote(s) of {ref} ({reviewer}) against the current version")


@quote.command("list")
@workspace_option
@click.option("--cell", "cell_key", default=None, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", default=None, help="Only this reviewer's quotes.")
def quote_list(workspace: Path, cell_key: str | None, reviewer: str | None) -> None:
    """List quotes: cell, reviewer, number, source, position, state and text."""
    from ..evidence.quotes import all_quotes, anchor, printable
    from ..evidence.snapshots import location_text

    review = load(workspace)
    review.require_valid()
    key = str(_cell(review, cell_key)) if cell_key else None
    for item in all_quotes(review):
        if (key and item.key != key) or (reviewer and item.cell.reviewer != reviewer):
            continue
        state = anchor(item.quote, item.source).value if item.source is not None else "unknown source"
        where = location_text(item.quote.page, item.quote.section) or "-"
        click.echo(f"{item.key}\t{item.cell.reviewer}\t{item.index + 1}\t{item.quote.source}\t{where}\t{state}\t"
                   f"{printable(_short(item.quote.text))}")
