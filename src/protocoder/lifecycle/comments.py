"""Discussion on a cell: comments once the cell is ready for adjudication, never before.

Before every reviewer has finished a cell, a remark on it could tell one reviewer what
another chose: so a cell takes comments only once it is *ready for adjudication*. With a
team file that is :func:`protocoder.team.progress.closed_cells` (every assigned reviewer
finished it, or an adjudicator decided it); without one, a cell two or more reviewers coded
(they agree or disagree) or that was adjudicated. Each person's comments go to their own file
(``protocols/<id>/comments/<person>.yaml``): two people never write the same file.
"""

from __future__ import annotations

from ..errors import Rejected
from ..model import Comment, is_slug
from ..storage.formats.comments import read_comments
from ..storage.paths import Paths
from ..storage.store import Store, now_iso
from ..storage.workspace import Review, load_review
from .cellref import CellRef
from .consensus import Status
from .view import final_cells

__all__ = ["add_comment", "cell_comments", "ready_cells"]


def ready_cells(review: Review) -> set[str]:
    """The cells (``protocol/field``) that take comments: ready for adjudication (see the module)."""
    from ..team.members import load_team

    team = load_team(review.paths.root)
    if team is not None and team.members:
        from ..team.progress import closed_cells

        return {f"{protocol}/{field}" for protocol, field in closed_cells(review, team)}
    return {cell.key for cell in final_cells(review)
            if cell.status in (Status.UNRESOLVED, Status.ADJUDICATED, Status.AGREED)}


def add_comment(paths: Paths, ref: CellRef | str, text: str, *, by: str) -> Comment:
    """Record ``by``'s comment on a cell ready for adjudication; :class:`Rejected` (nothing written) otherwise."""
    if not text.strip():
        raise Rejected("a comment needs text")
    if not is_slug(by):
        raise Rejected(f"name {by!r} is not a safe id")
    review = load_review(paths.root)
    review.require_valid()
    ref = CellRef.parse(ref, review) if isinstance(ref, str) else ref
    if str(ref) not in ready_cells(review):
        raise Rejected(f"{ref} is not ready for adjudication yet: comments open once every reviewer has coded it "
                       "(never before, so that no remark tells one reviewer what another chose; without a team "
                       "file, once two or more have); protocoder status shows the reviewers' progress")
    comment = Comment(ref.protocol, ref.field, by, now_iso(), text.strip())
    Store(paths).append_comment(comment)
    return comment


def cell_comments(paths: Paths, protocol: str, field: str | None = None) -> list[Comment]:
    """The comments on one protocol's cells (one field's, when given), in time order."""
    return [c for c in read_comments(paths, protocol) if field is None or c.field == field]
