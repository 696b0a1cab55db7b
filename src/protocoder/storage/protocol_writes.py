"""Writes of protocols: add, update and remove ``protocols/<id>/`` (and its place in the
display order of ``protocoder.yaml``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import Protocol, is_slug
from .bibliography import load_bibliography
from .files import read_text
from .findings import Findings
from .mappings import comparable, protocol_mapping, protocol_problems, reuse_unchanged
from .paths import Paths
from .writer import ANY, Writer
from .yamlio import Document, load_document, parse_yaml


class ProtocolWrites(Writer):
    """Adding, editing and removing protocols."""

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
