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
    item = result.source
    if item.retrieved_at:
        moved = f" from {item.final_url}" if item.final_url and item.final_url != item.url else ""
        click.echo(f"  read{moved} at {item.retrieved_at}" + (f", commit {item.commit}" if item.commit else ""))


@click.group()
def source() -> None:
    """Pin local copies (snapshots) of the sources reviewed, by their SHA-256."""


@source.command("add")
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.argument("file", metavar="[FILE|URL]", required=False)
@click.option("--id", "source_id", default=None,
              help="The id quotes use [default: a short slug of the title: the name before a subtitle, else its "
                   "first words].")
@click.option("--title", default=None, help="[default: the document's own title, else the file name]")
@click.option("--url", default=None, help="Where a local FILE is published (https://...).")
@click.option("--version", "version", default=None,
              help="arXiv v2, a commit... [default: the URL's version or commit, else snapshot <hash>]")
@click.option("--accessed", default=None, metavar="YYYY-MM-DD", help="When it was read [default: today].")
@click.option("--repo", "repository", default=None, metavar="REPO",
              help="Pin files of a git repository (a local folder or a git URL) instead of FILE or URL.")
@click.option("--rev", default=None, metavar="REV", help="With --repo: a branch, tag or commit [default: HEAD].")
@click.option("--include", "includes", multiple=True, metavar="GLOB",
              help="With --repo (repeatable): the files to pin, e.g. README.md, 'docs/**/*.md', '*.py'.")
