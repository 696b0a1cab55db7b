"""The ``protocoder`` command line: parse options, call the core, print the result.

Each command is a thin layer over the library. Errors the user can fix are printed as
``path:line:column: message`` lines (or ``path: row N: message`` for CSV files) with
no traceback, and the process exits non-zero: 1 for bad input, 2 for bad usage.
Heavy modules (pandas, Textual) are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from . import __version__
from .errors import InvalidInput, Problem, ProtocoderError, Rejected, UsageError


class ProtocoderGroup(click.Group):
    """A click group that turns protocoder's own errors into clean messages and exit codes."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from ._interrupt import EXIT_STATUS, MESSAGE, Interrupted, unwind_on_interrupt

        unwind_on_interrupt()
        try:
            return super().main(*args, **kwargs)
        except Interrupted:
            click.echo(MESSAGE, err=True)
            sys.exit(EXIT_STATUS)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # Ctrl-C where start-up did not install protocoder's handler (click would say
            # "Aborted!" and exit 1).
            from ._interrupt import EXIT_STATUS, MESSAGE

            click.echo(MESSAGE, err=True)
            ctx.exit(EXIT_STATUS)
        except InvalidInput as exc:
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            count = len(exc.problems)
            if count > 1:
                click.echo(f"protocoder: {count} problems; nothing was written", err=True)
            ctx.exit(exc.exit_code)
        except ProtocoderError as exc:
            click.echo(f"protocoder: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            # The machine refused a read or write (permissions, a full disk, a missing
            # folder): say which file and why, not a traceback.
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"protocoder: error: {where}{exc.strerror or exc}", err=True)
            ctx.exit(1)
        except ValueError as exc:
            # The agreement engine reports bad ratings as ValueError subclasses.
            from .agreement import AgreementInputError

            if not isinstance(exc, AgreementInputError):
                raise
            click.echo(f"protocoder: error: {exc}", err=True)
            ctx.exit(1)


def _find_workspace(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path:
    if value is not None:
        return value
    from .storage.workspace import find_workspace

    return find_workspace(Path("."))


def workspace_option(function: Any) -> Any:
    """``--workspace DIR``, shared by every command; without it, the workspace that holds the
    current folder (the nearest folder upwards with a protocoder.yaml), as git finds its repository."""
    return click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False, path_type=Path),
                        default=None, envvar="PROTOCODER_WORKSPACE", callback=_find_workspace,
                        help="The review workspace [default: the one holding the current folder].")(function)


@click.group(cls=ProtocoderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="protocoder")
def main() -> None:
    """Code agent-evaluation protocols against a rubric, measure agreement between
    reviewers, and render appendix tables in Markdown and LaTeX."""


_batch_ran = False


def _batch() -> None:
    """Called first by the commands that run to completion and exit: the cyclic garbage
    collector is turned off for the rest of the process, and the console script ends the
    process without tearing the interpreter down (see :func:`run`).

    These commands build their data once (a few hundred thousand objects at 1,000
    protocols) and free what they drop by reference counting; the collector's passes only
    walk live objects again, a tenth of a render's time, plus a last pass at exit
    (tests/test_batch_gc.py checks that they leave no cyclic garbage). The apps and the
    server run for hours and keep it.
    """
    import gc

    global _batch_ran
    _batch_ran = True
    gc.disable()


def run() -> None:
    """The ``protocoder`` console script: :func:`main`; after a batch command, the process
    then ends at once.

    By then the command has written and closed everything (files are written atomically and
    synced, and no other thread runs); what is left is freeing its data object by object as
    the interpreter shuts down (a twentieth of a render), which the operating system does
    at once. Output still buffered is flushed first; if that fails (a closed pipe), Python's
    own exit reports it as before.
    """
    try:
        main()
    except SystemExit as done:
        if _batch_ran:
            _exit_now(done.code)
        raise


def _exit_now(code: object) -> None:
    import contextlib
    import os
    import signal

    with contextlib.suppress(ValueError, OSError):  # the command has finished: a Ctrl-C now changes nothing
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as sys.exit("message") does
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0 if code is None else code if isinstance(code, int) else 1)


def _load(workspace: Path, **kwargs: Any) -> Any:
    from .storage.workspace import load_review

    return load_review(workspace, **kwargs)


def _warn(review: Any) -> None:
    for problem in review.warnings:
        click.echo(str(problem), err=True)


