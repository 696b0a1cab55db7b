"""Quotes: checking each one against its snapshot, drift when a source changes, and editing them.

A quote names a pinned source of its protocol and gives the exact text; ``span``, ``page``
and ``section`` say where it was found, and ``snapshot`` which version of the source it
was taken from (the start of that snapshot's SHA-256).

**Verification** (``validate``): every quote taken from the source's current snapshot
must be found in that snapshot's text after normalisation (:mod:`..locate`); one that is
not is an error at its ``text`` key, with the closest passage. A snapshot whose bytes no
longer match the hash in ``protocol.yaml`` is an error; a snapshot that is not present
here (kept out of git) is a note, and its quotes are simply not checked.

**Drift**: ``source update`` pins a new version and moves every quote still found in it
to the new snapshot; the others stay anchored to the old one. A quote anchored to an
earlier version of its source is *drifted evidence* — the passage the code rests on is
gone from the source as it now stands — until it is replaced by a quote of the new
version (re-coded) or *confirmed*: ``protocoder quote confirm`` records, in the quote
itself, ``confirmed: <start of the current snapshot's hash>``, meaning "I read the new
version and the code stands on this passage of the old one". Pinning yet another version
makes a confirmed quote drift again. Drift depends on hashes only, so ``status`` counts it
without reading any snapshot.

The flow, one module per idea:

* :mod:`.anchors` — which version of its source a quote belongs to (:class:`Anchor`), and
  every quote of a review (:func:`all_quotes`).
* :mod:`.suggestions` — the closest passage offered when a quote is not found.
* :mod:`.locating` — a quote found in its source's current snapshot: span, position, raw
  range and selector (:func:`locate_quote`, :func:`find_quote`).
* :mod:`.verification` — the one verdict on a quote, for every command (:func:`place_quote`,
  :class:`Verifier`), and every quote of a review checked (:func:`check_evidence`).
* :mod:`.editing` — the quote operations behind ``protocoder quote`` (add, remove, confirm).
* :mod:`.drift` — quotes moved or left behind when a source gets a new version, and what
  ``status`` says about evidence.
* :mod:`.view` — the quotes behind each final code, for the view; what a reviewer read (:func:`reading_line`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .anchors import (
        SNAPSHOT_REF_LENGTH,
        Anchor,
        QuoteRef,
        all_quotes,
        anchor,
        pinned_source,
        printable,
        quote_record,
    )
    from .drift import drifted, reanchor, status_lines
    from .editing import add_quote, cell_for_edit, confirm_quotes, remove_quotes, same_quote
    from .locating import SELECTOR_CONTEXT, admit_quote, find_quote, locate_quote, raw_selector, usable_snapshot
    from .suggestions import ALIKE, closest_passage, closest_text, not_found_message
    from .verification import Check, EvidenceCheck, Verdict, Verifier, check_evidence, place_quote
    from .view import reading_line, with_quotes

_EXPORTS = {
    "SNAPSHOT_REF_LENGTH": "anchors", "Anchor": "anchors", "QuoteRef": "anchors", "all_quotes": "anchors",
    "anchor": "anchors", "pinned_source": "anchors", "printable": "anchors", "quote_record": "anchors",
    "drifted": "drift", "reanchor": "drift", "status_lines": "drift", "add_quote": "editing",
    "cell_for_edit": "editing", "confirm_quotes": "editing", "remove_quotes": "editing", "same_quote": "editing",
    "SELECTOR_CONTEXT": "locating", "admit_quote": "locating", "find_quote": "locating", "locate_quote": "locating",
    "raw_selector": "locating", "usable_snapshot": "locating", "ALIKE": "suggestions",
    "closest_passage": "suggestions", "closest_text": "suggestions", "not_found_message": "suggestions",
    "Check": "verification", "EvidenceCheck": "verification", "Verdict": "verification", "Verifier": "verification",
    "check_evidence": "verification", "place_quote": "verification", "reading_line": "view", "with_quotes": "view",
}
"""Each name and its submodule, imported on first use (PEP 562): ``printable`` alone (``protocoder find``)
does not load the verification, the snapshots and the extractors behind it."""


__getattr__ = lazy_names(__name__, globals(), _EXPORTS)


__all__ = [
    "ALIKE",
    "Anchor",
    "Check",
    "EvidenceCheck",
    "QuoteRef",
    "SELECTOR_CONTEXT",
    "SNAPSHOT_REF_LENGTH",
    "add_quote",
    "admit_quote",
    "all_quotes",
    "anchor",
    "cell_for_edit",
    "check_evidence",
    "closest_passage",
    "closest_text",
    "confirm_quotes",
    "drifted",
    "find_quote",
    "locate_quote",
    "not_found_message",
    "pinned_source",
    "place_quote",
    "printable",
    "quote_record",
    "raw_selector",
    "reanchor",
    "remove_quotes",
    "same_quote",
    "status_lines",
    "usable_snapshot",
    "Verdict",
    "Verifier",
    "reading_line", "with_quotes",
]
