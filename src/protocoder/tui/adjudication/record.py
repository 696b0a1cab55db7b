"""What the adjudication screen says of a cell: a reviewer's cell whole, its discussion, and whose
evidence a decision keeps (text only, no widgets)."""

from __future__ import annotations

from rich.text import Text

from ...errors import ProtocoderError
from ...evidence.quotes import printable, reading_line
from ...evidence.snapshots import location_text
from ...lifecycle.comments import cell_comments
from ...lifecycle.consensus import FinalCell
from ...model import Cell
from ...storage.workspace import Review


def possessive(names: tuple[str, ...]) -> str:
    """``alice's``, ``alice's and bo's``."""
    said = [f"{name}'s" for name in names]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + f" and {said[-1]}"


def reviewer_record(coded: Cell, *, read: str = "") -> Text:
    """One reviewer's cell whole, to read: code, source location, basis, citations, every quote
    with where it is, and how much of the sources the reviewer read (when the cell records it)."""
    body = Text()
    body.append(f"{coded.reviewer}: {coded.code}\n", style="bold")
    body.append("Source location: ", style="dim")
    body.append(f"{coded.source or '(none)'}\n")
    body.append("Basis\n", style="dim")
    body.append(f"{coded.basis or '(none)'}\n")
    if coded.cites:
        body.append("Cites: ", style="dim")
        body.append(", ".join(coded.cites) + "\n")
    if read:
        body.append("Read in the app: ", style="dim")
        body.append(f"{read}\n")
    body.append(f"Quotes ({len(coded.quotes)})\n" if coded.quotes else "No quotes\n", style="dim")
    for number, quote in enumerate(coded.quotes, 1):
        where = location_text(quote.page, quote.section)
        body.append(f"{number}. ", style="dim")
        body.append(f"“{' '.join(printable(quote.text).split())}”")
        body.append(f" ({quote.source}{', ' + where if where else ''})\n", style="dim")
    return body


def read_by(review: Review, coded: Cell) -> str:
    """What ``coded``'s reviewer read of each pinned source of its protocol in the app
    (``lm-eval 100% · paper 40%``), as their codes file records it; "" when nothing is recorded."""
    sheet = next((sheet for sheet in review.sheets
                  if sheet.protocol == coded.protocol and sheet.reviewer == coded.reviewer), None)
    return reading_line(review.protocol(coded.protocol), sheet)


def discussion(review: Review | None, cell: FinalCell) -> Text:
    """The cell's comments (protocoder comment), oldest first; empty without any."""
    assert review is not None
    try:
        comments = cell_comments(review.paths, cell.protocol, cell.field)
    except ProtocoderError as exc:
        return Text(f"Discussion: cannot be read ({exc})", style="dim")
    if not comments:
        return Text()
    text = Text(f"Discussion ({len(comments)})", style="bold")
    for comment in comments:
        text.append(f"\n{comment.by}", style="bold")
        text.append(f" {comment.at[:10]}: ", style="dim")
        text.append(" ".join(printable(comment.text).split()))
    return text


def evidence_choice(cell: FinalCell, code: str | None, take: str | None, keep: tuple[str, ...] | None
                    ) -> tuple[tuple[str, ...], str]:
    """Whose evidence a decision keeps — the cell taken whole (``take``), the reviewers chosen
    (``keep``; empty: the adjudicator's own), else the reviewers who chose ``code`` — and how the
    line under the cells says it."""
    if take is not None:
        return (take,), f"{take}'s cell, whole"
    if keep is not None:
        if not keep:
            return (), "your own: the reason is the basis"
        return keep, possessive(keep)
    if code is None:
        return (), ""
    chose = tuple(r for r, c in cell.codes.items() if c == code)
    if chose:
        return chose, f"{possessive(chose)} (who chose {code})"
    return (), f"your own: the reason is the basis (nobody chose {code})"
