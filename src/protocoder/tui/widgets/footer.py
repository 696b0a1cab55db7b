"""AppFooter: Textual's footer, with the keys in the order the screen declares them, none cut in half.

Textual orders footer keys by the first widget that binds each key, so a focused list
(which binds pgup/pgdn itself) or input (ctrl+e, ctrl+d) pushed the screen's own keys
ahead of "Quit", and at 80 columns "Quit" was cut off. Here the screen's ``BINDINGS``
order wins: every screen starts with quit and the key list (see ``screens.keys.FRONT_KEYS``).
Keys that do not fit are left out whole (f1 lists them all) instead of ending in "^t No".
Keys whose action the app does not offer its user (``App.FOOTER_HIDES``: a served team member
does not add, edit or remove protocols) are not shown at all.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def _action_name(action: str) -> str:
    return action.split(".", 1)[1] if action.startswith(("app.", "screen.")) else action


class AppFooter(Footer):
    """A footer whose keys follow the screen's binding order (the command palette stays last)."""

    def compose(self) -> ComposeResult:
        # Textual's compose only opens nested containers for binding groups, which no
        # screen here uses, so its widgets can be collected and reordered.
        hidden = getattr(self.app, "FOOTER_HIDES", frozenset())
        widgets: list[Widget] = [w for w in super().compose()
                                 if not (isinstance(w, FooterKey) and _action_name(w.action) in hidden)]
        order = {}
        for binding in getattr(type(self.screen), "BINDINGS", []):
            name = _action_name(getattr(binding, "action", ""))
            order.setdefault(name, len(order))

        def rank(item: tuple[int, Widget]) -> tuple[int, int]:
            index, widget = item
            if isinstance(widget, FooterKey) and "-command-palette" not in widget.classes:
                return (order.get(_action_name(widget.action), len(order)), index)
            return (len(order) + 1, index)

        yield from (widget for _, widget in sorted(enumerate(widgets), key=rank))

        self.call_after_refresh(self._fit)

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the keys, in order, that fit beside the command palette key; hide the rest."""
        keys = [w for w in self.children if isinstance(w, FooterKey)]
        palette = [w for w in keys if "-command-palette" in w.classes]
        room = self.size.width - sum(w.get_content_width(self.size, self.app.size) for w in palette)
        used = 0
        for key in keys:
            if key in palette:
                continue
            used += key.get_content_width(self.size, self.app.size)
            key.display = used <= room