# --------------------------------------------------------------------------- init / validate


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--title", default="", help="Title of the review (shown in table captions).")
@click.option("--git-setup", "git_setup", is_flag=True,
              help="Also install the merge driver for the history files (see protocoder git-setup).")
def init(directory: Path, title: str, git_setup: bool) -> None:
    """Create a new workspace in DIRECTORY with the bundled rubric and an empty bibliography.

    \b
    Example:
        protocoder init my-review && cd my-review && protocoder code
    """
    from .lifecycle.gitmerge import git_repository, install_merge_driver
    from .scaffold import init_workspace

    created = init_workspace(directory, title=title)
    click.echo(f"Created workspace {directory} ({len(created)} files). Next: protocoder code --workspace {directory}")
    if git_setup:
        for line in install_merge_driver(directory):
            click.echo(line)
    elif git_repository(directory) is not None:
        click.echo("This workspace is inside a git repository: run `protocoder git-setup` in it so that git merges "
                   "corrections.yaml and consensus.yaml from different branches (see README, Git).")


@main.command()
@workspace_option
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, e.g. in CI.")
@click.option("--history", "git_history", is_flag=True,
              help="Also check, in git, that every committed corrections.yaml and consensus.yaml only ever grew.")
def validate(workspace: Path, strict: bool, git_history: bool) -> None:
    """Check every file of the workspace and report all problems at once.

    Exits 0 when there are no errors (warnings are printed), 1 when there are errors (or,
    with --strict, warnings). Never writes.
    """
    _batch()
    from .lifecycle.history import history_problems, superseded

    review = _load(workspace)
    problems = set(review.problems) | set(history_problems(review))
    if git_history:
        from .lifecycle.githistory import history_rewrites

        problems |= set(history_rewrites(review.paths))
    review.problems = tuple(sorted(problems))
    for problem in review.problems:
        click.echo(str(problem), err=True)
    errors, warnings = len(review.errors), len(review.warnings)
    settled = superseded(review)
    note = (f"; {len(settled)} superseded adjudication{'s' if len(settled) != 1 else ''} (the reviewers settled "
            "the cell since; kept in consensus.yaml, see protocoder status)") if settled else ""
    if errors or warnings:
        click.echo(f"protocoder: {errors} error{'s' if errors != 1 else ''}, "
                   f"{warnings} warning{'s' if warnings != 1 else ''}{note}", err=True)
        if errors or strict:
            sys.exit(1)
        return
    cells = sum(1 for cell in review.all_cells() if cell.code is not None)
    reviewers = len(review.reviewers)
    click.echo(f"ok: {len(review.protocols)} protocols, {reviewers} reviewer{'s' if reviewers != 1 else ''}, "
               f"{cells} coded cells; no problems{note}")


# --------------------------------------------------------------------------- render


@main.command()
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
def render(workspace: Path, fmt: str, out: Path | None, standalone: bool, engine: str, matrix_layout: str,
           release_label: str | None, bootstrap: int, seed: int | None, force: bool) -> None:
    """Render the summary, matrix and ledger tables (and agreement, when there are two or
    more reviewers) as Markdown and LaTeX, and the whole review as one report.html."""
    _batch()
    from .publish import render_workspace

    formats = ("md", "latex", "html") if fmt == "all" else (fmt,)
    if release_label is not None and (engine != "pdflatex" or matrix_layout != "auto" or fmt == "html"):
        raise UsageError("--release writes the tables exactly as they were released (Markdown and pdflatex "
                         "LaTeX); --engine, --matrix-layout and --format html apply to the current tables only")
    result = render_workspace(workspace, formats=formats, out=out, standalone=standalone,
                              release=release_label, bootstrap=bootstrap, seed=seed, engine=engine,
                              matrix_layout=matrix_layout, force=force)
    for problem in result.warnings:
        click.echo(str(problem), err=True)
    names = ", ".join(path.name for path in result.written)
    click.echo(f"Rendered {result.description} to {_shown(result.out_dir)}/: {names}")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- export / import


@main.command()
@workspace_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to FILE instead of standard output.")
@click.option("--view", type=click.Choice(["cells", "final"]), default="cells", show_default=True,
              help="cells: one row per reviewer cell; final: one row per (protocol, field) after consensus.")
