"""The entry points: a field's query against a protocol's index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import Rejected
from ...storage.mappings import check_reviewer
from .index import protocol_passages
from .query import field_query
from .ranking import Candidate

if TYPE_CHECKING:
    from ...storage.workspace import Review


def find_passages(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                  limit: int = 10, reviewer: str | None = None) -> list[Candidate]:
    """The ``limit`` passages of the protocol's pinned sources that best answer the field, best first.

    The query is the field's words, the rubric's ``search_terms``, ``query`` (what the
    reviewer typed) and, with ``reviewer``, the passages that reviewer quoted for the same
    field in the review's other protocols (:func:`learned_quotes`). Raises :class:`Rejected`
    (one line naming the command that fixes it) for an unknown protocol or field, a protocol
    with nothing to search, or a workspace whose ``protocoder.yaml`` turns candidates off
    (``candidates: false``).
    """
    return search_field(review, protocol_id, field_id, query=query, limit=limit, reviewer=reviewer).candidates


MAX_LEARNED_CHARS = 20_000
"""At most this much quoted text joins a query (the most recent protocols' first): enough to carry
the words evidence for a field is written in, without slowing a query down."""


def learned_quotes(review: Review, protocol_id: str, field_id: str, reviewer: str | None) -> tuple[list[str], bool]:
    """The quotes that teach the query for (protocol, field): (their texts, whether the team's were used).

    The passages quoted for the same field in the review's *other* protocols: only
    ``reviewer``'s own, so that independent coding stays independent, unless the workspace
    opts into the team's quotes (``team_quotes: true`` in ``protocoder.yaml``), when every
    reviewer's count. Without a reviewer and without the setting, none.
    """
    team = bool(getattr(review.settings, "team_quotes", False))
    if reviewer is None and not team:
        return [], False
    texts: list[str] = []
    seen: set[str] = set()
    used = 0
    for protocol in reversed(review.protocols):
        if protocol.id == protocol_id:
            continue
        for who, cell in sorted(review.cells(protocol.id, field_id).items()):
            if not team and who != reviewer:
                continue
            for quote in cell.quotes:
                text = " ".join(quote.text.split())
                if text and text not in seen and used + len(text) <= MAX_LEARNED_CHARS:
                    seen.add(text)
                    texts.append(text)
                    used += len(text)
    return texts, team


@dataclass(frozen=True)
class FieldSearch:
    """The answer to one field's query, with what was searched."""

    candidates: list[Candidate]
    sources: tuple[str, ...]
    """Ids of the sources searched."""
    missing: tuple[str, ...]
    """Ids of pinned sources whose snapshot is not present here, so not searched."""
    learned: int = 0
    """How many quotes of other protocols joined the query (:func:`learned_quotes`)."""
    team: bool = False
    """True when other reviewers' quotes could join it (``team_quotes: true``): a cell coded after
    these candidates is not independent of the team's coding."""


BLIND_MESSAGE = ("candidate passages are turned off for a blind first pass (candidates: false in "
                 "protocoder.yaml); set candidates: true there to turn them on")


def search_field(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                 limit: int = 10, reviewer: str | None = None) -> FieldSearch:
    """:func:`find_passages` with the sources searched, those missing and the quotes learned from."""
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
    if reviewer is not None:
        check_reviewer(reviewer)
    found = protocol_passages(review, protocol_id)
    quotes, team = learned_quotes(review, protocol_id, fld.id, reviewer)
    return FieldSearch(found.index.search(field_query(rubric, fld, query, quotes=quotes), limit), found.sources,
                       found.missing, len(quotes), team)
