"""The review's history: releases, corrections, and the checks that keep them honest.

The *current view* is the latest release with its corrections applied in order; cells
that did not exist at the release (a protocol added since) come from the live consensus.
:func:`history_problems` is what ``validate`` adds to the file checks: a released cell
whose final code changed without a correction, a broken corrections chain, a modified
release, and stale adjudications.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import Problem, Rejected
from ..model import Cell
from ..storage.store import check_texts
from ..storage.workspace import Review
from ..storage.yamlio import Locator, read_text
from .consensus import FinalCell
from .corrections import Correction, apply_corrections, correction_records, load_corrections
from .releases import Release, latest_release, list_releases, release_problems
from .view import View, final_cells


@dataclass
class History:
    """Releases and corrections of a workspace, as read (with their own problems)."""

    releases: list[Release]
    corrections: list[Correction]
    problems: list[Problem]

    @property
    def latest(self) -> Release | None:
        return self.releases[-1] if self.releases else None

    def corrections_since(self, release: Release) -> list[Correction]:
        """Corrections recorded against ``release``, in order."""
        return [c for c in self.corrections if c.release == release.label]


def load_history(review: Review) -> History:
    """Read every release and the corrections ledger."""
    corrections, problems = load_corrections(review.paths)
    releases = list_releases(review.paths)
    for release in releases:
        problems += release_problems(release)
    return History(releases, corrections, problems)


def overlay(view: View, review: Review, history: History) -> View:
    """Turn a live view into the current view: latest release plus its corrections."""
    release = history.latest
    labels = {f"{p['id']}/{f['id']}": (p["name"], f["label"]) for p in view.protocols for f in view.rubric["fields"]}
    view.corrections = correction_records(history.corrections, labels)
    if release is None:
        return view
    released = {f"{c['protocol']}/{c['field']}": c for c in release.view().cells}
    cells = [released.get(f"{c['protocol']}/{c['field']}", c) for c in view.cells]
    view.cells = apply_corrections(cells, history.corrections_since(release))
    view.release = {"label": release.label, "created": release.created}
    return view


@dataclass(frozen=True)
class Released:
    """What the latest release says about one cell, and what its corrections say since."""

    code: str | None
    corrected: str | None
    codes: dict[str, str]

    @property
    def current(self) -> str | None:
        """The code of the current view."""
        return self.corrected if self.corrected is not None else self.code


def released_codes(history: History) -> dict[str, Released]:
    """Every cell of the latest release, with the code its corrections give it."""
    release = history.latest
    if release is None:
        return {}
    result = {f"{c['protocol']}/{c['field']}": Released(c["code"], None, dict(c.get("codes", {})))
              for c in release.view().cells}
    for correction in history.corrections_since(release):
        if correction.cell in result:
            old = result[correction.cell]
            result[correction.cell] = Released(old.code, correction.new, old.codes)
    return result


def history_problems(review: Review, history: History | None = None) -> list[Problem]:
    """Problems with releases and corrections, and cells changed behind a release's back."""
    history = history or load_history(review)
    problems = list(history.problems)
    if review.rubric is None or review.errors:
        return problems
    live: dict[str, FinalCell] = {cell.key: cell for cell in final_cells(review)}
    locator = _Locators(review)
    release = history.latest
    for key, released in released_codes(history).items():
        cell = live.get(key)
        protocol, _, field_id = key.partition("/")
        if cell is None:
            problems.append(Problem(review.paths.show(review.paths.protocol_dir(protocol)), 0, 0,
                                    f"cell {key} of release {release.label} no longer exists"))
            continue
        # Unchanged since the release, or changed to what a correction recorded: both fine.
        if cell.code == released.code or (released.corrected is not None and cell.code == released.corrected):
            continue
        codes_then = released.codes
        changed = sorted(r for r in set(codes_then) | set(cell.codes) if codes_then.get(r) != cell.codes.get(r))
        message = (f"released cell {key} is now {cell.code or cell.status.value}, but release {release.label} "
                   f"(with its corrections) has {released.current or 'no code'}: record the change with "
                   f"`protocoder correct --cell {key} --code ... --reason ...`")
        if changed:
            for reviewer in changed:
                problems.append(locator.cell(protocol, field_id, reviewer, message))
        elif review.paths.consensus_file(protocol).is_file():
            problems.append(locator.consensus(protocol, field_id, message))
        else:
            problems.append(Problem(f"releases/{release.path.name}/release.yaml", 0, 0, message))
    for cell in live.values():
        if cell.stale is not None:
            problems.append(locator.consensus(
                cell.protocol, cell.field,
                f"adjudication of {cell.key} is stale: reviewers' codes changed since it resolved "
                f"{_codes(cell.stale.resolved)} (now {_codes(cell.codes) or 'none'}); adjudicate the cell again",
                severity="warning"))
    return problems


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

    def cell(self, protocol: str, field_id: str, reviewer: str, message: str) -> Problem:
        path = self.review.paths.sheet_file(protocol, reviewer)
        return self._locate(path, ["cells", field_id, "code"], message, "error")

    def consensus(self, protocol: str, field_id: str, message: str, severity: str = "error") -> Problem:
        path = self.review.paths.consensus_file(protocol)
        entries = self.review.adjudications.get((protocol, field_id), [])
        keypath: list[str | int] = ["adjudications", entries[-1].entry] if entries else []
        return self._locate(path, keypath, message, severity)


