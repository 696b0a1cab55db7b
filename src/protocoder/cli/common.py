"""What every command family shares: the ``--workspace`` option, and reading the review
without importing the storage layer before a command needs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

batch_ran = False


def batch() -> None:
    """Called first by the commands that run to completion and exit: the cyclic garbage
    collector is turned off for the rest of the process, and the console script ends the
    process without tearing the interpreter down (see :func:`protocoder.cli.run`).

    These commands build their data once (a few hundred thousand objects at 1,000
    protocols) and free what they drop by reference counting; the collector's passes only
    walk live objects again, a tenth of a render's time, plus a last pass at exit
    (tests/test_batch_gc.py checks that they leave no cyclic garbage). The apps and the
    server run for hours and keep it.
    """
    import gc

    global batch_ran
    batch_ran = True
    gc.disable()


def _find_workspace(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path:
    if value is not None:
        return value
    from ..storage.paths import find_workspace

    return find_workspace(Path("."))


def workspace_option(function: Any) -> Any:
    """``--workspace DIR``, shared by every command; without it, the workspace that holds the
    current folder (the nearest folder upwards with a protocoder.yaml), as git finds its repository."""
    return click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False, path_type=Path),
                        default=None, envvar="PROTOCODER_WORKSPACE", callback=_find_workspace,
                        help="The review workspace [default: the one holding the current folder].")(function)


def load(workspace: Path, **kwargs: Any) -> Any:
    """The workspace's review (:func:`~protocoder.storage.workspace.load_review`), imported on first use."""
    from ..storage.workspace import load_review

    return load_review(workspace, **kwargs)


def print_warnings(review: Any) -> None:
    """Print the review's warnings to standard error, one per line."""
    for problem in review.warnings:
        click.echo(str(problem), err=True)
