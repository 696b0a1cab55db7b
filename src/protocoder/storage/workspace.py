"""Load a whole review workspace into a :class:`Review`, cross-checking its files.

:func:`load_review` runs three steps. *Open* (:func:`open_review`): find the workspace
(:class:`~protocoder.storage.paths.Paths` says where everything is), complete a change a
killed process left, report links that lead out of it. *Scan*
(:func:`~.scan.scan_workspace`): list its folders once. *Parse* (:func:`parse_review`):
read and parse its YAML files (the bulk of a large workspace on a second core:
:mod:`protocoder.background`), turn each into model objects with its parser in
:mod:`.formats`, and check what needs several files: the protocol order, citation keys,
protocol names a reader could not tell apart (:mod:`.names` holds the checks on names).

It never raises for bad content: the :class:`Review` holds everything that could be read
and every problem found, so ``validate`` can report them all at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, ProtocoderError
from ..model import Adjudication, Cell, Protocol, Rubric, Sheet, is_slug
from .bibliography import Bibliography, load_bibliography
from .files import read_text
from .findings import Findings
from .formats import Settings, parse_consensus, parse_protocol, parse_rubric, parse_settings, parse_sheet
from .names import check_display_names, outside_links, protocol_folder_problem, reviewer_file_problem
from .paths import CODES_DIR, CONSENSUS_FILE, PROTOCOL_FILE, SETTINGS_FILE, Paths, open_workspace
from .scan import Scan, review_files, scan_workspace
from .yamlio import parse_yaml


@dataclass
class Review:
    """Everything loaded from one workspace, with the problems found on the way."""

    paths: Paths
    settings: Settings
    rubric: Rubric | None
    protocols: tuple[Protocol, ...]
    sheets: tuple[Sheet, ...]
    bibliography: Bibliography
    problems: tuple[Problem, ...] = ()
    adjudications: dict[tuple[str, str], list[Adjudication]] = field(default_factory=dict)

    @property
    def errors(self) -> list[Problem]:
        """Problems that make the workspace unusable for rendering."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """Problems worth fixing that do not block rendering."""
        return [p for p in self.problems if p.severity != "error"]

    def require_valid(self) -> Rubric:
        """Raise :class:`InvalidInput` with every error; return the rubric otherwise."""
        if self.errors or self.rubric is None:
            raise InvalidInput(self.errors or [Problem(self.paths.show(self.paths.rubric_dir), 0, 0,
                                                       "no usable rubric")])
        return self.rubric

    @cached_property
    def reviewers(self) -> tuple[str, ...]:
        """Every reviewer with a file in the workspace, sorted."""
        return tuple(sorted({sheet.reviewer for sheet in self.sheets}))

    @cached_property
    def _cells(self) -> dict[tuple[str, str], dict[str, Cell]]:
        index: dict[tuple[str, str], dict[str, Cell]] = defaultdict(dict)
        for sheet in self.sheets:
            for cell in sheet.cells.values():
                index[(cell.protocol, cell.field)][cell.reviewer] = cell
        return index

    def cells(self, protocol_id: str, field_id: str) -> dict[str, Cell]:
        """Each reviewer's cell (coded or draft) for one (protocol, field)."""
        return self._cells.get((protocol_id, field_id), {})

    @cached_property
    def _sheets(self) -> dict[tuple[str, str], Sheet]:
        return {(s.protocol, s.reviewer): s for s in self.sheets}

    def sheet(self, protocol_id: str, reviewer: str) -> Sheet | None:
        """One reviewer's sheet for one protocol, if it exists."""
        return self._sheets.get((protocol_id, reviewer))

    def protocol(self, protocol_id: str) -> Protocol:
        """The protocol with this id (KeyError if none)."""
        for protocol in self.protocols:
            if protocol.id == protocol_id:
                return protocol
        raise KeyError(protocol_id)

    def all_cells(self) -> Iterable[Cell]:
        """Every reviewer cell in protocol order, then field order, then reviewer."""
        field_ids = self.rubric.field_ids if self.rubric else ()
        for protocol in self.protocols:
            for field_id in field_ids:
                cells = self.cells(protocol.id, field_id)
                for reviewer in sorted(cells):
                    yield cells[reviewer]


