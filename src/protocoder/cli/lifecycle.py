"""After coding: adjudication, frozen releases, corrections and withdrawals, rechecks,
recovery of an interrupted adjudication, and git's merge driver for the history files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from .common import batch, load, workspace_option


def _interactive() -> bool:
    """A person at a terminal can be asked who they are."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _who(by: str | None, workspace: Path, doing: str) -> str:
    """Who ``doing``: --by, $PROTOCODER_REVIEWER, the name remembered for this workspace on this
    machine, else asked once (git's user.name offered); no terminal: an error naming --by.

    A name just asked for is kept by :func:`_keep_who` once the command has succeeded."""
    from ..identity import choose_person
    from ..storage.paths import Paths

    def ask(question: str, offered: str | None) -> str:
        return str(click.prompt(question, default=offered, err=True))

    choice = choose_person(by, Paths(workspace).state_dir, doing=doing, ask=ask if _interactive() else None)
    if choice.origin == "asked":
        click.get_current_context().meta["protocoder.person"] = (workspace, choice.id)
    return choice.id


def _keep_who() -> None:
    """After a command succeeded: remember the name it asked for (if it asked)."""
    from ..identity import remember_person
    from ..storage.paths import Paths

    asked = click.get_current_context().meta.pop("protocoder.person", None)
    if asked is None:
        return
    workspace, name = asked
    paths = Paths(workspace)
    path = remember_person(paths.state_dir, name)
    click.echo(f"Remembered {name} in {paths.show(path)} for this workspace on this machine "
               "(--by overrides it).", err=True)


@click.command()
@workspace_option
@click.option("--cell", "cell_key", default=None, metavar="PROTOCOL/FIELD",
              help="Adjudicate this cell without the app.")
@click.option("--code", default=None, help="The decided code.")
@click.option("--take", "take_from", default=None, metavar="REVIEWER",
              help="Take this reviewer's cell whole (code and evidence).")
@click.option("--keep", "keep", multiple=True, metavar="REVIEWER",
              help="Keep this reviewer's evidence (source, basis, citations, quotes) for --code (repeat for several) "
                   "[default: of every reviewer who chose the code].")
@click.option("--basis", default=None, help="Your own basis for --code instead of a reviewer's (inline Markdown).")
@click.option("--source", default="", help="The source location of your own --basis.")
@click.option("--cite", "cites", multiple=True, metavar="KEY", help="A citation key of your own --basis (repeat).")
@click.option("--reason", default=None, help="Why (required).")
@click.option("--by", default=None,
              help="Adjudicator [default: $PROTOCODER_REVIEWER, else the name given once for this workspace here].")
def adjudicate(workspace: Path, cell_key: str | None, code: str | None, take_from: str | None, keep: tuple[str, ...],
               basis: str | None, source: str, cites: tuple[str, ...], reason: str | None, by: str | None) -> None:
    """Resolve disagreements: an app listing every unresolved cell, or one cell with --cell.

    A decision is a code, the evidence it keeps (--take, --keep or your own --basis) and a
    reason. Reviewers' files are never changed; the decision is recorded, with its reason, its
    evidence and the codes it resolved, in protocols/<id>/consensus.yaml.
    """
    from ..lifecycle import adjudicate as record
    from ..storage.paths import open_workspace

    paths = open_workspace(workspace)
    if cell_key is None:
        if code or take_from or reason or keep or basis is not None or source or cites:
            raise UsageError("--code, --take, --keep, --basis, --source, --cite and --reason go with --cell")
        from ..tui.adjudicate import make_adjudication_app

        load(workspace).require_valid()
        app = make_adjudication_app(workspace, _who(by, workspace, "adjudicates"))
        _keep_who()
        app.run()
        return
    if reason is None:
        raise UsageError("--reason is required: every adjudication records why")
    decision = record(paths, cell_key, reason=reason, by=_who(by, workspace, "adjudicates"), code=code,
                      take_from=take_from, keep=keep, basis=basis, source=source, cites=cites)
    _keep_who()
    adjudication = decision.adjudication
    verb = "Adjudicated" if decision.status_before.value in ("unresolved", "adjudicated") else \
        f"Re-decided ({decision.status_before.value})"
    own = adjudication.kept == ()
    click.echo(f"{verb} {cell_key}: {adjudication.code} (resolved "
               + ", ".join(f"{r} {c}" for r, c in sorted(adjudication.resolved.items())) + "); keeping "
               + adjudication.evidence_text + (" basis" if own else " evidence")
               + (" (the reason; --basis gives another)" if own and basis is None else "") + ".")
    # A released cell that changes this way is corrected with the adjudication's reason.
    if (correction := decision.correction) is not None:
        click.echo(f"Corrected {cell_key} in release {correction.release}: {correction.old or '-'} -> "
                   f"{correction.new}")