def export(workspace: Path, fmt: str, out: Path | None, view: str) -> None:
    """Export cells as CSV or JSON (spreadsheet formulas are neutralised)."""
    _batch()
    from .exchange import CELL_COLUMNS, cell_rows, to_csv, to_json

    review = _load(workspace)
    review.require_valid()
    if view == "cells":
        rows, columns = cell_rows(review), CELL_COLUMNS
    else:
        from .publish import FINAL_COLUMNS, final_rows

        rows, columns = final_rows(review), FINAL_COLUMNS
    text = to_csv(rows, columns) if fmt == "csv" else to_json(rows)
    if out is None:
        click.echo(text, nl=False)
    else:
        from .storage.outputs import check_out_path
        from .storage.yamlio import atomic_write_text

        check_out_path(review.paths.root, out)
        atomic_write_text(out, text)
        click.echo(f"Exported {len(rows)} rows to {out}", err=True)


@main.command("import")
@workspace_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check every row and report, but write nothing.")
def import_(workspace: Path, file: Path, dry_run: bool) -> None:
    """Create or update reviewers' cells from a CSV with columns
    protocol, field, reviewer, code[, source, basis, cites] (a status column is ignored).

    Every row is checked first; if any row is bad, nothing is written. A column the CSV
    lacks leaves that attribute as it is; an empty value clears it. Every changed file is
    written, or none.
    """
    _batch()
    from .exchange import import_cells, read_cells_csv

    review = _load(workspace)
    review.require_valid()
    updates = read_cells_csv(file, review)
    if dry_run:
        click.echo(f"{file}: {len(updates)} rows are valid; nothing written (dry run)")
        return
    result = import_cells(review, updates)
    click.echo(f"Imported {len(updates)} rows: {result.cells} cells changed in {len(result.files)} files")


# --------------------------------------------------------------------------- agreement


@main.command()
# Not workspace_option: with --ratings no workspace is read, so none is looked for (that
# would import the storage layer for nothing).
@click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False, path_type=Path), default=None,
              envvar="PROTOCODER_WORKSPACE",
              help="The review workspace [default: the one holding the current folder].")
@click.option("--ratings", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A long CSV with columns unit,rater,code[,group] instead of the workspace.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "md", "latex"]), default="table",
              show_default=True)
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
def agree(workspace: Path | None, ratings: Path | None, fmt: str, field_id: str | None, level: str,
          categories: str | None, na: str, na_codes: tuple[str, ...], bootstrap: int, seed: int | None) -> None:
    """Inter-rater agreement per field and pooled, with bootstrap intervals and every disagreement."""
    _batch()
    # The table and CSV formats do not list the disagreeing units: none are collected for them.
    options: dict[str, Any] = {"level": level, "na": na, "bootstrap": bootstrap,
                               "list_disagreements": fmt in ("json", "md", "latex")}
    if seed is not None:
        options["seed"] = seed
    if ratings is not None:
        # Read without pandas (a simple file straight into numbers): ratings never need it.
        from .agreement import agreement_of_columns, read_ratings_table

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
        from .coding_agreement import review_agreement

        if workspace is None:
            from .storage.workspace import find_workspace

            workspace = find_workspace(Path("."))
        review = _load(workspace)
        rubric = review.require_valid()
        if field_id is not None and field_id not in rubric.field_ids:
            raise UsageError(f"the rubric has no field {field_id!r} (fields: {', '.join(rubric.field_ids)})")
        if na_codes:
            raise UsageError("--na-code only applies with --ratings: a workspace's rubric declares its "
                             "not-applicable codes with 'role: not-applicable'")
        if na == "exclude" and not rubric.na_codes:
            raise UsageError("--na exclude: the rubric declares no not-applicable code; add "
                             "'role: not-applicable' to the code that means not applicable")
        report = review_agreement(review, field=field_id, **options)
        labels = {f.id: f.label for f in rubric.fields}
    _print_agreement(report, fmt, labels)


def _print_agreement(report: Any, fmt: str, labels: dict[str, str]) -> None:
    if fmt == "table":
        click.echo(report.format_table())
    elif fmt == "json":
        click.echo(report.to_json())
    elif fmt == "csv":
        from .exchange import to_csv

        rows = report.to_rows()
        columns = list(rows[0]) if rows else ["group", "coefficient", "value", "ci_low", "ci_high", "note"]
        click.echo(to_csv(rows, columns), nl=False)
    else:
        from .render import render_agreement

        click.echo(render_agreement(report.to_dict(), labels, fmt), nl=False)


# --------------------------------------------------------------------------- coding app


