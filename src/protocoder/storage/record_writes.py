"""Writes of the append-only and pinned records: adjudications (``consensus.yaml``), BibTeX
entries (``references.bib``), snapshots of sources (``sources/``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import InvalidInput, Problem, Rejected
from ..model import Adjudication, Comment
from .bibliography import BibEntry, load_bibliography, parse_bibtex
from .files import atomic_write_bytes, atomic_write_text
from .formats.adjudications import OWN_EVIDENCE
from .formats.comments import comments_file
from .mappings import check_texts
from .writer import Writer
from .yamlio import flow_list, flow_mapping, load_document, new_mapping, text_scalar


class RecordWrites(Writer):
    """Appending adjudications and bibliography entries; writing and removing snapshots."""

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
            if adjudication.taken_from:
                entry["taken_from"] = text_scalar(adjudication.taken_from)
            if adjudication.kept is not None:
                entry["evidence"] = flow_list(list(adjudication.kept)) if adjudication.kept else OWN_EVIDENCE
            for key in ("source", "basis"):
                if getattr(adjudication, key):
                    entry[key] = text_scalar(getattr(adjudication, key))
            if adjudication.cites:
                entry["cites"] = flow_list(list(adjudication.cites))
            entries.append(entry)
            document.save()
        return path

    # ------------------------------------------------------------------ comments

    def append_comment(self, comment: Comment) -> Path:
        """Append one comment to its author's file of the protocol (``comments/<by>.yaml``)."""
        path = self._inside(comments_file(self.paths, comment.protocol, comment.by))
        if not self.paths.protocol_file(comment.protocol).is_file():
            raise Rejected(f"no protocol {comment.protocol!r} in this workspace")
        check_texts({"the comment": comment.text})
        with self.locked():
            path.parent.mkdir(exist_ok=True)
            document = load_document(path, self.paths.show(path))
            if not path.exists():
                document.data.yaml_set_start_comment(
                    f"{comment.by}'s comments on cells of {comment.protocol} (protocoder comment). Append-only.")
            entries = document.data.get("comments")
            if entries is None:
                entries = []
                document.data["comments"] = entries
            entries.append(new_mapping([("field", comment.field), ("at", comment.at),
                                        ("text", text_scalar(comment.text))]))
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
