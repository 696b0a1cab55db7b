"""The live cells against the current released view: what changed since the release.

:func:`history_problems` is what ``validate`` (and every command that reads the history)
adds to the file checks: a reviewer's cell that no longer matches the release plus its
corrections is a *warning* naming the correction that records it, never an error that
blocks the tables; stale adjudications and withdrawn protocols left in the workspace are
reported too. :func:`superseded` lists the adjudications the reviewers settled otherwise.
For the coding app and ``cell set``, one cell's change is previewed against the current
view (:func:`preview_change`) before it is saved. Reading the history itself (releases,
corrections, their integrity) is :mod:`history`.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import Cell
from ..storage.files import read_text
from ..storage.paths import Paths
from ..storage.store import Store
from ..storage.workspace import Review
from ..storage.yamlio import Locator
from .consensus import FinalCell, Status
from .corrections import load_corrections
from .history import History, Released, load_history, record_of, released_codes
from .releases import latest_release
from .view import final_cells


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
        if released.matches(cell) or (cell.code is not None and same_as_current(cell, released)):
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
                       f"{codes_text(cell.stale.resolved)} (now {codes_text(cell.codes) or 'none'}) and they disagree; "
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


def same_as_current(cell: FinalCell, released: Released) -> bool:
    """Whether ``cell`` settles on the record the current view shows for it (code, source, basis, cites)."""
    current = released.current
    return (cell.code, cell.source, cell.basis, tuple(cell.cites)) == record_of(current)


def _changed_message(key: str, cell: FinalCell, released: Released, label: str) -> str:
    shown = released.current_code or released.current.get("status", "no code")
    where = f"release {label}" + (" with its corrections" if released.corrected is not None else "")
    if cell.status is Status.UNRESOLVED:
        return (f"released cell {key}: the reviewers now disagree ({codes_text(cell.codes)}); the tables keep "
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


def codes_text(codes: dict[str, str] | Any) -> str:
    """Reviewers' codes as ``ada NR, bob P`` (sorted by reviewer), for messages."""
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


SHOWN_OF_RELEASED = ("protocol", "field", "status", "code", "source", "basis", "cites", "corrected")
"""What a reviewer's session keeps of each released cell: the published record, never the reviewers'
codes (``codes``) or an adjudication's resolved codes."""


def blind_released(cells: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The current view's released cells as a reviewer's session may hold them (``SHOWN_OF_RELEASED``)."""
    return {key: {name: cell[name] for name in SHOWN_OF_RELEASED if name in cell} for key, cell in cells.items()}