@main.command()
@workspace_option
@click.option("--reviewer", default=None, help="Your reviewer id [default: $PROTOCODER_REVIEWER, else git user.name].")
def code(workspace: Path, reviewer: str | None) -> None:
    """Open the coding app: code protocols field by field, saving every change at once.

    A reviewer id the workspace has no file for yet is confirmed in the app first (with
    the closest existing id offered), and one that is not a safe id is refused here.
    """
    from .identity import choose_reviewer
    from .storage.workspace import open_workspace

    open_workspace(workspace)
    choice = choose_reviewer(reviewer)
    from .tui.app import make_app

    make_app(workspace, choice.id, origin=choice.origin or None, given_as=choice.name).run()


@main.command()
@workspace_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback requires an access token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--app", "app_name", type=click.Choice(["code", "adjudicate"]), default="code", show_default=True,
              help="The coding app, or the adjudication app.")
@click.option("--token", default=None, envvar="PROTOCODER_SERVE_TOKEN",
              help="Access token to require [default: generated when --host is not loopback; "
                   "none on loopback]. Also read from $PROTOCODER_SERVE_TOKEN.")
def serve(workspace: Path, host: str, port: int, app_name: str, token: str | None) -> None:
    """Serve the coding app (or the adjudication app) to web browsers.

    Each browser tab runs the app for this workspace and asks who is coding; a second tab
    for the same reviewer opens read-only. Without --host the server is reachable from this
    machine only; with any other host, every request needs the access token printed in the
    URL. There is no TLS: for remote reviewers, use an SSH tunnel or a TLS reverse proxy.

    \b
    Example:
        protocoder serve                                  # then open http://127.0.0.1:8000/
        protocoder serve --host 0.0.0.0 --port 8080       # prints http://HOST:8080/?token=...
    """
    from .storage.workspace import open_workspace

    open_workspace(workspace)
    from .tui.serve import serve_workspace

    sys.exit(serve_workspace(workspace, app_name=app_name, host=host, port=port, token=token,
                             say=lambda line: click.echo(line, err=True)))


# --------------------------------------------------------------------------- protocols and references


@main.group()
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
    from .model import Protocol
    from .scaffold import parse_source_option
    from .storage.store import Store

    review = _load(workspace)
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
    review = _load(workspace)
    _warn(review)
    rubric = review.rubric
    fields = rubric.field_ids if rubric else ()
    for item in review.protocols:
        progress = []
        for reviewer in review.reviewers:
            mine = [c for f in fields if (c := review.cells(item.id, f).get(reviewer)) is not None and c.is_coded]
            incomplete = sum(1 for c in mine if rubric is not None and not c.is_complete(rubric))
            progress.append(f"{reviewer} {len(mine)}/{len(fields)}"
                            + (f" ({incomplete} incomplete)" if incomplete else ""))
        click.echo(f"{item.id}\t{item.name}\t{', '.join(progress) or 'not coded'}")


@protocol.command("remove")
@workspace_option
@click.argument("protocol_id")
@click.option("--force", is_flag=True, help="Remove even though reviewers have coded cells for it.")
def protocol_remove(workspace: Path, protocol_id: str, force: bool) -> None:
    """Remove a protocol and its folder (refuses if cells are coded, unless --force)."""
    from .lifecycle.history import removal_problem
    from .storage.store import Store
    from .storage.workspace import open_workspace

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


@main.group()
def bib() -> None:
    """Manage the bibliography (references.bib)."""


@bib.command("add")
@workspace_option
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
def bib_add(workspace: Path, file: Path) -> None:
    """Append BibTeX entries from FILE (or - for standard input), after checking them."""
    from .storage.store import Store
    from .storage.workspace import open_workspace
    from .storage.yamlio import MAX_FILE_BYTES, decode_utf8, read_capped

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


# --------------------------------------------------------------------------- adjudication and releases


def _who(by: str | None) -> str:
    from .identity import default_reviewer

    name = default_reviewer(by)
    if name is None:
        raise UsageError("who is this? give --by NAME (or set PROTOCODER_REVIEWER, or git's user.name)")
    return name


@main.command()
@workspace_option
@click.option("--cell", "cell_key", default=None, metavar="PROTOCOL/FIELD",
              help="Adjudicate this cell without the app.")
