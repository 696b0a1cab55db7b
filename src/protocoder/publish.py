"""The jobs behind ``render``, ``export --view final``, ``freeze`` and ``status``.

This module decides *what* is shown — the current view of the review (latest release plus
its corrections, live cells for anything added since), agreement tables when there are two
or more reviewers — and :mod:`render` decides how it looks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .background import in_background
from .errors import InvalidInput, Problem
from .escape import parse_inline_ahead, shared_inline_parse
from .lifecycle.consensus import Status
from .lifecycle.history import History, history_problems, load_history, overlay
from .lifecycle.releases import Release, find_release, freeze, release_tables
from .lifecycle.view import View, build_view, final_cells
from .render import FORMATS, render_view, write_outputs
from .storage.workspace import Review, load_review
from .storage.yamlio import atomic_write_bytes

FINAL_COLUMNS = ("protocol", "field", "code", "status", "source", "basis", "cites", "corrected")


@dataclass
class RenderResult:
    """What a render wrote, and what it warned about."""

    written: list[Path]
    out_dir: Path
    description: str
    warnings: list[Problem] = field(default_factory=list)


def agreement_data(review: Review, *, bootstrap: int = 1000, seed: int | None = None) -> dict[str, Any] | None:
    """The agreement report stored in a view, or None with fewer than two reviewers.

    Always computed from the reviewers' independent codes, never from the consensus.
    """
    if len(review.reviewers) < 2:
        return None
    from .coding_agreement import review_agreement

    rubric = review.require_valid()
    report = review_agreement(review, bootstrap=bootstrap, seed=seed)
    return {"report": report.to_dict(), "labels": {f.id: f.label for f in rubric.fields}}


def checked(review: Review) -> tuple[History, list[Problem]]:
    """Load the history; raise InvalidInput on any error in the files or the history."""
    history = load_history(review)
    problems = list(review.problems) + history_problems(review, history)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise InvalidInput(errors)
    return history, [p for p in problems if p.severity != "error"]


def current_view(review: Review, *, bootstrap: int = 1000, seed: int | None = None,
                 history: History | None = None) -> View:
    """The view the tables show now: the latest release plus corrections, live cells otherwise."""
    view = build_view(review, agreement=agreement_data(review, bootstrap=bootstrap, seed=seed))
    return overlay(view, review, history or load_history(review))


def render_workspace(workspace: Path, *, formats: Sequence[str] = FORMATS, out: Path | None = None,
                     standalone: bool = False, release: str | None = None, bootstrap: int = 1000,
                     seed: int | None = None) -> RenderResult:
    """Render a workspace's current tables (or a release's) into ``out``."""
    review = load_review(workspace)
    if release is not None:
        found = find_release(review.paths, release)
        out_dir = out if out is not None else review.paths.output_dir / f"release-{found.path.name}"
        files = release_tables(found, formats=tuple(formats), standalone=standalone)
        written = []
        for name, payload in files.items():
            atomic_write_bytes(out_dir / name, payload)
            written.append(out_dir / name)
        return RenderResult(written, out_dir, f"release {found.label} ({found.created})")
    # Agreement (pandas, bootstrap) needs only the loaded review: on a machine with a second
    # core, a forked child computes it while this process checks, builds and parses the rest.
    with shared_inline_parse(), in_background(lambda: agreement_data(review, bootstrap=bootstrap, seed=seed),
                                              fork=len(review.reviewers) >= 2) as agreement:
        review.require_valid()
        history, warnings = checked(review)
        view = overlay(build_view(review), review, history)
        parse_inline_ahead(cell["basis"] for cell in view.cells)
        view.agreement = agreement.result()
        files = render_view(view, formats=formats, standalone=standalone,
                            template_dirs=[review.paths.templates_dir])
    description = f"{len(view.protocols)} protocols × {len(view.rubric['fields'])} fields"
    if history.latest is not None:
        since = len(history.corrections_since(history.latest))
        description += f", release {history.latest.label} + {since} corrections"
    out_dir = out if out is not None else review.paths.output_dir
    return RenderResult(write_outputs(files, out_dir), out_dir, description, warnings)


def final_rows(review: Review) -> list[dict[str, Any]]:
    """One row per (protocol, field) of the current view (``export --view final``)."""
    # The rows carry no agreement: the view is built without computing it.
    view = overlay(build_view(review), review, load_history(review))
    return [{"protocol": c["protocol"], "field": c["field"], "code": c["code"] or "", "status": c["status"],
             "source": c["source"], "basis": c["basis"], "cites": list(c["cites"]),
             "corrected": "yes" if c.get("corrected") else ""} for c in view.cells]


def freeze_workspace(workspace: Path, label: str, *, by: str, allow_unresolved: bool = False,
                     bootstrap: int = 1000, seed: int | None = None) -> Release:
    """Freeze the current view as release ``label``."""
    review = load_review(workspace)
    review.require_valid()
    history, _ = checked(review)
    view = current_view(review, bootstrap=bootstrap, seed=seed, history=history)
    return freeze(review, view, label, by=by, allow_unresolved=allow_unresolved)


def status_lines(review: Review) -> list[str]:
    """A plain-text summary: progress per reviewer, unresolved and stale cells, releases."""
    rubric = review.require_valid()
    total = len(review.protocols) * len(rubric.fields)
    lines = [f"{len(review.protocols)} protocols × {len(rubric.fields)} fields = {total} cells "
             f"(rubric {rubric.id} {rubric.version})", ""]
    lines.append("Reviewers:")
    for reviewer in review.reviewers:
        coded = sum(1 for cell in review.all_cells() if cell.reviewer == reviewer and cell.is_coded)
        complete = sum(1 for cell in review.all_cells() if cell.reviewer == reviewer and cell.is_complete(rubric))
        lines.append(f"  {reviewer:<20} {coded}/{total} coded"
                     + (f" ({coded - complete} missing what the rubric requires)" if coded != complete else ""))
    if not review.reviewers:
        lines.append("  nobody has coded anything yet")
    cells = final_cells(review)
    counts = {status: sum(1 for c in cells if c.status is status) for status in Status}
    lines += ["", "Final codes: " + ", ".join(f"{n} {status.value}" for status, n in counts.items())]
    unresolved = [c for c in cells if c.status is Status.UNRESOLVED]
    if unresolved:
        lines.append(f"Unresolved ({len(unresolved)}):")
        lines += [f"  {c.key}: " + ", ".join(f"{r} {code}" for r, code in c.codes.items()) for c in unresolved]
    stale = [c for c in cells if c.stale is not None]
    if stale:
        lines.append(f"Stale adjudications ({len(stale)}):")
        lines += [f"  {c.key}: resolved " + ", ".join(f"{r} {code}" for r, code in sorted(c.stale.resolved.items()))
                  + "; now " + (", ".join(f"{r} {code}" for r, code in c.codes.items()) or "no codes")
                  for c in stale]
    history = load_history(review)
    lines.append("")
    if history.latest is None:
        lines.append("No release yet (protocoder freeze --label NAME).")
    else:
        latest = history.latest
        since = history.corrections_since(latest)
        lines.append(f"Latest release: {latest.label}, {latest.created} by {latest.by}; "
                     f"{latest.denominators.get('coded', 0)}/{latest.denominators.get('cells', 0)} cells coded, "
                     f"{latest.denominators.get('unresolved', 0)} unresolved")
        lines.append(f"Corrections since: {len(since)}")
        lines += [f"  {c.at} {c.cell}: {c.old or '-'} -> {c.new} by {c.by}: {c.reason}" for c in since]
    return lines
