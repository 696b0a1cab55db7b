"""Many machines, one history: a git merge driver for the append-only files.

Reviewers' files never conflict (one file per reviewer), but two branches that each
appended to ``corrections.yaml`` or to a protocol's ``consensus.yaml`` do: git sees two
different additions at the end of the same list. ``protocoder merge-driver`` (installed by
``protocoder git-setup``) merges them the way the files mean:

* entries both sides share stay as they are; each side's new entries are kept, in one
  deterministic order (by time, then content: the same result whichever side merges); two
  entries are joined into one only when identical in code, evidence, reason and author;
* the ledger's hash chain is rebuilt over the merged order, and a *merge entry* records
  the two heads it joined and, for each entry that got a new place, its old hash and old
  ``prev`` — so a release anchored to either side's pre-merge ledger is still verified
  (:func:`corrections.resolve_anchor`), and the record is checkable (the old hash is the
  unchanged content chained to the old ``prev``);
* when both sides decided the same cell differently (a correction, or an adjudication,
  with different codes or evidence), nothing is decided for the team: the driver exits
  non-zero and leaves git's usual conflict in the file.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InvalidInput, Rejected
from ..storage.files import atomic_write_text, read_text
from ..storage.findings import Findings
from ..storage.yamlio import Document, load_document, new_mapping, parse_yaml
from .corrections import MERGE, WITHDRAW, Correction, Rechained, entry_hash, entry_node, parse_corrections

DRIVER = "protocoder"
ATTRIBUTES = ("corrections.yaml merge=protocoder", "protocols/*/consensus.yaml merge=protocoder")
MERGER = "git-merge"
"""The ``by`` of merge entries (they are made by the driver, for whoever merges)."""

T = TypeVar("T")


class Refused(Exception):
    """The two sides cannot be merged without a person deciding."""


# --------------------------------------------------------------------------- installing


def _git(args: Sequence[str], cwd: Path, *, check: bool = True, input_text: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check, input=input_text)


def git_repository(folder: Path) -> Path | None:
    """The top folder of the git repository holding ``folder``, or None (also when git is missing)."""
    try:
        done = _git(["rev-parse", "--show-toplevel"], folder, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def install_merge_driver(root: Path) -> list[str]:
    """Write ``.gitattributes`` in the workspace and the driver into the repository's config."""
    if git_repository(root) is None:
        raise Rejected(f"{root} is not inside a git repository: run `git init` there first, then "
                       "protocoder git-setup")
    attributes = root / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    missing = [line for line in ATTRIBUTES if line not in text.splitlines()]
    if missing:
        atomic_write_text(attributes, text + ("" if not text or text.endswith("\n") else "\n")
                          + "\n".join(missing) + "\n")
    # The interpreter running now is the one that has protocoder: git may run the driver
    # with a PATH on which the `protocoder` script is not.
    command = f"{shlex.quote(sys.executable)} -m protocoder merge-driver %O %A %B %P"
    _git(["config", f"merge.{DRIVER}.name", "protocoder: append-only history (corrections, adjudications)"], root)
    _git(["config", f"merge.{DRIVER}.driver", command], root)
    return [f"{'Updated' if missing else 'Kept'} {attributes.name}: corrections.yaml and protocols/*/consensus.yaml "
            "merge with the protocoder driver",
            f"Set merge.{DRIVER}.driver in the repository's config: {command}",
            "Commit .gitattributes; every clone runs protocoder git-setup once (git does not copy config)."]


# --------------------------------------------------------------------------- merging


def merge_files(base: Path, ours: Path, theirs: Path, name: str = "") -> str | None:
    """Merge THEIRS into OURS (git's %A, rewritten in place); the reason when refused."""
    try:
        texts = [read_text(path, label) if path.exists() else "" for path, label in
                 ((base, "base"), (ours, "ours"), (theirs, "theirs"))]
        kind = _kind(name, texts)
        if kind == "ledger":
            merged = merge_ledgers(ours, *texts)
        else:
            merged = merge_consensus(ours, *texts, protocol=_protocol_of(name))
    except Refused as exc:
        _leave_conflict(base, ours, theirs)
        return str(exc)
    except InvalidInput as exc:
        _leave_conflict(base, ours, theirs)
        return f"cannot be read ({exc.problems[0]})"
    if merged is not None:
        merged.save()
    return None


def _kind(name: str, texts: list[str]) -> str:
    base_name = Path(name).name
    if base_name == "corrections.yaml":
        return "ledger"
    if base_name == "consensus.yaml":
        return "consensus"
    for text in texts:
        data = parse_yaml(text, "merged file") if text.strip() else None
        if isinstance(data, dict) and "entries" in data:
            return "ledger"
        if isinstance(data, dict) and "adjudications" in data:
            return "consensus"
    raise Refused("neither a corrections ledger nor a consensus file")


def _protocol_of(name: str) -> str:
    parts = Path(name).parts
    return parts[-2] if len(parts) >= 2 else "this protocol"