FORK_MIN_FILES = 256
"""Fewer files are parsed in the process: a forked child would cost more than it saves."""


def _parse(item: tuple[str, str]) -> tuple[Any, list[Problem]]:
    text, display = item
    try:
        return parse_yaml(text, display), []
    except InvalidInput as exc:
        return None, list(exc.problems)


class _Reader:
    """Reads and parses the workspace's YAML files; on failure, their problems instead of data.

    :meth:`preload` parses the bulk of a large workspace up front, half of it on a second
    core where there is one (see :mod:`protocoder.background`); :meth:`load` hands out
    each result once, and reads anything not preloaded itself.
    """

    def __init__(self, paths: Paths, scan: Scan) -> None:
        self.paths = paths
        self.scan = scan
        self._ready: dict[Path, tuple[Any, str, str, list[Problem]]] = {}
        self._shown: dict[Path, str] = {}

    def preload(self, files: Iterable[Path]) -> None:
        texts = []
        for path in files:
            if self.scan.is_symlink(path):
                continue  # read, if at all, once parse_review has checked where it leads
            if not self.scan.exists(path):
                continue  # a protocol without consensus.yaml, most often
            display = self._shown[path] = self.paths.show(path)
            try:
                texts.append((path, read_text(path, display), display))
            except InvalidInput:
                continue  # load() reads it again and reports the problem in its place
        items = [(text, display) for _, text, display in texts]
        if len(items) >= FORK_MIN_FILES:
            from ..background import map_in_halves  # pickle, signal: not worth loading for a small review

            parsed = map_in_halves(_parse, items, min_items=FORK_MIN_FILES)
        else:
            parsed = [_parse(item) for item in items]
        for (path, text, display), (data, problems) in zip(texts, parsed, strict=True):
            self._ready[path] = (data, text, display, problems)

    def show(self, path: Path) -> str:
        """``paths.show(path)``, worked out once for each file the scan listed."""
        shown = self._shown.get(path)
        return shown if shown is not None else self.paths.show(path)

    def load(self, path: Path) -> tuple[Any, Findings | None, list[Problem]]:
        ready = self._ready.pop(path, None)
        if ready is None:
            display = self.paths.show(path)
            try:
                text = read_text(path, display)
            except InvalidInput as exc:
                return None, None, list(exc.problems)
            data, problems = _parse((text, display))
        else:
            data, text, display, problems = ready
        if problems:
            return None, None, problems
        return data, Findings(display, text), []


def load_review(root: Path, *, reviewer: str | None = None) -> Review:
    """Load a whole workspace, collecting every problem.

    With ``reviewer``, only that reviewer's sheets are read: the coding app uses this so
    that a reviewer never sees another's codes. Three steps: :func:`open_review` (where the
    workspace is, and what must be settled before reading it), :func:`~.scan.scan_workspace`
    (its folders, listed once) and :func:`parse_review` (its files → model objects, cross-checked).
    """
    paths, problems = open_review(root)
    scan = scan_workspace(paths, reviewer)
    if scan.debris:  # a killed writer's temporaries: removed by the next command, whatever it is
        from .commit import WRITE_LOCK
        from .files import remove_debris

        remove_debris(paths.state_dir / WRITE_LOCK, scan.debris)
    return parse_review(paths, scan, problems, reviewer=reviewer)


def open_review(root: Path) -> tuple[Paths, list[Problem]]:
    """Open the workspace that holds ``root``: complete a multi-file change a killed process had
    committed (so every reader sees all of it or none), and report the links among the
    workspace's own files that lead outside it (never read through)."""
    paths = open_workspace(root)
    return paths, _finish_interrupted_change(paths) + outside_links(paths)


