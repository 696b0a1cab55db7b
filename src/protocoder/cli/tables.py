"""Tables out and in: render the appendix tables, export and import cells, and measure
agreement between reviewers (render, export, import, agree)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from .common import batch, load, workspace_option


@click.command()
@workspace_option
@click.option("--format", "fmt", type=click.Choice(["md", "latex", "html", "all"]), default="all", show_default=True,
              help="all: Markdown, LaTeX and report.html.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: the workspace's output/].")
@click.option("--standalone", is_flag=True, help="Make each .tex a complete document that compiles with --engine.")
@click.option("--engine", type=click.Choice(["pdflatex", "xelatex", "lualatex"]), default="pdflatex",
              show_default=True,
              help="LaTeX engine the .tex files are for; xelatex and lualatex print any script (Noto CJK fonts).")
@click.option("--matrix-layout", type=click.Choice(["auto", "columns", "rotated", "transposed", "groups"]),
              default="auto", show_default=True, help="Layout of the matrix; auto picks the first that fits the page.")
@click.option("--release", "release_label", default=None, help="Reproduce a frozen release's tables byte for byte.")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the agreement intervals.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the agreement bootstrap.")
@click.option("--force", is_flag=True, help="Overwrite files in the output folder that protocoder did not write.")
@click.option("--quotes", is_flag=True, help="Print each cell's quoted passages in the ledger.")
@click.option("--comments", is_flag=True, help="Print each cell's discussion (protocoder comment) in the ledger.")
@click.option("--allow-lost-corrections", is_flag=True,
              help="Publish even though corrections.yaml lost entries that a release, output/ or git saw.")
def render(workspace: Path, fmt: str, out: Path | None, standalone: bool, engine: str, matrix_layout: str,
           release_label: str | None, bootstrap: int, seed: int | None, force: bool, quotes: bool,
           comments: bool, allow_lost_corrections: bool) -> None:
    """Render the summary, matrix and ledger tables (and agreement, when there are two or
    more reviewers) as Markdown and LaTeX, and the whole review as one report.html."""
    batch()
    from ..publish import render_workspace

    formats = ("md", "latex", "html") if fmt == "all" else (fmt,)
    if release_label is not None and (engine != "pdflatex" or matrix_layout != "auto" or fmt == "html"):
        raise UsageError("--release writes the tables exactly as they were released (Markdown and pdflatex "
                         "LaTeX); --engine, --matrix-layout and --format html apply to the current tables only")
    if (quotes or comments) and release_label is not None:
        raise UsageError("--quotes and --comments cannot change a release's tables: they are reproduced byte for "
                         "byte")
    result = render_workspace(workspace, formats=formats, out=out, standalone=standalone,
                              release=release_label, bootstrap=bootstrap, seed=seed, engine=engine,
                              matrix_layout=matrix_layout, force=force, quotes=quotes, comments=comments,
                              allow_lost_corrections=allow_lost_corrections)
    for problem in result.warnings:
        click.echo(str(problem), err=True)
    names = ", ".join(path.name for path in result.written)
    click.echo(f"Rendered {result.description} to {_shown(result.out_dir)}/: {names}")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


@click.command()
@workspace_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "qdpx", "qdc"]), default="csv", show_default=True,
              help="qdpx: a REFI-QDA project (needs --out); qdc: the rubric as a REFI-QDA codebook.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to FILE instead of standard output.")
@click.option("--view", type=click.Choice(["cells", "final"]), default="cells", show_default=True,
              help="cells: one row per reviewer cell; final: one row per (protocol, field) after consensus.")
@click.option("--allow-lost-corrections", is_flag=True,
              help="Publish even though corrections.yaml lost entries that a release, output/ or git saw.")
def export(workspace: Path, fmt: str, out: Path | None, view: str, allow_lost_corrections: bool) -> None:
    """Export cells as CSV or JSON (spreadsheet formulas are neutralised), or the review for
    qualitative-analysis tools (REFI-QDA: ATLAS.ti, MAXQDA, NVivo, QualCoder)."""
    batch()
    if fmt in ("qdpx", "qdc"):
        _export_refi_qda(workspace, fmt, out)
        return
    from ..exchange import EXPORT_COLUMNS, cell_rows, to_csv, to_json

    review = load(workspace)
    review.require_valid()
    if view == "cells":
        rows, columns = cell_rows(review), EXPORT_COLUMNS
    else:
        from ..publish import FINAL_COLUMNS, final_rows

        rows, columns = final_rows(review, allow_lost_corrections=allow_lost_corrections), FINAL_COLUMNS
    text = to_csv(rows, columns) if fmt == "csv" else to_json(rows)
    if out is None:
        click.echo(text, nl=False)
    else:
        from ..storage.files import atomic_write_text
        from ..storage.outputs import check_out_path

        check_out_path(review.paths.root, out)
        atomic_write_text(out, text)
        click.echo(f"Exported {len(rows)} rows to {out}", err=True)


def _export_refi_qda(workspace: Path, fmt: str, out: Path | None) -> None:
    from ..errors import UsageError
    from ..interop.refiqda import write_export

    if out is None:
        raise UsageError(f"--format {fmt} writes a file: give it with --out FILE")
    review = load(workspace)
    review.require_valid()
    from ..storage.outputs import check_out_path

    check_out_path(review.paths.root, out)
    click.echo(write_export(review, fmt, out), err=True)


@click.command("import")
@workspace_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check every row and report, but write nothing.")
@click.option("--reason", default=None,
              help="Why released cells change (required when the CSV changes a cell of the latest release; "
                   "recorded as each one's correction, as the app asks).")
def import_(workspace: Path, file: Path, dry_run: bool, reason: str | None) -> None:
    """Create or update reviewers' cells from a CSV with columns
    protocol, field, reviewer, code[, source, basis, cites, quotes, assisted] (a status
    column is ignored; quotes are checked against their snapshots).

    Every row is checked first; if any row is bad, nothing is written. A column the CSV
    lacks leaves that attribute as it is; an empty value clears it. Every changed file is
    written, or none.
    """
    batch()
    from ..exchange import check_cells_csv, import_cells_csv, released_changes

    review = load(workspace)
    review.require_valid()
    # Two streaming passes (check every row, then write): a progress bar on a terminal only.
    with _progress(file, "Checking") as step:
        check = check_cells_csv(file, review, progress=step)
    released = released_changes(file, review)
    if released and (reason is None or not reason.strip()) and not dry_run:
        from ..errors import Rejected

        shown = ", ".join(f"{key} ({reviewer})" for key, reviewer in released[:5]) + (
            f" and {len(released) - 5} more" if len(released) > 5 else "")
        raise Rejected(f"{file} changes cells of the latest release: {shown}; say why with --reason \"...\" "
                       "(recorded as their corrections, as the app asks), or leave those rows out")
    if dry_run:
        click.echo(f"{file}: {check.rows} rows are valid; nothing written (dry run)"
                   + (f"; {len(released)} released cells change (--reason is needed)" if released else ""))
        return
    with _progress(file, "Importing") as step:
        result = import_cells_csv(file, review, check, progress=step)
    click.echo(f"Imported {check.rows} rows: {result.cells} cells changed in {len(result.files)} files")
    for note in check.notes:
        click.echo(note)
    if released and reason:
        _record_released(review.paths, released, reason)


def _record_released(paths: Any, released: list[tuple[str, str]], reason: str) -> None:
    """After an import: the correction each changed released cell needs, with the import's reason; an
    adjudicated cell is the adjudicator's to change (the reviewer's change stays a proposal)."""
    from ..errors import ProtocoderError
    from ..lifecycle.amend import record_change
    from ..lifecycle.changes import current_released_cells

    current = current_released_cells(paths)
    for key, reviewer in dict.fromkeys(released):
        if current.get(key, {}).get("status") == "adjudicated":
            click.echo(f"{key}: adjudicated in the latest release; {reviewer}'s change is a proposal until an "
                       f"adjudicator decides (protocoder adjudicate --cell {key} --take {reviewer} --reason ...)")
            continue
        try:
            correction = record_change(paths, key, reason=reason, by=reviewer)
        except ProtocoderError as exc:
            click.echo(f"{key}: imported, but no correction was recorded: {exc}")
            continue
        if correction is not None:
            click.echo(f"Corrected {key} in release {correction.release}: {correction.old or '-'} -> {correction.new}")
        else:
            click.echo(f"{key}: imported; the tables keep the released record until the cell is settled")


@contextlib.contextmanager
def _progress(file: Path, label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar over the file's bytes on standard error, when it is a terminal (else nothing)."""
    if not sys.stderr.isatty():
        yield None
        return
    try:
        size = file.stat().st_size
    except OSError:
        size = 0
    with click.progressbar(length=size or 1, label=label, file=sys.stderr) as bar:
        yield bar.update


