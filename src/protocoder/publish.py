"""The jobs behind ``render``, ``export --view final``, ``freeze`` and ``status``.

This module decides *what* is shown — the current view of the review (latest release plus
its corrections, live cells for anything added since), agreement tables when there are two
or more reviewers — and :mod:`render` decides how it looks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from .background import in_background
from .errors import InvalidInput, Problem, Rejected
from .lifecycle import freeze
from .lifecycle.changes import history_problems
from .lifecycle.consensus import FinalCell, Status
from .lifecycle.history import History, baseline_of, ledger_anchor, load_history, overlay
from .lifecycle.journal import finish_pending
from .lifecycle.releases import Release, content_hash, find_release, release_tables
from .lifecycle.view import View, build_view, final_cells
from .render import FORMATS
from .storage.files import fingerprint
from .storage.outputs import check_out_path, write_output_folder
from .storage.paths import Paths, open_workspace
from .storage.store import Store
from .storage.workspace import Review, load_review

FINAL_COLUMNS = ("protocol", "field", "code", "status", "source", "basis", "cites", "corrected", "corrects",
                 "decided_by", "reason", "evidence", "comments")
"""``export --view final``: a corrected cell's status is ``corrected`` and ``corrects`` names the release it
corrects; ``decided_by`` and ``reason`` say who decided an adjudicated or corrected cell and why, ``evidence``
whose evidence an adjudication keeps, ``comments`` the cell's discussion (``by: text``, ``|``-separated)."""


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


def live_view(review: Review, *, agreement: dict[str, Any] | None = None,
              cells: Sequence[FinalCell] | None = None) -> View:
    """The view of the live workspace with the evidence behind each final code: the lifecycle's
    view (:func:`build_view`) and, on each cell, the quotes of the reviewer whose record it shows.

    Joined here because the evidence package sits above the lifecycle's (the view never imports it).
    """
    from .evidence.quotes import with_quotes

    cells = list(cells) if cells is not None else final_cells(review)
    view = build_view(review, agreement=agreement, cells=cells)
    view.cells = with_quotes(view.cells, cells, review)
    return view


def checked(review: Review, *, allow_lost_corrections: bool = False) -> tuple[History, list[Problem]]:
    """Load the history; raise InvalidInput on any error in the files or the history (a ledger
    that lost corrections too, unless ``allow_lost_corrections``)."""
    history = load_history(review, allow_lost_corrections=allow_lost_corrections)
    problems = list(review.problems) + history_problems(review, history)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise InvalidInput(errors)
    return history, [p for p in problems if p.severity != "error"]


def current_view(review: Review, *, bootstrap: int = 1000, seed: int | None = None,
                 history: History | None = None) -> View:
    """The view the tables show now: the latest release plus corrections, live cells otherwise."""
    view = live_view(review, agreement=agreement_data(review, bootstrap=bootstrap, seed=seed))
    return overlay(view, review, history or load_history(review))


def _out_dir(review: Review, out: Path | None, default: Path) -> Path:
    """Where a render writes: ``out`` (never into protocols/, releases/, rubric/, templates/,
    .protocoder/) or ``default``, refused when output/ is a link that leaves the workspace."""
    paths = review.paths
    if out is not None:
        check_out_path(paths.root, out)
        return out
    if paths.leaves_workspace(paths.output_dir):
        raise InvalidInput([paths.outside_problem(paths.output_dir, "the output folder")])
    paths.check_own_folder(paths.output_dir)
    return default