def source_add(workspace: Path, protocol_id: str, file: str | None, source_id: str | None, title: str | None,
               url: str | None, version: str | None, accessed: str | None, repository: str | None, rev: str | None,
               includes: tuple[str, ...]) -> None:
    """Store a copy of FILE or URL (PDF, HTML, Markdown or text) and pin it as a source of PROTOCOL.

    A URL is fetched (redirects followed, the final URL, time, ETag and Last-Modified
    recorded); a GitHub file URL (github.com/OWNER/REPO/blob/BRANCH/PATH) is read at the
    branch's current commit, an arXiv abstract URL as that version's PDF. With --repo, every
    file matching an --include at the commit --rev names is pinned, each with its repository,
    commit, path and permalink; binary files are skipped with a note.
    """
    from ..evidence.fetch import is_url
    from ..evidence.sources import add_repository_sources, add_source, add_url_source

    day = _day(accessed, "--accessed")
    if repository is not None:
        if file is not None:
            raise UsageError(f"give FILE, URL or --repo, not both ({file!r} and --repo {repository!r})")
        if not includes:
            raise UsageError("--repo needs at least one --include GLOB naming the files to pin "
                             "(e.g. --include README.md --include 'docs/**/*.md')")
        if url or version:
            raise UsageError("--url and --version are for one document; a repository's files record their "
                             "permalink and commit")
        review = load(workspace)
        result = add_repository_sources(review, protocol_id, repository, rev or "HEAD", list(includes),
                                        accessed=day, source_id=source_id, title=title)
        click.echo(f"Pinned {len(result.pinned)} file(s) of {result.repository} at {result.commit} for "
                   f"{protocol_id}:")
        for pinned in result.pinned:
            click.echo(f"  {pinned.source.id}\t{pinned.source.path}\t{pinned.source.media_type}"
                       + (f"\t{pinned.source.permalink}" if pinned.source.permalink else ""))
        for note in result.skipped:
            click.echo(f"  skipped {note}")
        return
    if rev is not None or includes:
        raise UsageError("--rev and --include go with --repo REPO")
    if file is None:
        raise UsageError("say what to pin: a FILE, a URL, or --repo REPO --include GLOB")
    review = load(workspace)
    if is_url(file):
        if url:
            raise UsageError("--url names where a local FILE is published; a URL source records its own URL")
        result = add_url_source(review, protocol_id, file, source_id=source_id, title=title, version=version,
                                accessed=day)
    else:
        result = add_source(review, protocol_id, Path(file), source_id=source_id, title=title, url=url,
                            version=version, accessed=day)
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
@click.argument("file", metavar="[FILE|URL]", required=False)
@click.option("--version", "version", default=None, help="The new version [default: snapshot <hash>].")
@click.option("--accessed", default=None, metavar="YYYY-MM-DD", help="[default: today]")
@click.option("--url", default=None, help="A new URL [default: unchanged].")
@click.option("--title", default=None, help="A new title [default: unchanged].")
def source_update(workspace: Path, protocol_id: str, source_id: str, file: str | None, version: str | None,
                  accessed: str | None, url: str | None, title: str | None) -> None:
    """Pin a new version of a source and list every cell whose quotes are no longer found (drifted).

    Without FILE or URL the source is read again from where it lives: its repository at its
    revision (a branch's current commit), else its URL.
    """
    from ..evidence.fetch import fetch, is_url
    from ..evidence.quotes import printable
    from ..evidence.sources import update_source

    review = load(workspace)
    document: Any = None if file is None else fetch(file) if is_url(file) else Path(file)
    if is_url(file or "") and url is None:
        url = file
    result = update_source(review, protocol_id, source_id, document, version=version,
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


@source.command("check")
@workspace_option
@click.argument("protocol_ids", metavar="[PROTOCOL]...", nargs=-1)
def source_check(workspace: Path, protocol_ids: tuple[str, ...]) -> None:
    """Read each URL and repository source again and say which changed since pinned (writes nothing).

    For a changed source, says how many of its quotes are still found in the new version;
    pin it with: protocoder source update PROTOCOL SOURCE. Exits 1 when a source could not be
    checked.
    """
    from ..evidence.sources import check_sources

    review = load(workspace)
    known = {p.id for p in review.protocols}
    for protocol_id in protocol_ids:
        if protocol_id not in known:
            raise Rejected(f"no protocol {protocol_id!r} in this workspace (see: protocoder protocol list)")
    failed = changed = 0
    for row in check_sources(review, protocol_ids or None):
        item = row.source
        if row.state == "changed":
            changed += 1
            quoted = f"{row.found} of {row.quotes} quote(s) still found" if row.quotes else "not quoted"
            click.echo(f"{row.protocol}\t{item.id}\tchanged\t{row.detail}\t{quoted}; pin it with: protocoder "
                       f"source update {row.protocol} {item.id}")
        else:
            failed += row.state == "cannot check"
            click.echo(f"{row.protocol}\t{item.id or '-'}\t{row.state}" + (f"\t{row.detail}" if row.detail else ""))
    click.echo(f"{changed} source(s) changed since pinned" + (f"; {failed} could not be checked" if failed else ""))
    if failed:
        sys.exit(1)


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
    from ..lifecycle.cellref import CellRef

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
    where = location_text(added.page, added.section) or (
        (f"line {added.lines[0]}" if added.lines[0] == added.lines[1] else f"lines {added.lines[0]}–{added.lines[1]}")
        if added.lines else f"characters {added.start}–{added.end}")
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
    """List quotes: cell, reviewer, number, source, position, state (as validate judges it) and text."""
    from ..evidence.quotes import Verifier, all_quotes, printable
    from ..evidence.snapshots import Snapshots, location_text

    review = load(workspace)
    review.require_valid()
    key = str(_cell(review, cell_key)) if cell_key else None
    verifier = Verifier(Snapshots(review.paths))
    for item in all_quotes(review):
        if (key and item.key != key) or (reviewer and item.cell.reviewer != reviewer):
            continue
        state = verifier.check(item.quote, item.source, protocol_id=item.cell.protocol).state
        where = location_text(item.quote.page, item.quote.section) or "-"
        click.echo(f"{item.key}\t{item.cell.reviewer}\t{item.index + 1}\t{item.quote.source}\t{where}\t{state}\t"
                   f"{printable(_short(item.quote.text))}")
