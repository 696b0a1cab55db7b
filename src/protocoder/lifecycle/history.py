"""Reading the review's history: releases, corrections, and the checks that keep them honest
(writing it — corrections and withdrawals — is :mod:`amend`).

The *current view* is, in order: the reviewers' records, the adjudications, the latest
release, and the corrections recorded since it (a withdrawal takes a protocol out). Cells
that did not exist at the release (a protocol added since) come from the live consensus.

"Changed since the release" is measured against what the reviewers' files said when the
release was frozen (its baseline, see :mod:`releases`), moved forward by each correction
of the cell (which records what the files said then). So a second release after a
correction is as valid as the first, and a change in a reviewer's file after a release is a
*warning* that names the correction recording it — never an error that blocks the tables.

:func:`history_problems` is what ``validate`` adds to the file checks; :func:`load_history`
also checks that every release's anchor (the ledger's head when it was frozen) is still in
the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import Cell
from ..storage.files import read_text
from ..storage.paths import Paths
from ..storage.store import Store
from ..storage.workspace import Review
from ..storage.yamlio import Locator
from .consensus import FinalCell, Status, record_hash
from .corrections import (
    HEAD_RECORD,
    MERGE,
    WITHDRAW,
    Correction,
    apply_corrections,
    correction_records,
    load_corrections,
    recorded_head,
    resolve_anchor,
    seen_by,
    withdrawn_protocols,
)
from .releases import Release, latest_release, list_releases, release_folder_problems, release_problems
from .view import View, final_cells

UNSETTLED = record_hash(None, "", "", ())
"""The record hash of a cell with no final code (unresolved, incomplete or not coded)."""


@dataclass
class History:
    """Releases and corrections of a workspace, as read (with their own problems)."""

    releases: list[Release]
    corrections: list[Correction]
    problems: list[Problem]

    @property
    def latest(self) -> Release | None:
        return self.releases[-1] if self.releases else None

    @property
    def usable_latest(self) -> Release | None:
        """The latest release, unless its files are damaged (then nothing can be built on it)."""
        release = self.latest
        if release is None:
            return None
        return None if any(p.path.startswith(release.shown + "/") for p in self.problems) else release

    def corrections_since(self, release: Release) -> list[Correction]:
        """Corrections and withdrawals recorded against ``release``, in order."""
        return [c for c in self.corrections if c.release == release.label and c.action != MERGE]

    def withdrawn(self) -> set[str]:
        """Protocols withdrawn from the latest release."""
        release = self.latest
        return withdrawn_protocols(self.corrections_since(release)) if release is not None else set()


def load_history(review: Review, *, allow_lost_corrections: bool = False) -> History:
    """Read every release and the corrections ledger, and check that they still fit together.

    A ledger that lost entries some anchor saw (a release, ``output/``'s manifest, a commit in
    git) is an error, so nothing publishes a view without them; ``allow_lost_corrections``
    makes those problems warnings, for a deliberate publication without them.
    """
    from .journal import pending_problem

    paths = review.paths
    corrections, problems = load_corrections(paths)
    releases = list_releases(paths)
    for release in releases:
        problems += release_problems(release)
    problems += release_folder_problems(paths)
    ledger_ok = not [p for p in problems if p.path == paths.show(paths.corrections)]
    if ledger_ok:
        lost = lost_corrections(paths, releases, corrections)
        if allow_lost_corrections:
            lost = [replace(problem, severity="warning") for problem in lost]
        problems += lost + anchor_problems(paths, releases, corrections)
    if (pending := pending_problem(paths)) is not None:
        problems.append(pending)
    return History(releases, corrections, problems)


def lost_corrections(paths: Paths, releases: Sequence[Release], corrections: Sequence[Correction]) -> list[Problem]:
    """A ledger that lost entries a release, the output manifest or the git history saw."""
    from .githistory import lost_in_git

    shown = paths.show(paths.corrections)
    problems = []
    for release in releases:
        if release.ledger is None or release.ledger[0] == 0:
            continue
        count, head = release.ledger
        if resolve_anchor(corrections, head) is not None:
            continue
        if not paths.corrections.exists():
            state = "is missing"
        elif len(corrections) < count:
            state = f"holds only {len(corrections)} entries"
        else:
            state = "no longer holds that entry (it diverges from what the release saw)"
        problems.append(Problem(shown, 0, 0, f"release {release.label} recorded the ledger at {count} "
                                f"entr{'y' if count == 1 else 'ies'} ending in {head[:19]}…, but {shown} {state}: "
                                "corrections were lost (a rollback, a deleted file or a merge gone wrong); restore "
                                f"it from version control (git log -- {shown})"))
    in_git = lost_in_git(paths, corrections)
    return problems + _output_anchor_problems(paths, corrections) + (
        in_git if in_git is not None else lost_since_recorded(paths, corrections))


def lost_since_recorded(paths: Paths, corrections: Sequence[Correction]) -> list[Problem]:
    """Outside git: entries the head recorded in ``.protocoder/`` (at the last write) saw that the
    ledger lacks — a deleted, truncated or rolled-back file, also after the last release."""
    recorded = recorded_head(paths)
    if not recorded:
        return []
    lost = [entry for entry in recorded if resolve_anchor(corrections, str(entry.get("hash", ""))) is None]
    if not lost:
        return []
    shown = paths.show(paths.corrections)
    described = ", ".join(f"#{entry.get('index')} {entry.get('cell')} {entry.get('old') or '-'} -> {entry.get('new')} "
                          f"by {entry.get('by')}" for entry in lost[:8]) + (f" and {len(lost) - 8} more"
                                                                           if len(lost) > 8 else "")
    return [Problem(shown, 0, 0, f"lost {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} that this workspace "
                    f"recorded when it last wrote the ledger ({described}; recorded in "
                    f"{paths.show(paths.state_dir / HEAD_RECORD)}): restore {shown} from your backup or version "
                    "control. To publish without them anyway: --allow-lost-corrections")]


def anchor_problems(paths: Paths, releases: Sequence[Release], corrections: Sequence[Correction]) -> list[Problem]:
    """Corrections the latest release never saw, and corrections of a release that is gone."""
    shown = paths.show(paths.corrections)
    problems = _unseen_by_latest(paths, releases, corrections)
    labels = {release.label for release in releases} | {release.path.name for release in releases}
    locator = Locator(read_text(paths.corrections, shown)) if corrections else None
    for index, correction in enumerate(corrections):
        if correction.action == MERGE or correction.release in labels:
            continue
        line, column = locator.position(["entries", index, "release"]) if locator else (0, 0)
        problems.append(Problem(shown, line, column, f"correction {index + 1} ({correction.cell}) corrects release "
                                f"{correction.release}, which is not in releases/ (deleted?): restore "
                                f"releases/{correction.release}/ from version control"))
    return problems


def ledger_anchor(corrections: Sequence[Correction]) -> dict[str, Any]:
    """The ledger's head as an output folder's manifest records it (see :func:`_output_anchor_problems`)."""
    return {"entries": len(corrections), "head": corrections[-1].hash if corrections else ""}


def _output_anchor_problems(paths: Paths, corrections: Sequence[Correction]) -> list[Problem]:
    """The workspace's ``output/`` records the ledger head it was rendered from: a ledger that no
    longer holds that head lost corrections the committed tables show (a rollback of
    corrections.yaml alone, say, with output/ left as it was)."""
    from ..storage.outputs import MANIFEST, read_manifest

    manifest = read_manifest(paths.output_dir) if not paths.leaves_workspace(paths.output_dir) else None
    anchor = (manifest or {}).get("meta", {}).get("ledger")
    if not isinstance(anchor, dict) or not isinstance(anchor.get("entries"), int) or not anchor["entries"]:
        return []
    head = str(anchor.get("head", ""))
    if resolve_anchor(corrections, head) is not None:
        return []
    shown = paths.show(paths.corrections)
    count = anchor["entries"]
    state = "is missing" if not paths.corrections.exists() else f"holds {len(corrections)} and not that one"
    return [Problem(shown, 0, 0, f"{paths.show(paths.output_dir / MANIFEST)} records tables rendered from a ledger of "
                    f"{count} entr{'y' if count == 1 else 'ies'} ending in {head[:19]}…, but {shown} {state}: "
                    f"corrections were lost; restore it from version control (git log -- {shown})")]


def _unseen_by_latest(paths: Paths, releases: Sequence[Release], corrections: Sequence[Correction]) -> list[Problem]:
    """Corrections of an older release that the latest release never saw: made on a branch
    that did not have the latest release, and merged after it was frozen. The current view is
    the latest release plus *its* corrections, so they must be recorded again against it."""
    latest = releases[-1] if releases else None
    if latest is None or latest.ledger is None:
        return []
    seen = seen_by(corrections, latest.ledger[1]) if latest.ledger[0] else set()
    problems = []
    for index, entry in enumerate(corrections):
        if entry.action == MERGE or entry.release == latest.label or entry.hash in seen:
            continue
        target = entry.protocol if entry.action == WITHDRAW else entry.cell
        if any(later.release == latest.label and (later.cell == target or later.protocol == target)
               for later in corrections[index + 1:]):
            continue  # recorded again against the latest release
        if _already_shown(latest, corrections, entry):
            continue
        if entry.action == WITHDRAW:
            again = f"protocoder withdraw {target} --reason \"...\""
        else:
            again = f"protocoder correct --cell {target} --code {entry.new} --reason \"...\""
        problems.append(Problem(paths.show(paths.corrections), 0, 0, f"correction {index + 1} ({target}, release "
                                f"{entry.release}) was recorded on a branch without release {latest.label}, so "
                                f"{latest.label} and the current view do not include it: record it again ({again})",
                                "warning"))
    return problems


def _already_shown(latest: Release, corrections: Sequence[Correction], entry: Correction) -> bool:
    """Whether the latest release (with its corrections) already says what ``entry`` said."""
    try:
        current = released_codes(History([latest], list(corrections), []))
    except InvalidInput:
        return False
    if entry.action == WITHDRAW:
        return not any(key.partition("/")[0] == entry.protocol for key in current)
    item = current.get(entry.cell)
    return item is not None and item.current_code == entry.new


def overlay(view: View, review: Review, history: History) -> View:
    """Turn a live view into the current view: latest release plus its corrections."""
    release = history.usable_latest
    labels = {f"{p['id']}/{f['id']}": (p["name"], f["label"]) for p in view.protocols for f in view.rubric["fields"]}
    if release is not None:
        released_view = release.view()
        labels = {f"{p['id']}/{f['id']}": (p["name"], f["label"]) for p in released_view.protocols
                  for f in released_view.rubric["fields"]} | labels
    view.corrections = correction_records(history.corrections, labels)
    if release is None:
        return view
    since = history.corrections_since(release)
    withdrawn = withdrawn_protocols(since)
    released = {f"{c['protocol']}/{c['field']}": c for c in released_view.cells}
    view.protocols = [p for p in view.protocols if p["id"] not in withdrawn]
    cells = [released.get(f"{c['protocol']}/{c['field']}", c) for c in view.cells if c["protocol"] not in withdrawn]
    view.cells = apply_corrections(cells, since)
    view.release = {"label": release.label, "created": release.created}
    return view


def baseline_of(cells: Sequence[FinalCell]) -> dict[str, dict[str, Any]]:
    """What a release records of the reviewers' consensus: per cell, status, code and record hash."""
    return {cell.key: {"status": str(cell.status), "code": cell.code, "record": cell.record_hash} for cell in cells}