@click.command()
@workspace_option
@click.argument("cell_key", metavar="PROTOCOL/FIELD")
@click.argument("text")
@click.option("--by", default=None,
              help="Who comments [default: $PROTOCODER_REVIEWER, else the name given once for this workspace here].")
def comment(workspace: Path, cell_key: str, text: str, by: str | None) -> None:
    """Comment on a cell ready for adjudication (the discussion of a disagreement).

    Each person's comments go to their own file, protocols/<id>/comments/<person>.yaml; the
    adjudication app shows them, export --view final lists them, render --comments prints
    them in the ledger. Refused before every reviewer has coded the cell (blinding).
    """
    from ..lifecycle.comments import add_comment
    from ..storage.paths import open_workspace

    paths = open_workspace(workspace)
    added = add_comment(paths, cell_key, text, by=_who(by, workspace, "comments"))
    _keep_who()
    click.echo(f"Commented on {cell_key} as {added.by} ({paths.show(paths.protocol_dir(added.protocol))}"
               f"/comments/{added.by}.yaml)")


@click.command()
@workspace_option
@click.option("--label", required=True, help="A unique name for the release, e.g. v1 or paper-2026.")
@click.option("--allow-unresolved", is_flag=True, help="Freeze even though cells are unresolved (recorded as such).")
@click.option("--allow-incomplete", is_flag=True,
              help="Freeze even though cells are incomplete (recorded as such).")
@click.option("--allow-lost-corrections", is_flag=True,
              help="Freeze even though corrections.yaml lost entries that a release, output/ or git saw.")
@click.option("--by", default=None,
              help="Who freezes [default: $PROTOCODER_REVIEWER, else the name given once for this workspace here].")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=None)
def freeze(workspace: Path, label: str, allow_unresolved: bool, allow_incomplete: bool, by: str | None,
           bootstrap: int, seed: int | None, allow_lost_corrections: bool) -> None:
    """Record a frozen release: content hash, date, denominators and the rendered tables."""
    batch()
    from ..publish import freeze_workspace

    release = freeze_workspace(workspace, label, by=_who(by, workspace, "freezes"),
                               allow_unresolved=allow_unresolved, allow_incomplete=allow_incomplete,
                               bootstrap=bootstrap, seed=seed, allow_lost_corrections=allow_lost_corrections)
    _keep_who()
    counts = release.denominators
    click.echo(f"Froze release {release.label} ({release.content_hash[:19]}…): {counts['protocols']} protocols, "
               f"{counts['cells']} cells, {counts['coded']} coded, {counts['unresolved']} unresolved"
               + (f", {counts['incomplete']} incomplete" if counts.get("incomplete") else ""))


@click.command()
@workspace_option
@click.option("--cell", "cell_key", default=None, metavar="PROTOCOL/FIELD", help="The released cell to correct.")
@click.option("--code", default=None,
              help="The corrected code [default: the current one when only the evidence is corrected; the "
                   "reviewers' consensus when nothing else is given].")
@click.option("--reason", required=True, help="Why the released cell was wrong.")
@click.option("--by", default=None,
              help="Who corrects [default: $PROTOCODER_REVIEWER, else the name given once for this workspace here].")
