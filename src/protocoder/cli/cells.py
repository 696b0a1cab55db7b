"""One cell from the command line (cell set, cell show).

``cell set`` writes through the same store as the coding app and ``import``: every value is
checked before anything is written, the write is atomic, and the cell keeps what the command
does not name (its quotes, ``assisted``, any attribute whose option is not given). After a
release it behaves as the coding app does: a change that would change what the current view
shows for a released cell needs a reason (``--reason``), and the correction is recorded with
it in the same locked step; without one, nothing is written and the message names
``--reason`` and ``protocoder correct``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import Rejected, UsageError
from .common import load, workspace_option


@click.group()
def cell() -> None:
    """Set or show one reviewer's cell without the app."""


@cell.command("set")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", required=True, help="Whose cell (a safe id: it names the reviewer's file).")
@click.option("--code", default=None, help="The code; '' makes the cell a draft (no code).")
@click.option("--source", default=None, help="Where in the sources the code rests; '' clears it.")
@click.option("--basis", default=None, help="Why this code; '' clears it.")
@click.option("--cite", "cites", multiple=True, metavar="KEY",
              help="A key of references.bib (repeatable); the keys given replace the cell's; --cite '' clears them.")
@click.option("--reason", default=None,
              help="After a release: why a released cell changes (recorded as its correction).")
def cell_set(workspace: Path, cell_key: str, reviewer: str, code: str | None, source: str | None,
             basis: str | None, cites: tuple[str, ...], reason: str | None) -> None:
    """Set one cell's code and evidence; options not given leave that attribute as it is.

    Every value is checked first (protocol, field, reviewer id, the field's codes, citation
    keys, what the code requires); on any problem one line says what is wrong and nothing is
    written. The cell's quotes and its assisted flag are kept.
    """
    if code is None and source is None and basis is None and not cites:
        raise UsageError("nothing to set: give --code, --source, --basis or --cite")
    review = load(workspace)
    review.require_valid()
    from ..lifecycle.cell_set import set_cell

    outcome = set_cell(review, cell_key, reviewer, code=code, source=source, basis=basis,
                       cites=_cite_keys(cites) if cites else None, reason=reason)
    click.echo(outcome.summary)
    for note in outcome.notes:
        click.echo(note)


@cell.command("show")
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--reviewer", default=None, help="Only this reviewer's cell [default: every reviewer's].")
def cell_show(workspace: Path, cell_key: str, reviewer: str | None) -> None:
    """Print a cell as YAML, as the reviewer's file holds it (every reviewer's when none is given)."""
    from ..lifecycle.cellref import CellRef
    from ..storage.mappings import check_reviewer
    from ..storage.store import Store

    review = load(workspace)
    rubric = review.require_valid()
    ref = CellRef.parse(cell_key, review)
    if reviewer is not None:
        check_reviewer(reviewer)
        # Only this reviewer's file is read: a reviewer is shown their own cell, nobody else's.
        sheet, _ = Store(review.paths).read_sheet(ref.protocol, reviewer, rubric)
        found = sheet.cells.get(ref.field)
        if found is None:
            raise Rejected(f"{ref} has no cell by {reviewer} (set one with protocoder cell set --cell {ref} "
                           f"--reviewer {reviewer} --code ...)")
        cells = {reviewer: found}
        sheets = {reviewer: sheet}
    else:
        cells = dict(sorted(review.cells(ref.protocol, ref.field).items()))
        if not cells:
            click.echo(f"# {ref}: no reviewer has a cell here yet")
            return
        sheets = {sheet.reviewer: sheet for sheet in review.sheets if sheet.protocol == ref.protocol}
    click.echo(cells_yaml(str(ref), cells), nl=False)
    # What each reviewer had on screen of each pinned source: what an NR rests on (a YAML comment,
    # so the output stays a reviewer file's YAML).
    pinned = [source for source in review.protocol(ref.protocol).sources if source.has_snapshot]
    for name in cells if pinned else ():
        known = sheets[name].reading if name in sheets else {}
        shares = " · ".join(f"{source.id} {known[source.sha256].percent if source.sha256 in known else '0%'}"
                            for source in pinned)
        click.echo(f"# {name} read: {shares}")


def _cite_keys(given: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of ``--cite`` options (``--cite ''`` alone: none); ``a;b`` and ``a,b`` split as import does."""
    keys: list[str] = []
    for value in given:
        for key in value.replace(",", ";").split(";"):
            if key.strip() and key.strip() not in keys:
                keys.append(key.strip())
    return tuple(keys)


# --------------------------------------------------------------------------- showing cells


def cells_yaml(key: str, cells: dict[str, Any]) -> str:
    """``key`` and each reviewer's cell as YAML, in the keys and order of a reviewer's file."""
    from ..storage.mappings import write_cell
    from ..storage.yamlio import Document, new_mapping

    data = new_mapping()
    by_reviewer = new_mapping()
    data[key] = by_reviewer
    for reviewer, item in cells.items():
        entry = new_mapping()
        write_cell(entry, item)
        if item.code is None:
            entry.insert(0, "code", None)
            entry.yaml_add_eol_comment("draft: no code chosen yet", "code")
        by_reviewer[reviewer] = entry
    return Document(Path(f"{key}.yaml"), data).dumps()
