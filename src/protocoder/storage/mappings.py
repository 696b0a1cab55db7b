"""What the writers put in files: model objects as YAML mappings, and the checks a write must pass.

The inverse of :mod:`.formats`. :class:`~protocoder.storage.store.Store` builds round-trip
mappings here (from :mod:`.yamlio`'s values, so that they read back exactly as given), and
when it updates a mapping read from a file it changes only what differs, so that the user's
comments, quoting and key order survive a save. The checks refuse, before anything is
written, what the readers would refuse afterwards: a save never leaves a file that
``validate`` rejects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from ..errors import Rejected
from ..model import Cell, Protocol, Quote, Source, SourceReading, is_slug, ranges_text
from .findings import text_problem
from .formats import CELL_KEYS, url_problem
from .yamlio import flow_list, new_mapping, text_scalar

# --------------------------------------------------------------------------- mappings


def child_mapping(parent: Any, key: str) -> Any:
    """The mapping under ``key`` in ``parent``; a new one (block style) when it is missing or not a mapping."""
    child = parent.get(key)
    if child is None or not hasattr(child, "items"):
        child = new_mapping()
        parent[key] = child
    return child


def write_cell(entry: Any, cell: Cell) -> None:
    """Set ``cell``'s values in ``entry``, its round-trip mapping in a reviewer file, changing only
    what differs: untouched values keep their quoting and style, and new keys go in the order
    of :data:`~protocoder.storage.formats.CELL_KEYS`."""
    values: dict[str, Any] = {
        "code": cell.code,
        "source": cell.source or None,
        "basis": cell.basis or None,
        "cites": list(cell.cites) or None,
        "quotes": [quote_mapping(quote) for quote in cell.quotes] or None,
        "assisted": True if cell.assisted else None,
        "rubric_version": cell.rubric_version or None,
        "coded_at": cell.coded_at or None,
    }
    if not entry and values["quotes"] is None:
        # A new cell (most of an import's): each value appended in key order, nothing to keep.
        for key in CELL_KEYS:
            value = values[key]
            if value is not None:
                entry[key] = flow_list(value) if key == "cites" else text_scalar(value) if isinstance(value, str) \
                    else value
        return
    for position, key in enumerate(CELL_KEYS):
        value = values[key]
        if value is None:
            if key in entry:
                del entry[key]
            continue
        if key == "cites":
            if list(entry.get("cites") or []) == value:
                continue
            value = flow_list(value)
        elif key == "quotes":
            old_quotes = entry.get("quotes") if isinstance(entry.get("quotes"), list) else []
            if comparable(old_quotes) == comparable(value):
                continue
            # Quotes left as they were keep their node, and with it the user's comments and quoting.
            value = [reuse_unchanged(old_quotes, item) for item in value]
        elif isinstance(value, bool):
            if entry.get(key) is value:
                continue
        elif isinstance(value, str):
            if _as_text(entry.get(key)) == value:
                continue  # untouched values keep their quoting and style
            value = text_scalar(value, entry.get(key))
        if key in entry:
            entry[key] = value
        else:
            index = sum(1 for k in CELL_KEYS[:position] if k in entry)
            if index == len(entry):
                entry[key] = value  # at the end: the same as insert, without its rebuild of the mapping
            else:
                entry.insert(index, key, value)


def quote_mapping(quote: Quote) -> Any:
    """A quote as the YAML a reviewer reads: source and text first, then where it was found."""
    data = new_mapping([("source", quote.source), ("text", text_scalar(quote.text))])
    if quote.page:
        # Page numbers read best unquoted; labels such as "iv" stay text.
        data["page"] = int(quote.page) if quote.page.isdigit() and not quote.page.startswith("0") else quote.page
    if quote.section:
        data["section"] = text_scalar(quote.section)
    if quote.start is not None and quote.end is not None:
        data["span"] = flow_list([quote.start, quote.end])
    if quote.snapshot:
        data["snapshot"] = quote.snapshot
    if quote.confirmed:
        data["confirmed"] = quote.confirmed
    if quote.raw_start is not None and quote.raw_end is not None:
        data["raw_start"] = quote.raw_start
        data["raw_end"] = quote.raw_end
    for key in ("exact", "prefix", "suffix"):
        if getattr(quote, key):
            data[key] = text_scalar(getattr(quote, key))
    if quote.lines is not None:
        data["lines"] = flow_list(list(quote.lines))
    return data


def protocol_mapping(protocol: Protocol) -> Any:
    """A protocol as ``protocol.yaml`` holds it: id, name, then citations and sources when it has any."""
    data = new_mapping([("id", protocol.id), ("name", protocol.name)])
    if protocol.cites:
        data["cites"] = flow_list(list(protocol.cites))
    if protocol.sources:
        data["sources"] = [source_mapping(s) for s in protocol.sources]
    return data


def source_mapping(source: Source) -> Any:
    """A pinned source as protocol.yaml holds it (the snapshot's keys only when it has one)."""
    items: list[tuple[str, Any]] = [("id", source.id)] if source.id else []
    items += [("title", source.title)]
    if source.url or not source.has_snapshot:
        items.append(("url", source.url))
    items += [("version", source.version), ("accessed", source.accessed)]
    if source.has_snapshot:
        items += [("sha256", source.sha256), ("media_type", source.media_type)]
    if source.previous:
        items.append(("previous", [new_mapping([("version", v.version), ("accessed", v.accessed),
                                                ("sha256", v.sha256), ("media_type", v.media_type)])
                                   for v in source.previous]))
    # Where a fetched or repository source came from, in the order a reader follows it.
    for key in ("final_url", "retrieved_at", "etag", "last_modified", "repository", "rev", "commit", "path",
                "permalink"):
        if getattr(source, key):
            items.append((key, getattr(source, key)))
    return new_mapping(items)


def comparable(value: Any) -> Any:
    """``value`` with every leaf as text: what a save compares to tell whether a value changed
    (a date read from the file equals its ISO text)."""
    if isinstance(value, dict):
        return {str(k): comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return _as_text(value)


def reuse_unchanged(candidates: Any, item: Any) -> Any:
    """The node among ``candidates`` equal to ``item``, which keeps the user's comments and
    quoting; ``item`` itself when none is."""
    for candidate in candidates:
        if comparable(candidate) == comparable(item):
            return candidate
    return item


def _as_text(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return None if value is None else str(value)


# --------------------------------------------------------------------------- checks


def check_texts(texts: Mapping[str, str]) -> None:
    """Raise :class:`Rejected` when any named text could not be written (see :func:`text_problem`)."""
    problems = [problem for name, value in texts.items() if (problem := text_problem(name, value))]
    if problems:
        raise Rejected("; ".join(problems))


def check_reviewer(reviewer: str) -> None:
    """Raise :class:`Rejected` unless ``reviewer`` is a safe id (it names the reviewer's file)."""
    if not is_slug(reviewer):
        raise Rejected(f"reviewer name {reviewer!r} is not a safe id (lowercase letters, digits, "
                         "and single '-', '_' or '.' between them)")


def sheet_shape_problems(data: Any) -> list[tuple[list[str | int], str]]:
    """Where a reviewer file is not shaped ``{cells: {field: {...}}, notes: {prompt: text}}``."""
    if data is None:
        return []
    if not isinstance(data, dict):
        return [([], "expected a mapping with 'cells' and 'notes'")]
    problems: list[tuple[list[str | int], str]] = []
    cells = data.get("cells")
    if cells is not None:
        if not isinstance(cells, dict):
            problems.append((["cells"], "expected a mapping of field ids to cells"))
        else:
            problems += [(["cells", key], "expected a cell mapping") for key, value in cells.items()
                         if value is not None and not isinstance(value, dict)]
    notes = data.get("notes")
    if notes is not None and not isinstance(notes, dict):
        problems.append((["notes"], "expected a mapping of prompt ids to text"))
    reading = data.get("reading")
    if reading is not None and not isinstance(reading, dict):
        problems.append((["reading"], "expected a mapping of snapshot SHA-256s to what was read"))
    return problems


def reading_mapping(entry: Any, reading: SourceReading) -> Any:
    """Set what was read of one snapshot in ``entry`` (its round-trip mapping, or None: a new one):
    ``blocks`` and ``read``, the block ranges as one short line (``"0-40,45"``), so that a whole
    README read is one line however it was scrolled."""
    if entry is None or not hasattr(entry, "items"):
        entry = new_mapping()
    entry["blocks"] = reading.blocks
    entry["read"] = text_scalar(ranges_text(reading.read), entry.get("read"))
    return entry


def protocol_problems(protocol: Protocol, bibliography_keys: Iterable[str] | None) -> list[str]:
    """What is wrong with a protocol about to be written (empty when nothing)."""
    problems = []
    if not is_slug(protocol.id):
        problems.append(f"protocol id {protocol.id!r} is not a safe id (lowercase letters, digits, "
                        "and single '-', '_' or '.' between them)")
    if not protocol.name.strip():
        problems.append("the protocol needs a name")
    problems += [problem for name, value in [("the name", protocol.name),
                                             *((f"source {i} {part}", text) for i, s in enumerate(protocol.sources, 1)
                                               for part, text in (("title", s.title), ("URL", s.url),
                                                                  ("version", s.version)))]
                 if (problem := text_problem(name, value))]
    if bibliography_keys is not None:
        keys = set(bibliography_keys)
        problems += [f"citation key {key!r} is not in references.bib" for key in protocol.cites if key not in keys]
    for index, source in enumerate(protocol.sources, 1):
        if not source.title.strip():
            problems.append(f"source {index} needs a title")
        if not source.version.strip():
            problems.append(f"source {index} needs a version (such as arXiv v2 or a commit)")
        # A snapshot pins the source by its hash, so its URL may be left out.
        if (source.url or not source.has_snapshot) and (problem := url_problem(source.url)):
            problems.append(f"source {index}: {problem}")
        if source.id and not is_slug(source.id):
            problems.append(f"source {index}: id {source.id!r} is not a safe id")
        if source.id and any(other.id == source.id for other in protocol.sources[:index - 1]):
            problems.append(f"source {index}: the id {source.id!r} is used twice")
    return problems