def parse_review(paths: Paths, scan: Scan, problems: Iterable[Problem] = (), *,
                 reviewer: str | None = None) -> Review:
    """Read the scanned workspace's files (the bulk of them on a second core), parse each into
    model objects with its parser in :mod:`.formats`, and check what needs several files.

    ``problems`` are those found before (by :func:`open_review`); the review holds them too.
    """
    problems = list(problems)
    reader = _Reader(paths, scan)
    reader.preload(scan.files)
    findings: list[Findings] = []

    settings = Settings()
    if paths.settings.is_symlink() and paths.leaves_workspace(paths.settings):
        pass  # reported by open_review; never read
    elif paths.settings.exists():
        data, found, errs = reader.load(paths.settings)
        problems += errs
        if found is not None:
            settings = parse_settings(data, found)
            findings.append(found)

    rubric = _load_rubric(reader, settings, problems, findings)
    if paths.leaves_workspace(paths.bibliography):
        bibliography = Bibliography({})  # reported by open_review; never read
    else:
        bibliography, bib_problems = load_bibliography(paths.bibliography, paths.show(paths.bibliography),
                                                       state_dir=paths.state_dir)
        problems += bib_problems

    protocols: dict[str, Protocol] = {}
    protocol_findings: dict[str, Findings] = {}
    sheets: list[Sheet] = []
    adjudications: dict[tuple[str, str], list[Adjudication]] = {}
    unreadable: set[str] = set()
    protocols_dir = paths.protocols_dir
    entries = scan.listing(protocols_dir) if protocols_dir.is_dir() else []
    if entries and protocols_dir.is_symlink() and paths.leaves_workspace(protocols_dir):
        problems.append(paths.outside_problem(protocols_dir, "the protocols folder"))
        entries = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        shown = paths.show(entry)
        if scan.is_symlink(entry) and paths.leaves_workspace(entry):
            problems.append(paths.outside_problem(entry, "this protocol folder"))
            continue
        if not scan.is_dir(entry):
            problems.append(Problem(shown, 0, 0, "unexpected file: each protocol is a folder "
                                    "protocols/<id>/ holding protocol.yaml", "warning"))
            continue
        folder_id = entry.name
        unsafe = protocol_folder_problem(shown, folder_id)
        if unsafe is not None:
            problems.append(unsafe)
            continue
        protocol_path = scan.join(entry, PROTOCOL_FILE)
        if scan.is_symlink(protocol_path) and paths.leaves_workspace(protocol_path):
            problems.append(paths.outside_problem(protocol_path, PROTOCOL_FILE))
            continue
        exists = scan.is_file(protocol_path)
        if exists:
            data, found, errs = reader.load(protocol_path)
            problems += errs
            if errs:
                unreadable.add(folder_id)  # its own error is reported; the order may still name it
            if found is not None:
                protocol = parse_protocol(data, found, folder_id)
                findings.append(found)
                if protocol is not None:
                    if protocol.id in protocols:
                        found.add(["id"], f"duplicate protocol id {protocol.id!r}")
                    else:
                        protocols[protocol.id] = protocol
                        protocol_findings[protocol.id] = found
        sheets += _load_sheets(entry, folder_id, exists, rubric, reviewer, reader, problems, findings)
        consensus_path = scan.join(entry, CONSENSUS_FILE)
        if scan.is_symlink(consensus_path) and paths.leaves_workspace(consensus_path):
            problems.append(paths.outside_problem(consensus_path, CONSENSUS_FILE))
        elif exists and scan.exists(consensus_path) and reviewer is None:
            data, found, errs = reader.load(consensus_path)
            problems += errs
            if found is not None:
                findings.append(found)
                for adjudication in parse_consensus(data, found, folder_id, rubric):
                    adjudications.setdefault((folder_id, adjudication.field), []).append(adjudication)

    ordered = _order_protocols(protocols, settings, findings, unreadable)
    check_display_names(ordered, protocol_findings)
    _check_references(ordered, sheets, bibliography, protocol_findings, findings, paths, reader.show)
    for found in findings:
        problems += found.problems()
    return Review(paths, settings, rubric, ordered, tuple(sheets), bibliography, tuple(sorted(set(problems))),
                  adjudications)


