"""One reviewer's cell set from outside the app (``protocoder cell set``).

Every value is checked before anything is written and the write goes through the store, as
the coding app's and ``import``'s do; the cell keeps what is not named (its quotes,
``assisted``). After a release a change that would change what the current view shows for a
released cell needs a reason, and its correction is recorded in the same locked step; if the
correction cannot be written, the reviewer's file is put back as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import Rejected, UsageError, control_characters, stored_controls_note
from ..storage.mappings import check_reviewer


@dataclass(frozen=True)
class SetOutcome:
    """What ``cell set`` did: one summary line, and notes (a correction recorded, an unsettled release)."""

    summary: str
    notes: tuple[str, ...] = ()


def set_cell(review: Any, cell_key: str, reviewer: str, *, code: str | None, source: str | None,
             basis: str | None, cites: tuple[str, ...] | None, reason: str | None) -> SetOutcome:
    """Set the named attributes of one reviewer's cell (None: leave it as it is), checked, under the lock.

    ``code=''`` makes the cell a draft. Raises :class:`Rejected` (nothing written) for an unknown
    protocol or field, a reviewer id that is not safe, a code the field does not allow, an
    unknown citation key, a code whose required evidence is missing, and a change to a released
    cell that needs a reason when none is given.
    """
    from ..lifecycle.cellref import CellRef
    from ..model import Cell
    from ..storage.store import Store, now_iso

    rubric = review.require_valid()
    ref = CellRef.parse(cell_key, review)
    check_reviewer(reviewer)
    key = str(ref)
    allowed = rubric.field(ref.field).codes
    new_code = None if code is None else (code.strip() or None)
    if new_code is not None and new_code not in allowed:
        raise Rejected(f"{key}: code {new_code!r} is not allowed for field {ref.field!r} "
                       f"(allowed: {', '.join(allowed)})")
    for cite in cites or ():
        if cite not in review.bibliography:
            raise Rejected(f"{key}: citation key {cite!r} is not in {review.paths.show(review.paths.bibliography)}; "
                           "add its entry with protocoder bib add FILE.bib")
    values: dict[str, Any] = {}
    if code is not None:
        values["code"] = new_code
    if source is not None:
        values["source"] = source
    if basis is not None:
        values["basis"] = basis
    if cites is not None:
        values["cites"] = cites
    store = Store(review.paths)
    with store.locked():
        # Decided from the file as it is under the lock (the app or an import may have written since).
        sheet, fingerprint = store.read_sheet(ref.protocol, reviewer, rubric)
        old = sheet.cells.get(ref.field)
        base = old or Cell(ref.protocol, ref.field, reviewer, None)  # a cell not on file: an empty draft
        cell = replace(base, **values)
        if _record(base) == _record(cell):
            return SetOutcome(f"{key} ({reviewer}) holds this already; nothing written")
        missing = [name for name in cell.missing(rubric) if name != "code"]
        if missing:
            options = " and ".join(f"--{name if name != 'cites' else 'cite'}" for name in missing)
            raise Rejected(f"{key}: code {cell.code!r} requires {', '.join(missing)}; give {options}")
        # Stamped as the app stamps a save: a coded cell under the current rubric, now; a draft unstamped.
        cell = replace(cell, rubric_version=rubric.version if cell.code else "",
                       coded_at=now_iso() if cell.code else "")
        released = _released_change(review, key, cell, reason)
        original = sheet.path.read_bytes() if fingerprint is not None else None
        store.save_cell(cell, rubric, expected=fingerprint)
        notes: list[str] = []
        if controls := control_characters(f"{source or ''}{basis or ''}"):
            notes.append(stored_controls_note(controls, f"{key} ({reviewer})"))
        if released is not None:
            notes.extend(_after_release(store, review, key, cell, reason, released, original))
    summary = f"Set {key} ({reviewer}): " + _changes(old, cell)
    return SetOutcome(summary, tuple(notes))


def _record(cell: Any) -> tuple[Any, ...]:
    # What cell set can change (quotes and assisted are kept as they are).
    return (cell.code, cell.source, cell.basis, tuple(cell.cites))


def _changes(old: Any, new: Any) -> str:
    """``code NR → P, basis`` — what changed, for the summary line."""
    parts = []
    old_code = old.code if old is not None else None
    if old_code != new.code:
        parts.append(f"code {old_code or '(draft)'} → {new.code or '(draft)'}")
    elif old is None:
        parts.append("a new draft")
    for name in ("source", "basis", "cites"):
        if (getattr(old, name) if old is not None else ("" if name != "cites" else ())) != getattr(new, name):
            parts.append(name)
    return ", ".join(parts)


@dataclass(frozen=True)
class _Released:
    """A released cell the change touches: its release, and whether it records a correction."""

    release: str
    records: bool


def _released_change(review: Any, key: str, cell: Any, reason: str | None) -> _Released | None:
    """None when ``key`` is not in the latest release. Else whether saving ``cell`` changes what
    the current view shows (then a reason is required, as the app asks for one)."""
    from ..lifecycle.changes import current_released_cells, preview_change
    from ..lifecycle.history import checked_history
    from ..lifecycle.releases import latest_release

    released = current_released_cells(review.paths)
    release = latest_release(review.paths)
    if release is not None and not released:
        # A release whose view or ledger cannot be read: name what is wrong rather than treat
        # every cell as unreleased (validate and status say the same).
        checked_history(review)
    current = released.get(key)
    if current is None:
        if reason is not None:
            raise UsageError(f"--reason is for a change to a released cell; {key} is not in a release")
        return None
    assert release is not None
    label = release.label
    preview = preview_change(review.paths, review.rubric, cell, current)
    if preview is None:
        if reason is not None:
            raise Rejected(f"{key} is in release {label}, but this change leaves the current view as it is: no "
                           "correction is recorded, so --reason has nothing to go with; drop it")
        return _Released(label, False)
    if reason is None or not reason.strip():
        was = current.get("code") or "-"
        what = (f"its code from {was} to {preview.code}" if preview.code != current.get("code")
                else "its source, basis or citations")
        options = (f"--code {preview.code} --source ... --basis ..." if preview.code != current.get("code")
                   else "--source ... --basis ...")
        raise Rejected(f"{key} is in release {label}: this change would change {what} in the current view; "
                       "nothing was written. Give --reason \"...\" to save it with its correction, or record "
                       f"only the correction with protocoder correct --cell {key} {options} --reason \"...\"")
    checked_history(review)  # a damaged history is named before anything is written
    return _Released(label, True)


def _after_release(store: Any, review: Any, key: str, cell: Any, reason: str | None, released: _Released,
                   original: bytes | None) -> list[str]:
    """Record the correction a released change needs (the cell is saved); on failure, put the file back."""
    from ..errors import ProtocoderError
    from ..lifecycle.amend import record_change
    from ..lifecycle.changes import live_cell

    if not released.records:
        live = live_cell(review.paths, review.rubric, cell)
        if live.code is None and live.codes:
            return [f"{key} is in release {released.release}: it is {live.status.value} now, so the tables keep the "
                    "released code until it is settled (protocoder adjudicate decides a disagreement; the "
                    "correction is recorded then)"]
        return []
    assert reason is not None
    try:
        correction = record_change(review.paths, key, reason=reason, by=cell.reviewer)
    except (ProtocoderError, OSError):
        _put_back(store, review, cell, original)
        raise
    if correction is None:
        return [f"{key}: the current view already shows this; no correction was needed"]
    return [f"{key}: correction recorded in release {correction.release} ({correction.old or '-'} → "
            f"{correction.new}) with your reason"]


def _put_back(store: Any, review: Any, cell: Any, original: bytes | None) -> None:
    """Undo the cell's save after its correction could not be recorded: the file's bytes as they were."""
    path = review.paths.sheet_file(cell.protocol, cell.reviewer)
    if original is None:
        store.delete_cell(cell.protocol, cell.reviewer, cell.field)
        return
    transaction = store.transaction()
    transaction.write(path, original)
    transaction.commit()
