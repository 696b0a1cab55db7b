"""The append-only corrections ledger (``corrections.yaml``).

After a release, a released cell's final code changes only through a correction: an
entry naming the release, the cell, the old and new code, the reason, who and when. Each
entry carries the hash of the previous entry and its own hash, and the file's ``head``
records how many entries there are and the last hash, so an edited, reordered or deleted
entry is detected. A wrong correction is undone by a later correction, never by editing.
The current view of the review is the release plus its corrections, applied in order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import Quote, is_slug
from ..storage.files import read_text
from ..storage.findings import Findings, Reader, describe, text_problem
from ..storage.paths import Paths
from ..storage.store import now_iso
from ..storage.yamlio import flow_list, new_mapping, parse_yaml, text_scalar
from .digests import canonical_hash

ENTRY_KEYS = ("action", "release", "cell", "old", "new", "reason", "by", "at", "source", "basis", "cites", "quotes",
              "live", "heads", "rechained", "joined", "prev")

CORRECT, WITHDRAW, MERGE = "", "withdraw", "merge"
ACTIONS = (CORRECT, WITHDRAW, MERGE)
"""What a ledger entry does: correct a released cell (the default, written without an
``action`` key), withdraw a released protocol from the current view, or record a merge of
two branches' ledgers (see :mod:`gitmerge`)."""


@dataclass(frozen=True)
class Rechained:
    """An entry a merge gave a new place in the chain: its hash before and after, and its old ``prev``.

    With ``prev`` the entry's old hash can be recomputed from its (unchanged) content, so a
    release anchored to the pre-merge ledger is still verified against the merged one.
    """

    old: str
    prev: str
    new: str
    was: str | None = None
    """The entry's old ``old`` code, when the merge re-based it (the other branch had already
    changed the cell, so what it was before the entry changed too)."""

    def record(self) -> dict[str, str]:
        """The item as the ledger stores it (``was`` only when set, so older merges keep their hashes)."""
        data = asdict(self)
        if self.was is None:
            data.pop("was")
        return data


@dataclass(frozen=True)
class Correction:
    """One entry of the ledger: a correction of a released cell (or a withdrawal, or a merge)."""

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
    action: str = CORRECT
    heads: tuple[str, ...] = ()
    rechained: tuple[Rechained, ...] = ()
    live: str = ""
    """Hash of the reviewers' consensus record of the cell when the correction was made: what
    "changed since" is measured against afterwards (empty in entries made before it existed)."""
    quotes: tuple[Quote, ...] = ()
    """Passages of pinned sources the corrected cell rests on (checked against their snapshots
    when the correction was made); empty in entries without them, which keep their hashes."""
    joined: tuple[Rechained, ...] = ()
    """A merge entry's record of entries it joined into an identical one of the other branch:
    each one's hash and ``prev`` then, and (``new``) the entry that now says what it said."""

    @property
    def protocol(self) -> str:
        """The protocol the entry is about (a withdrawal names only the protocol)."""
        return self.cell.partition("/")[0]

    def content(self) -> dict[str, Any]:
        """The hashed part of the entry (everything but its own hash).

        The keys of later entry kinds are present only when set, so entries written before
        they existed keep their hashes.
        """
        data = asdict(self)
        data.pop("hash")
        data["cites"] = list(self.cites)
        for key in ("action", "heads", "rechained", "live", "joined", "quotes"):
            if not data[key]:
                data.pop(key)
        if self.heads:
            data["heads"] = list(self.heads)
        if self.rechained:
            data["rechained"] = [item.record() for item in self.rechained]
        if self.joined:
            data["joined"] = [item.record() for item in self.joined]
        if self.quotes:
            data["quotes"] = [quote_record(quote) for quote in self.quotes]
        return data


def quote_record(quote: Quote) -> dict[str, Any]:
    """A quote as a correction entry holds and hashes it: every key, but ``lines`` only when set,
    so entries written before quotes had line ranges keep their hashes."""
    data = asdict(quote)
    if quote.lines is None:
        data.pop("lines")
    else:
        data["lines"] = list(quote.lines)
    return data


def entry_hash(content: dict[str, Any]) -> str:
    """SHA-256 of an entry's content in canonical JSON."""
    return canonical_hash(content)