def render_workspace(workspace: Path, *, formats: Sequence[str] = FORMATS, out: Path | None = None,
                     standalone: bool = False, release: str | None = None, bootstrap: int = 1000,
                     seed: int | None = None, engine: str = "pdflatex", matrix_layout: str = "auto",
                     force: bool = False, quotes: bool = False, comments: bool = False,
                     allow_lost_corrections: bool = False) -> RenderResult:
    """Render a workspace's current tables (or a release's) into ``out``.

    ``formats`` may hold ``md``, ``latex`` and ``html``; ``engine`` and ``matrix_layout`` are
    passed to :func:`render.render_view` (a release's tables are copied as released). Only
    files protocoder wrote are overwritten or removed; ``force`` overwrites others in the way
    (see :mod:`protocoder.storage.outputs`). ``quotes`` prints each ledger cell's quoted
    passages (after checking every quote, as ``validate`` does); ``comments`` each cell's discussion.
    """
    # Imported here: status and export use this module but never render (Jinja2, markdown-it).
    from .render import parse_inline_ahead, render_view, shared_inline_parse, write_outputs

    review = load_review(workspace)
    if release is not None:
        found = find_release(review.paths, release)
        out_dir = _out_dir(review, out, review.paths.output_dir / f"release-{found.path.name}")
        files = release_tables(found, formats=tuple(formats), standalone=standalone)
        done = write_output_folder(out_dir, files, force=force, show=review.paths.show)
        return RenderResult(done.written, out_dir, f"release {found.label} ({found.created})", done.warnings)
    out_dir = _out_dir(review, out, review.paths.output_dir)
    # Agreement (pandas, bootstrap) needs only the loaded review: on a machine with a second
    # core, a forked child computes it while this process checks, builds and parses the rest.
    with shared_inline_parse(), in_background(lambda: agreement_data(review, bootstrap=bootstrap, seed=seed),
                                              fork=len(review.reviewers) >= 2) as agreement:
        review.require_valid()
        history, warnings = checked(review, allow_lost_corrections=allow_lost_corrections)
        view = overlay(live_view(review), review, history)
        parse_inline_ahead(cell["basis"] for cell in view.cells)
        view.agreement = agreement.result()
        if quotes:
            warnings += _checked_quotes(review)
        if comments:
            with_comments(view, review)
        files = render_view(view, formats=formats, standalone=standalone,
                            template_dirs=[review.paths.templates_dir], engine=engine, matrix_layout=matrix_layout,
                            quotes=quotes)
    description = f"{len(view.protocols)} protocols × {len(view.rubric['fields'])} fields"
    if history.latest is not None:
        since = len(history.corrections_since(history.latest))
        description += f", release {history.latest.label} + {since} corrections"
    # The manifest records the ledger head the tables show, so that validate notices a ledger
    # rolled back behind the committed output/ (see lifecycle.history).
    done = write_outputs(files, out_dir, force=force, show=review.paths.show,
                         meta={"ledger": ledger_anchor(history.corrections)})
    return RenderResult(done.written, out_dir, description, warnings + done.warnings)


def _checked_quotes(review: Review) -> list[Problem]:
    """Refuse to print quotes that are not in their snapshots; return the warnings and notes."""
    from .evidence.quotes import check_evidence

    evidence = check_evidence(review)
    errors = [p for p in evidence.problems if p.severity == "error"]
    if errors:
        raise InvalidInput(errors)
    return [p for p in evidence.problems if p.severity != "error"] + evidence.notes


def final_rows(review: Review, *, allow_lost_corrections: bool = False) -> list[dict[str, Any]]:
    """One row per (protocol, field) of the current view (``export --view final``)."""
    review.require_valid()
    history, _ = checked(review, allow_lost_corrections=allow_lost_corrections)
    # The rows carry no agreement: the view is built without computing it.
    view = with_comments(overlay(live_view(review), review, history), review)
    corrections = last_corrections(history)
    rows = []
    for c in view.cells:
        key = f"{c['protocol']}/{c['field']}"
        row = {"protocol": c["protocol"], "field": c["field"], "code": c["code"] or "", "status": shown_status(c),
               "source": c["source"], "basis": c["basis"], "cites": list(c["cites"]),
               "corrected": "yes" if c.get("corrected") else "", "corrects": "", "decided_by": "", "reason": "",
               "evidence": "", "comments": " | ".join(f"{m['by']}: {m['text']}" for m in c.get("comments", ()))}
        if c.get("corrected") and key in corrections:
            correction = corrections[key]
            row |= {"corrects": correction.release, "decided_by": correction.by, "reason": correction.reason}
        elif c["status"] == "adjudicated" and c.get("adjudication"):
            decision = c["adjudication"]
            row |= {"decided_by": decision["by"], "reason": decision["reason"],
                    "evidence": decision.get("evidence", "")}
        rows.append(row)
    return rows


