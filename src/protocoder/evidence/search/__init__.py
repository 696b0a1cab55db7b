"""Candidate passages: rank the passages of a protocol's pinned sources for one rubric field.

A reviewer coding a cell has to find, in every source pinned for the protocol, the
passages that answer the field. :func:`find_passages` ranks them: the field's question,
definition and guidance (plus the definitions of its codes as a weaker expansion, the
``search_terms`` a rubric may declare on the field and its codes, and whatever the
reviewer types) are the query; the passages of every pinned snapshot are the documents.

The flow, one module per idea:

* :mod:`.passages` — **passages** come from one function, :func:`passages_of`: the
  extraction's blocks (paragraphs, code, admonitions, footnotes; runs of list items and
  table rows grouped) with the heading path above each and their range in the raw file.
* :mod:`.query` — the words BM25 counts (stemmed, stop words out) and a field's query as
  weighted parts.
* :mod:`.ranking` — **ranking** is BM25 (the maintained ``bm25s`` library, numpy only) over
  each passage's words with its heading path, plus a second BM25 over its nearest heading
  alone (a passage under "Evaluation › Reset" answers a reset field even when its sentences
  don't say "reset"), plus a small bonus when query words stand close together in the
  passage. The weights were chosen on the development split of ``benchmarks/find_recall.py``.
* :mod:`.index` — **the index** of one protocol, cached under ``.protocoder/find/`` in a
  folder named by a hash of the snapshots' SHA-256 and the index's format version, so
  pinning a new version of a source (``protocoder source update``) makes the next query
  rebuild it. It is written to a temporary folder and renamed into place, so a reader never
  meets half an index; a workspace where it cannot be written is searched without a cache.
* :mod:`.find` — the entry points: :func:`find_passages` and :func:`search_field`.

Nothing here imports Textual or click, and nothing is written outside ``.protocoder/``.
"""

from __future__ import annotations

from .find import BLIND_MESSAGE, FieldSearch, find_passages, search_field
from .index import CACHE_DIR, INDEX_FORMAT, ProtocolPassages, cache_key, protocol_passages, read_index, write_index
from .passages import (
    GROUP_PASSAGES,
    GROUPED_KINDS,
    HEADING_SEPARATOR,
    MAX_PASSAGE_CHARS,
    PASSAGE_KINDS,
    TARGET_PASSAGE_CHARS,
    Passage,
    Segment,
    code_units,
    passages_of,
    source_passages,
)
from .query import (
    WEIGHT_CODES,
    WEIGHT_FIELD,
    WEIGHT_QUOTES,
    WEIGHT_TERMS,
    WEIGHT_TYPED,
    Query,
    field_query,
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
    Candidate,
    PassageIndex,
)

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
    "WEIGHT_QUOTES",
    "WEIGHT_TERMS",
    "WEIGHT_TYPED",
    "cache_key",
    "code_units",
    "field_query",
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