@dataclass
class Released:
    """What the latest release and its corrections say about one cell, and what the reviewers'
    files may say without anything to record."""

    code: str | None
    codes: dict[str, str]
    current: dict[str, Any]
    """The cell in the current view (release + corrections)."""
    corrected: str | None = None
    accepted_record: str | None = None
    """The consensus record hash the reviewers' files had when last checked (release or correction)."""
    accepted_codes: set[str | None] = field(default_factory=set)
    """For releases and corrections made before records were tracked: codes that need nothing recorded."""

    def matches(self, live: FinalCell) -> bool:
        """True when the reviewers' consensus is what the history last saw of it."""
        if self.accepted_record is not None:
            return live.record_hash == self.accepted_record
        return live.code in self.accepted_codes

    @property
    def current_code(self) -> str | None:
        return self.current["code"]


def released_codes(history: History, view: View | None = None) -> dict[str, Released]:
    """Every cell of the latest release (but withdrawn protocols), with what its corrections make of it."""
    release = history.usable_latest
    if release is None:
        return {}
    cells = (view or release.view()).cells
    baseline = release.baseline()
    earlier: dict[str, set[str | None]] = {}
    for correction in history.corrections:
        if correction.release == release.label:
            break
        if not correction.action:
            earlier.setdefault(correction.cell, set()).add(correction.old or None)
    result = {}
    for cell in cells:
        key = f"{cell['protocol']}/{cell['field']}"
        item = Released(cell["code"], dict(cell.get("codes", {})), dict(cell))
        if baseline is not None and key in baseline:
            item.accepted_record = baseline[key]["record"]
        else:
            # A release from before baselines: the reviewers' files may still hold the
            # released code, or a code an earlier correction replaced in the tables only.
            item.accepted_codes = {cell["code"], *earlier.get(key, set())}
        result[key] = item
    since = history.corrections_since(release)
    withdrawn = withdrawn_protocols(since)
    for key in [key for key in result if key.partition("/")[0] in withdrawn]:
        del result[key]
    for correction, current in zip(since, _states(result, since), strict=True):
        item = result.get(correction.cell)
        if item is None or correction.action:
            continue
        item.corrected = correction.new
        item.current = current
        if correction.live:
            item.accepted_record, item.accepted_codes = correction.live, set()
        else:
            item.accepted_codes |= {correction.new}
    return result


