"""KeysModal: every key of the current screen, with what it does; and the keys every screen shows first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

FRONT_KEYS = [
    Binding("ctrl+q", "app.quit", "Quit", tooltip="Quit (every edit is written first)"),
    Binding("f1", "app.show_keys", "Keys", tooltip="List every key of this screen"),
]
"""Put first in a screen's bindings: the footer lists bindings in order and cuts what does not
fit on the right, so quitting and the key list stay visible at 80 columns."""

FOCUS_KEYS = [
    Binding("tab", "app.focus_next", show=False, priority=True, id="app.focus_next"),
    Binding("shift+tab", "app.focus_previous", show=False, priority=True, id="app.focus_previous"),
]
"""Tab and shift+tab for an app's bindings: acting as soon as they arrive, not once the widget
being left has had them. Keys arrive in bursts (fast typing while the app is busy, a browser
tab under ``protocoder serve``) and each is handed to the widget focused on arrival: the
keys typed after tab went to the widget tab was leaving (the codes took "Sec 3", its "3"
picking a code) while the next input got nothing."""


KEY_WIDTH = 20
"""Width of the keys column of the f1 table (longer keys wrap)."""
ACTION_WIDTH = 42
"""Width of the action column: fits the 76-column dialog at 80×24; longer descriptions wrap."""


def key_rows(screen: Screen[object] | type[Screen[object]], app_bindings: Iterable[Binding],
             key_display: Callable[[Binding], str]) -> list[tuple[str, str]]:
    """(keys, what they do) for every described binding of ``screen``, then of the app.

    Bindings that do the same thing (pgdn and ``]``) share a row; a key is listed once.
    A binding's tooltip, when it has one, is the longer description used here.
    """
    rows: list[tuple[list[str], str]] = []
    where: dict[str, int] = {}
    seen: set[str] = set()
    cls = screen if isinstance(screen, type) else type(screen)
    for binding in [*getattr(cls, "BINDINGS", []), *app_bindings]:
        if not isinstance(binding, Binding) or not binding.description:
            continue
        shown = [key_display(Binding(key.strip(), binding.action)) for key in binding.key.split(",")]
        shown = [key for key in shown if key not in seen]
        if not shown:
            continue
        seen.update(shown)
        description = binding.tooltip or binding.description
        if description in where:
            rows[where[description]][0].extend(shown)
        else:
            where[description] = len(rows)
            rows.append((shown, description))
    return [(" / ".join(keys), description) for keys, description in rows]


class KeysModal(ModalScreen[None]):
    """A table of (keys, action) pairs; any of escape, f1 or ? closes it."""

    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close", id="keys.close")]

    def __init__(self, title: str, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self._title = title
        self._keys = list(keys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="keys-dialog"):
            yield Static(self._title, classes="dialog-title")
            table: DataTable[Text] = DataTable(id="keys-table", cursor_type="row", zebra_stripes=True)
            table.add_column("Key", width=KEY_WIDTH)
            table.add_column("Action", width=ACTION_WIDTH)
            for key, description in self._keys:
                # height=None: as many lines as the wrapped description needs (never cut off).
                table.add_row(Text(key), Text(description), height=None)
            yield table
            yield Static("escape closes · ctrl+p opens the command palette", classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)


def screen_keys(screen: Screen[object] | type[Screen[object]], app_bindings: Iterable[Binding],
                key_display: Callable[[Binding], str]) -> tuple[str, list[tuple[str, str]]]:
    """The title and rows of the keys table of ``screen`` (a screen or its class): its bindings,
    then the app's, then the keys that are not bindings. The f1 screen and ``docs/keys.md``
    (scripts/keys_doc.py) both show exactly this."""
    rows = key_rows(screen, app_bindings, key_display)
    rows += list(getattr(screen, "EXTRA_KEYS", []))
    rows.append(("ctrl+p", "command palette: every other action"))
    cls = screen if isinstance(screen, type) else type(screen)
    title = getattr(screen, "KEYS_TITLE", "") or cls.__name__
    return title, rows


def show_keys(screen: Screen[object], app_bindings: Iterable[Binding],
              key_display: Callable[[Binding], str]) -> KeysModal:
    """The keys modal for ``screen`` (see :func:`screen_keys`)."""
    title, rows = screen_keys(screen, app_bindings, key_display)
    return KeysModal(f"Keys · {title}", rows)