@click.option("--source", default=None, help="The corrected cell's source location.")
@click.option("--basis", default=None, help="The corrected cell's basis (inline Markdown).")
@click.option("--cite", "cites", multiple=True, metavar="KEY", help="A citation key of the corrected cell (repeat).")
@click.option("--quote", "quotes", multiple=True, metavar="SOURCE:TEXT",
              help="A passage of a pinned source the corrected cell rests on, checked against its snapshot "
                   "(repeat).")
@click.option("--withdraw", "withdrawn", type=click.IntRange(min=1), default=None, metavar="N",
              help="Undo correction N of the ledger (its number in corrections.yaml and in messages, #N): "
                   "a new correction sets its cell back to the code it replaced; nothing is deleted.")
def correct(workspace: Path, cell_key: str | None, code: str | None, reason: str, by: str | None,
            source: str | None, basis: str | None, cites: tuple[str, ...], quotes: tuple[str, ...],
            withdrawn: int | None) -> None:
    """Correct a released cell's code or evidence: appends an entry to the append-only corrections ledger.

    \b
    Without --code, --source, --basis, --cite or --quote it records what the reviewers' files say now.
    """
    from ..lifecycle import correct as record
    from ..storage.paths import open_workspace

    paths = open_workspace(workspace)
    if withdrawn is not None:
        if cell_key is not None or code is not None:
            raise UsageError("--withdraw N takes the cell and the code from correction N: leave out --cell and --code")
        cell_key, code, reason = _withdrawal(paths, withdrawn, reason)
    elif cell_key is None:
        raise UsageError("give --cell PROTOCOL/FIELD (or --withdraw N to undo correction N)")
    found = _quotes(paths, cell_key, quotes) if quotes else ()
    result = record(paths, cell_key, code=code, reason=reason, by=_who(by, workspace, "corrects"), source=source,
                    basis=basis, cites=cites if cites else None, quotes=found)
    _keep_who()
    entry = result.correction
    what = f"{entry.old or '-'} -> {entry.new}" if result.code_changed else f"{entry.new}, evidence corrected"
    click.echo(f"Corrected {entry.cell} in release {entry.release}: {what}")
    if result.evidence == "released":
        click.echo("The ledger keeps the released source and basis for this cell; give --source, --basis "
                   "and --cite to replace them.")
    elif result.evidence == "reviewers":
        click.echo("The corrected cell takes its source, basis and citations from the reviewers' files.")


def _withdrawal(paths: Any, number: int, reason: str) -> tuple[str, str, str]:
    """The cell, code and reason of the correction that undoes ledger entry ``number``."""
    from ..errors import InvalidInput, Rejected
    from ..lifecycle.corrections import load_corrections

    entries, problems = load_corrections(paths)
    if problems:
        raise InvalidInput(problems)
    if number > len(entries):
        raise Rejected(f"corrections.yaml has {len(entries)} entries: there is no correction {number}")
    entry = entries[number - 1]
    if entry.action:
        raise Rejected(f"entry {number} of corrections.yaml is a {entry.action}, not a correction of a cell")
    if not entry.old:
        raise Rejected(f"correction {number} gave {entry.cell} its first code ({entry.new}): there is no code to go "
                       f"back to; correct it with --cell {entry.cell} --code ...")
    later = [index + 1 for index, other in enumerate(entries[number:], start=number)
             if other.cell == entry.cell and not other.action]
    if later:
        raise Rejected(f"correction {number} of {entry.cell} was followed by correction {later[-1]}: withdraw "
                       f"that one, or correct the cell with --cell {entry.cell} --code ...")
    return entry.cell, entry.old, (f"withdraws correction {number} ({entry.old} -> {entry.new}, "
                                   f"{entry.reason!r}): {reason}")