def _states(result: dict[str, Released], since: Sequence[Correction]) -> list[dict[str, Any]]:
    """The current-view cell after each entry of ``since`` (for withdrawals and merges: {})."""
    states = []
    cells = {key: item.current for key, item in result.items()}
    for correction in since:
        if correction.action or correction.cell not in cells:
            states.append({})
            continue
        cells[correction.cell] = apply_corrections([cells[correction.cell]], [correction])[0]
        states.append(cells[correction.cell])
    return states


def record_of(cell: dict[str, Any]) -> tuple[Any, ...]:
    """A view cell's code and evidence, for comparing."""
    return (cell["code"], cell["source"], cell["basis"], tuple(cell["cites"]))


def history_problems(review: Review, history: History | None = None) -> list[Problem]:
    """Problems with releases and corrections, cells changed behind a release's back (warnings
    naming the command that records them), stale adjudications, and withdrawn protocols left."""
    history = history or load_history(review)
    problems = list(history.problems)
    if review.rubric is None or review.errors:
        return problems
    live: dict[str, FinalCell] = {cell.key: cell for cell in final_cells(review)}
    locator = _Locators(review)
    release = history.usable_latest
    live_protocols = {p.id for p in review.protocols}
    for key, released in released_codes(history).items():
        cell = live.get(key)
        protocol, _, field_id = key.partition("/")
        if cell is None:
            if protocol in live_protocols:
                continue  # a field the rubric no longer has: the release keeps it
            problems.append(Problem(review.paths.show(review.paths.protocol_dir(protocol)), 0, 0,
                                    f"cell {key} of release {release.label} no longer exists (its protocol was "
                                    f"removed); restore protocols/{protocol}/ from version control, or withdraw "
                                    f"it: protocoder withdraw {protocol} --reason \"...\""))
            continue
        if released.matches(cell) or (cell.code is not None and _same_as_current(cell, released)):
            continue
        message = _changed_message(key, cell, released, release.label)
        codes_then = released.codes
        changed = sorted(r for r in set(codes_then) | set(cell.codes) if codes_then.get(r) != cell.codes.get(r))
        if changed:
            problems += [locator.cell(protocol, field_id, reviewer, message, "warning") for reviewer in changed]
        elif review.paths.consensus_file(protocol).is_file():
            problems.append(locator.consensus(protocol, field_id, message, "warning"))
        else:
            problems.append(locator.cell(protocol, field_id, next(iter(cell.codes), ""), message, "warning"))
    for cell in live.values():
        if cell.stale is not None:
            message = (f"adjudication of {cell.key} is stale: reviewers' codes changed since it resolved "
                       f"{_codes(cell.stale.resolved)} (now {_codes(cell.codes) or 'none'}) and they disagree; "
                       f"decide again: protocoder adjudicate --cell {cell.key} --code ... --reason \"...\"")
            # Where the change was made: the files of the reviewers whose code changed.
            changed = sorted(r for r in cell.codes if cell.stale.resolved.get(r) != cell.codes.get(r))
            problems += ([locator.cell(cell.protocol, cell.field, reviewer, message, "warning") for reviewer in changed]
                         or [locator.consensus(cell.protocol, cell.field, message, severity="warning")])
    for protocol in sorted(history.withdrawn() & live_protocols):
        problems.append(Problem(review.paths.show(review.paths.protocol_file(protocol)), 0, 0,
                                f"protocol {protocol} was withdrawn from release {release.label if release else ''} "
                                "and the tables omit it, but it is still in the workspace: remove it with "
                                f"protocoder protocol remove {protocol} --force", "warning"))
    return problems