def _finish_interrupted_change(paths: Paths) -> list[Problem]:
    """Complete a multi-file change (an import, ``protocol add``) whose process was killed
    after committing it, so that every reader sees all of it or none (one stat otherwise)."""
    from .commit import JOURNAL, WRITE_LOCK, finish_interrupted, pending
    from .files import exclusive_lock, remove_state_debris, state_debris

    # A killed writer's temporaries are cleared by the next command, whichever it is.
    debris = bool(state_debris(paths.state_dir))
    if not (pending(paths.state_dir) or debris) or paths.state_dir.is_symlink() or \
            paths.leaves_workspace(paths.state_dir):  # a link there is refused by every writer
        return []
    try:
        with exclusive_lock(paths.state_dir / WRITE_LOCK, what=f"workspace {paths.root}"):
            finish_interrupted(paths.root, paths.state_dir)
            remove_state_debris(paths.state_dir)
    except InvalidInput as exc:
        return list(exc.problems)
    except (OSError, ProtocoderError) as exc:
        return [Problem(paths.show(paths.state_dir / JOURNAL), 0, 0, f"a change interrupted while being written "
                        f"could not be completed ({exc}); run protocoder validate again once that is fixed")]
    return []


def _load_rubric(reader: _Reader, settings: Settings, problems: list[Problem],
                 findings: list[Findings]) -> Rubric | None:
    paths = reader.paths
    if paths.leaves_workspace(paths.rubric_dir):
        return None  # reported by open_review; never read
    candidates = sorted(p for p in paths.rubric_dir.glob("*.yaml")) if paths.rubric_dir.is_dir() else []
    if settings.rubric:
        path = paths.rubric_dir / f"{settings.rubric}.yaml"
        if not path.exists():
            problems.append(Problem(paths.show(paths.settings), 0, 0,
                                    f"rubric {settings.rubric!r} not found (expected {paths.show(path)})"))
            return None
    elif len(candidates) == 1:
        path = candidates[0]
    elif not candidates:
        problems.append(Problem(paths.show(paths.rubric_dir), 0, 0, "no rubric: add rubric/<id>.yaml"))
        return None
    else:
        names = ", ".join(p.stem for p in candidates)
        problems.append(Problem(paths.show(paths.settings), 0, 0,
                                f"several rubrics ({names}): name the one to use with 'rubric:'"))
        return None
    if paths.leaves_workspace(path):
        problems.append(paths.outside_problem(path, "the rubric file"))
        return None
    data, found, errs = reader.load(path)
    problems += errs
    if found is None:
        return None
    rubric = parse_rubric(data, found)
    findings.append(found)
    if rubric is not None and rubric.id and rubric.id != path.stem:
        found.add(["id"], f"rubric id {rubric.id!r} does not match its file name {path.name!r}")
    if any(f.severity == "error" for f in found.items):
        # Coding against a broken rubric would bury its real problems under noise.
        return None
    return rubric


