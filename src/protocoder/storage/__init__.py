"""The storage layer: every byte protocoder reads from or writes to a workspace.

Reading a review: workspace opens it, scan lists it, then files → fastload/yamlio →
findings/formats → workspace (a Review), with names checking every name on the way.
Writing: store (writer + sheet/protocol/record writes) → mappings (+ emit) → yamlio →
files, with commit for changes to several files at once; rendered tables go through outputs. One module per step::

    files      bytes on disk: capped reads, UTF-8, atomic writes, fingerprints, locks
    fastload   the fast safe YAML loader (libyaml's parser, plain data, refusals at their line)
    yamlio     YAML text ⇄ data: parse_yaml with located errors, round-trip Documents that
               keep comments, the Locator for line numbers, values built for the writer
    findings   problems found by key path and located lazily; Reader, the typed accessors
    formats    plain data → model objects, one parser per kind of file (a module each:
               rubric, settings, protocols, sheets, adjudications)
    paths      where each file of a workspace lives (Paths); finding and opening a workspace
    workspace  load_review: the whole workspace → a Review, cross-checked, never raising;
               three steps: open_review, scan_workspace, parse_review
    scan       the folders of a workspace listed once, and the files a load will read
    names      names that must be safe: ids as file names, links that stay inside the
               workspace, display names a reader can tell apart
    mappings   model objects → YAML mappings, and the checks a write must pass first
    emit       a brand-new file written fast, byte for byte as the round-trip writer would
    store      Store, the only writer of review files: the CLI, the apps and import; its
               parts: writer (the lock, staying inside the workspace, compare-and-swap),
               sheet_writes (reviewers' files, import), protocol_writes, record_writes
               (adjudications, bibliography, snapshots)
    commit     several files changed as one (a journal completes a killed change)
    outputs    folders of rendered files and their manifests (what a render may overwrite)
    bibliography  references.bib parsed with bibtexparser (LaTeX in values decoded to Unicode
               with pylatexenc); citation numbering; the parse kept in the cache while the
               file is unchanged
    cache      small answers kept in .protocoder/cache/ (the parsed bibliography, the ledger's
               git check), keyed by what they depend on, never required

Everything above this layer (lifecycle, agreement, render, the apps) sees model objects,
never YAML or file paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .paths import Paths, open_workspace
    from .store import Store
    from .workspace import Review, load_review

__all__ = ["Paths", "Review", "Store", "load_review", "open_workspace"]

_EXPORTS = {"Paths": "paths", "Review": "workspace", "load_review": "workspace",
            "open_workspace": "paths", "Store": "store"}


# Lazy, so that importing one storage module does not import them all.
__getattr__ = lazy_names(__name__, globals(), _EXPORTS)