def _quotes(paths: Any, cell_key: str, given: tuple[str, ...]) -> tuple[Any, ...]:
    """Each ``SOURCE:TEXT`` found in that source's snapshot (else a one-line refusal naming the
    closest passage), for a correction to carry."""
    from ..errors import Rejected
    from ..evidence.quotes import find_quote
    from ..evidence.snapshots import Snapshots
    from ..storage.workspace import load_review

    review = load_review(paths.root)
    protocol_id = cell_key.partition("/")[0]
    if protocol_id not in {p.id for p in review.protocols}:
        raise Rejected(f"no protocol {protocol_id!r} in this workspace")
    snapshots = Snapshots(paths)
    found = []
    for item in given:
        source_id, sep, text = item.partition(":")
        if not sep or not source_id.strip() or not text.strip():
            raise UsageError(f"--quote {item!r}: write it SOURCE:TEXT (the source's id, a colon, the passage)")
        try:
            found.append(find_quote(review.protocol(protocol_id), source_id.strip(), text, snapshots))
        except Rejected as exc:
            raise Rejected(f"--quote {source_id.strip()}:…: {exc}") from None
    return tuple(found)


@click.command()
@workspace_option
@click.argument("protocol_id", metavar="PROTOCOL")
@click.option("--reason", required=True, help="Why the protocol leaves the review.")
@click.option("--by", default=None,
              help="Who withdraws it [default: $PROTOCODER_REVIEWER, else the name given once here].")
def withdraw(workspace: Path, protocol_id: str, reason: str, by: str | None) -> None:
    """Withdraw a released protocol from the current view (a ledger entry with a reason).

    The tables then omit it from their rows and denominators and list the withdrawal among
    the corrections; after that, protocol remove can delete its folder.
    """
    from ..lifecycle import withdraw as record
    from ..storage.paths import open_workspace

    entry = record(open_workspace(workspace), protocol_id, reason=reason, by=_who(by, workspace, "withdraws"))
    _keep_who()
    click.echo(f"Withdrew {protocol_id} from release {entry.release}. Remove its folder with: "
               f"protocoder protocol remove {protocol_id} --force")


@click.command()
@workspace_option
@click.option("--field", "field_id", required=True, help="The rubric field whose cells were checked again.")
@click.option("--reviewer", default=None, help="Only this reviewer's cells.")
@click.option("--protocol", "protocol_id", default=None, help="Only this protocol's cells.")
def recheck(workspace: Path, field_id: str, reviewer: str | None, protocol_id: str | None) -> None:
    """Acknowledge cells coded under an older definition of a field, after checking them:
    stamps the current rubric version on them (codes and evidence stay as they are)."""
    from ..lifecycle import recheck as stamp
    from ..storage.paths import open_workspace

    count, version = stamp(open_workspace(workspace), field_id, reviewer=reviewer, protocol=protocol_id)
    if count:
        click.echo(f"Rechecked {count} cell{'s' if count != 1 else ''} of {field_id}: now coded under rubric {version}")
    else:
        click.echo(f"No cell of {field_id} was coded under an older definition; nothing to recheck")


@click.command()
@workspace_option
def recover(workspace: Path) -> None:
    """Finish an adjudication that was interrupted between writing consensus.yaml and corrections.yaml."""
    from ..lifecycle.journal import finish_pending
    from ..storage.files import remove_debris
    from ..storage.paths import open_workspace
    from ..storage.scan import scan_workspace
    from ..storage.store import Store

    paths = open_workspace(workspace)
    with Store(paths).locked():
        done = finish_pending(paths)
        remove_debris(None, scan_workspace(paths).debris)  # a killed writer's temporaries (we hold the lock)
    click.echo(done[0].upper() + done[1:] if done else "Nothing to recover: no interrupted operation")


@click.command("git-setup")
@workspace_option
def git_setup(workspace: Path) -> None:
    """Let git merge the append-only history files of different branches.

    Writes .gitattributes (corrections.yaml and protocols/*/consensus.yaml use the
    protocoder merge driver) and the driver's command into the repository's config.
    """
    from ..lifecycle.gitmerge import install_merge_driver
    from ..storage.paths import open_workspace

    for line in install_merge_driver(open_workspace(workspace).root):
        click.echo(line)


@click.command("merge-driver")
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
    from ..lifecycle.gitmerge import merge_files

    message = merge_files(base, ours, theirs, name)
    if message:
        click.echo(f"protocoder merge-driver: {name or ours}: {message}", err=True)
        sys.exit(1)