def latest(review: Review) -> Release | None:
    """Convenience: the workspace's latest release."""
    return latest_release(review.paths)


def correct(review: Review, cell_key: str, *, code: str, reason: str, by: str, source: str | None = None,
            basis: str | None = None, cites: Sequence[str] | None = None) -> Correction:
    """Record a correction of a released cell's final code (the only way to change one).

    ``source``, ``basis`` and ``cites`` give the corrected cell its own record; without
    them it takes the live cell's when that already carries the new code, and keeps the
    released record otherwise.
    """
    from ..errors import InvalidInput
    from .adjudication import CellRef
    from .corrections import append_correction
    from .view import build_view

    rubric = review.require_valid()
    ref = CellRef.parse(cell_key, review)
    history = load_history(review)
    errors = [p for p in history.problems if p.severity == "error"]
    if errors:
        raise InvalidInput(errors)
    release = history.latest
    if release is None:
        raise Rejected("nothing has been released yet: change the cells directly (corrections apply to releases)")
    expected = released_codes(history)
    if str(ref) not in expected:
        raise Rejected(f"{ref} was not part of release {release.label}: change it directly")
    old = expected[str(ref)].current
    allowed = rubric.field(ref.field).codes
    if code not in allowed:
        raise Rejected(f"code {code!r} is not allowed for field {ref.field!r} (allowed: {', '.join(allowed)})")
    if code == old:
        raise Rejected(f"{ref} is already {code} in the current view")
    if source is not None or basis is not None or cites is not None:
        record = _given_record(review, code, source or "", basis or "", list(cites or ()))
    else:
        live = build_view(review).cell(ref.protocol, ref.field)
        record = ({"source": live["source"], "basis": live["basis"], "cites": live["cites"]}
                  if live["code"] == code else {})
    return append_correction(review.paths, release=release.label, cell=str(ref), old=old or "", new=code,
                             reason=reason, by=by, **record)


def _given_record(review: Review, code: str, source: str, basis: str, cites: list[str]) -> dict[str, Any]:
    """The source, basis and citations a correction states, checked as a cell's would be."""
    source, basis = source.strip(), basis.strip()
    check_texts({"the source location": source, "the basis": basis})
    unknown = [key for key in cites if key not in review.bibliography]
    if unknown:
        raise Rejected(f"citation key {unknown[0]!r} is not in {review.paths.show(review.paths.bibliography)}")
    rubric = review.require_valid()
    missing = Cell("", "", "", code, source=source, basis=basis, cites=tuple(cites)).missing(rubric)
    if missing:
        raise Rejected(f"code {code} needs {' and '.join(missing)} (the rubric requires it)")
    return {"source": source, "basis": basis, "cites": cites}


@dataclass(frozen=True)
class PendingCorrection:
    """A released cell whose final code, from the reviewers' files, now differs from the current view."""

    release: str
    cell: str
    old: str | None
    new: str


def pending_correction(review: Review, cell_key: str, history: History | None = None) -> PendingCorrection | None:
    """What a change to ``cell_key`` would need recorded, or None when nothing changed.

    None also when the cell is unresolved now: there is no final code to correct to until
    someone adjudicates it.
    """
    history = history or load_history(review)
    release = history.latest
    if release is None:
        return None
    released = released_codes(history).get(cell_key)
    if released is None:
        return None
    protocol, _, field_id = cell_key.partition("/")
    live = next((c for c in final_cells(review) if c.protocol == protocol and c.field == field_id), None)
    if live is None or live.code is None or live.code == released.current:
        return None
    return PendingCorrection(release.label, cell_key, released.current, live.code)


def record_change(review: Review, cell_key: str, *, reason: str, by: str) -> Correction | None:
    """After a released cell changed in the reviewers' files, append the correction it needs."""
    from .corrections import append_correction
    from .view import build_view

    pending = pending_correction(review, cell_key)
    if pending is None:
        return None
    protocol, _, field_id = cell_key.partition("/")
    live = build_view(review).cell(protocol, field_id)
    return append_correction(review.paths, release=pending.release, cell=cell_key, old=pending.old or "",
                             new=pending.new, reason=reason, by=by, source=live["source"], basis=live["basis"],
                             cites=live["cites"])


def released_cell_codes(review: Review, reviewer: str) -> tuple[str, dict[tuple[str, str], str | None]] | None:
    """The latest release's label and, per released cell, the code ``reviewer`` had given it."""
    release = latest_release(review.paths)
    if release is None:
        return None
    return release.label, {(c["protocol"], c["field"]): c.get("codes", {}).get(reviewer)
                           for c in release.view().cells}