@click.command()
# Not workspace_option: with --ratings no workspace is read, so none is looked for (that
# would import the storage layer for nothing).
@click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False, path_type=Path), default=None,
              envvar="PROTOCODER_WORKSPACE",
              help="The review workspace [default: the one holding the current folder].")
@click.option("--ratings", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A long CSV with columns unit,rater,code[,group] instead of the workspace.")
@click.option("--format", "fmt", type=click.Choice(["table", "full", "json", "csv", "md", "latex"]), default="table",
              show_default=True,
              help="table: one screen (main coefficients, the disagreeing cells, what to run next); full: every "
                   "coefficient, specific and evidence agreement, per field.")
@click.option("--field", "field_id", default=None, help="Only this rubric field.")
@click.option("--level", type=click.Choice(["nominal", "ordinal"]), default="nominal", show_default=True)
@click.option("--categories", default=None, help="Declared codes in order, e.g. NR,P,E (only with --ratings).")
@click.option("--na", type=click.Choice(["category", "exclude"]), default="category", show_default=True,
              help="Not-applicable codes (role: not-applicable in the rubric) as ordinary codes, or excluded.")
@click.option("--na-code", "na_codes", multiple=True, metavar="CODE",
              help="With --ratings: the not-applicable code (repeatable) [default: NA].")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples over units for 95% intervals (0: point estimates only).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the bootstrap (reproducible).")
@click.option("--split", type=click.Choice(["assisted"]), default=None,
              help="Report units no reviewer coded with candidate passages shown (unassisted) and the "
                   "others (assisted) separately.")
def agree(workspace: Path | None, ratings: Path | None, fmt: str, field_id: str | None, level: str,
          categories: str | None, na: str, na_codes: tuple[str, ...], bootstrap: int, seed: int | None,
          split: str | None) -> None:
    """Inter-rater agreement per field and pooled, with bootstrap intervals and the disagreeing cells."""
    batch()
    # The full and CSV formats do not list the disagreeing units: none are collected for them.
    options: dict[str, Any] = {"level": level, "na": na, "bootstrap": bootstrap,
                               "list_disagreements": fmt in ("table", "json", "md", "latex")}
    if seed is not None:
        options["seed"] = seed
    if ratings is not None and split is not None:
        raise UsageError("--split assisted needs a workspace: a ratings CSV does not record which cells were assisted")
    if ratings is not None:
        # Read without pandas (a simple file straight into numbers): ratings never need it.
        from ..agreement import agreement_of_columns, read_ratings_table

        declared = [code.strip() for code in categories.split(",") if code.strip()] if categories else None
        table = read_ratings_table(ratings, categories=declared)
        if field_id is not None:
            if "group" not in table.names:
                raise UsageError("--field needs a 'group' column in the ratings CSV")
            table = table.keep([group == field_id for group in table.column("group")])
        report = agreement_of_columns(table, categories=declared, order=declared, na_code=na_codes or "NA",
                                      **options)
        labels: dict[str, str] = {}
    else:
        if categories is not None:
            raise UsageError("--categories only applies with --ratings: a workspace declares its codes in its rubric")
        from ..coding_agreement import review_agreement

        if workspace is None:
            from ..storage.paths import find_workspace

            workspace = find_workspace(Path("."))
        review = load(workspace)
        rubric = review.require_valid()
        if field_id is not None and field_id not in rubric.field_ids:
            raise UsageError(f"the rubric has no field {field_id!r} (fields: {', '.join(rubric.field_ids)})")
        if na_codes:
            raise UsageError("--na-code only applies with --ratings: a workspace's rubric declares its "
                             "not-applicable codes with 'role: not-applicable'")
        if na == "exclude" and not rubric.na_codes:
            raise UsageError("--na exclude: the rubric declares no not-applicable code; add "
                             "'role: not-applicable' to the code that means not applicable")
        labels = {f.id: f.label for f in rubric.fields}
        if split is not None:
            _print_split(review, field_id, options, fmt, labels)
            return
        report = review_agreement(review, field=field_id, **options)
        if fmt == "table":
            click.echo(report.format_summary(_next_steps(review, report, field_id)), nl=False)
            return
    _print_agreement(report, fmt, labels)


def _next_steps(review: Any, report: Any, field_id: str | None) -> list[tuple[str, str]]:
    """What to run after reading ``agree``'s summary of a workspace."""
    from ..lifecycle.consensus import Status
    from ..lifecycle.view import final_cells

    unresolved = [c for c in final_cells(review) if c.status is Status.UNRESOLVED
                  and field_id in (None, c.field)]
    steps = []
    if unresolved:
        steps.append(("protocoder adjudicate", f"decide the {len(unresolved)} unresolved "
                                               f"{'cell' if len(unresolved) == 1 else 'cells'}, with reasons"))
    more = f" --field {field_id}" if field_id else ""
    steps.append((f"protocoder agree --format full{more}", "every coefficient, and evidence agreement"))
    steps.append(("protocoder render", "the tables and methods paragraph of the paper"))
    if report.settings.get("assisted_cells"):
        steps.append(("protocoder agree --split assisted", "assisted and unassisted cells apart"))
    return steps


_SPLIT_TITLES = {False: "Unassisted units: no reviewer was shown candidate passages before coding",
                 True: "Assisted units: at least one reviewer was shown candidate passages before coding"}


def _print_split(review: Any, field_id: str | None, options: dict[str, Any], fmt: str, labels: dict[str, str]) -> None:
    """``agree --split assisted``: the agreement of unassisted units, then of assisted units."""
    import json

    from ..coding_agreement import review_agreement, review_columns

    reports: dict[bool, Any] = {}
    for assisted in (False, True):
        columns = review_columns(review, assisted=assisted)
        units = {u for u, g in zip(columns["unit"], columns["group"], strict=True) if field_id in (None, g)}
        reports[assisted] = review_agreement(review, field=field_id, assisted=assisted, **options) if units else None
    if fmt == "json":
        click.echo(json.dumps({("assisted" if a else "unassisted"): (r.to_dict() if r is not None else None)
                               for a, r in reports.items()}, indent=2, ensure_ascii=False))
        return
    if fmt == "csv":
        from ..exchange import to_csv

        rows = [{"split": "assisted" if a else "unassisted", **row}
                for a, r in reports.items() if r is not None for row in r.to_rows()]
        columns = list(rows[0]) if rows else ["split", "group", "coefficient", "value", "ci_low", "ci_high", "note"]
        click.echo(to_csv(rows, columns), nl=False)
        return
    for index, (assisted, report) in enumerate(reports.items()):
        if index:
            click.echo()
        title = _SPLIT_TITLES[assisted]
        click.echo(f"## {title}\n" if fmt == "md" else f"% {title}" if fmt == "latex" else title)
        if report is None:
            click.echo("No such units." if fmt != "latex" else "% No such units.")
        else:
            _print_agreement(report, fmt, labels)


def _print_agreement(report: Any, fmt: str, labels: dict[str, str]) -> None:
    if fmt == "table":
        click.echo(report.format_summary([("protocoder agree --format full", "every coefficient, per group")]),
                   nl=False)
    elif fmt == "full":
        click.echo(report.format_table())
    elif fmt == "json":
        click.echo(report.to_json())
    elif fmt == "csv":
        from ..exchange import to_csv

        rows = report.to_rows()
        columns = list(rows[0]) if rows else ["group", "coefficient", "value", "ci_low", "ci_high", "note"]
        click.echo(to_csv(rows, columns), nl=False)
    else:
        from ..render import render_agreement

        click.echo(render_agreement(report.to_dict(), labels, fmt), nl=False)
