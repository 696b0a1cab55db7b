"""Load a whole review workspace into a :class:`Review`, cross-checking its files.

:func:`load_review` lists the workspace (:class:`~protocoder.storage.paths.Paths` says where
everything is), reads and parses its YAML files (the bulk of a large workspace on a second
core: :mod:`protocoder.background`), turns each into model objects with its parser in
:mod:`.formats`, and then checks what needs several files: the protocol order, citation keys,
protocol names a reader could not tell apart, links that lead out of the workspace.

It never raises for bad content: the :class:`Review` holds everything that could be read
and every problem found, so ``validate`` can report them all at once.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..background import map_in_halves
from ..bibliography import Bibliography, load_bibliography
from ..errors import InvalidInput, Problem, ProtocoderError
from ..lifecycle.consensus import Adjudication
from ..model import Cell, Protocol, Rubric, Sheet, is_slug
from .files import read_text
from .findings import Findings
from .formats import Settings, parse_consensus, parse_protocol, parse_rubric, parse_settings, parse_sheet
from .paths import CODES_DIR, CONSENSUS_FILE, PROTOCOL_FILE, SETTINGS_FILE, Paths, open_workspace
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


def _parse(item: tuple[str, str]) -> tuple[Any, list[Problem]]:
    text, display = item
    try:
        return parse_yaml(text, display), []
    except InvalidInput as exc:
        return None, list(exc.problems)


class _Scan:
    """The folders :func:`load_review` walks, each listed once with the type of every entry.

    Its questions about those entries (a link? a folder? a file? there at all?) then cost no
    system call: at 1,000 protocols they were 20,000 stat calls through pathlib. A name
    missing from a folder that was listed is not there; whatever was not listed, and
    whatever a link leads to, is asked of the file system as before.
    """

    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}
        self._listings: dict[str, list[str]] = {}

    def scan(self, folder: Path) -> list[os.DirEntry[str]]:
        """The entries of ``folder`` (OSError when it cannot be listed), their types remembered."""
        with os.scandir(folder) as listing:
            entries = list(listing)
        for entry in entries:
            try:
                self._kinds[entry.path] = ("link" if entry.is_symlink()
                                           else "dir" if entry.is_dir(follow_symlinks=False)
                                           else "file" if entry.is_file(follow_symlinks=False) else "other")
            except OSError:
                continue  # asked of the file system when it comes up
        self._listings[str(folder)] = [entry.name for entry in entries]
        return entries

    def listing(self, folder: Path) -> list[Path]:
        """``sorted(folder.iterdir())``."""
        names = self._listings.get(str(folder))
        return sorted(folder / name for name in names) if names is not None else sorted(folder.iterdir())

    def is_symlink(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        if kind is None:
            return False if str(path.parent) in self._listings else path.is_symlink()
        return kind == "link"

    def is_dir(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        return path.is_dir() if kind is None or kind == "link" else kind == "dir"

    def is_file(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        return path.is_file() if kind is None or kind == "link" else kind == "file"

    def exists(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        if kind is None:
            return False if str(path.parent) in self._listings else path.exists()
        return path.exists() if kind == "link" else True


class _Reader:
    """Reads and parses the workspace's YAML files; on failure, their problems instead of data.

    :meth:`preload` parses the bulk of a large workspace up front, half of it on a second
    core where there is one (see :mod:`protocoder.background`); :meth:`load` hands out
    each result once, and reads anything not preloaded itself.
    """

    def __init__(self, paths: Paths, scan: _Scan | None = None) -> None:
        self.paths = paths
        self.scan = scan or _Scan()
        self._ready: dict[Path, tuple[Any, str, str, list[Problem]]] = {}

    def preload(self, files: Iterable[Path]) -> None:
        texts = []
        for path in files:
            if self.scan.is_symlink(path):
                continue  # read, if at all, once load_review has checked where it leads
            if not self.scan.exists(path):
                continue  # a protocol without consensus.yaml, most often
            display = self.paths.show(path)
            try:
                texts.append((path, read_text(path, display), display))
            except InvalidInput:
                continue  # load() reads it again and reports the problem in its place
        parsed = map_in_halves(_parse, [(text, display) for _, text, display in texts])
        for (path, text, display), (data, problems) in zip(texts, parsed, strict=True):
            self._ready[path] = (data, text, display, problems)

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


def _review_files(protocols_dir: Path, reviewer: str | None, scan: _Scan | None = None) -> list[Path]:
    """The protocol, reviewer and consensus files :func:`load_review` will probably read
    (the folders it lists are remembered in ``scan``)."""
    files: list[Path] = []
    if protocols_dir.is_symlink():
        return files
    scan = scan or _Scan()
    try:
        # Links are left to load_review, which checks where they lead before reading.
        folders = sorted(entry.name for entry in scan.scan(protocols_dir)
                         if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."))
    except OSError:
        return files
    for name in folders:
        # Joined with "/": a path parsed from one string costs several times more.
        folder = protocols_dir / name
        files.append(folder / PROTOCOL_FILE)
        codes = folder / CODES_DIR
        try:
            scan.scan(folder)
            names = [] if scan.is_symlink(codes) or not scan.is_dir(codes) else sorted(
                entry.name for entry in scan.scan(codes) if entry.is_file(follow_symlinks=False))
        except OSError:
            names = []
        files += [codes / file_name for file_name in names
                  if file_name.endswith(".yaml") and not file_name.startswith(".")
                  and (reviewer is None or file_name == f"{reviewer}.yaml")]
        if reviewer is None:
            files.append(folder / CONSENSUS_FILE)
    return files


def load_review(root: Path, *, reviewer: str | None = None) -> Review:
    """Load a whole workspace, collecting every problem.

    With ``reviewer``, only that reviewer's sheets are read: the coding app uses this so
    that a reviewer never sees another's codes.
    """
    paths = open_workspace(root)
    problems: list[Problem] = _finish_interrupted_change(paths)
    reader = _Reader(paths)
    scan = reader.scan
    reader.preload(_review_files(paths.protocols_dir, reviewer, scan))
    findings: list[Findings] = []

    problems += _outside_links(paths)
    settings = Settings()
    if paths.settings.is_symlink() and paths.leaves_workspace(paths.settings):
        pass  # reported by _outside_links; never read
    elif paths.settings.exists():
        data, found, errs = reader.load(paths.settings)
        problems += errs
        if found is not None:
            settings = parse_settings(data, found)
            findings.append(found)

    rubric = _load_rubric(reader, settings, problems, findings)
    if paths.leaves_workspace(paths.bibliography):
        bibliography = Bibliography({})  # reported by _outside_links; never read
    else:
        bibliography, bib_problems = load_bibliography(paths.bibliography, paths.show(paths.bibliography))
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
        if not is_slug(folder_id):
            problems.append(Problem(shown, 0, 0, f"folder name {folder_id!r} is not a safe protocol id "
                                    "(lowercase letters, digits, single '-', '_' or '.')"))
            continue
        protocol_path = entry / PROTOCOL_FILE
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
        consensus_path = entry / CONSENSUS_FILE
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
    _check_display_names(ordered, protocol_findings)
    _check_references(ordered, sheets, bibliography, protocol_findings, findings, paths)
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
    if not (pending(paths.state_dir) or debris) or paths.leaves_workspace(paths.state_dir):
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


def _outside_links(paths: Paths) -> list[Problem]:
    """Links among the workspace's own files and folders that lead outside it.

    protocols/ is checked entry by entry where it is read; these are the rest: each is
    reported here and never read or written through (the writers check again).
    """
    problems = []
    parts = [(paths.settings, SETTINGS_FILE), (paths.rubric_dir, "the rubric folder"),
             (paths.bibliography, "references.bib"), (paths.templates_dir, "the templates folder"),
             (paths.output_dir, "the output folder"), (paths.releases_dir, "the releases folder"),
             (paths.state_dir, "the .protocoder folder (locks)"), (paths.corrections, "corrections.yaml")]
    for path, what in parts:
        if os.path.lexists(path) and paths.leaves_workspace(path):
            problems.append(paths.outside_problem(path, what))
    for folder, what in [(paths.rubric_dir, "this rubric file"), (paths.templates_dir, "this template"),
                         (paths.releases_dir, "this release")]:
        if folder.is_dir() and not paths.leaves_workspace(folder):
            for current, dirs, names in os.walk(folder):
                for name in sorted(dirs + names):
                    entry = Path(current, name)
                    if entry.is_symlink() and paths.leaves_workspace(entry):
                        problems.append(paths.outside_problem(entry, what))
                if folder != paths.templates_dir:
                    break  # rubric files and release folders sit at the top; templates may nest
    return problems


def _load_rubric(reader: _Reader, settings: Settings, problems: list[Problem],
                 findings: list[Findings]) -> Rubric | None:
    paths = reader.paths
    if paths.leaves_workspace(paths.rubric_dir):
        return None  # reported by _outside_links; never read
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
    codes_dir = folder / CODES_DIR
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
        shown = paths.show(path)
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
        if not is_slug(reviewer):
            problems.append(Problem(shown, 0, 0, f"reviewer name {reviewer!r} is not a safe id"))
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


def _check_display_names(protocols: Iterable[Protocol], protocol_findings: dict[str, Findings]) -> None:
    """Warn about protocols whose display names a reader cannot tell apart in a table: the
    same after Unicode normalisation and case folding, or after folding look-alike letters
    (a Cyrillic е for a Latin e) with the Unicode confusables data."""
    protocols = [p for p in protocols if p.name.strip()]
    folded = [_plain_fold(protocol.name) for protocol in protocols]
    groups: dict[str, list[Protocol]] = defaultdict(list)
    for protocol, name in zip(protocols, folded, strict=True):
        groups[name].append(protocol)
    if _may_be_confusable(folded):
        groups = defaultdict(list)
        for protocol in protocols:
            groups[_skeleton(protocol.name)].append(protocol)
    for group in groups.values():
        for protocol in group[1:] if len(group) > 1 else ():
            others = ", ".join(f"{p.id!r} ({p.name})" for p in group if p is not protocol)
            protocol_findings[protocol.id].add(["name"], f"display name {protocol.name!r} looks the same as that of "
                                               f"protocol {others} in the tables; make them distinct",
                                               severity="warning")


def _plain_fold(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", " ".join(name.split())).casefold()


def _may_be_confusable(names: list[str], limit: int = 5_000_000) -> bool:
    """Whether two names could be look-alikes: of equal length, and equal wherever the one
    with non-ASCII letters has ASCII ones. Cheap, so that the confusables data (0.2 s to
    load) is only read when it may matter."""
    unusual = [name for name in names if not name.isascii()]
    if not unusual:
        return False
    by_length: dict[int, list[str]] = defaultdict(list)
    for name in names:
        by_length[len(name)].append(name)
    if sum(len(by_length[len(name)]) for name in unusual) > limit:
        return True
    for name in unusual:
        for other in by_length[len(name)]:
            if other is not name and other != name and all(
                    a == b for a, b in zip(name, other, strict=True) if a.isascii()):
                return True
    return False


def _skeleton(name: str) -> str:
    from confusable_homoglyphs import confusables

    folded = []
    for char in _plain_fold(name):
        if not char.isascii():
            found = confusables.is_confusable(char, preferred_aliases=["latin", "common"])
            ascii_like = [g["c"] for item in found or () for g in item["homoglyphs"] if g["c"].isascii()]
            char = ascii_like[0].casefold() if ascii_like else char
        folded.append(char)
    return "".join(folded)


def _check_references(protocols: Iterable[Protocol], sheets: Iterable[Sheet], bibliography: Bibliography,
                      protocol_findings: dict[str, Findings], findings: list[Findings], paths: Paths) -> None:
    bib_name = paths.show(paths.bibliography)
    for protocol in protocols:
        found = protocol_findings[protocol.id]
        for index, key in enumerate(protocol.cites):
            if key not in bibliography:
                found.add(["cites", index], f"citation key {key!r} is not in {bib_name}")
    by_display = {f.display: f for f in findings}
    for sheet in sheets:
        found = by_display.get(paths.show(sheet.path))
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
    for path in _review_files(paths.protocols_dir, None):
        if path.parent.name == CODES_DIR and is_slug(path.stem):
            counts[path.stem] += 1
    return dict(sorted(counts.items()))
