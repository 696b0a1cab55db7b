"""Every write to a workspace goes through :class:`Store`.

The coding app, the CLI and the import all call these methods; none of them touches
YAML or file paths. Writes are atomic (see :mod:`.files`) and comment-preserving (see
:mod:`.yamlio`; the mappings written, and the checks before writing, are in
:mod:`.mappings`), are serialised by a workspace lock so that two processes cannot interleave, and can be made
conditional on the file being unchanged since it was read (compare-and-swap with a
fingerprint), which is how the coding app avoids overwriting edits made elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..bibliography import BibEntry, load_bibliography, parse_bibtex
from ..errors import ConflictError, InvalidInput, Problem, Rejected
from ..lifecycle.consensus import Adjudication
from ..model import Cell, Protocol, Rubric, Sheet, is_slug
from .commit import WRITE_LOCK, Transaction, finish_interrupted
from .emit import fast_dump
from .files import (
    MAX_FILE_BYTES,
    atomic_write_bytes,
    atomic_write_text,
    decode_utf8,
    exclusive_lock,
    fingerprint,
    read_capped,
    read_text,
)
from .findings import Findings
from .formats import parse_sheet
from .mappings import (
    check_reviewer,
    check_texts,
    child_mapping,
    comparable,
    protocol_mapping,
    protocol_problems,
    reuse_unchanged,
    sheet_shape_problems,
    write_cell,
)
from .paths import Paths
from .yamlio import Document, flow_list, flow_mapping, load_document, new_mapping, parse_yaml, text_scalar


class _Anything:
    """Marker: write whatever is on disk now (no compare-and-swap)."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Anything()
"""Pass as ``expected`` to skip the unchanged-on-disk check."""

# Workspace locks this thread holds (flock is per open file: taking it twice would wait on itself).
_HELD = threading.local()


@dataclass(frozen=True)
class CellUpdate:
    """What an import sets in one cell: only the attributes named in ``values`` (``code``,
    ``source``, ``basis``, ``cites``; ``quotes`` for a source update) change; the others keep
    what is on file."""

    protocol: str
    field: str
    reviewer: str
    values: Mapping[str, Any]


@dataclass
class WriteResult:
    """Files a batch changed, and how many cells."""

    files: list[Path] = field(default_factory=list)
    cells: int = 0


class SheetConflict(ConflictError):
    """The reviewer's file changed on disk since it was read; carries what is there now."""

    def __init__(self, path: Path, theirs: Sheet | None, current: str | None) -> None:
        super().__init__(path, f"{path} changed on disk since it was read")
        self.theirs = theirs
        self.fingerprint = current