def _same_as_current(cell: FinalCell, released: Released) -> bool:
    current = released.current
    return (cell.code, cell.source, cell.basis, tuple(cell.cites)) == record_of(current)


def _changed_message(key: str, cell: FinalCell, released: Released, label: str) -> str:
    shown = released.current_code or released.current.get("status", "no code")
    where = f"release {label}" + (" with its corrections" if released.corrected is not None else "")
    if cell.status is Status.UNRESOLVED:
        return (f"released cell {key}: the reviewers now disagree ({_codes(cell.codes)}); the tables keep "
                f"{shown} from {where}: decide it with protocoder adjudicate --cell {key} --code ... "
                "--reason \"...\" (a changed code is recorded as a correction)")
    if cell.status is Status.INCOMPLETE:
        lacking = "; ".join(f"{r} lacks {' and '.join(parts)}" for r, parts in sorted(cell.missing.items()))
        return (f"released cell {key} is incomplete in the reviewers' files ({lacking}); the tables keep "
                f"{shown} from {where} until it is completed")
    if cell.status is Status.NOT_CODED:
        return (f"released cell {key} is no longer coded in any reviewer's file; the tables keep {shown} from "
                f"{where}: restore the cell, or correct it with protocoder correct --cell {key} --code ... "
                "--reason \"...\"")
    if cell.code != released.current_code:
        return (f"released cell {key} is now {cell.code} in the reviewers' files, but {where} has {shown}: "
                f"record the change with protocoder correct --cell {key} --code {cell.code} --reason \"...\"")
    return (f"the evidence of released cell {key} changed in the reviewers' files (the code is still {cell.code}); "
            f"the tables keep the record of {where}: record the new evidence with protocoder correct --cell {key} "
            "--reason \"...\"")


