"""Set up a workspace, check it, code in it, and see where it stands: init, validate,
code, serve and status."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..tui.serving.limits import DEFAULT_MAX_SESSIONS, DEFAULT_SESSIONS_PER_MEMBER
from .common import batch, load, print_warnings, workspace_option

if TYPE_CHECKING:
    from ..storage.workspace import Review


@click.command()
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
    from ..lifecycle.gitmerge import git_repository, install_merge_driver
    from ..scaffold import init_workspace

    created = init_workspace(directory, title=title)
    click.echo(f"Created workspace {directory} ({len(created)} files). Next: protocoder code --workspace {directory}")
    if git_setup:
        for line in install_merge_driver(directory):
            click.echo(line)
    elif git_repository(directory) is not None:
        click.echo("This workspace is inside a git repository: run `protocoder git-setup` in it so that git merges "
                   "corrections.yaml and consensus.yaml from different branches (see docs/lifecycle.md, Git).")


@click.command()
@workspace_option
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, e.g. in CI.")
@click.option("--history", "git_history", is_flag=True,
              help="Also check, in git, that every committed corrections.yaml and consensus.yaml only ever grew.")
def validate(workspace: Path, strict: bool, git_history: bool) -> None:
    """Check every file of the workspace and report all problems at once.

    Exits 0 when there are no errors (warnings are printed), 1 when there are errors (or,
    with --strict, warnings). Never writes the review's files (only caches under .protocoder/).
    """
    batch()
    from ..evidence.quotes import check_evidence
    from ..lifecycle.changes import history_problems, superseded
    from ..storage.names import own_folder_links

    review = load(workspace)
    evidence = check_evidence(review)
    problems = set(review.problems) | set(history_problems(review)) | set(evidence.problems)
    problems |= set(own_folder_links(review.paths))  # refused by the commands that write there: named here too
    from ..team.members import team_problems  # a broken team.yaml locks everyone out of `serve`

    problems |= set(team_problems(review.paths.root, frozenset(p.id for p in review.protocols)))
    if git_history:
        from ..lifecycle.githistory import history_rewrites

        problems |= set(history_rewrites(review.paths))
    review.problems = tuple(sorted(problems))
    for problem in review.problems:
        click.echo(str(problem), err=True)
    # Snapshots kept out of git are not problems: they are noted, and validate still passes.
    for absent in evidence.notes:
        click.echo(str(absent), err=True)
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
    checked = ""
    if evidence.quotes:
        checked = f", {evidence.verified} of {evidence.quotes} quotes found in their snapshots"
        if evidence.confirmed:
            checked += f" ({evidence.confirmed} confirmed against a newer version)"
        if evidence.unchecked:
            checked += f" ({evidence.unchecked} not checked: snapshot not present here)"
    click.echo(f"ok: {len(review.protocols)} protocols, {reviewers} reviewer{'s' if reviewers != 1 else ''}, "
               f"{cells} coded cells{checked}; no problems{note}")


@click.command()
@workspace_option
@click.option("--reviewer", default=None, help="Your reviewer id [default: $PROTOCODER_REVIEWER, else git user.name].")
def code(workspace: Path, reviewer: str | None) -> None:
    """Open the coding app: code protocols field by field, saving every change at once.

    A reviewer id the workspace has no file for yet is confirmed in the app first (with
    the closest existing id offered), and one that is not a safe id is refused here.
    """
    from ..identity import choose_reviewer
    from ..storage.paths import open_workspace

    open_workspace(workspace)
    choice = choose_reviewer(reviewer)
    from ..tui.app import make_app

    make_app(workspace, choice.id, origin=choice.origin or None, given_as=choice.name).run()


@click.command()
@workspace_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback requires an access token (without a team.yaml).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--app", "app_name", type=click.Choice(["code", "adjudicate"]), default="code", show_default=True,
              help="The coding app, or the adjudication app.")
@click.option("--token", default=None, envvar="PROTOCODER_SERVE_TOKEN",
              help="Access token to require [default: generated when --host is not loopback; "
                   "none on loopback]. Also read from $PROTOCODER_SERVE_TOKEN. Refused when the "
                   "workspace has a team.yaml (members sign in instead).")
@click.option("--max-sessions", type=click.IntRange(1, 1000), default=DEFAULT_MAX_SESSIONS, show_default=True,
              help="Browser sessions open at once (each runs an app process); one more is refused with a page "
                   "saying why.")
@click.option("--sessions-per-member", type=click.IntRange(1, 100), default=DEFAULT_SESSIONS_PER_MEMBER,
              show_default=True,
              help="Browser sessions (tabs) one team member may have open at once.")
def serve(workspace: Path, host: str, port: int, app_name: str, token: str | None, max_sessions: int,
          sessions_per_member: int) -> None:
    """Serve the coding app (or the adjudication app) to web browsers.

    Without a team.yaml, each browser tab runs the app for this workspace and asks who is
    coding; a second tab for the same reviewer opens read-only. Without --host the server is
    reachable from this machine only; with any other host, every request needs the access token printed in the
    URL. There is no TLS: for remote reviewers, use an SSH tunnel or a TLS reverse proxy.

    With a team.yaml in the workspace (see `protocoder team`), every request needs the
    session of a member of the team: each member signs in once with their own link, printed
    by `protocoder team add` or `protocoder team link NAME`. Reviewers then code only their
    own cells; adjudicators get the adjudication app (--app is not used). There is no
    shared token: --token (or $PROTOCODER_SERVE_TOKEN) is refused. A session lasts
    session_hours from sign-in (team.yaml, default 12); after that, `protocoder team link
    NAME` gives the member a new link. `protocoder team revoke NAME` ends a member's
    sessions at once.

    \b
    Example:
        protocoder serve                                  # then open http://127.0.0.1:8000/
        protocoder serve --host 0.0.0.0 --port 8080       # prints http://HOST:8080/?token=...
        protocoder team add ada --role reviewer && protocoder serve   # ada opens her link
    """
    from ..storage.paths import open_workspace

    open_workspace(workspace)
    from ..tui.serve import serve_workspace

    sys.exit(serve_workspace(workspace, app_name=app_name, host=host, port=port, token=token,
                             say=lambda line: click.echo(line, err=True), max_sessions=max_sessions,
                             sessions_per_member=sessions_per_member))


def reading_lines(review: Review) -> list[str]:
    """``status --reading``: per reviewer, one line per protocol with pinned snapshots, each source's share read."""
    pinned = [protocol for protocol in review.protocols if any(source.has_snapshot for source in protocol.sources)]
    if not pinned:
        return ["No snapshot is pinned: nothing to read (protocoder source add PROTOCOL FILE pins one)."]
    sheets = {(sheet.reviewer, sheet.protocol): sheet for sheet in review.sheets}
    lines = ["Read in the app (blocks of each pinned snapshot had on screen):"]
    for reviewer in review.reviewers:
        lines.append(f"  {reviewer}")
        for protocol in pinned:
            sheet = sheets.get((reviewer, protocol.id))
            shares = []
            for source in protocol.sources:
                if source.has_snapshot:
                    read = sheet.reading.get(source.sha256) if sheet is not None else None
                    shares.append(f"{source.id or source.title} {read.percent if read is not None else '0%'}")
            lines.append(f"    {protocol.id}: {' · '.join(shares)}")
    return lines


@click.command()
@workspace_option
@click.option("--reading", is_flag=True,
              help="Instead: per reviewer and protocol, the share of each pinned source read in the app.")
def status(workspace: Path, reading: bool) -> None:
    """Progress per reviewer, incomplete, unresolved and stale cells, the latest release and corrections since.

    Exits 1 when the history has errors (a damaged ledger or release), which it lists.
    With --reading: what each reviewer has had on screen of each pinned source (``lm-eval 100%``),
    as their codes files record it.
    """
    batch()
    from ..publish import status_report

    review = load(workspace)
    print_warnings(review)
    review.require_valid()
    if reading:
        click.echo("\n".join(reading_lines(review)))
        return
    lines, problems = status_report(review)
    from ..team.members import load_team

    team = load_team(review.paths.root)
    if team is not None:  # a team's review: each reviewer's share of the work, too
        from ..team.progress import status_lines

        lines = [*lines, "", *status_lines(review, team)]
    click.echo("\n".join(lines))
    for problem in problems:
        click.echo(str(problem), err=True)
    if problems:
        sys.exit(1)
