"""The entry points: a field's query against a protocol's index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import Rejected
from .index import protocol_passages
from .query import field_query
from .ranking import Candidate

if TYPE_CHECKING:
    from ...storage.workspace import Review


def find_passages(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                  limit: int = 10) -> list[Candidate]:
    """The ``limit`` passages of the protocol's pinned sources that best answer the field, best first.

    The query is the field's words, its codes', the rubric's ``search_terms`` and ``query``
    (what the reviewer typed). Raises :class:`Rejected` (one line naming the command that
    fixes it) for an unknown protocol or field, a protocol with nothing to search, or a
    workspace whose ``protocoder.yaml`` turns candidates off (``candidates: false``).
    """
    return search_field(review, protocol_id, field_id, query=query, limit=limit).candidates


@dataclass(frozen=True)
class FieldSearch:
    """The answer to one field's query, with what was searched."""

    candidates: list[Candidate]
    sources: tuple[str, ...]
    """Ids of the sources searched."""
    missing: tuple[str, ...]
    """Ids of pinned sources whose snapshot is not present here, so not searched."""


BLIND_MESSAGE = ("candidate passages are turned off for a blind first pass (candidates: false in "
                 "protocoder.yaml); set candidates: true there to turn them on")


def search_field(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                 limit: int = 10) -> FieldSearch:
    """:func:`find_passages` with the sources searched and those missing (for the command line)."""
    if not review.settings.candidates:
        raise Rejected(BLIND_MESSAGE)
    rubric = review.rubric
    if rubric is None:
        raise Rejected("the workspace has no usable rubric (see: protocoder validate)")
    try:
        fld = rubric.field(field_id)
    except KeyError:
        raise Rejected(f"no field {field_id!r} in rubric {rubric.id!r} (fields: "
                       f"{', '.join(rubric.field_ids)})") from None
    found = protocol_passages(review, protocol_id)
    return FieldSearch(found.index.search(field_query(rubric, fld, query), limit), found.sources, found.missing)
