"""One decision written to two files, all or nothing: an adjudication of a released cell.

Adjudicating a released cell records the decision in ``protocols/<id>/consensus.yaml`` and
the correction it makes in ``corrections.yaml``. Each write is atomic, but a process killed
between them would leave the adjudication without its correction. So the pair is written
under the workspace lock through a redo journal:

1. ``.protocoder/pending.json`` is written (atomically) with both entries, complete;
2. the adjudication is appended, then the correction;
3. the journal is removed.

A journal left behind means the process died in step 2: :func:`finish_pending` completes
whatever is missing (each step is recognised when it is already done), and every
lifecycle write (adjudicate, correct, freeze, withdraw, ``protocoder recover``) calls it
first. Until then ``validate``, ``status`` and ``render`` report it and name the command.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..storage.files import atomic_write_text, read_capped
from ..storage.paths import Paths
from ..storage.store import Store
from .consensus import Adjudication
from .corrections import Correction, load_corrections
from .ledger_writes import check_record_writable, write_ledger

JOURNAL = "pending.json"


def journal_path(paths: Paths) -> Any:
    """Where an interrupted two-file write leaves its journal."""
    return paths.state_dir / JOURNAL


def write_both(paths: Paths, adjudication: Adjudication, correction: Correction) -> None:
    """Append ``adjudication`` and ``correction`` as one operation (call under the workspace lock)."""
    check_record_writable(paths)  # else consensus.yaml would change and the ledger's write fail
    path = journal_path(paths)
    record = {"operation": "adjudicate", "adjudication": _adjudication_data(adjudication),
              "correction": _correction_data(correction)}
    atomic_write_text(path, json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    _complete(paths, adjudication, correction)
    os.unlink(path)


def pending_problem(paths: Paths) -> Problem | None:
    """The problem reported while a journal waits to be finished (None when there is none)."""
    path = journal_path(paths)
    if not path.exists():
        return None
    try:
        adjudication, _ = _read(paths)
        what = f"an adjudication of {adjudication.protocol}/{adjudication.field}"
    except InvalidInput:
        what = "an adjudication"
    return Problem(paths.show(path), 0, 0, f"{what} was interrupted before all of its files were written: "
                   "run `protocoder recover` to finish it")


def finish_pending(paths: Paths) -> str | None:
    """Complete an interrupted adjudication (call under the workspace lock); say what was done."""
    path = journal_path(paths)
    if not path.exists():
        return None
    adjudication, correction = _read(paths)
    _complete(paths, adjudication, correction)
    os.unlink(path)
    return (f"finished the adjudication of {adjudication.protocol}/{adjudication.field} "
            f"({adjudication.code}) and its correction in release {correction.release}")


def _complete(paths: Paths, adjudication: Adjudication, correction: Correction) -> None:
    from ..storage.workspace import load_review

    review = load_review(paths.root)
    recorded = review.adjudications.get((adjudication.protocol, adjudication.field), [])
    if not any(_same(entry, adjudication) for entry in recorded):
        Store(paths).append_adjudication(adjudication)
    entries, problems = load_corrections(paths)
    if problems:
        raise InvalidInput(problems)
    head = entries[-1].hash if entries else ""
    if head == correction.hash or any(entry.hash == correction.hash for entry in entries):
        return
    if head != correction.prev:
        raise Rejected(f"{paths.show(paths.corrections)} changed since the interrupted adjudication of "
                       f"{correction.cell}; record its correction by hand: protocoder correct --cell "
                       f"{correction.cell} --code {correction.new} --reason \"...\"")
    write_ledger(paths, [*entries, correction])


def _same(entry: Adjudication, wanted: Adjudication) -> bool:
    return (entry.field, entry.code, entry.by, entry.at, entry.resolved_hash) == (
        wanted.field, wanted.code, wanted.by, wanted.at, wanted.resolved_hash)


def _adjudication_data(adjudication: Adjudication) -> dict[str, Any]:
    data = asdict(adjudication)
    data.pop("entry")
    data["cites"] = list(adjudication.cites)
    return data


def _correction_data(correction: Correction) -> dict[str, Any]:
    return correction.content() | {"hash": correction.hash}


def _read(paths: Paths) -> tuple[Adjudication, Correction]:
    path = journal_path(paths)
    shown = paths.show(path)
    try:
        record = json.loads(read_capped(path, shown, 1 << 26).decode("utf-8"))
        data = dict(record["adjudication"])
        kept = data.get("kept")
        adjudication = Adjudication(**{**data, "cites": tuple(data["cites"]),
                                       "kept": tuple(kept) if kept is not None else None})
        data = dict(record["correction"])
        correction = Correction(**{**data, "cites": tuple(data.get("cites", ()))})
    except InvalidInput:
        raise
    except (ValueError, KeyError, TypeError):
        raise InvalidInput([Problem(shown, 0, 0, "damaged journal of an interrupted adjudication; check "
                                    "consensus.yaml and corrections.yaml with protocoder validate, then "
                                    "delete this file")]) from None
    return adjudication, correction