def superseded(review: Review) -> list[FinalCell]:
    """Cells whose latest adjudication no longer counts because the reviewers settled them otherwise."""
    if review.rubric is None or review.errors:
        return []
    return [cell for cell in final_cells(review) if cell.superseded is not None]


def _codes(codes: dict[str, str] | Any) -> str:
    return ", ".join(f"{r} {c}" for r, c in sorted(dict(codes).items()))


class _Locators:
    """Line numbers for history problems, parsed lazily per file."""

    def __init__(self, review: Review) -> None:
        self.review = review
        self._cache: dict[str, Locator] = {}

    def _locate(self, path: Any, keypath: list[str | int], message: str, severity: str) -> Problem:
        shown = self.review.paths.show(path)
        if shown not in self._cache:
            try:
                self._cache[shown] = Locator(read_text(path, shown))
            except Exception:  # noqa: BLE001 - a missing file is reported at line 0
                return Problem(shown, 0, 0, message, severity)
        line, column = self._cache[shown].position(keypath)
        return Problem(shown, line, column, message, severity)

    def cell(self, protocol: str, field_id: str, reviewer: str, message: str, severity: str = "error") -> Problem:
        path = self.review.paths.sheet_file(protocol, reviewer)
        return self._locate(path, ["cells", field_id, "code"], message, severity)

    def consensus(self, protocol: str, field_id: str, message: str, severity: str = "error") -> Problem:
        path = self.review.paths.consensus_file(protocol)
        entries = self.review.adjudications.get((protocol, field_id), [])
        keypath: list[str | int] = ["adjudications", entries[-1].entry] if entries else []
        return self._locate(path, keypath, message, severity)


