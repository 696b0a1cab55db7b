"""Candidate passages: rank the passages of a protocol's pinned sources for one rubric field.

A reviewer coding a cell has to find, in every source pinned for the protocol, the
passages that answer the field. :func:`find_passages` ranks them: the field's question,
definition and guidance, the ``search_terms`` a rubric declares on the field and its codes,
whatever the reviewer types and, with a reviewer named, the passages that reviewer quoted
for the field in the review's other protocols are the query; the passages of every pinned
snapshot are the documents.

The flow, one module per idea:

* :mod:`.passages` — **passages** as a reader sees them come from one function,
  :func:`passages_of`: the source file's blank-line paragraphs (a sentence with the code
  block written under it included), code blocks standing alone cut into commands with their
  comment line (:func:`code_units`), each with a kind (prose, code, mixed, news, table of
  contents …), the heading path above it (without the document's title) and its range in the
  raw file; every one can be quoted as the reader quotes it (:mod:`.quotable` decides that for
  all the passages of a source together). :mod:`.kinds` says what each passage is.
* :mod:`.query` — the words BM25 counts (Snowball stems, stop words out) and a field's
  query as weighted parts, with the texts the semantic signal compares with.
* :mod:`.ranking` — **ranking** is BM25 (the maintained ``bm25s`` library, numpy only, builds
  the index; a cached one is read and scored as bm25s would without it, :class:`SavedBM25`) over
  each passage's words, times a factor for its kind, plus (with the
  ``semantic`` extra, :mod:`.semantic`) the cosine similarity of static embeddings shipped
  in a wheel; code under a floor, and the code block that matches best as a whole shown by its best line
  (``BLOCK_SLOTS``). The weights were chosen on the dev documents of ``benchmarks/find_real.py``.
* :mod:`.candidate` — a ranked passage (:class:`Candidate`) and, for a table, its row that matches the
  query best (what the list shows, enter selects and q quotes).
* :mod:`.index` — **the index** of one protocol, cached under ``.protocoder/find/`` in a
  folder named by a hash of the protocol, its snapshots' SHA-256, the formats and the model,
  verified on load against its manifest, and cleaned up file by file; ``.protocoder`` and
  every folder under it must be real folders (``storage.state``).
* :mod:`.find` — the entry points: :func:`find_passages` and :func:`search_field`.

Nothing here imports Textual or click, and nothing is written outside ``.protocoder/``. The names
below are loaded on first use (PEP 562): a query against a cached index (:mod:`.find`, :mod:`.index`,
:mod:`.ranking`, :mod:`.query`, :mod:`.passage`) imports neither the extractors and the cutting into
passages (:mod:`.passages`) nor bm25s and scipy, which only building an index needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .candidate import Candidate
    from .find import BLIND_MESSAGE, FieldSearch, find_passages, search_field
    from .index import CACHE_DIR, INDEX_FORMAT, ProtocolPassages, cache_key, protocol_passages, read_index, write_index
    from .kinds import PASSAGE_KINDS, code_units
    from .passage import HEADING_SEPARATOR, Passage
    from .passages import (
        GROUP_PASSAGES,
        GROUPED_KINDS,
        MAX_PASSAGE_CHARS,
        TARGET_PASSAGE_CHARS,
        Segment,
        passages_of,
        source_passages,
    )
    from .query import (
        QUOTES_SHARING,
        WEIGHT_CODES,
        WEIGHT_FIELD,
        WEIGHT_QUOTES,
        WEIGHT_TERMS,
        WEIGHT_TYPED,
        Query,
        field_query,
        quote_weights,
        stem,
        words,
    )
    from .ranking import (
        BM25_B,
        BM25_K1,
        KIND_WEIGHTS,
        PROXIMITY_POOL,
        PROXIMITY_WINDOW,
        WEIGHT_HEADING,
        WEIGHT_PROXIMITY,
        PassageIndex,
    )

_EXPORTS = {
    "BLIND_MESSAGE": "find", "FieldSearch": "find", "find_passages": "find", "search_field": "find",
    "CACHE_DIR": "index", "INDEX_FORMAT": "index", "ProtocolPassages": "index", "cache_key": "index",
    "protocol_passages": "index", "read_index": "index", "write_index": "index", "HEADING_SEPARATOR": "passage",
    "Passage": "passage", "GROUPED_KINDS": "passages", "GROUP_PASSAGES": "passages", "MAX_PASSAGE_CHARS": "passages",
    "PASSAGE_KINDS": "kinds", "Segment": "passages", "TARGET_PASSAGE_CHARS": "passages", "code_units": "kinds",
    "passages_of": "passages", "source_passages": "passages", "QUOTES_SHARING": "query", "Query": "query",
    "WEIGHT_CODES": "query", "WEIGHT_FIELD": "query", "WEIGHT_QUOTES": "query", "WEIGHT_TERMS": "query",
    "WEIGHT_TYPED": "query", "field_query": "query", "quote_weights": "query", "stem": "query", "words": "query",
    "BM25_B": "ranking", "BM25_K1": "ranking", "Candidate": "candidate", "KIND_WEIGHTS": "ranking",
    "PROXIMITY_POOL": "ranking", "PROXIMITY_WINDOW": "ranking", "PassageIndex": "ranking",
    "WEIGHT_HEADING": "ranking", "WEIGHT_PROXIMITY": "ranking",
}
"""Each public name and the submodule that defines it."""

__all__ = [
    "BLIND_MESSAGE",
    "BM25_B",
    "BM25_K1",
    "CACHE_DIR",
    "Candidate",
    "FieldSearch",
    "GROUPED_KINDS",
    "GROUP_PASSAGES",
    "HEADING_SEPARATOR",
    "INDEX_FORMAT",
    "KIND_WEIGHTS",
    "MAX_PASSAGE_CHARS",
    "PASSAGE_KINDS",
    "PROXIMITY_POOL",
    "PROXIMITY_WINDOW",
    "Passage",
    "PassageIndex",
    "ProtocolPassages",
    "Query",
    "Segment",
    "TARGET_PASSAGE_CHARS",
    "WEIGHT_CODES",
    "WEIGHT_FIELD",
    "WEIGHT_HEADING",
    "WEIGHT_PROXIMITY",
    "QUOTES_SHARING",
    "WEIGHT_QUOTES",
    "WEIGHT_TERMS",
    "WEIGHT_TYPED",
    "cache_key",
    "code_units",
    "field_query",
    "quote_weights",
    "find_passages",
    "passages_of",
    "protocol_passages",
    "read_index",
    "search_field",
    "source_passages",
    "stem",
    "words",
    "write_index",
]


__getattr__ = lazy_names(__name__, globals(), _EXPORTS)
