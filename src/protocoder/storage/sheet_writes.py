"""Writes of reviewers' files: one cell or note at a time (the coding app, the CLI) and
many cells at once (``import``), with compare-and-swap against the file on disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Rejected
from ..model import SHA256_PATTERN, Cell, Rubric, Sheet, SourceReading, is_slug
from .files import MAX_FILE_BYTES, decode_utf8, read_capped, read_text
from .findings import Findings
from .formats import parse_sheet
from .mappings import check_reviewer, check_texts, child_mapping, reading_mapping, sheet_shape_problems, write_cell
from .writer import ANY, Writer, now_iso
from .yamlio import Document, load_document, new_mapping, parse_yaml, text_scalar


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


class SheetWrites(Writer):
    """Reading and writing ``protocols/<id>/codes/<reviewer>.yaml``."""

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
        with self.locked(only=path):
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
        with self.locked(only=path):
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
        with self.locked(only=path):
            self._check_expected(path, expected, lambda: self.read_sheet(protocol_id, reviewer, rubric)[0])
            document = self._sheet_document(path, protocol_id, reviewer)
            notes = child_mapping(document.data, "notes")
            if text.strip():
                notes[prompt_id] = text_scalar(text, notes.get(prompt_id))
            elif prompt_id in notes:
                del notes[prompt_id]
            return document.save()

    def save_reading(self, protocol_id: str, reviewer: str, sha256: str, reading: SourceReading,
                     *, expected: Any = ANY) -> str:
        """Record what ``reviewer`` has had on screen of the snapshot ``sha256``: joined with what their
        file already records (reading only ever grows), in the ``reading:`` section of their codes file."""
        check_reviewer(reviewer)
        if not SHA256_PATTERN.match(sha256):
            raise Rejected(f"{sha256!r} is not a snapshot's SHA-256")
        if reading.blocks < 1 or (reading.read and reading.read[-1][1] >= reading.blocks):
            raise Rejected(f"what was read of {sha256[:12]} names blocks the snapshot does not have")
        path = self.paths.sheet_file(protocol_id, reviewer)
        with self.locked(only=path):
            self._check_expected(path, expected, lambda: self.read_sheet(protocol_id, reviewer, None)[0])
            document = self._sheet_document(path, protocol_id, reviewer)
            section = child_mapping(document.data, "reading")
            on_file = parse_sheet({"reading": dict(section)}, Findings(self.paths.show(path), ""), protocol_id,
                                  reviewer, path, None).reading.get(sha256)
            joined = reading.union(on_file) if on_file is not None else reading
            section[sha256] = reading_mapping(section.get(sha256), joined)
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
        return self.write_cell_groups(((protocol, reviewer, group) for (protocol, reviewer), group in by_file.items()),
                                      rubric, stamp=stamp)

    def write_cell_groups(self, groups: Iterable[tuple[str, str, list[CellUpdate]]], rubric: Rubric, *,
                          stamp: str | None = None) -> WriteResult:
        """:meth:`write_cells` for updates already grouped by file (protocol, reviewer, updates), each
        file once: the groups are consumed one at a time, each staged to disk before the next is
        read, so an import streams in memory bounded by its largest file."""
        stamp = stamp or now_iso()
        changed_files: list[Path] = []
        changed_cells = 0
        with self.locked():
            transaction = self.transaction()
            try:
                for protocol_id, reviewer, group in groups:
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
        if text is None:
            # The fast writer (ruamel's emitter analysis, its regular expressions: a few ms of import) is
            # for new files only, so a one-cell save (quote add, cell set) never loads it.
            from .emit import fast_dump

            payload = fast_dump(document.data, comment)
        else:
            payload = None
        if payload is None:
            if text is None:
                document.data.yaml_set_start_comment(comment)
            payload = document.dumps()
        return path, payload, len(cells)


def _record(cell: Cell) -> tuple[Any, ...]:
    # What an import can change in a cell.
    return (cell.code, cell.source, cell.basis, cell.cites)
