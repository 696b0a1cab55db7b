"""What the review covers: protocols (add, list, remove) and the bibliography (bib add)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InvalidInput, Problem, Rejected, visible_text
from .common import load, print_warnings, workspace_option


@click.group()
def protocol() -> None:
    """Add, list and remove protocols."""


@protocol.command("add")
@workspace_option
@click.option("--id", "protocol_id", required=True, help="A safe id such as swe-bench.")
@click.option("--name", required=True, help="Display name (unicode allowed, e.g. τ-bench).")
@click.option("--cite", "cites", multiple=True, help="A citation key from references.bib (repeatable).")
@click.option("--source", "sources", multiple=True, metavar="TITLE|URL|VERSION|DATE",
              help="A pinned source; DATE (accessed, YYYY-MM-DD) defaults to today. Repeatable.")
def protocol_add(workspace: Path, protocol_id: str, name: str, cites: tuple[str, ...],
                 sources: tuple[str, ...]) -> None:
    """Add a protocol with its citation keys and pinned sources."""
    from ..model import Protocol
    from ..scaffold import parse_source_option
    from ..storage.store import Store

    review = load(workspace)
    parsed = tuple(parse_source_option(text) for text in sources)
    # The citation keys are checked against references.bib as it is under the workspace lock.
    path = Store(review.paths).add_protocol(Protocol(protocol_id, name, tuple(cites), parsed))
    rubric = review.rubric
    total = len(rubric.fields) if rubric else 0
    click.echo(f"Added protocol {protocol_id} ({review.paths.show(path)}); 0/{total} cells coded")


@protocol.command("list")
@workspace_option
def protocol_list(workspace: Path) -> None:
    """List protocols with each reviewer's progress."""
    review = load(workspace)
    print_warnings(review)
    rubric = review.rubric
    fields = rubric.field_ids if rubric else ()
    for item in review.protocols:
        progress = []
        for reviewer in review.reviewers:
            mine = [c for f in fields if (c := review.cells(item.id, f).get(reviewer)) is not None and c.is_coded]
            incomplete = sum(1 for c in mine if rubric is not None and not c.is_complete(rubric))
            progress.append(f"{reviewer} {len(mine)}/{len(fields)}"
                            + (f" ({incomplete} incomplete)" if incomplete else ""))
        click.echo(visible_text(f"{item.id}\t{item.name}\t{', '.join(progress) or 'not coded'}"))


@protocol.command("remove")
@workspace_option
@click.argument("protocol_id")
@click.option("--force", is_flag=True, help="Remove even though reviewers have coded cells for it.")
def protocol_remove(workspace: Path, protocol_id: str, force: bool) -> None:
    """Remove a protocol and its folder (refuses if cells are coded, unless --force)."""
    from ..lifecycle.amend import removal_problem
    from ..storage.paths import open_workspace
    from ..storage.store import Store

    paths = open_workspace(workspace)
    if not paths.protocol_file(protocol_id).is_file():
        raise Rejected(f"no protocol {protocol_id!r} in this workspace")
    # A protocol of the latest release is withdrawn first (the message names the command).
    if (problem := removal_problem(paths, protocol_id)) is not None:
        raise Rejected(problem)
    # The coded cells are counted under the workspace lock, with the folder and the table
    # order changed together (or, on any error, neither).
    count = Store(paths).remove_protocol(protocol_id, force=force)
    click.echo(f"Removed protocol {protocol_id} ({count} coded cells)")


@click.group()
def bib() -> None:
    """Manage the bibliography (references.bib)."""


@bib.command("add")
@workspace_option
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
def bib_add(workspace: Path, file: Path) -> None:
    """Append BibTeX entries from FILE (or - for standard input), after checking them."""
    from ..storage.files import MAX_FILE_BYTES, decode_utf8, read_capped
    from ..storage.paths import open_workspace
    from ..storage.store import Store

    paths = open_workspace(workspace)
    if str(file) == "-":
        name = "<stdin>"
        # Capped, so that an endless stream ends in an error instead of filling the memory.
        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.read(MAX_FILE_BYTES + 1) if stream is not None else sys.stdin.read(MAX_FILE_BYTES + 1).encode()
        if len(raw) > MAX_FILE_BYTES:
            raise InvalidInput([Problem(name, 0, 0, f"more than {MAX_FILE_BYTES:,} bytes; the limit is "
                                                    f"{MAX_FILE_BYTES:,}")])
    else:
        # Only a regular file of a sane size: /dev/zero or a named pipe would hang or exhaust memory.
        name = str(file)
        raw = read_capped(file, name, MAX_FILE_BYTES)
    text = decode_utf8(raw, name)
    entries = Store(paths).add_bibtex(text, source=name)
    click.echo(f"Added {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} to references.bib: "
               + ", ".join(entry.key for entry in entries))
    from ..storage.bibliography import decoding_warnings

    for warning in decoding_warnings(entries, name):
        click.echo(str(warning), err=True)
