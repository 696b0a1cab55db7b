"""The key tables of the apps as Markdown (``docs/keys.md``), made from the same bindings the f1
screen lists (:func:`~.screens.keys.screen_keys`), so the documentation and the app cannot drift.

``python scripts/keys_doc.py`` writes the page; a test fails when it is stale.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.binding import Binding

INTRO = """# Keys

Generated from the apps' key bindings by `python scripts/keys_doc.py` (the same table the f1
key shows on each screen); do not edit by hand. Which keys act where is explained in
[the focus model](tui.md).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def keys_markdown() -> str:
    """The Markdown of ``docs/keys.md``: one table per screen, in the order a reviewer meets them."""
    from .adjudicate import AdjudicationApp, AdjudicationScreen
    from .app import CoderApp
    from .screens import (
        CodingScreen,
        GridScreen,
        GuidedModal,
        ProgressScreen,
        ProtocolFormScreen,
        ProtocolListScreen,
    )
    from .screens.keys import screen_keys
    from .screens.reader import ReaderScreen

    display = App.get_key_display

    def key_display(binding: Binding) -> str:
        # App.get_key_display uses no state of the app; it is called unbound so no app is built.
        return display(None, binding)  # type: ignore[arg-type]

    screens: list[tuple[type, list[Binding]]] = [
        (ProtocolListScreen, list(CoderApp.BINDINGS)),
        (CodingScreen, list(CoderApp.BINDINGS)),
        (ReaderScreen, list(CoderApp.BINDINGS)),
        (GuidedModal, []),
        (ProtocolFormScreen, list(CoderApp.BINDINGS)),
        (GridScreen, list(CoderApp.BINDINGS)),
        (ProgressScreen, list(CoderApp.BINDINGS)),
        (AdjudicationScreen, list(AdjudicationApp.BINDINGS)),
    ]
    parts = [INTRO]
    for screen, app_bindings in screens:
        title, rows = screen_keys(screen, [b for b in app_bindings if isinstance(b, Binding)], key_display)
        app_name = "protocoder adjudicate" if screen is AdjudicationScreen else "protocoder code"
        parts.append(f"\n## {title[0].upper()}{title[1:]} ({app_name})\n\n| Key | Action |\n| --- | --- |\n")
        parts.append("".join(f"| {_cell(key)} | {_cell(action)} |\n" for key, action in rows))
    return "".join(parts)


def write_keys_doc(target: Path) -> bool:
    """Write the page to ``target``; True when it changed."""
    text = keys_markdown()
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.write_text(text, encoding="utf-8")
    return True
