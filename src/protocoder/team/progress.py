"""Who codes which protocols, how far each reviewer is, and which cells are ready for adjudication."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .members import Team

if TYPE_CHECKING:
    from ..storage.workspace import Review


def assignments(team: Team, protocol_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The protocols each reviewer codes, by reviewer.

    A reviewer with ``protocols`` codes those. The others code every protocol, unless the
    team sets ``reviewers_per_cell``: then each protocol gets that many reviewers in all,
    the missing ones taken in turn from the reviewers without a list (round robin over the
    protocols in order, so the work is shared evenly and the same file gives the same plan).
    """
    explicit = [m for m in team.reviewers if m.protocols]
    pool = [m.name for m in team.reviewers if not m.protocols]
    plan: dict[str, list[str]] = {m.name: [] for m in team.reviewers}
    turn = 0
    for protocol_id in protocol_ids:
        for member in explicit:
            if protocol_id in member.protocols:
                plan[member.name].append(protocol_id)
        if team.reviewers_per_cell is None:
            chosen = pool
        else:
            have = sum(protocol_id in m.protocols for m in explicit)
            need = min(max(team.reviewers_per_cell - have, 0), len(pool))
            chosen = [pool[(turn + k) % len(pool)] for k in range(need)]
            turn += need
        for name in chosen:
            plan[name].append(protocol_id)
    return {name: tuple(protocols) for name, protocols in plan.items()}


@dataclass(frozen=True)
class Progress:
    """One reviewer's cells: assigned, started (anything typed or a code), finished (complete)."""

    reviewer: str
    assigned: int
    started: int
    finished: int


def progress(review: Review, team: Team) -> list[Progress]:
    """Each reviewer's progress over the cells assigned to them, in team order."""
    rubric = review.require_valid()
    plan = assignments(team, [p.id for p in review.protocols])
    result = []
    for reviewer, protocols in plan.items():
        started = finished = 0
        for protocol_id in protocols:
            sheet = review.sheet(protocol_id, reviewer)
            if sheet is None:
                continue
            for field_id in rubric.field_ids:
                cell = sheet.cells.get(field_id)
                if cell is None:
                    continue
                started += 1
                finished += cell.is_complete(rubric)
        result.append(Progress(reviewer, len(protocols) * len(rubric.fields), started, finished))
    return result


def closed_cells(review: Review, team: Team) -> set[tuple[str, str]]:
    """(protocol, field) cells ready for adjudication: every assigned reviewer has finished
    the cell, or an adjudicator has already decided it."""
    rubric = review.require_valid()
    plan = assignments(team, [p.id for p in review.protocols])
    closed: set[tuple[str, str]] = set(review.adjudications)
    for protocol in review.protocols:
        assigned = [name for name, protocols in plan.items() if protocol.id in protocols]
        if not assigned:
            continue
        for field_id in rubric.field_ids:
            cells = review.cells(protocol.id, field_id)
            if all(name in cells and cells[name].is_complete(rubric) for name in assigned):
                closed.add((protocol.id, field_id))
    return closed


def status_lines(review: Review, team: Team) -> list[str]:
    """The lines `status` prints for a team: one per reviewer, and the cells ready for adjudication."""
    rows = progress(review, team)
    width = max((len(row.reviewer) for row in rows), default=0)
    lines = ["Team (team.yaml): assigned / started / finished cells per reviewer"]
    for row in rows:
        lines.append(f"  {row.reviewer:<{width}}  {row.assigned:>4} assigned  {row.started:>4} started  "
                     f"{row.finished:>4} finished")
    if not rows:
        lines.append("  no reviewers yet: add one with `protocoder team add NAME --role reviewer`")
    rubric = review.require_valid()
    total = len(review.protocols) * len(rubric.fields)
    lines.append(f"  {len(closed_cells(review, team))} of {total} cells ready for adjudication")
    return lines
