"""How the apps read escape followed by tab from the terminal.

Terminals send shift+tab as ``ESC [ Z``. Textual's input parser also reads the two bytes
``ESC TAB`` as shift+tab; those two bytes are what arrives when a reviewer presses escape
then tab while the app is busy (the reader opening its first snapshot): both keys are read at
once. Escape was then lost and tab went backwards, so the source location typed next landed
in the reader or the citations. Here ``ESC TAB`` is read as what was typed: escape, then tab.
"""

from __future__ import annotations

from contextlib import suppress


def read_escape_tab_as_typed() -> None:
    """Make Textual's parser read ``ESC TAB`` as escape then tab (idempotent)."""
    # A private table of the exactly pinned Textual release (pyproject.toml); if a later
    # release drops it, the parser's own reading stays (tests/tui/test_focus_model.py checks).
    with suppress(ImportError, AttributeError):
        from textual import _ansi_sequences
        from textual.keys import Keys

        _ansi_sequences.ANSI_SEQUENCES_KEYS["\x1b\t"] = (Keys.Escape, Keys.Tab)
