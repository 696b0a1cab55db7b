"""Acknowledging cells coded under an older definition of a field.

When a rubric field is redefined (its ``revised`` version raised), every cell coded under an
older version is reported until someone has looked at it again. After checking such cells,
``protocoder recheck --field F`` stamps the current rubric version on them through the
store (one reviewer's file at a time, read and written under the workspace lock); their
codes and evidence are left as they are. Re-saving a cell in the coding app stamps it too.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import Rejected
from ..model import Cell, Rubric, version_key
from ..storage.paths import Paths
from ..storage.store import Store
from ..storage.workspace import load_review


def coded_under_older_definition(cell: Cell, rubric: Rubric) -> bool:
    """True when ``cell`` was coded before its field was last redefined (or does not say when)."""
    if cell.code is None:
        return False
    if not cell.rubric_version:
        return True
    try:
        return version_key(cell.rubric_version) < version_key(rubric.field(cell.field).revised)
    except (ValueError, KeyError):
        return False  # an unreadable version is validate's to report, not ours to overwrite


def recheck(paths: Paths, field_id: str, *, reviewer: str | None = None,
            protocol: str | None = None) -> tuple[int, str]:
    """Stamp the current rubric version on the matching cells of ``field_id``; return (cells, version)."""
    review = load_review(paths.root)
    rubric = review.require_valid()
    if field_id not in rubric.field_ids:
        raise Rejected(f"the rubric has no field {field_id!r} (fields: {', '.join(rubric.field_ids)})")
    if protocol is not None and protocol not in {p.id for p in review.protocols}:
        raise Rejected(f"no protocol {protocol!r} in this workspace")
    if reviewer is not None and reviewer not in review.reviewers:
        raise Rejected(f"no reviewer {reviewer!r} in this workspace (reviewers: {', '.join(review.reviewers)})")
    files = sorted({(sheet.protocol, sheet.reviewer) for sheet in review.sheets
                    if (protocol is None or sheet.protocol == protocol)
                    and (reviewer is None or sheet.reviewer == reviewer)})
    store = Store(paths)
    count = 0
    with store.locked():
        for protocol_id, reviewer_id in files:
            # Read again under the lock: what is stamped is what is on disk now.
            sheet, fingerprint = store.read_sheet(protocol_id, reviewer_id, rubric)
            cell = sheet.cells.get(field_id)
            if cell is None or not coded_under_older_definition(cell, rubric):
                continue
            store.save_cell(replace(cell, rubric_version=rubric.version), rubric, expected=fingerprint)
            count += 1
    return count, rubric.version