def now_iso() -> str:
    """The current UTC time as ISO 8601 with seconds, the format of ``coded_at``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Store:
    """Writes to one workspace."""

    def __init__(self, paths: Paths, *, lock_timeout: float = 10.0) -> None:
        self.paths = paths
        self.lock_timeout = lock_timeout

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the workspace write lock (raises LockedError after ``lock_timeout`` s).

        A change that a killed process had committed but not finished is completed first
        (see :mod:`protocoder.storage.commit`), so every writer starts from a whole state.

        Re-entrant within a thread: an operation that reads what it decides under the lock
        (correct, adjudicate, freeze) calls the store's writers, which take it again.
        """
        key = str(self.paths.state_dir.absolute())
        held = _HELD.__dict__.setdefault("locks", {})
        if held.get(key):
            held[key] += 1
            try:
                yield
            finally:
                held[key] -= 1
            return
        state_dir = self.paths.state_dir
        if self.paths.leaves_workspace(state_dir):
            raise Rejected(f"{self.paths.show(state_dir)} is a symbolic link that leads outside the workspace; "
                           "protocoder keeps its locks only inside it (remove the link)")
        with exclusive_lock(state_dir / WRITE_LOCK, timeout=self.lock_timeout, what=f"workspace {self.paths.root}"):
            finish_interrupted(self.paths.root, state_dir)
            held[key] = 1
            try:
                yield
            finally:
                held[key] = 0

    def transaction(self) -> Transaction:
        """A new multi-file change (all or none) for this workspace; use under :meth:`locked`."""
        return Transaction(self.paths.root, self.paths.state_dir, self.paths.show)

    def _inside(self, path: Path) -> Path:
        """``path``, once sure that writing it stays inside the workspace.

        An atomic write makes its temporary file in the target's folder, so a folder that is
        a link to elsewhere would make a save write there. A file that is such a link is
        replaced by the save (see :meth:`_linked_out`), never written through.
        """
        if self.paths.leaves_workspace(path.parent):
            raise Rejected(f"{self.paths.show(path)} would be written through a symbolic link that leads "
                           "outside the workspace; protocoder writes only inside it")
        return path

    def _linked_out(self, path: Path) -> bool:
        """Whether ``path`` is a link leading outside the workspace: it is then treated as
        absent (never read, so nothing outside is copied in) and a save replaces the link."""
        return path.is_symlink() and self.paths.leaves_workspace(path)

    def _check_expected(self, path: Path, expected: Any, read: Any) -> None:
        if expected is ANY:
            return
        current = None if self._linked_out(path) else fingerprint(path)
        if current != expected:
            raise SheetConflict(path, read() if current is not None else None, current)

    # ------------------------------------------------------------------ sheets

    def read_sheet(self, protocol_id: str, reviewer: str, rubric: Rubric | None) -> tuple[Sheet, str | None]:
        """One reviewer's sheet for one protocol and the fingerprint of the file read.

        A missing file is an empty sheet with fingerprint None. A malformed file raises
        :class:`InvalidInput` naming file and line.
        """
        path = self._inside(self.paths.sheet_file(protocol_id, reviewer))
        if not path.exists() or self._linked_out(path):
            return Sheet(protocol_id, reviewer, path), None
        display = self.paths.show(path)
        raw = read_capped(path, display, MAX_FILE_BYTES)
        text = decode_utf8(raw, display)
        data = parse_yaml(text, display)
        findings = Findings(display, text)
        # Only a file whose shape protocoder cannot edit safely is refused here; what is
        # wrong inside a cell (a missing basis, an unknown code) is the reviewer's to fix
        # in the app, and `validate` reports it.
        for keypath, message in sheet_shape_problems(data):
            findings.add(keypath, message)
        if findings.items:
            raise InvalidInput(findings.problems())
        sheet = parse_sheet(data, Findings(display, text), protocol_id, reviewer, path, rubric)
        return sheet, hashlib.sha256(raw).hexdigest()

    def save_cell(self, cell: Cell, rubric: Rubric, *, expected: Any = ANY) -> str:
        """Write one cell into its reviewer's file; return the file's new fingerprint.

        ``rubric_version`` and ``coded_at`` are filled in when empty. Raises
        :class:`SheetConflict` if ``expected`` does not match the file on disk, and
        :class:`InvalidInput` if the cell names an unknown field or a code the field does
        not allow.
        """
        self._check_cell(cell, rubric)
        if cell.code is not None and not cell.rubric_version:
            cell = replace(cell, rubric_version=rubric.version)
        if cell.code is not None and not cell.coded_at:
            cell = replace(cell, coded_at=now_iso())
        path = self.paths.sheet_file(cell.protocol, cell.reviewer)
        with self.locked():
            self._check_expected(path, expected, lambda: self.read_sheet(cell.protocol, cell.reviewer, rubric)[0])
            document = self._sheet_document(path, cell.protocol, cell.reviewer)
            cells = child_mapping(document.data, "cells")
            entry = cells.get(cell.field)
            if entry is None or not hasattr(entry, "items"):
                entry = new_mapping()
                cells[cell.field] = entry
            write_cell(entry, cell)
            return document.save()

    def delete_cell(self, protocol_id: str, reviewer: str, field_id: str, *, expected: Any = ANY) -> str | None:
        """Remove one cell from its reviewer's file (the file stays, with its notes)."""
        path = self.paths.sheet_file(protocol_id, reviewer)
        with self.locked():
            self._check_expected(path, expected, lambda: self.read_sheet(protocol_id, reviewer, None)[0])
            if not path.exists():
                return None
            document = self._sheet_document(path, protocol_id, reviewer)
            cells = document.data.get("cells")
            if cells is not None and field_id in cells:
                del cells[field_id]
            return document.save()

    def save_note(self, protocol_id: str, reviewer: str, prompt_id: str, text: str, rubric: Rubric,
                  *, expected: Any = ANY) -> str:
        """Write one descriptive note (a rubric prompt's answer) for a protocol."""
        if prompt_id not in {p.id for p in rubric.prompts}:
            raise Rejected(f"the rubric has no prompt {prompt_id!r}")
        check_reviewer(reviewer)
        check_texts({f"the note {prompt_id!r}": text})
        path = self.paths.sheet_file(protocol_id, reviewer)
        with self.locked():
            self._check_expected(path, expected, lambda: self.read_sheet(protocol_id, reviewer, rubric)[0])
            document = self._sheet_document(path, protocol_id, reviewer)
            notes = child_mapping(document.data, "notes")
            if text.strip():
                notes[prompt_id] = text_scalar(text, notes.get(prompt_id))
            elif prompt_id in notes:
                del notes[prompt_id]
            return document.save()

    def _sheet_document(self, path: Path, protocol_id: str, reviewer: str) -> Document:
        if not self.paths.protocol_file(protocol_id).is_file():
            raise Rejected(f"no protocol {protocol_id!r} in this workspace")
        self._inside(path)
        fresh = not path.exists() or self._linked_out(path)
        document = Document(path, new_mapping()) if fresh else load_document(path, self.paths.show(path))
        if fresh:
            document.data.yaml_set_start_comment(f"Cells coded by {reviewer} for {protocol_id}.")
        problems = sheet_shape_problems(document.data)
        if problems:
            # Writing into a file of the wrong shape would replace what the user wrote.
            findings = Findings(self.paths.show(path), read_text(path, self.paths.show(path)))
            for keypath, message in problems:
                findings.add(keypath, message)
            raise InvalidInput(findings.problems())
        return document

    def _check_cell(self, cell: Cell, rubric: Rubric) -> None:
        check_reviewer(cell.reviewer)
        if not is_slug(cell.protocol):
            raise Rejected(f"{cell.protocol!r} is not a protocol id")
        try:
            fld = rubric.field(cell.field)
        except KeyError:
            raise Rejected(f"the rubric has no field {cell.field!r}") from None
        if cell.code is not None and cell.code not in fld.codes:
            raise Rejected(f"code {cell.code!r} is not allowed for field {cell.field!r} "
                             f"(allowed: {', '.join(fld.codes)})")
        check_texts({"the source location": cell.source, "the basis": cell.basis,
                     **{f"quote {n}": quote.text for n, quote in enumerate(cell.quotes, 1)}})
        for number, quote in enumerate(cell.quotes, 1):
            if not is_slug(quote.source) or not quote.text.strip():
                raise Rejected(f"quote {number} needs the id of a pinned source and the text quoted")

    # ------------------------------------------------------------------ import

    def write_cells(self, updates: Iterable[CellUpdate], rubric: Rubric, *, stamp: str | None = None) -> WriteResult:
        """Apply many cell updates at once: every changed file, or (raising) none of them.

        Under the workspace lock, each reviewer file is read once, each update is merged
        into the cell on file (values an update does not name stay as they are), cells
        that do not change are left alone, and each changed file is serialised once. New
        files are written without the round-trip emitter (:func:`emit.fast_dump`).
        Cells whose code, source, basis or citations change get ``rubric_version`` and
        ``coded_at`` (``stamp``) anew; a change of quotes alone keeps them.
        """
        by_file: dict[tuple[str, str], list[CellUpdate]] = {}
        for update in updates:
            by_file.setdefault((update.protocol, update.reviewer), []).append(update)
        stamp = stamp or now_iso()
        changed_files: list[Path] = []
        changed_cells = 0
        with self.locked():
            transaction = self.transaction()
            try:
                for (protocol_id, reviewer), group in by_file.items():
                    path, payload, count = self._merged_sheet(protocol_id, reviewer, group, rubric, stamp)
                    if payload is not None:
                        transaction.write(path, payload.encode("utf-8"))
                        changed_files.append(path)
                        changed_cells += count
            except BaseException:
                transaction.abort()
                raise
            transaction.commit()
        return WriteResult(changed_files, changed_cells)

    def _merged_sheet(self, protocol_id: str, reviewer: str, group: list[CellUpdate], rubric: Rubric,
                      stamp: str) -> tuple[Path, str | None, int]:
        """One reviewer file with ``group`` merged in: (path, new text or None if unchanged, cells changed)."""
        check_reviewer(reviewer)
        if not self.paths.protocol_file(protocol_id).is_file():
            raise Rejected(f"no protocol {protocol_id!r} in this workspace")
        path = self._inside(self.paths.sheet_file(protocol_id, reviewer))
        display = self.paths.show(path)
        text = None
        existing: Mapping[str, Cell] = {}
        if path.exists() and not self._linked_out(path):
            text = decode_utf8(read_capped(path, display, MAX_FILE_BYTES), display)
            data = parse_yaml(text, display)
            problems = sheet_shape_problems(data)
            if problems:
                findings = Findings(display, text)
                for keypath, message in problems:
                    findings.add(keypath, message)
                raise InvalidInput(findings.problems())
            existing = parse_sheet(data, Findings(display, text), protocol_id, reviewer, path, rubric).cells
        cells = []
        for update in group:
            old = existing.get(update.field)
            cell = replace(old or Cell(protocol_id, update.field, reviewer, None), **update.values)
            if (old is not None and _record(old) == _record(cell) and old.quotes == cell.quotes
                    and old.assisted == cell.assisted):
                continue
            recoded = old is None or _record(old) != _record(cell)
            if recoded:
                # Quotes moved to a new snapshot (source update) are no new coding: the time stays.
                cell = replace(cell, rubric_version=rubric.version if cell.code else "",
                               coded_at=stamp if cell.code else "")
            self._check_cell(cell, rubric)
            missing = [name for name in cell.missing(rubric) if name != "code"] if cell.code and recoded else []
            if missing:
                raise Rejected(f"{display}: cell {update.field!r} would lack what code {cell.code!r} requires "
                               f"({', '.join(missing)}): the file changed since the import was checked; "
                               "run the import again")
            cells.append(cell)
        if not cells:
            return path, None, 0
        document = Document(path, new_mapping()) if text is None else load_document(path, display, text=text)
        cells_map = child_mapping(document.data, "cells")
        for cell in cells:
            entry = cells_map.get(cell.field)
            if entry is None or not hasattr(entry, "items"):
                entry = new_mapping()
                cells_map[cell.field] = entry
            write_cell(entry, cell)
        comment = f"Cells coded by {reviewer} for {protocol_id}."
        payload = fast_dump(document.data, comment) if text is None else None
        if payload is None:
            if text is None:
                document.data.yaml_set_start_comment(comment)
            payload = document.dumps()
        return path, payload, len(cells)

    # ------------------------------------------------------------------ protocols

    def add_protocol(self, protocol: Protocol, bibliography_keys: Iterable[str] | None = None) -> Path:
        """Create ``protocols/<id>/protocol.yaml`` and append the id to the table order.

        Both files change together or (raising) neither does; the citation keys are checked
        against the bibliography as it is under the lock when ``bibliography_keys`` is None.
        """
        problems = protocol_problems(protocol, ())
        problems = [p for p in problems if "is not in references.bib" not in p]
        if problems:
            raise Rejected("; ".join(problems))
        path = self._inside(self.paths.protocol_file(protocol.id))
        with self.locked():
            if path.exists() or path.is_symlink():
                raise Rejected(f"protocol {protocol.id!r} already exists ({self.paths.show(path)})")
            keys = bibliography_keys
            if keys is None:
                bibliography, bib_problems = load_bibliography(self._inside(self.paths.bibliography),
                                                               self.paths.show(self.paths.bibliography))
                if bib_problems and protocol.cites:
                    raise InvalidInput(bib_problems)
                keys = bibliography.entries.keys()
            problems = protocol_problems(protocol, keys)
            if problems:
                raise Rejected("; ".join(problems))
            settings = self._settings_with_order(lambda order: _append_once(order, protocol.id))
            document = Document(path, protocol_mapping(protocol))
            document.data.yaml_set_start_comment(f"{protocol.name}: metadata and the public sources reviewed for it.")
            transaction = self.transaction()
            transaction.write(path, document.dumps().encode("utf-8"))
            if settings is not None:
                transaction.write(self.paths.settings, settings.encode("utf-8"))
            transaction.commit()
        return path

    def update_protocol(self, protocol: Protocol, bibliography_keys: Iterable[str] | None = None,
                        *, expected: Any = ANY) -> str:
        """Rewrite a protocol's name, citations and sources, keeping the file's comments."""
        problems = protocol_problems(protocol, bibliography_keys)
        if problems:
            raise Rejected("; ".join(problems))
        path = self._inside(self.paths.protocol_file(protocol.id))
        with self.locked():
            if not path.exists():
                raise Rejected(f"no protocol {protocol.id!r} in this workspace")
            self._check_expected(path, expected, lambda: None)
            document = load_document(path, self.paths.show(path))
            fresh = protocol_mapping(protocol)
            old_sources = document.data.get("sources") or []
            if "sources" in fresh:
                # Unchanged sources keep their node, and with it their quoting and comments.
                fresh["sources"] = [reuse_unchanged(old_sources, item) for item in fresh["sources"]]
            for key in ("name", "cites", "sources"):
                if key in fresh:
                    if comparable(document.data.get(key)) != comparable(fresh[key]):
                        document.data[key] = fresh[key]
                elif key in document.data:
                    del document.data[key]
            return document.save()

    def remove_protocol(self, protocol_id: str, *, force: bool = True) -> int:
        """Delete a protocol's folder (and every reviewer's cells in it); return cells removed.

        Without ``force``, refuses while any cell is coded (counted under the lock). The
        folder and the table order change together or (raising) neither does.
        """
        folder = self.paths.protocol_dir(protocol_id)
        if not is_slug(protocol_id) or not folder.is_dir():
            raise Rejected(f"no protocol {protocol_id!r} in this workspace")
        if folder.is_symlink():
            # rmtree refuses links (it raised OSError, a traceback); following one could
            # delete a folder outside the workspace.
            raise Rejected(f"{self.paths.show(folder)} is a symbolic link, not a protocol folder of this "
                           "workspace; remove the link by hand")
        with self.locked():
            if not self.paths.protocol_file(protocol_id).is_file():
                raise Rejected(f"no protocol {protocol_id!r} in this workspace")
            count = coded_cell_count(self.paths, protocol_id)
            if count and not force:
                raise Rejected(f"protocol {protocol_id!r} has {count} coded cell{'s' if count != 1 else ''}; "
                               "add --force to remove it with them")
            settings = self._settings_with_order(lambda order: _remove_if_there(order, protocol_id))
            transaction = self.transaction()
            if settings is not None:
                transaction.write(self.paths.settings, settings.encode("utf-8"))
            transaction.remove_tree(folder)
            transaction.commit()
        return count

    def _settings_with_order(self, change: Any) -> str | None:
        """``protocoder.yaml`` with ``change`` applied to its order (None when the file or its
        order does not change). Raises InvalidInput, before anything is written, for a
        malformed file."""
        path = self._inside(self.paths.settings)
        if not path.exists():
            return None
        document = load_document(path, self.paths.show(path))
        data = document.data
        if data is None or not hasattr(data, "get"):
            raise InvalidInput([Problem(self.paths.show(path), 1, 1, "expected a settings mapping")])
        order = data.get("order")
        if order is None:
            return None
        if not isinstance(order, list):
            findings = Findings(self.paths.show(path), document.dumps())
            findings.add(["order"], "expected a list of protocol ids")
            raise InvalidInput(findings.problems())
        return document.dumps() if change(order) else None

    # ------------------------------------------------------------------ adjudications

    def append_adjudication(self, adjudication: Adjudication) -> Path:
        """Append one adjudication to its protocol's ``consensus.yaml`` (earlier entries stay as they are)."""
        path = self._inside(self.paths.consensus_file(adjudication.protocol))
        if not self.paths.protocol_file(adjudication.protocol).is_file():
            raise Rejected(f"no protocol {adjudication.protocol!r} in this workspace")
        check_texts({"the reason": adjudication.reason, "the source location": adjudication.source,
                      "the basis": adjudication.basis})
        with self.locked():
            document = load_document(path, self.paths.show(path))
            if not path.exists():
                document.data.yaml_set_start_comment(
                    f"Adjudications for {adjudication.protocol}. Append-only: a later entry for a cell "
                    "supersedes an earlier one.")
            entries = document.data.get("adjudications")
            if entries is None:
                entries = []
                document.data["adjudications"] = entries
            entry = new_mapping([
                ("field", adjudication.field), ("code", adjudication.code),
                ("reason", text_scalar(adjudication.reason)), ("by", adjudication.by), ("at", adjudication.at),
                ("resolved", flow_mapping(adjudication.resolved)), ("resolved_hash", adjudication.resolved_hash),
            ])
            for key in ("taken_from", "source", "basis"):
                if getattr(adjudication, key):
                    entry[key] = text_scalar(getattr(adjudication, key))
            if adjudication.cites:
                entry["cites"] = flow_list(list(adjudication.cites))
            entries.append(entry)
            document.save()
        return path

    # ------------------------------------------------------------------ bibliography

    def add_bibtex(self, text: str, *, source: str = "<pasted entry>") -> list[BibEntry]:
        """Check BibTeX entries and append them to ``references.bib`` unchanged.

        The rest of the file is left byte for byte as it was. Raises
        :class:`InvalidInput` (nothing written) for unparsable text, missing required
        fields, or a key that already exists.
        """
        path = self._inside(self.paths.bibliography)
        display = self.paths.show(path)
        entries, problems = parse_bibtex(text, source)
        if not entries and not problems:
            problems.append(Problem(source, 0, 0, "no BibTeX entry found"))
        with self.locked():
            if self._linked_out(path):
                raise Rejected(f"{display} is a symbolic link that leads outside the workspace; protocoder reads "
                               "and writes only inside it (replace the link by the file itself)")
            existing, bib_problems = load_bibliography(path, display)
            if bib_problems:
                raise InvalidInput(bib_problems)
            for entry in entries:
                if entry.key in existing:
                    line = existing.entries[entry.key].line
                    problems.append(Problem(source, entry.line, 1, f"citation key {entry.key!r} already exists "
                                            f"({display}:{line})"))
            if problems:
                raise InvalidInput(problems)
            current = path.read_bytes().decode("utf-8") if path.exists() else ""
            separator = "" if not current or current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
            atomic_write_text(path, current + separator + text.strip("\n") + "\n", sweep=True)
        return entries

    # ------------------------------------------------------------------ snapshots

    def write_snapshot(self, path: Path, payload: bytes, sidecar: Path, sidecar_text: str) -> None:
        """Store a source snapshot and its extracted-text sidecar (see :mod:`protocoder.evidence`).

        Both are content-addressed, so writing a snapshot that is there already changes nothing.
        """
        for target in (path, sidecar):
            self._inside(target)
            if not target.resolve().is_relative_to(self.paths.root.resolve()):
                raise Rejected(f"{self.paths.show(target)} is outside the workspace")
        with self.locked():
            if not path.is_file() or path.stat().st_size != len(payload):
                atomic_write_bytes(path, payload, sweep=True)
            atomic_write_text(sidecar, sidecar_text, sweep=True)

    def remove_files(self, files: Iterable[Path]) -> list[Path]:
        """Delete workspace files that nothing refers to any more (unused snapshots); return those removed."""
        removed = []
        with self.locked():
            for path in files:
                self._inside(path)
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(path)
        return removed


# --------------------------------------------------------------------------- helpers


def _append_once(order: list[Any], item: str) -> bool:
    if item in order:
        return False
    order.append(item)
    return True


def _remove_if_there(order: list[Any], item: str) -> bool:
    if item not in order:
        return False
    order.remove(item)
    return True


def _record(cell: Cell) -> tuple[Any, ...]:
    # What an import can change in a cell.
    return (cell.code, cell.source, cell.basis, cell.cites)


def coded_cell_count(paths: Paths, protocol_id: str) -> int:
    """How many coded cells (any reviewer) a protocol folder holds."""
    count = 0
    codes_dir = paths.protocol_dir(protocol_id) / "codes"
    for path in sorted(codes_dir.glob("*.yaml")) if codes_dir.is_dir() else []:
        try:
            data = parse_yaml(read_text(path, paths.show(path)), paths.show(path))
        except InvalidInput:
            continue
        cells = data.get("cells") if isinstance(data, dict) else None
        if isinstance(cells, dict):
            count += sum(1 for cell in cells.values() if isinstance(cell, dict) and cell.get("code"))
    return count
