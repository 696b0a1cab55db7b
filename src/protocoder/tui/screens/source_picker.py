"""SourcePickerModal: the protocol's pinned sources in a list with a filter, to open one in the reader.

A protocol pinned from a repository has many sources (a README, docs pages, the harness's code
and configuration): stepping through them one by one (``s`` / ``S``) does not scale. Typing
filters the list by id, title, path or media type (every word must match); the arrows move, enter
opens the highlighted source, escape keeps the one shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...model import Source


def source_matches(source: Source, words: list[str]) -> bool:
    """True when every word (lower case) is in the source's id, title, path, version or media type."""
    haystack = " ".join((source.id, source.title, source.url or "", source.version, source.media_type)).casefold()
    return all(word in haystack for word in words)


class SourcePickerModal(ModalScreen[str | None]):
    """Pick a pinned source to read; dismiss with its id (None: stay on the source shown)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="source_picker.cancel")]

    DEFAULT_CSS = """
    SourcePickerModal { align: center middle; }
    SourcePickerModal > Vertical { width: 90%; max-width: 100; height: auto; max-height: 90%;
                                   background: $surface; border: round $primary; padding: 0 1; }
    SourcePickerModal #source-picker-title { text-style: bold; }
    SourcePickerModal #source-picker-filter { margin: 0; }
    SourcePickerModal #source-picker-list { height: auto; max-height: 16; border: none; padding: 0; }
    SourcePickerModal #source-picker-help { color: $text-muted; }
    """

    def __init__(self, sources: Sequence[Source], shown: str | None, read: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._sources = list(sources)
        self._shown = shown
        self._read = dict(read or {})

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Sources pinned: {len(self._sources)}", id="source-picker-title")
            yield Input(placeholder="type to filter: id, title, path, type", id="source-picker-filter", compact=True)
            yield OptionList(id="source-picker-list")
            yield Static("↑/↓ move · enter opens · escape stays", id="source-picker-help")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#source-picker-filter", Input).focus()

    def _fill(self, text: str) -> None:
        words = text.casefold().split()
        listing = self.query_one("#source-picker-list", OptionList)
        options = []
        for number, source in enumerate(self._sources, 1):
            if not source_matches(source, words):
                continue
            read = self._read.get(source.id)
            options.append(Option(Text.assemble(
                (f"{number:>2} ", "bold"), (source.id, "bold"), f"  {source.title}",
                ("  · this one" if source.id == self._shown else "", "italic"),
                (f"\n   {read + ' read · ' if read else ''}{source.media_type} · {source.version}", "dim")),
                id=source.id))
        listing.set_options(options or [Option(Text("no source matches", style="dim"), disabled=True)])
        ids = [option.id for option in options]
        listing.highlighted = ids.index(self._shown) if self._shown in ids and not words else (0 if ids else None)
        self.query_one("#source-picker-title", Static).update(
            f"Sources pinned: {len(self._sources)}" + (f" · {len(options)} match" if words else ""))

    @on(Input.Changed, "#source-picker-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_key(self, event: events.Key) -> None:
        # The arrows move in the list while the filter keeps the focus (typing goes on filtering).
        listing = self.query_one("#source-picker-list", OptionList)
        if event.key in ("down", "up"):
            event.stop()
            if event.key == "down":
                listing.action_cursor_down()
            else:
                listing.action_cursor_up()

    @on(Input.Submitted, "#source-picker-filter")
    def _submitted(self) -> None:
        listing = self.query_one("#source-picker-list", OptionList)
        if listing.highlighted is not None:
            option = listing.get_option_at_index(listing.highlighted)
            if not option.disabled:
                self.dismiss(option.id)

    @on(OptionList.OptionSelected, "#source-picker-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