def with_comments(view: View, review: Review) -> View:
    """The view's cells with their discussion (``comments``: by, at, text), where there is any."""
    from .lifecycle.comments import cell_comments

    by_cell: dict[str, list[dict[str, str]]] = {}
    for protocol in view.protocols:
        for c in cell_comments(review.paths, protocol["id"]):
            by_cell.setdefault(f"{c.protocol}/{c.field}", []).append({"by": c.by, "at": c.at, "text": c.text})
    for cell in view.cells:
        found = by_cell.get(f"{cell['protocol']}/{cell['field']}")
        if found:
            cell["comments"] = found
    return view


def shown_status(cell: dict[str, Any]) -> str:
    """A current-view cell's status as tables and exports name it: ``corrected`` for a released cell a
    correction changed (the view records it as a decided cell), else the consensus status."""
    return "corrected" if cell.get("corrected") else cell["status"]


def last_corrections(history: History) -> dict[str, Any]:
    """Per cell, the latest correction of its code or evidence (withdrawals and merges left out)."""
    return {c.cell: c for c in history.corrections if not c.action}


def _state(paths: Any) -> str:
    """A hash of everything a freeze reads: the review's files, the rubrics, the ledger and the releases."""
    digest = hashlib.sha256(content_hash(paths, None).encode())
    extra = sorted(paths.rubric_dir.glob("*.yaml")) if paths.rubric_dir.is_dir() else []
    extra.append(paths.corrections)
    if paths.releases_dir.is_dir():
        extra += sorted(paths.releases_dir.glob("*/release.yaml"))
    for path in extra:
        digest.update(f"{path}\0{fingerprint(path)}\n".encode())
    return digest.hexdigest()


def freeze_workspace(workspace: Path, label: str, *, by: str, allow_unresolved: bool = False,
                     allow_incomplete: bool = False, bootstrap: int = 1000, seed: int | None = None,
                     allow_lost_corrections: bool = False) -> Release:
    """Freeze the current view as release ``label``.

    The release's content hash must be that of the state its tables show, but building the
    tables (agreement with its bootstrap) takes long enough that holding the lock meanwhile
    would stall every reviewer's saves. So the state is fingerprinted before reading and
    checked again under the lock, where the release is written: if anything changed in
    between, the freeze starts over.
    """
    paths = open_workspace(workspace)
    with Store(paths).locked():
        finish_pending(paths)
    for _ in range(3):
        before = _state(paths)
        review = load_review(workspace)
        review.require_valid()
        history, _ = checked(review, allow_lost_corrections=allow_lost_corrections)
        cells = final_cells(review)
        view = overlay(live_view(review, agreement=agreement_data(review, bootstrap=bootstrap, seed=seed),
                                  cells=cells), review, history)
        with Store(paths).locked():
            if _state(paths) != before:
                continue
            return freeze(review, view, label, by=by, tables=partial(release_files, paths=review.paths),
                          allow_unresolved=allow_unresolved, allow_incomplete=allow_incomplete,
                          baseline=baseline_of(cells))
    raise Rejected("the workspace kept changing while the release was being built (another process is writing "
                   "to it); run protocoder freeze again when it has finished")


def release_files(view: View, paths: Paths) -> dict[str, str]:
    """The rendered files a release keeps: ``tables/`` (Markdown and LaTeX, as ``render`` writes
    them) and ``standalone/`` (each LaTeX table as a document that compiles alone)."""
    # Imported here: validate and status read releases but never render (Jinja2, markdown-it).
    from .render import render_view

    dirs = [paths.templates_dir]
    rendered = {f"tables/{name}": text for name, text in render_view(view, template_dirs=dirs).items()}
    rendered |= {f"standalone/{name}": text for name, text in
                 render_view(view, formats=("latex",), standalone=True, template_dirs=dirs).items()}
    return rendered


