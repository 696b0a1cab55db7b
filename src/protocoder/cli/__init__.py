"""The ``protocoder`` command line: parse options, call the core, print the result.

Each command is a thin layer over the library. Errors the user can fix are printed as
``path:line:column: message`` lines (or ``path: row N: message`` for CSV files) with
no traceback, and the process exits non-zero: 1 for bad input, 2 for bad usage.
Heavy modules (pandas, Textual) are imported inside the commands that need them.

This package holds the group, :func:`main` (and :func:`run`, the console script around
it), with the handler that turns protocoder's errors into those messages and exit codes;
the commands live in one module per family:

* :mod:`.reviewing` — init, validate, code, serve, status
* :mod:`.tables` — render, export, import, agree
* :mod:`.protocols` — protocol add/list/remove, bib add
* :mod:`.evidence` — source add/list/update/remove, quote add/remove/confirm/list
* :mod:`.finding` — find (candidate passages for a field)
* :mod:`.cells` — cell set/show (one cell without the app)
* :mod:`.lifecycle` — adjudicate, comment, freeze, correct, withdraw, recheck, recover, git-setup, merge-driver
* :mod:`.team` — team add/link/list/revoke, schema
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from ..errors import InvalidInput, ProtocoderError
from . import cells, common, evidence, finding, lifecycle, protocols, reviewing, tables, team


class ProtocoderGroup(click.Group):
    """A click group that turns protocoder's own errors into clean messages and exit codes."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from .._interrupt import EXIT_STATUS, MESSAGE, Interrupted, unwind_on_interrupt

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
            from .._interrupt import EXIT_STATUS, MESSAGE

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
            from ..agreement import AgreementInputError

            if not isinstance(exc, AgreementInputError):
                raise
            click.echo(f"protocoder: error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=ProtocoderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="protocoder")
def main() -> None:
    """Code agent-evaluation protocols against a rubric, measure agreement between
    reviewers, and render appendix tables in Markdown and LaTeX."""


for _command in (
    reviewing.init, reviewing.validate, reviewing.code, reviewing.serve, reviewing.status,
    tables.render, tables.export, tables.import_, tables.agree,
    protocols.protocol, protocols.bib,
    evidence.source, evidence.quote, finding.find, cells.cell,
    lifecycle.adjudicate, lifecycle.comment, lifecycle.freeze, lifecycle.correct, lifecycle.withdraw, lifecycle.recheck,
    lifecycle.recover, lifecycle.git_setup, lifecycle.merge_driver,
    team.team, team.schema,
):
    main.add_command(_command)


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
        if common.batch_ran:
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
