"""QuoteIntoModal: the passage the reader is about to quote, and the field it goes to.

``q`` in the reader shows the exact passage (its source, its heading, its text) before anything
is saved, with the protocol's fields listed, the cell being coded first highlighted: enter
quotes into the highlighted field, the key shown beside a field quotes into that one at once,
escape saves nothing. One pass through a source can so feed every field. Quoting never sets a
code: the code stays the reviewer's decision.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

FIELD_KEYS = "123456789abcdefghijklmoprstuvwxyz"
"""The keys that pick a field in the order of the rubric (``n`` and ``q`` stay free: no and quote)."""


def field_key(index: int) -> str:
    """The key that picks the ``index``-th field (0-based), or "" past the last key."""
    return FIELD_KEYS[index] if index < len(FIELD_KEYS) else ""


class QuoteIntoModal(ModalScreen[str | None]):
    """Preview a passage and pick the field it is quoted into; dismiss with the field id (None: nothing saved)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="quote_into.cancel"),
        Binding("q", "choose", "Quote", show=False, id="quote_into.quote",
                tooltip="Quote into the highlighted field (as enter)"),
    ]

    DEFAULT_CSS = """
    QuoteIntoModal { align: center middle; }
    QuoteIntoModal > Vertical { width: 90%; max-width: 100; height: auto; max-height: 90%;
                                background: $surface; border: round $primary; padding: 0 1; }
    QuoteIntoModal #quote-into-where { height: auto; color: $text-muted; }
    QuoteIntoModal #quote-into-text-box { height: auto; max-height: 7; }
    QuoteIntoModal #quote-into-fields { height: auto; max-height: 12; border: none; padding: 0; }
    QuoteIntoModal #quote-into-help { height: 1; color: $text-muted; }
    """

    def __init__(self, where: str, text: str, fields: Sequence[tuple[str, str, int, bool]], current: str) -> None:
        """``where``: source › heading; ``fields``: (id, label, quotes it has, already has this passage)."""
        super().__init__()
        self._where = where
        self._text = text
        self._fields = list(fields)
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._where, style="bold"), id="quote-into-where")
            with VerticalScroll(id="quote-into-text-box"):
                yield Static(Text(f"“{self._text}”"), id="quote-into-text")
            options = []
            for index, (field_id, label, count, has_it) in enumerate(self._fields):
                key = field_key(index)
                row = Text.assemble((f"{key or ' '} ", "bold"), label,
                                    (" · this cell" if field_id == self._current else "", "bold"),
                                    (f" · {count} quote{'s' if count != 1 else ''}" if count else "", "dim"),
                                    (" · quotes this already" if has_it else "", "italic"))
                options.append(Option(row, id=field_id, disabled=has_it))
            yield OptionList(*options, id="quote-into-fields")
            yield Static("enter or a field's key: quote into it · escape: save nothing", id="quote-into-help")

    def on_mount(self) -> None:
        listing = self.query_one("#quote-into-fields", OptionList)
        ids = [field_id for field_id, *_ in self._fields]
        if self._current in ids:
            listing.highlighted = ids.index(self._current)
        listing.focus()

    def on_key(self, event: events.Key) -> None:
        key = event.character or ""
        if key and key in FIELD_KEYS:
            index = FIELD_KEYS.index(key)
            if index < len(self._fields):
                event.stop()
                field_id, _, _, has_it = self._fields[index]
                if has_it:
                    self.notify("That field quotes this passage already.", timeout=2)
                    return
                self.dismiss(field_id)

    def action_choose(self) -> None:
        listing = self.query_one("#quote-into-fields", OptionList)
        if listing.highlighted is not None:
            option = listing.get_option_at_index(listing.highlighted)
            if not option.disabled:
                self.dismiss(option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(OptionList.OptionSelected, "#quote-into-fields")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