@click.option("--code", default=None, help="The decided code.")
@click.option("--take", "take_from", default=None, metavar="REVIEWER", help="Take this reviewer's cell whole.")
@click.option("--reason", default=None, help="Why (required).")
@click.option("--by", default=None, help="Adjudicator [default: $PROTOCODER_REVIEWER, else git user.name].")
def adjudicate(workspace: Path, cell_key: str | None, code: str | None, take_from: str | None,
               reason: str | None, by: str | None) -> None:
    """Resolve disagreements: an app listing every unresolved cell, or one cell with --cell.

    Reviewers' files are never changed; the decision is recorded, with its reason and the
    codes it resolved, in protocols/<id>/consensus.yaml.
    """
    from .lifecycle.adjudication import adjudicate as record
    from .storage.workspace import open_workspace

    paths = open_workspace(workspace)
    if cell_key is None:
        if code or take_from or reason:
            raise UsageError("--code, --take and --reason go with --cell")
        from .tui.adjudicate import make_adjudication_app

        _load(workspace).require_valid()
        make_adjudication_app(workspace, _who(by)).run()
        return
    if reason is None:
        raise UsageError("--reason is required: every adjudication records why")
    decision = record(paths, cell_key, reason=reason, by=_who(by), code=code, take_from=take_from)
    adjudication = decision.adjudication
    verb = "Adjudicated" if decision.status_before.value in ("unresolved", "adjudicated") else \
        f"Re-decided ({decision.status_before.value})"
    click.echo(f"{verb} {cell_key}: {adjudication.code} (resolved "
               + ", ".join(f"{r} {c}" for r, c in sorted(adjudication.resolved.items())) + ")")
    # A released cell that changes this way is corrected with the adjudication's reason.
    if (correction := decision.correction) is not None:
        click.echo(f"Corrected {cell_key} in release {correction.release}: {correction.old or '-'} -> "
                   f"{correction.new}")


@main.command()
@workspace_option
@click.option("--label", required=True, help="A unique name for the release, e.g. v1 or paper-2026.")
@click.option("--allow-unresolved", is_flag=True, help="Freeze even though cells are unresolved (recorded as such).")
@click.option("--allow-incomplete", is_flag=True,
              help="Freeze even though cells are incomplete (recorded as such).")
@click.option("--by", default=None, help="Who freezes [default: $PROTOCODER_REVIEWER, else git user.name].")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=None)
def freeze(workspace: Path, label: str, allow_unresolved: bool, allow_incomplete: bool, by: str | None,
           bootstrap: int, seed: int | None) -> None:
    """Record a frozen release: content hash, date, denominators and the rendered tables."""
    _batch()
    from .publish import freeze_workspace

    release = freeze_workspace(workspace, label, by=_who(by), allow_unresolved=allow_unresolved,
                               allow_incomplete=allow_incomplete, bootstrap=bootstrap, seed=seed)
    counts = release.denominators
    click.echo(f"Froze release {release.label} ({release.content_hash[:19]}…): {counts['protocols']} protocols, "
               f"{counts['cells']} cells, {counts['coded']} coded, {counts['unresolved']} unresolved"
               + (f", {counts['incomplete']} incomplete" if counts.get("incomplete") else ""))


@main.command()
@workspace_option
@click.option("--cell", "cell_key", required=True, metavar="PROTOCOL/FIELD")
@click.option("--code", default=None,
              help="The corrected code [default: the current one when only the evidence is corrected; the "
                   "reviewers' consensus when nothing else is given].")
@click.option("--reason", required=True, help="Why the released cell was wrong.")
@click.option("--by", default=None, help="Who corrects [default: $PROTOCODER_REVIEWER, else git user.name].")
@click.option("--source", default=None, help="The corrected cell's source location.")
@click.option("--basis", default=None, help="The corrected cell's basis (inline Markdown).")
@click.option("--cite", "cites", multiple=True, metavar="KEY", help="A citation key of the corrected cell (repeat).")
def correct(workspace: Path, cell_key: str, code: str | None, reason: str, by: str | None, source: str | None,
            basis: str | None, cites: tuple[str, ...]) -> None:
    """Correct a released cell's code or evidence: appends an entry to the append-only corrections ledger.

    \b
    Without --code, --source, --basis or --cite it records what the reviewers' files say now.
    """
    from .lifecycle.history import correct as record
    from .storage.workspace import open_workspace

    paths = open_workspace(workspace)
    result = record(paths, cell_key, code=code, reason=reason, by=_who(by), source=source, basis=basis,
                    cites=cites if cites else None)
    entry = result.correction
    what = f"{entry.old or '-'} -> {entry.new}" if result.code_changed else f"{entry.new}, evidence corrected"
    click.echo(f"Corrected {entry.cell} in release {entry.release}: {what}")
    if result.evidence == "released":
        click.echo("The ledger keeps the released source and basis for this cell; give --source, --basis "
                   "and --cite to replace them.")
    elif result.evidence == "reviewers":
        click.echo("The corrected cell takes its source, basis and citations from the reviewers' files.")


