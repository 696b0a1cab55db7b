"""SaveIndicator: "saved 14:02:11", "saving…", "unsaved" or "read-only", in the top bar."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from ..saving import Saver, SaveState


class SaveIndicator(Static):
    """Shows whether every edit has reached disk.

    The screen sets :attr:`dirty` while it holds typed text not yet queued; the app bumps
    :attr:`tick` whenever the write queue changes state.
    """

    dirty: reactive[bool] = reactive(False)
    """The screen holds typed text that is not queued yet (debouncing)."""
    tick: reactive[int] = reactive(0, always_update=True)
    """Bumped by the app when the write queue changes."""

    def __init__(self, saver: Saver | None, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.saver = saver
        self._shown: tuple[str, str] | None = None
        self._shown_width: int | None = None
        """The width the indicator was given (a shorter text is padded to it)."""

    def render_state(self) -> tuple[str, str]:
        """The text to show and the state class (``-saved``, ``-busy``, ``-unsaved``, ``-failed``)."""
        saver = self.saver
        if saver is None or saver.state is SaveState.READ_ONLY:
            return "read-only", "-failed"
        if saver.state is SaveState.FAILED:
            return f"not saved: {saver.error}", "-failed"
        if saver.state is SaveState.CONFLICT:
            return "unsaved: changed on disk", "-failed"
        if self.dirty or (saver.pending and not saver.running):
            return "unsaved", "-unsaved"
        if saver.running or saver.pending:
            return "saving…", "-busy"
        if saver.state is SaveState.SAVED and saver.saved_at is not None:
            return f"saved {saver.saved_at:%H:%M:%S}", "-saved"
        return "all saved", "-saved"

    def _refresh_state(self) -> None:
        text, state = self.render_state()
        if (text, state) == self._shown:
            return  # typing sets dirty on every keystroke: repaint only on a change
        old_state = self._shown[1] if self._shown is not None else None
        self._shown = (text, state)
        # A new layout of the whole screen (most of what a key cost) only when the indicator
        # grows: a shorter text is padded to the width it has ("saving…" where "saved 14:02:11"
        # was), so a save's "unsaved" → "saving…" → "saved" keeps one width.
        old_width, width = self._shown_width, self._width_of(text)
        # After a failure or a conflict (a long message) it takes its own width again.
        if old_width is not None and width < old_width and old_state != "-failed":
            from rich.cells import cell_len

            text, width = " " * (old_width - cell_len(text)) + text, old_width
        self._shown_width = width
        self.update(text, layout=width != old_width)
        if state != old_state:
            # One style update for the change of colour, not one per class added or removed: each
            # re-applies the stylesheet to the indicator.
            self.update_classes({name: name == state for name in ("-saved", "-busy", "-unsaved", "-failed")})

    def _width_of(self, text: str) -> int:
        """The width the indicator takes for ``text`` (its CSS width is auto, within min and max)."""
        from rich.cells import cell_len

        styles = self.styles
        low = int(styles.min_width.value) if styles.min_width is not None else 0
        high = int(styles.max_width.value) if styles.max_width is not None else 10_000
        return min(max(cell_len(text), low), high)

    def watch_dirty(self) -> None:
        self._refresh_state()

    def watch_tick(self) -> None:
        self._refresh_state()

    def on_mount(self) -> None:
        self._refresh_state()