def latest(review: Review) -> Release | None:
    """Convenience: the workspace's latest release."""
    return latest_release(review.paths)


# --------------------------------------------------------------------------- for the writers


def checked_history(review: Review) -> History:
    """The history, when it has no errors (else :class:`InvalidInput` naming them): what every
    writer of the history (correct, withdraw, adjudicate) builds on."""
    history = load_history(review)
    errors = [p for p in history.problems if p.severity == "error"]
    if errors:
        raise InvalidInput(errors)
    return history


def released_cell_codes(review: Review, reviewer: str) -> tuple[str, dict[tuple[str, str], str | None]] | None:
    """The latest release's label and, per released cell, the code ``reviewer`` had given it."""
    release = latest_release(review.paths)
    if release is None:
        return None
    try:
        cells = release.view().cells
    except InvalidInput:
        return None
    return release.label, {(c["protocol"], c["field"]): c.get("codes", {}).get(reviewer) for c in cells}


# --------------------------------------------------------------------------- one cell, for the coding app


def current_released_cells(paths: Paths) -> dict[str, dict[str, Any]]:
    """Each cell of the latest release as the current view shows it (release + corrections);
    empty when nothing is released or the history cannot be read (validate reports why)."""
    release = latest_release(paths)
    if release is None:
        return {}
    corrections, problems = load_corrections(paths)
    if problems:
        return {}
    try:
        history = History([release], corrections, [])
        return {key: item.current for key, item in released_codes(history).items()}
    except InvalidInput:
        return {}


def live_cell(paths: Paths, rubric: Any, cell: Cell) -> FinalCell:
    """The consensus of ``cell``'s (protocol, field) with ``cell`` in place of its reviewer's version:
    reads only that protocol's reviewer files and adjudications (every reviewer's, internally)."""
    from ..storage.findings import Findings
    from ..storage.formats import parse_consensus
    from ..storage.paths import CODES_DIR
    from ..storage.yamlio import parse_yaml

    store = Store(paths)
    cells: dict[str, Cell] = {}
    folder = paths.protocol_dir(cell.protocol) / CODES_DIR
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            sheet, _ = store.read_sheet(cell.protocol, path.stem, rubric)
        except (InvalidInput, Rejected):
            continue
        if cell.field in sheet.cells:
            cells[path.stem] = sheet.cells[cell.field]
    cells[cell.reviewer] = cell
    adjudications = []
    consensus = paths.consensus_file(cell.protocol)
    if consensus.is_file():
        shown = paths.show(consensus)
        try:
            text = read_text(consensus, shown)
            adjudications = [a for a in parse_consensus(parse_yaml(text, shown), Findings(shown, text),
                                                        cell.protocol, rubric) if a.field == cell.field]
        except InvalidInput:
            adjudications = []
    from .consensus import decide

    return decide(cell.protocol, cell.field, cells, adjudications, rubric)


def preview_change(paths: Paths, rubric: Any, cell: Cell, current: dict[str, Any]) -> FinalCell | None:
    """The settled consensus a released cell would take if ``cell`` were saved, when it differs
    from the current view (so a correction would record it); None otherwise."""
    live = live_cell(paths, rubric, cell)
    if live.code is None or (live.code, live.source, live.basis, tuple(live.cites)) == record_of(current):
        return None
    return live