def status_report(review: Review) -> tuple[list[str], list[Problem]]:
    """A plain-text summary (progress per reviewer, cells that need someone, releases) and the
    history's problems (errors make ``status`` exit non-zero)."""
    rubric = review.require_valid()
    total = len(review.protocols) * len(rubric.fields)
    lines = [f"{len(review.protocols)} protocols × {len(rubric.fields)} fields = {total} cells "
             f"(rubric {rubric.id} {rubric.version})", ""]
    lines.append("Reviewers:")
    for reviewer in review.reviewers:
        mine = [cell for cell in review.all_cells() if cell.reviewer == reviewer and cell.is_coded]
        incomplete = sum(1 for cell in mine if not cell.is_complete(rubric))
        lines.append(f"  {reviewer:<20} {len(mine)}/{total} coded"
                     + (f", {incomplete} incomplete (missing what the rubric requires)" if incomplete else ""))
    if not review.reviewers:
        lines.append("  nobody has coded anything yet")
    cells = final_cells(review)
    history = load_history(review)
    problems = [p for p in history_problems(review, history) if p.severity == "error"]
    lines += ["", "Final codes: " + ", ".join(f"{n} {status}" for status, n in final_counts(review, history,
                                                                                        cells, problems).items())]
    incomplete_cells = [c for c in cells if c.status is Status.INCOMPLETE]
    if incomplete_cells:
        lines.append(f"Incomplete ({len(incomplete_cells)}):")
        lines += [f"  {c.key}: " + "; ".join(f"{r} lacks {' and '.join(parts)}" for r, parts in c.missing.items())
                  for c in incomplete_cells]
    unresolved = [c for c in cells if c.status is Status.UNRESOLVED]
    if unresolved:
        lines.append(f"Unresolved ({len(unresolved)}):")
        lines += [f"  {c.key}: " + ", ".join(f"{r} {code}" for r, code in c.codes.items()) for c in unresolved]
    stale = [c for c in cells if c.stale is not None]
    if stale:
        lines.append(f"Stale adjudications ({len(stale)}; decide again with protocoder adjudicate --cell):")
        lines += [f"  {c.key}: resolved " + ", ".join(f"{r} {code}" for r, code in sorted(c.stale.resolved.items()))
                  + "; now " + (", ".join(f"{r} {code}" for r, code in c.codes.items()) or "no codes")
                  for c in stale]
    superseded = [c for c in cells if c.superseded is not None]
    if superseded:
        lines.append(f"Superseded adjudications ({len(superseded)}; kept in consensus.yaml, nothing to do):")
        lines += [f"  {c.key}: resolved " + ", ".join(f"{r} {code}" for r, code in
                                                      sorted(c.superseded.resolved.items()))
                  + f"; now {c.status.value}" for c in superseded]
    lines.append("")
    if history.latest is None:
        lines.append("No release yet (protocoder freeze --label NAME).")
    else:
        latest = history.latest
        lines.append(f"Latest release: {latest.label}, {latest.created} by {latest.by}; "
                     f"{latest.denominators.get('coded', 0)}/{latest.denominators.get('cells', 0)} cells coded, "
                     f"{latest.denominators.get('unresolved', 0)} unresolved")
        if problems:
            lines.append(f"History: {len(problems)} problem{'s' if len(problems) != 1 else ''} (listed below; "
                         "protocoder validate reports the same)")
        else:
            since = history.corrections_since(latest)
            lines.append(f"Corrections since: {len(since)}")
            lines += [f"  {c.at} {c.cell}: " + (f"withdrawn: {c.reason}" if c.action else
                                                 f"{c.old or '-'} -> {c.new} by {c.by}: {c.reason}") for c in since]
    from .evidence.quotes import status_lines as evidence_lines

    lines += evidence_lines(review)
    if not history.latest and problems:
        lines.append(f"History: {len(problems)} problem{'s' if len(problems) != 1 else ''} (listed below)")
    return lines, problems


def final_counts(review: Review, history: History, cells: Sequence[FinalCell], problems: Sequence[Problem]
                 ) -> dict[str, int]:
    """How many cells of the current view have each status, as ``export --view final`` labels them
    (``corrected`` after a release); from the live consensus when there is no release or the
    history has errors (``status`` lists those)."""
    order = [str(status) for status in Status]
    if history.usable_latest is None or problems:
        statuses = [str(c.status) for c in cells]
    else:
        statuses = [shown_status(c) for c in overlay(build_view(review, cells=cells), review, history).cells]
        order.insert(order.index(str(Status.ADJUDICATED)) + 1, "corrected")
    return {status: statuses.count(status) for status in order
            if statuses.count(status) or status != "corrected"}