GIT_SETUP_HINT = ("if a git merge made this, git joined two branches' ledgers as text (or they were joined by hand): "
                  "run protocoder git-setup, which installs protocoder's merge driver for corrections.yaml and "
                  "consensus.yaml (it joins both branches' entries into one hash chain and records the merge), then "
                  "redo this file's merge (git checkout -m corrections.yaml while the merge is in progress, or merge "
                  "the branches again)")
"""What every message about a ledger broken the way a text merge breaks it ends with."""


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
        if (line := _conflict_marker(text)) is not None:
            return [], [Problem(display, line, 1, f"the ledger holds git conflict markers; {GIT_SETUP_HINT}")]
        data = parse_yaml(text, display)
    except InvalidInput as exc:
        return [], list(exc.problems)
    return parse_corrections(data, Findings(display, text))


def parse_corrections(data: Any, findings: Findings) -> tuple[list[Correction], list[Problem]]:
    """Check a parsed ledger: every entry's shape, its hash, the chain and the head."""
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
        action = item.get("action", CORRECT) if isinstance(item, dict) else CORRECT
        named = ("release", "cell", "old", "new")
        required = ("reason", "by", "at", "prev", "hash") + (named if action == CORRECT else ())
        optional = ("action", "source", "basis", "cites", "quotes", "live", "heads", "rechained", "joined") + \
            (named if action else ())
        entry = r.mapping(item, path_, required=required, optional=optional, what="a correction mapping")
        if entry is None:
            continue
        if action not in ACTIONS:
            r.add([*path_, "action"], f"unknown action {action!r} (expected withdraw or merge)")
            continue
        correction = Correction(
            r.text(entry, "release", path_), r.text(entry, "cell", path_), r.text(entry, "old", path_),
            r.text(entry, "new", path_), r.text(entry, "reason", path_), r.text(entry, "by", path_),
            r.moment(entry, "at", path_), r.text(entry, "prev", path_), r.text(entry, "hash", path_),
            r.text(entry, "source", path_), r.text(entry, "basis", path_), r.text_list(entry, "cites", path_),
            action, r.text_list(entry, "heads", path_), _rechained(r, entry, path_), r.text(entry, "live", path_),
            quotes=_quotes(r, entry, path_), joined=_rechained(r, entry, path_, "joined"))
        if entry_hash(correction.content()) != correction.hash:
            r.add([*path_, "hash"], f"correction {index + 1} ({correction.cell or action}) was edited after it was "
                                    "recorded: its content no longer matches its hash")
        if correction.prev != previous:
            r.add([*path_, "prev"], f"correction {index + 1} ({correction.cell or action}) does not follow the entry "
                                    f"before it: an entry was deleted or the entries were reordered; {GIT_SETUP_HINT}")
        previous = correction.hash
        entries.append(correction)
    _check_merges(r, entries)
    head = top.get("head")
    if isinstance(head, dict):
        if head.get("entries") != len(raw) or head.get("hash", "") != previous:
            r.add(["head"], f"the ledger head records {head.get('entries')} entries ending in {head.get('hash')!r}, "
                            f"but the file holds {len(raw)}: an entry was deleted or added by hand; {GIT_SETUP_HINT}")
    else:
        r.add(["head"] if "head" in top else [], "the ledger has no head (entries count and last hash)")
    return entries, findings.problems()


def _quotes(r: Reader, entry: dict[str, Any], path: list[str | int]) -> tuple[Quote, ...]:
    """A correction's quotes, as :func:`entry_node` writes them (every key of a quote)."""
    raw = entry.get("quotes")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        r.add([*path, "quotes"], f"expected a list of quotes, found {describe(raw)}")
        return ()
    names = [item.name for item in fields(Quote)]
    quotes = []
    for index, item in enumerate(raw):
        where = [*path, "quotes", index]
        checked = r.mapping(item, where, required=("source", "text"), optional=names, what="a quote mapping")
        if checked is not None:
            values = {name: checked[name] for name in names if name in checked}
            if isinstance(values.get("lines"), list):
                values["lines"] = tuple(values["lines"])
            quotes.append(Quote(**values))
    return tuple(quotes)