def _load_sheets(folder: Path, protocol_id: str, protocol_exists: bool, rubric: Rubric | None,
                 only_reviewer: str | None, reader: _Reader, problems: list[Problem],
                 findings: list[Findings]) -> list[Sheet]:
    paths, scan = reader.paths, reader.scan
    codes_dir = scan.join(folder, CODES_DIR)
    if not scan.is_dir(codes_dir):
        if scan.exists(codes_dir):
            # Otherwise every cell of the protocol would silently count as not coded.
            problems.append(Problem(paths.show(codes_dir), 0, 0, f"{CODES_DIR} must be a folder of reviewer files "
                                    f"({CODES_DIR}/<reviewer>.yaml), not a file"))
        elif not protocol_exists:
            problems.append(Problem(paths.show(folder), 0, 0, f"protocol folder without {PROTOCOL_FILE}"))
        return []
    if scan.is_symlink(codes_dir) and paths.leaves_workspace(codes_dir):
        problems.append(paths.outside_problem(codes_dir, f"{CODES_DIR}/"))
        return []
    sheets = []
    for path in scan.listing(codes_dir):
        if path.name.startswith("."):
            continue
        shown = reader.show(path)
        if scan.is_symlink(path) and paths.leaves_workspace(path):
            problems.append(paths.outside_problem(path, "this reviewer file"))
            continue
        if path.suffix != ".yaml" or not scan.is_file(path):
            problems.append(Problem(shown, 0, 0, "unexpected file: reviewer files are codes/<reviewer>.yaml",
                                    "warning"))
            continue
        reviewer = path.stem
        if only_reviewer is not None and reviewer != only_reviewer:
            continue
        unsafe = reviewer_file_problem(shown, reviewer)
        if unsafe is not None:
            problems.append(unsafe)
            continue
        if not protocol_exists:
            problems.append(Problem(shown, 0, 0, f"codes for protocol {protocol_id!r}, which does not exist "
                                    f"(no {paths.show(folder / PROTOCOL_FILE)})"))
            continue
        data, found, errs = reader.load(path)
        problems += errs
        if found is not None:
            sheets.append(parse_sheet(data, found, protocol_id, reviewer, path, rubric))
            findings.append(found)
    return sheets


def _order_protocols(protocols: dict[str, Protocol], settings: Settings, findings: list[Findings],
                     unreadable: set[str] = frozenset()) -> tuple[Protocol, ...]:
    ordered = []
    placed: set[str] = set()  # by id: "not in ordered" compared whole protocols, quadratic in their number
    settings_findings = next((f for f in findings if f.display.endswith(SETTINGS_FILE)), None)
    for index, protocol_id in enumerate(settings.order):
        if protocol_id in protocols:
            if protocol_id not in placed:
                ordered.append(protocols[protocol_id])
                placed.add(protocol_id)
        elif settings_findings is not None and protocol_id not in unreadable:
            settings_findings.add(["order", index], f"order names {protocol_id!r}, which is not a protocol "
                                  "of this workspace")
    ordered += [protocols[pid] for pid in sorted(protocols) if pid not in placed]
    return tuple(ordered)


def _check_references(protocols: Iterable[Protocol], sheets: Iterable[Sheet], bibliography: Bibliography,
                      protocol_findings: dict[str, Findings], findings: list[Findings], paths: Paths,
                      show: Callable[[Path], str] | None = None) -> None:
    show = show or paths.show
    bib_name = paths.show(paths.bibliography)
    for protocol in protocols:
        found = protocol_findings[protocol.id]
        for index, key in enumerate(protocol.cites):
            if key not in bibliography:
                found.add(["cites", index], f"citation key {key!r} is not in {bib_name}")
    by_display = {f.display: f for f in findings}
    for sheet in sheets:
        found = by_display.get(show(sheet.path))
        if found is None:
            continue
        for cell in sheet.cells.values():
            for index, key in enumerate(cell.cites):
                if key not in bibliography:
                    found.add(["cells", cell.field, "cites", index], f"citation key {key!r} is not in {bib_name}")


def reviewer_files(paths: Paths) -> dict[str, int]:
    """Each reviewer with a file under ``protocols/*/codes/``, and how many protocols they have a file for.

    Read from file names only (nothing is parsed), so the coding app can list who is
    coding before it loads the workspace. Names that are not safe ids are left out.
    """
    counts: dict[str, int] = defaultdict(int)
    for path in review_files(paths.protocols_dir, None):
        if path.parent.name == CODES_DIR and is_slug(path.stem):
            counts[path.stem] += 1
    return dict(sorted(counts.items()))
