"""Writing the corrections ledger: the file and its record in ``.protocoder/``, as one change.

Every write of ``corrections.yaml`` also writes ``.protocoder/ledger-head.json`` (the entries it
holds), in one :class:`~protocoder.storage.commit.Transaction`: when the record cannot be
written the ledger is left as it was. Which of git or this record a later check compares the
ledger with is decided when reading (:mod:`ledgerwatch`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..storage.commit import Transaction
from ..storage.files import read_text
from ..storage.paths import Paths
from ..storage.store import Store
from ..storage.yamlio import load_document, new_mapping
from .corrections import MERGE, Correction, entry_node, load_corrections, new_entry


def append_correction(paths: Paths, **fields: Any) -> Correction:
    """Append one entry (the fields of :func:`new_entry` but ``prev``) to the ledger, under the
    workspace lock, and return it."""
    with Store(paths).locked():
        existing, problems = load_corrections(paths)
        if problems:
            raise InvalidInput(problems)
        correction = new_entry(prev=existing[-1].hash if existing else "", **fields)
        write_ledger(paths, [*existing, correction])
    return correction


def write_ledger(paths: Paths, entries: Sequence[Correction], *, keep: int | None = None) -> None:
    """Write the ledger with ``entries``: the file's first ``keep`` entries (all that are in it,
    by default) stay as they are written; the rest are added after them. Call under the lock.

    The ledger and its record in ``.protocoder/`` (:func:`head_record_files`) are written as one
    change (:class:`~protocoder.storage.commit.Transaction`): when the record cannot be written
    (a folder in its place, a read-only state folder) the ledger is left as it was and the
    error says so, so a failed command never leaves an entry that nothing watches.
    """
    state = paths.check_state_folder()
    document = load_document(paths.corrections, paths.show(paths.corrections))
    if not paths.corrections.exists():
        document.data.yaml_set_start_comment(
            "Corrections to released cells. Append-only: never edit or delete an entry; record a new one.\n"
            "Each entry's hash covers its content and the previous entry's hash.")
        document.data["head"] = new_mapping()
        document.data["entries"] = []
    nodes = document.data["entries"]
    kept = len(nodes) if keep is None else keep
    del nodes[kept:]
    for correction in entries[kept:]:
        nodes.append(entry_node(correction))
    last = entries[-1].hash if entries else ""
    document.data["head"] = new_mapping([("entries", len(entries)), ("hash", last)])
    change = Transaction(paths.root, state, paths.show)
    if paths.leaves_workspace(paths.corrections.parent):
        raise Rejected(paths.outside_problem(paths.corrections, "corrections.yaml").message)
    change.write(paths.corrections, document.dumps().encode("utf-8"))
    for path, payload in head_record_files(paths, entries).items():
        change.write(path, payload)
    change.commit()


HEAD_RECORD = "ledger-head.json"
"""Beside the locks in ``.protocoder/``: every entry the ledger held when this workspace last
wrote it (hash and a summary), so that a deleted, truncated or rolled-back ``corrections.yaml``
is named even when no release or rendered ``output/`` saw the lost entries and git does not
track the ledger (no repository, a parent repository that ignores the workspace, a copy)."""

STATE_IGNORE = ".gitignore"
"""Written once in ``.protocoder/`` with ``*``: the state folder keeps itself out of git even
in a repository whose own ignore rules do not mention it (a careless ``git add -A`` would
otherwise commit the record, and it would conflict on every merge)."""


def check_record_writable(paths: Paths) -> None:
    """Refuse, before anything is written, a change whose ledger record could not be written: a
    link at ``.protocoder``, or something other than a file in the record's place. For writers
    of more than the ledger (an adjudication of a released cell also appends to consensus.yaml),
    so that a failure leaves every file as it was."""
    state = paths.check_state_folder()
    record = state / HEAD_RECORD
    if os.path.lexists(record) and not record.is_file():
        raise InvalidInput([Problem(paths.show(record), 0, 0, "not a regular file: protocoder keeps the ledger's "
                                    f"record here; move it away (mv {paths.show(record)} elsewhere) and run the "
                                    "command again")])


def head_record_files(paths: Paths, entries: Sequence[Correction]) -> dict[Path, bytes]:
    """The files that record the ledger's entries in ``.protocoder/``: the record itself and,
    when missing, the state folder's own ignore file.

    Written in every layout: whether git or this record is what a later check compares the
    ledger with is decided when reading (see :mod:`ledgerwatch`), so a copy taken without its
    ``.git`` still carries the newest record of its ledger."""
    summary = [{"index": index + 1, "hash": entry.hash, "cell": entry.cell or entry.action, "old": entry.old,
                "new": entry.new or entry.action, "by": entry.by} for index, entry in enumerate(entries)
               if entry.action != MERGE]
    files = {paths.state_dir / HEAD_RECORD: (json.dumps({"entries": summary}, ensure_ascii=False) + "\n").encode()}
    if not os.path.lexists(paths.state_dir / STATE_IGNORE):
        files[paths.state_dir / STATE_IGNORE] = b"# protocoder's locks, records and caches: never committed\n*\n"
    return files


def recorded_head(paths: Paths) -> list[dict[str, Any]]:
    """The entries :func:`head_record_files` recorded (empty when none were, or the record is unreadable)."""
    path = paths.state_dir / HEAD_RECORD
    if paths.state_link(HEAD_RECORD) is not None or not path.is_file() or paths.leaves_workspace(path):
        return []
    try:
        data = json.loads(read_text(path, paths.show(path)))
    except (InvalidInput, ValueError):
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