def _conflict_marker(text: str) -> int | None:
    """The line of the first git conflict marker in ``text``, or None."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(("<<<<<<<", ">>>>>>>")) or line == "=======":
            return number
    return None


def _rechained(r: Reader, entry: dict[str, Any], path: list[str | int], key: str = "rechained"
               ) -> tuple[Rechained, ...]:
    raw = entry.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        r.add([*path, key], f"expected a list, found {describe(raw)}")
        return ()
    items = []
    for index, item in enumerate(raw):
        checked = r.mapping(item, [*path, key, index], required=("old", "prev", "new"), optional=("was",),
                            what="a mapping with old, prev and new")
        if checked is not None:
            where = [*path, key, index]
            items.append(Rechained(r.text(checked, "old", where), r.text(checked, "prev", where),
                                   r.text(checked, "new", where), r.text(checked, "was", where)
                                   if "was" in checked else None))
    return tuple(items)


def _check_merges(r: Reader, entries: list[Correction]) -> None:
    """A merge entry's record of re-chained entries must be true: each one's old hash is its
    unchanged content chained to its old ``prev``."""
    position = {entry.hash: index for index, entry in enumerate(entries)}
    for index, entry in enumerate(entries):
        for item in entry.rechained:
            # A later merge may have re-chained the entry again: follow it there.
            found = position.get(resolve_anchor(entries, item.new) or "")
            if found is None or found >= index:
                r.add(["entries", index, "rechained"], f"merge entry {index + 1} names a re-chained entry "
                                                       f"{item.new[:19]}… that is not before it in the ledger")
                continue
            content = entries[found].content() | {"prev": item.prev}
            if item.was is not None:
                content["old"] = item.was
            if entry_hash(content) != item.old:
                r.add(["entries", index, "rechained"], f"merge entry {index + 1}: entry {found + 1} is not the "
                                                       "entry it re-chains (its content changed in the merge)")
        for item in entry.joined:
            found = position.get(resolve_anchor(entries, item.new) or "")
            if found is None or found >= index:
                r.add(["entries", index, "joined"], f"merge entry {index + 1} joins an entry into {item.new[:19]}…, "
                                                    "which is not before it in the ledger")


def resolve_anchor(entries: Sequence[Correction], anchor_hash: str) -> str | None:
    """The hash ``anchor_hash`` has in this ledger, following merges that re-chained it; None if lost."""
    present = {entry.hash for entry in entries}
    mapping = {item.old: item.new for entry in entries for item in (*entry.rechained, *entry.joined)}
    current, seen = anchor_hash, set()
    while current not in present and current in mapping and current not in seen:
        seen.add(current)
        current = mapping[current]
    return current if current in present else None


def new_entry(*, prev: str, release: str, cell: str, old: str, new: str, reason: str, by: str, at: str | None = None,
              source: str = "", basis: str = "", cites: Sequence[str] = (), action: str = CORRECT,
              live: str = "", quotes: Sequence[Quote] = ()) -> Correction:
    """A ledger entry following ``prev``, hashed, not yet written."""
    if not reason.strip():
        raise Rejected("a correction needs a reason")
    if problem := text_problem("the reason", reason):
        raise Rejected(problem)
    if not is_slug(by):
        raise Rejected(f"name {by!r} is not a safe id")
    content: dict[str, Any] = {"release": release, "cell": cell, "old": old, "new": new, "reason": reason.strip(),
                               "by": by, "at": at or now_iso(), "prev": prev, "source": source, "basis": basis,
                               "cites": list(cites)}
    if action:
        content["action"] = action
    if live:
        content["live"] = live
    if quotes:
        content["quotes"] = [quote_record(quote) for quote in quotes]
    return Correction(hash=entry_hash(content), **{**content, "cites": tuple(cites), "quotes": tuple(quotes)})


def seen_by(entries: Sequence[Correction], anchor_hash: str) -> set[str]:
    """The (current) hashes of every entry a ledger ending in ``anchor_hash`` held.

    Walks the chain back from the anchor in the anchor's own era: where a merge has since
    moved an entry, the merge entry's record gives the ``prev`` it had then.
    """
    current = {entry.hash: entry for entry in entries}
    moved = {item.old: item for entry in entries for item in (*entry.rechained, *entry.joined)}
    seen: set[str] = set()
    link, steps = anchor_hash, 0
    while link and steps <= 2 * len(entries) + 1:
        steps += 1
        if link in current:
            seen.add(link)
            link = current[link].prev
        elif link in moved:
            if (now := resolve_anchor(entries, link)) is not None:
                seen.add(now)
            link = moved[link].prev
        else:
            break
    return seen


def entry_node(correction: Correction) -> Any:
    """A ledger entry as a YAML mapping, keys in their usual order."""
    content = correction.content()
    entry = new_mapping()
    for key in ENTRY_KEYS:
        if key not in content:
            continue
        value = content[key]
        if key in ("source", "basis") and not value:
            continue
        if correction.action and key in ("release", "cell", "old", "new") and not value:
            continue  # a withdrawal has no codes; a merge names no cell
        if key == "cites":
            if value:
                entry[key] = flow_list(value)
            continue
        # Hashes ("sha256:…") in block style: a colon inside a flow collection is not plain YAML.
        if key == "heads":
            entry[key] = list(value)
            continue
        if key in ("rechained", "joined"):
            entry[key] = [new_mapping(list(item.items())) for item in value]
            continue
        if key == "quotes":
            entry[key] = [new_mapping([(name, text_scalar(v) if isinstance(v, str) else v) for name, v in item.items()])
                          for item in value]
            continue
        entry[key] = text_scalar(value) if isinstance(value, str) else value
    entry["hash"] = correction.hash
    return entry


def apply_corrections(cells: Iterable[dict[str, Any]], corrections: Iterable[Correction]) -> list[dict[str, Any]]:
    """The view cells with corrections applied in order (a later entry wins); withdrawals and
    merges change no cell (see :func:`withdrawn_protocols`)."""
    by_key = {f"{c['protocol']}/{c['field']}": dict(c) for c in cells}
    for correction in corrections:
        cell = by_key.get(correction.cell)
        if cell is None or correction.action:
            continue
        cell["code"] = correction.new
        # A correction is a recorded decision with a reason, like an adjudication.
        cell["status"] = "adjudicated"
        cell["corrected"] = True
        cell.pop("missing", None)
        if correction.source or correction.basis or correction.cites or correction.quotes:
            cell["source"], cell["basis"], cell["cites"] = correction.source, correction.basis, list(correction.cites)
            cell.pop("quotes", None)  # they supported the record this correction replaced
            if correction.quotes:
                cell["quotes"] = [_shown_quote(quote) for quote in correction.quotes]
    return list(by_key.values())


def _shown_quote(quote: Quote) -> dict[str, Any]:
    """A correction's quote as the view's cells show quotes (the source by its id)."""
    location = ", ".join(part for part in (f"p. {quote.page}" if quote.page else "", quote.section) if part)
    return {"source": quote.source, "title": quote.source, "version": "", "text": " ".join(quote.text.split()),
            "page": quote.page, "section": quote.section, "location": location, "drifted": False}


def withdrawn_protocols(corrections: Iterable[Correction]) -> set[str]:
    """Protocols that the given entries withdraw."""
    return {c.protocol for c in corrections if c.action == WITHDRAW}


def correction_records(corrections: Iterable[Correction], labels: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Corrections as view data for ``corrections.{md,tex}`` (``labels``: cell → (protocol name, field label)).

    A withdrawal is listed as the whole protocol going from its released codes to *withdrawn*.
    """
    records = []
    for c in corrections:
        if c.action == MERGE:
            continue
        if c.action == WITHDRAW:
            name = next((names[0] for cell, names in labels.items() if cell.partition("/")[0] == c.protocol),
                        c.protocol)
            protocol, field_label, new = name, "all fields", "withdrawn"
        else:
            protocol, field_label = labels.get(c.cell, (c.cell.partition("/")[0], c.cell.partition("/")[2]))
            new = c.new
        records.append({"release": c.release, "cell": c.cell, "protocol": protocol, "field": field_label,
                        "old": c.old, "new": new, "reason": c.reason, "by": c.by, "at": c.at})
    return records
