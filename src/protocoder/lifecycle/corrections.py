"""The append-only corrections ledger (``corrections.yaml``).

After a release, a released cell's final code changes only through a correction: an
entry naming the release, the cell, the old and new code, the reason, who and when. Each
entry carries the hash of the previous entry and its own hash, and the file's ``head``
records how many entries there are and the last hash, so an edited, reordered or deleted
entry is detected. A wrong correction is undone by a later correction, never by editing.
The current view of the review is the release plus its corrections, applied in order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import is_slug
from ..storage.formats import Findings, Reader, describe, text_problem
from ..storage.store import Store, now_iso
from ..storage.workspace import Paths
from ..storage.yamlio import flow_list, load_document, new_mapping, parse_yaml, read_text, text_scalar

ENTRY_KEYS = ("release", "cell", "old", "new", "reason", "by", "at", "source", "basis", "cites", "prev")


@dataclass(frozen=True)
class Correction:
    """One correction of a released cell."""

    release: str
    cell: str
    old: str
    new: str
    reason: str
    by: str
    at: str
    prev: str
    hash: str
    source: str = ""
    basis: str = ""
    cites: tuple[str, ...] = ()

    def content(self) -> dict[str, Any]:
        """The hashed part of the entry (everything but its own hash)."""
        data = asdict(self)
        data.pop("hash")
        data["cites"] = list(self.cites)
        return data


def entry_hash(content: dict[str, Any]) -> str:
    """SHA-256 of an entry's content in canonical JSON."""
    payload = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def load_corrections(paths: Paths) -> tuple[list[Correction], list[Problem]]:
    """Read the ledger and verify its hash chain; problems name the entry's line."""
    path = paths.corrections
    if os.path.lexists(path) and paths.leaves_workspace(path):
        return [], [paths.outside_problem(path, "corrections.yaml")]  # never read through the link
    if not path.exists():
        return [], []
    display = paths.show(path)
    try:
        text = read_text(path, display)
        data = parse_yaml(text, display)
    except InvalidInput as exc:
        return [], list(exc.problems)
    findings = Findings(display, text)
    r = Reader(findings)
    top = r.mapping(data, [], required=("entries",), optional=("head",), what="a corrections ledger")
    entries: list[Correction] = []
    if top is None:
        return [], findings.problems()
    raw = top.get("entries") or []
    if not isinstance(raw, list):
        r.add(["entries"], f"expected a list of corrections, found {describe(raw)}")
        raw = []
    previous = ""
    for index, item in enumerate(raw):
        path_ = ["entries", index]
        entry = r.mapping(item, path_, required=("release", "cell", "old", "new", "reason", "by", "at", "prev", "hash"),
                          optional=("source", "basis", "cites"), what="a correction mapping")
        if entry is None:
            continue
        correction = Correction(
            r.text(entry, "release", path_), r.text(entry, "cell", path_), r.text(entry, "old", path_),
            r.text(entry, "new", path_), r.text(entry, "reason", path_), r.text(entry, "by", path_),
            r.moment(entry, "at", path_), r.text(entry, "prev", path_), r.text(entry, "hash", path_),
            r.text(entry, "source", path_), r.text(entry, "basis", path_), r.text_list(entry, "cites", path_))
        if entry_hash(correction.content()) != correction.hash:
            r.add([*path_, "hash"], f"correction {index + 1} ({correction.cell}) was edited after it was recorded: "
                                    "its content no longer matches its hash")
        if correction.prev != previous:
            r.add([*path_, "prev"], f"correction {index + 1} ({correction.cell}) does not follow the entry before it: "
                                    "an entry was deleted or the entries were reordered")
        previous = correction.hash
        entries.append(correction)
    head = top.get("head")
    if isinstance(head, dict):
        if head.get("entries") != len(raw) or head.get("hash", "") != previous:
            r.add(["head"], f"the ledger head records {head.get('entries')} entries ending in {head.get('hash')!r}, "
                            f"but the file holds {len(raw)}: an entry was deleted or added by hand")
    else:
        r.add(["head"] if "head" in top else [], "the ledger has no head (entries count and last hash)")
    return entries, findings.problems()


def append_correction(paths: Paths, *, release: str, cell: str, old: str, new: str, reason: str, by: str,
                      source: str = "", basis: str = "", cites: Sequence[str] = ()) -> Correction:
    """Append one correction to the ledger (under the workspace lock) and return it."""
    if not reason.strip():
        raise Rejected("a correction needs a reason")
    if problem := text_problem("the reason", reason):
        raise Rejected(problem)
    if not is_slug(by):
        raise Rejected(f"name {by!r} is not a safe id")
    store = Store(paths)
    with store.locked():
        existing, problems = load_corrections(paths)
        if problems:
            raise InvalidInput(problems)
        previous = existing[-1].hash if existing else ""
        content = {"release": release, "cell": cell, "old": old, "new": new, "reason": reason.strip(), "by": by,
                   "at": now_iso(), "prev": previous, "source": source, "basis": basis, "cites": list(cites)}
        correction = Correction(hash=entry_hash(content), **{**content, "cites": tuple(cites)})
        document = load_document(paths.corrections, paths.show(paths.corrections))
        if not paths.corrections.exists():
            document.data.yaml_set_start_comment(
                "Corrections to released cells. Append-only: never edit or delete an entry; record a new one.\n"
                "Each entry's hash covers its content and the previous entry's hash.")
            document.data["head"] = new_mapping()
            document.data["entries"] = []
        entry = new_mapping()
        for key in ENTRY_KEYS:
            value = content[key]
            if key in ("source", "basis") and not value:
                continue
            if key == "cites":
                if value:
                    entry[key] = flow_list(value)
                continue
            entry[key] = text_scalar(value) if isinstance(value, str) else value
        entry["hash"] = correction.hash
        document.data["entries"].append(entry)
        document.data["head"] = new_mapping([("entries", len(existing) + 1), ("hash", correction.hash)])
        document.save()
    return correction


def apply_corrections(cells: Iterable[dict[str, Any]], corrections: Iterable[Correction]) -> list[dict[str, Any]]:
    """The view cells with corrections applied in order (a later entry wins)."""
    by_key = {f"{c['protocol']}/{c['field']}": dict(c) for c in cells}
    for correction in corrections:
        cell = by_key.get(correction.cell)
        if cell is None:
            continue
        cell["code"] = correction.new
        # A correction is a recorded decision with a reason, like an adjudication.
        cell["status"] = "adjudicated"
        cell["corrected"] = True
        if correction.source or correction.basis:
            cell["source"], cell["basis"], cell["cites"] = correction.source, correction.basis, list(correction.cites)
            cell.pop("quotes", None)  # they supported the record this correction replaced
    return list(by_key.values())


def correction_records(corrections: Iterable[Correction], labels: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Corrections as view data for ``corrections.{md,tex}`` (``labels``: cell → (protocol name, field label))."""
    records = []
    for c in corrections:
        protocol, field_label = labels.get(c.cell, (c.cell.partition("/")[0], c.cell.partition("/")[2]))
        records.append({"release": c.release, "cell": c.cell, "protocol": protocol, "field": field_label,
                        "old": c.old, "new": c.new, "reason": c.reason, "by": c.by, "at": c.at})
    return records
