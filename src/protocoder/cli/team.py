"""A team's review and the files other tools read: team add/list/revoke/link, and schema."""

from __future__ import annotations

from pathlib import Path

import click

from ..schemas import SCHEMAS
from .common import workspace_option

_SCHEMA_LIST = "\n".join(f"  {name:<11} {what}" for name, what in SCHEMAS.items())


@click.group()
def team() -> None:
    """Reviewers who sign in to `protocoder serve`: members, roles and assignments.

    \b
    team.yaml (committed) lists the members; their sign-in secrets are kept hashed in
    .protocoder/ (never committed). With a team file, `serve` lets in only members, each
    under their own name: a reviewer codes only their own cells and sees no one else's.
    """


def _link(token: str) -> str:
    return f"/signin?token={token}"


def _say_link(root: Path, name: str, token: str) -> None:
    from ..team.address import served_at

    click.echo(f"Sign-in link for {name} (works once): {_link(token)}")
    running = served_at(root)
    if running is not None:
        click.echo(f"  on the running server: {running.rstrip('/')}{_link(token)}")
    else:
        click.echo("  open it on the address `protocoder serve` prints when it starts (no server is running "
                   f"for this workspace now), e.g. http://127.0.0.1:8000{_link(token)}")
    click.echo("  It is shown only now; `protocoder team link NAME` issues a new one.")


@team.command("add")
@workspace_option
@click.argument("name")
@click.option("--role", type=click.Choice(["reviewer", "adjudicator"]), required=True,
              help="reviewer: codes their own cells, blind to the others'; adjudicator: decides between them.")
@click.option("--protocols", default="", metavar="A,B",
              help="The protocols this reviewer codes (comma-separated ids) [default: the team's assignment].")
def team_add(workspace: Path, name: str, role: str, protocols: str) -> None:
    """Add NAME to the team and print their one-time sign-in link."""
    from ..errors import UsageError
    from ..storage.files import exclusive_lock
    from ..storage.paths import open_workspace
    from ..team.members import LINK_NAME_RULE, Member, can_sign_in, check_protocols, load_team, new_record, write_member
    from ..team.secrets import forget, issue_signin

    paths = open_workspace(workspace)
    if not can_sign_in(name):
        raise UsageError(f"member name {name!r} cannot form a sign-in link: use {LINK_NAME_RULE} "
                         "(e.g. ada-lovelace)")
    chosen = tuple(p.strip() for p in protocols.split(",") if p.strip())
    if chosen and role != "reviewer":
        raise UsageError("--protocols assigns protocols to a reviewer; an adjudicator sees every cell")
    check_protocols(paths.root, chosen)
    paths.state_dir.mkdir(exist_ok=True)
    with exclusive_lock(paths.state_dir / "team-file.lock", what="team.yaml"):
        current = load_team(paths.root)
        if current is not None and current.member(name) is not None:
            raise UsageError(f"{name} is already in the team; for a new sign-in link run "
                             f"`protocoder team link {name}`")
        record = new_record()  # sessions of anyone once called NAME do not count for this member
        forget(paths.root, name)  # what was left of a member of that name deleted by hand
        write_member(paths.root, Member(name, role, chosen, record), name)
    token = issue_signin(paths.root, name, record)
    click.echo(f"Added {name} ({role}{', protocols ' + ', '.join(chosen) if chosen else ''}) to team.yaml")
    _say_link(paths.root, name, token)


@team.command("link")
@workspace_option
@click.argument("name")
def team_link(workspace: Path, name: str) -> None:
    """Issue NAME a new one-time sign-in link (an unused earlier one stops working)."""
    from ..errors import UsageError
    from ..storage.paths import open_workspace
    from ..team.members import load_team
    from ..team.secrets import issue_signin

    paths = open_workspace(workspace)
    current = load_team(paths.root)
    member = current.member(name) if current is not None else None
    if member is None:
        raise UsageError(f"{name} is not in the team; add them with `protocoder team add {name} --role reviewer`")
    _say_link(paths.root, name, issue_signin(paths.root, name, member.record))


@team.command("list")
@workspace_option
def team_list(workspace: Path) -> None:
    """List the members with their roles and assigned protocols."""
    from ..storage.paths import open_workspace
    from ..team.members import load_team
    from ..team.progress import assignments

    paths = open_workspace(workspace)
    current = load_team(paths.root)
    if current is None or not current.members:
        click.echo("No team: add a member with `protocoder team add NAME --role reviewer`")
        return
    from .common import load

    review = load(paths.root)
    plan = assignments(current, [p.id for p in review.protocols])
    for member in current.members:
        if member.role == "reviewer":
            protocols = plan.get(member.name, ())
            every = len(protocols) == len(review.protocols)
            shown = "every protocol" if every else (", ".join(protocols) or "no protocol")
        else:
            shown = "every cell (adjudicates)"
        click.echo(f"{member.name}  {member.role}  {shown}")


@team.command("revoke")
@workspace_option
@click.argument("name")
def team_revoke(workspace: Path, name: str) -> None:
    """Remove NAME from the team: their link and open sessions stop working at once."""
    from ..errors import UsageError
    from ..storage.files import exclusive_lock
    from ..storage.paths import open_workspace
    from ..team.members import load_team, write_member
    from ..team.secrets import forget

    paths = open_workspace(workspace)
    paths.state_dir.mkdir(exist_ok=True)
    # The secrets first: from this moment the server refuses the member's requests.
    sessions = forget(paths.root, name)
    with exclusive_lock(paths.state_dir / "team-file.lock", what="team.yaml"):
        current = load_team(paths.root)
        if current is None or current.member(name) is None:
            raise UsageError(f"{name} is not in the team (see `protocoder team list`)")
        write_member(paths.root, None, name)
    click.echo(f"Revoked {name}: removed from team.yaml, {sessions} session(s) closed; their files stay.")


@click.command(epilog="\b\nSchemas:\n" + _SCHEMA_LIST)
@click.argument("name")
def schema(name: str) -> None:
    """Print the JSON Schema of one of protocoder's YAML files (NAME below).

    \b
    For an editor with a YAML language server, save it and point the file at it, e.g.:
        protocoder schema rubric > .schemas/rubric.json
        # yaml-language-server: $schema=../.schemas/rubric.json   (first line of the rubric)
    """
    from ..errors import UsageError
    from ..schemas import schema_text

    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}; the schemas are: {', '.join(SCHEMAS)}")
    click.echo(schema_text(name), nl=False)