@main.command()
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.option("--reason", required=True, help="Why the protocol leaves the review.")
@click.option("--by", default=None, help="Who withdraws it [default: $PROTOCODER_REVIEWER, else git user.name].")
def withdraw(workspace: Path, protocol_id: str, reason: str, by: str | None) -> None:
    """Withdraw a released protocol from the current view (a ledger entry with a reason).

    The tables then omit it from their rows and denominators and list the withdrawal among
    the corrections; after that, protocol remove can delete its folder.
    """
    from .lifecycle.history import withdraw as record
    from .storage.workspace import open_workspace

    entry = record(open_workspace(workspace), protocol_id, reason=reason, by=_who(by))
    click.echo(f"Withdrew {protocol_id} from release {entry.release}. Remove its folder with: "
               f"protocoder protocol remove {protocol_id} --force")


@main.command()
@workspace_option
@click.option("--field", "field_id", required=True, help="The rubric field whose cells were checked again.")
@click.option("--reviewer", default=None, help="Only this reviewer's cells.")
@click.option("--protocol", "protocol_id", default=None, help="Only this protocol's cells.")
def recheck(workspace: Path, field_id: str, reviewer: str | None, protocol_id: str | None) -> None:
    """Acknowledge cells coded under an older definition of a field, after checking them:
    stamps the current rubric version on them (codes and evidence stay as they are)."""
    from .lifecycle.recheck import recheck as stamp
    from .storage.workspace import open_workspace

    count, version = stamp(open_workspace(workspace), field_id, reviewer=reviewer, protocol=protocol_id)
    if count:
        click.echo(f"Rechecked {count} cell{'s' if count != 1 else ''} of {field_id}: now coded under rubric {version}")
    else:
        click.echo(f"No cell of {field_id} was coded under an older definition; nothing to recheck")


@main.command()
@workspace_option
def recover(workspace: Path) -> None:
    """Finish an adjudication that was interrupted between writing consensus.yaml and corrections.yaml."""
    from .lifecycle.journal import finish_pending
    from .storage.store import Store
    from .storage.workspace import open_workspace

    paths = open_workspace(workspace)
    with Store(paths).locked():
        done = finish_pending(paths)
    click.echo(done[0].upper() + done[1:] if done else "Nothing to recover: no interrupted operation")


@main.command()
@workspace_option
def status(workspace: Path) -> None:
    """Progress per reviewer, incomplete, unresolved and stale cells, the latest release and corrections since.

    Exits 1 when the history has errors (a damaged ledger or release), which it lists.
    """
    _batch()
    from .publish import status_report

    review = _load(workspace)
    _warn(review)
    review.require_valid()
    lines, problems = status_report(review)
    click.echo("\n".join(lines))
    for problem in problems:
        click.echo(str(problem), err=True)
    if problems:
        sys.exit(1)


# --------------------------------------------------------------------------- git


@main.command("git-setup")
@workspace_option
def git_setup(workspace: Path) -> None:
    """Let git merge the append-only history files of different branches.

    Writes .gitattributes (corrections.yaml and protocols/*/consensus.yaml use the
    protocoder merge driver) and the driver's command into the repository's config.
    """
    from .lifecycle.gitmerge import install_merge_driver
    from .storage.workspace import open_workspace

    for line in install_merge_driver(open_workspace(workspace).root):
        click.echo(line)


@main.command("merge-driver")
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("name", required=False, default="")
def merge_driver(base: Path, ours: Path, theirs: Path, name: str) -> None:
    """Git merge driver for corrections.yaml and consensus.yaml (git runs it as %O %A %B %P).

    Keeps both sides' entries in a deterministic order, re-chains the ledger with a recorded
    merge entry, and writes the result over OURS. Refuses (exit 1, git's conflict left in
    OURS) when both sides decided the same cell differently.
    """
    from .lifecycle.gitmerge import merge_files

    message = merge_files(base, ours, theirs, name)
    if message:
        click.echo(f"protocoder merge-driver: {name or ours}: {message}", err=True)
        sys.exit(1)