def _leave_conflict(base: Path, ours: Path, theirs: Path) -> None:
    # What git itself would have left: both versions with conflict markers.
    with contextlib.suppress(OSError):
        subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", str(ours), str(base),
                        str(theirs)], capture_output=True, check=False)


def _merge_sides(base: list[T], ours: list[T], theirs: list[T], key: Callable[[T], Any],
                 identity: Callable[[T], Any]) -> tuple[int, list[T], list[T]]:
    """The length of the shared prefix, and each side's entries after it (those both have dropped from theirs)."""
    if [identity(x) for x in ours[:len(base)]] != [identity(x) for x in base] or \
            [identity(x) for x in theirs[:len(base)]] != [identity(x) for x in base]:
        raise Refused("a branch changed or removed entries that were already in the common version: the history "
                      "was rewritten on that branch; nothing can be merged automatically")
    common = len(base)
    while common < min(len(ours), len(theirs)) and identity(ours[common]) == identity(theirs[common]):
        common += 1
    mine, other = ours[common:], theirs[common:]
    seen = {key(item) for item in mine}
    return common, mine, [item for item in other if key(item) not in seen]


def _interleave(first: list[T], second: list[T], order: Callable[[T], Any]) -> list[T]:
    """Both lists merged by ``order``, each keeping its own order (like the merge step of merge sort)."""
    result, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        if order(first[i]) <= order(second[j]):
            result.append(first[i])
            i += 1
        else:
            result.append(second[j])
            j += 1
    return result + first[i:] + second[j:]


def _ledger(text: str, label: str) -> list[Correction]:
    if not text.strip():
        return []
    entries, problems = parse_corrections(parse_yaml(text, label), Findings(label, text))
    if problems:
        raise InvalidInput(problems)
    return entries


def _content_key(entry: Correction) -> str:
    content = entry.content()
    content.pop("prev")
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


def _decision(entry: Correction) -> tuple[Any, ...]:
    return (entry.new, entry.source, entry.basis, tuple(entry.cites), entry.quotes)


def merge_ledgers(ours_path: Path, base_text: str, ours_text: str, theirs_text: str) -> Document | None:
    """The merged ``corrections.yaml`` as a document to save over OURS (None: OURS is the result)."""
    base, ours, theirs = _ledger(base_text, "base"), _ledger(ours_text, "ours"), _ledger(theirs_text, "theirs")
    common, mine, other = _merge_sides(base, ours, theirs, _content_key, lambda e: e.hash)
    if not other:
        return None
    if not mine:
        document = load_document(ours_path, "theirs")
        document.data = _parse_document(theirs_text)
        return document
    _refuse_conflicting_corrections(mine, other)
    labels = {side: {e.release for e in entries if e.action != MERGE} for side, entries in
              (("ours", mine), ("theirs", other))}
    if labels["ours"] and labels["theirs"] and labels["ours"] != labels["theirs"]:
        raise Refused(f"the branches corrected different releases ({', '.join(sorted(labels['ours']))} here, "
                      f"{', '.join(sorted(labels['theirs']))} there): one froze a new release while the other "
                      "corrected the old one. Keep this branch's ledger (git checkout --ours corrections.yaml) and "
                      "record the other branch's corrections again with protocoder correct")
    merged, was, joins = _rebase(_interleave(mine, other, lambda e: (e.at, _content_key(e))))
    prev = ours[common - 1].hash if common else ""
    chained: list[Correction] = []
    moved: list[Rechained] = []
    for entry, original in zip(merged, was, strict=True):
        content = entry.content() | {"prev": prev}
        new_hash = entry_hash(content)
        if new_hash != original.hash:
            moved.append(Rechained(original.hash, original.prev, new_hash,
                                   original.old if original.old != entry.old else None))
        chained.append(replace(entry, prev=prev, hash=new_hash))
        prev = new_hash
    joined = tuple(Rechained(dropped.hash, dropped.prev, chained[into].hash) for dropped, into in joins)
    heads = tuple(sorted({ours[-1].hash, theirs[-1].hash}))
    reason = f"merged two branches' corrections ({len(mine)} and {len(other)} new"
    reason += f", {len(joins)} identical joined)" if joins else ")"
    merge_entry = Correction("", "", "", "", reason, MERGER, max(entry.at for entry in merged), prev, "",
                             action=MERGE, heads=heads, rechained=tuple(moved), joined=joined)
    chained.append(replace(merge_entry, hash=entry_hash(merge_entry.content())))
    document = load_document(ours_path, "ours")
    nodes = document.data["entries"]
    del nodes[common:]
    nodes.extend(entry_node(entry) for entry in chained)
    everything = [*ours[:common], *chained]
    document.data["head"] = new_mapping([("entries", len(everything)), ("hash", everything[-1].hash)])
    return document


