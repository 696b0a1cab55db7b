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

A command's module is imported only when that command runs (or when ``--help`` lists
every command): :data:`COMMANDS` maps each top-level name to ``"module:attribute"``, so a
one-shot command such as ``find`` or ``quote add`` pays for its own family alone. A new
subcommand of an existing group (``source check``) needs nothing here; a new top-level
command needs its line in :data:`COMMANDS` (``tests/test_import_hygiene.py`` fails without it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import click

from .. import __version__
from ..errors import InvalidInput, ProtocoderError, visible_text
from . import common

COMMANDS: dict[str, str] = {
    # name typed after `protocoder` → "module of this package:attribute"; kept in the order of
    # the families above (help lists them sorted, as click does).
    "init": "reviewing:init", "validate": "reviewing:validate", "code": "reviewing:code",
    "serve": "reviewing:serve", "status": "reviewing:status",
    "render": "tables:render", "export": "tables:export", "import": "tables:import_", "agree": "tables:agree",
    "protocol": "protocols:protocol", "bib": "protocols:bib",
    "source": "evidence:source", "quote": "evidence:quote",
    "find": "finding:find",
    "cell": "cells:cell",
    "adjudicate": "lifecycle:adjudicate", "comment": "lifecycle:comment", "freeze": "lifecycle:freeze",
    "correct": "lifecycle:correct",
    "withdraw": "lifecycle:withdraw", "recheck": "lifecycle:recheck", "recover": "lifecycle:recover",
    "git-setup": "lifecycle:git_setup", "merge-driver": "lifecycle:merge_driver",
    "team": "team:team", "schema": "team:schema",
}
"""Every top-level command, and where it is defined: the one place to add a new one."""


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's ``commands`` mapping that imports a command's module on first access.

    Listing the names (``list_commands``, shell completion) imports nothing; looking a name
    up (running the command, ``--help`` describing each) imports its module once. Commands
    added with ``add_command`` are kept as given.
    """

    def __init__(self, table: dict[str, str]) -> None:
        self._table = dict(table)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in self._table:
                raise KeyError(name)
            module_name, attribute = self._table[name].split(":")
            module = importlib.import_module(f"{__name__}.{module_name}")
            self._loaded[name] = getattr(module, attribute)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command
        self._table.setdefault(name, "")

    def __delitem__(self, name: str) -> None:
        del self._table[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table


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
            click.echo(visible_text(f"protocoder: error: {exc}"), err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            # The machine refused a read or write (permissions, a full disk, a missing
            # folder): say which file and why, not a traceback.
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(visible_text(f"protocoder: error: {where}{exc.strerror or exc}"), err=True)
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


main.commands = LazyCommands(COMMANDS)


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
