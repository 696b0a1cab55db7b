"""SourceModal: one pinned source in full — title, the whole URL, version, date accessed."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ...model import Source
from ..browser import open_or_copy


def origin_lines(source: Source) -> list[str]:
    """Where a fetched or repository source came from, one fact a line (none for a local file)."""
    lines = []
    if source.final_url and source.final_url != source.url:
        lines.append(f"read from: {source.final_url}")
    if source.retrieved_at:
        lines.append(f"retrieved: {source.retrieved_at}")
    if source.repository:
        lines.append(f"repository: {source.repository}" + (f" ({source.rev})" if source.rev else ""))
    if source.commit:
        lines.append(f"commit: {source.commit}")
    if source.path:
        lines.append(f"path: {source.path}")
    return lines


class SourceModal(ModalScreen[None]):
    """Shows a source's whole URL (wrapped, never cut); ``o`` opens it, ``c`` copies it."""

    BINDINGS = [
        Binding("o", "open", "Open", id="source.open"),
        Binding("c", "copy", "Copy URL", id="source.copy"),
        Binding("escape,u,q", "close", "Close", id="source.close"),
    ]

    def __init__(self, number: int, source: Source) -> None:
        super().__init__()
        self.number = number
        self.source = source

    def compose(self) -> ComposeResult:
        source = self.source
        with Vertical(classes="dialog", id="source-dialog"):
            yield Static(Text(f"Source {self.number}: {source.title}"), classes="dialog-title")
            yield Static(Text(source.url or "(no URL)", style="underline" if source.url else "dim"),
                         id="source-url")
            yield Static(Text(f"version: {source.version or '—'} · accessed {source.accessed.isoformat()}"),
                         classes="dialog-body")
            origin = origin_lines(source)
            if origin:
                yield Static(Text("\n".join(origin)), id="source-origin", classes="dialog-body")
            yield Static("o opens it in a browser · c copies the URL · escape closes", classes="dialog-hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open", "copy"):
            return bool(self.source.url)
        return True

    def action_open(self) -> None:
        open_or_copy(self.app, self.source.url)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.source.url)
        self.notify(f"Copied to the clipboard (if the terminal accepts that): {self.source.url}", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