def _rebase(merged: list[Correction]) -> tuple[list[Correction], list[Correction], list[tuple[Correction, int]]]:
    """Make the merged order mean what happened, cell by cell.

    An entry identical to the cell's previous merged entry (of the other branch) in code,
    evidence, reason and author — the same correction, or the same withdrawal, made on both
    branches — is joined into it rather than listed twice. Any other entry stays, so no reason
    or author is lost: one whose cell the other branch changed first is re-based, its ``old``
    becoming the code the cell had then (two corrections to the same code for different
    reasons both stay, in order, the second going from that code to itself). Returns the kept
    entries, each one as it was before (for the merge entry's record), and the joined entries
    with the index of the entry they joined.
    """
    kept: list[Correction] = []
    originals: list[Correction] = []
    joins: list[tuple[Correction, int]] = []
    state: dict[str, tuple[int, tuple[Any, ...]]] = {}  # cell (or withdrawn protocol) -> last entry, decision
    for entry in merged:
        if entry.action == MERGE:
            kept.append(entry)
            originals.append(entry)
            continue
        target = f"withdraw:{entry.protocol}" if entry.action == WITHDRAW else entry.cell
        decision = (*_decision(entry), entry.reason, entry.by)
        if target in state:
            index, before = state[target]
            if decision == before:  # the same decision, for the same reason, by the same person
                joins.append((entry, index))
                continue
            code_then = kept[index].new
            rebased = replace(entry, old=code_then) if not entry.action and entry.old != code_then else entry
        else:
            rebased = entry
        state[target] = (len(kept), decision)
        kept.append(rebased)
        originals.append(entry)
    return kept, originals, joins


def _refuse_conflicting_corrections(mine: list[Correction], other: list[Correction]) -> None:
    def last(entries: list[Correction]) -> dict[str, Correction]:
        return {entry.cell: entry for entry in entries if not entry.action}

    ours, theirs = last(mine), last(other)
    for cell in sorted(set(ours) & set(theirs)):
        if _decision(ours[cell]) != _decision(theirs[cell]):
            raise Refused(f"both branches corrected {cell} differently (here {ours[cell].new}: "
                          f"{ours[cell].reason!r}; there {theirs[cell].new}: {theirs[cell].reason!r}): decide which "
                          "stands, keep that side's file, and record the other decision again if it should follow")


def _parse_document(text: str) -> Any:
    from ..storage.yamlio import _roundtrip_yaml

    return _roundtrip_yaml().load(text)


def _consensus_entries(text: str, label: str) -> tuple[Any, list[Any]]:
    if not text.strip():
        return None, []
    data = parse_yaml(text, label)
    if not isinstance(data, dict) or not isinstance(data.get("adjudications") or [], list):
        raise Refused(f"the {label} version is not a consensus file (a mapping with a list of adjudications)")
    return data, list(data.get("adjudications") or [])


def _canonical(entry: Any) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)


def merge_consensus(ours_path: Path, base_text: str, ours_text: str, theirs_text: str, *,
                    protocol: str) -> Document | None:
    """The merged ``consensus.yaml`` as a document to save over OURS (None: OURS is the result)."""
    _, base = _consensus_entries(base_text, "base")
    _, ours = _consensus_entries(ours_text, "ours")
    _, theirs = _consensus_entries(theirs_text, "theirs")
    common, mine, other = _merge_sides(base, ours, theirs, _canonical, _canonical)
    if not other:
        return None
    theirs_document = _parse_document(theirs_text)
    if not mine:
        document = load_document(ours_path, "ours")
        document.data = theirs_document
        return document

    def decision(entry: Any) -> tuple[Any, ...]:
        return (entry.get("code"), entry.get("source"), entry.get("basis"), _canonical(entry.get("cites")))

    last_ours = {entry.get("field"): entry for entry in mine if isinstance(entry, dict)}
    last_theirs = {entry.get("field"): entry for entry in other if isinstance(entry, dict)}
    for field_id in sorted(set(last_ours) & set(last_theirs), key=str):
        if decision(last_ours[field_id]) != decision(last_theirs[field_id]):
            raise Refused(f"both branches adjudicated {protocol}/{field_id} differently (here "
                          f"{last_ours[field_id].get('code')}, there {last_theirs[field_id].get('code')}): decide "
                          "which stands, keep that side's file, and adjudicate again if needed")
    # The round-trip nodes keep each side's formatting and comments.
    ours_nodes = load_document(ours_path, "ours").data
    their_nodes = theirs_document["adjudications"]
    by_key = {_canonical(entry): node for entry, node in zip(theirs, their_nodes, strict=True)}
    mine_nodes = list(ours_nodes["adjudications"])[common:]
    merged = _interleave(list(zip(mine, mine_nodes, strict=True)), [(e, by_key[_canonical(e)]) for e in other],
                         lambda pair: (str(pair[0].get("at", "")), _canonical(pair[0])))
    entries = ours_nodes["adjudications"]
    del entries[common:]
    entries.extend(node for _, node in merged)
    document = load_document(ours_path, "ours")
    document.data = ours_nodes
    return document
