"""The coding app as its screens see it: :class:`CodingApp`, a typing interface.

The screens reach the app that shows them (``self.app``) for its session, its write queue
and a few actions (open, add, edit or remove a protocol, add a reference). They name this
interface, not :class:`~protocoder.tui.app.CoderApp`, so that the app (which imports the
screens) and the screens do not import each other, not even for typing.
"""

from __future__ import annotations

from typing import Protocol

from .saving import Saver
from .session import Edit, Session


class CodingApp(Protocol):
    """What the coding screens use of the app that shows them (:class:`~protocoder.tui.app.CoderApp`)."""

    session: Session
    """The reviewer's session: the app's only way to the workspace."""
    saver: Saver
    """The write queue: edits are saved in order, off the screen's event loop."""

    def open_protocol(self, protocol_id: str, *, field_id: str | None = None) -> None:
        """Show the coding screen on ``protocol_id`` (at ``field_id``)."""

    def add_protocol(self) -> None:
        """Open the form for a new protocol."""

    def edit_protocol(self, protocol_id: str) -> None:
        """Open the form for ``protocol_id``."""

    async def remove_protocol(self, protocol_id: str) -> None:
        """Remove ``protocol_id`` after asking."""

    def add_reference(self) -> None:
        """Open the BibTeX form."""

    def queue_edit(self, edit: Edit) -> None:
        """Put ``edit`` on the write queue."""

    def kick_saver(self) -> None:
        """Start writing the queue, unless a write is under way."""

    def hold_screen_for_save(self) -> None:
        """Draw nothing until the write queue is idle (a code pick: saved first, drawn after)."""

    def draw_unless_saving(self) -> None:
        """End :meth:`hold_screen_for_save` now when nothing is being written."""
