"""The keys a desktop browser keeps for itself: a page (``protocoder serve``'s terminal) never hears them.

The one list the apps' bindings are checked against (``tests/tui/test_keys_browser.py``): a key
here must not be bound by any screen or widget of the served apps, because in a browser tab
pressing it opens a window, opens or closes a tab, or switches tabs instead.

Sources (read in December 2026):

* Chromium, ``chrome/browser/ui/browser_command_controller.cc``,
  ``BrowserCommandController::IsReservedCommandOrKey``: the commands a page can never
  override are ``IDC_CLOSE_TAB``, ``IDC_CLOSE_WINDOW``, ``IDC_NEW_INCOGNITO_WINDOW``,
  ``IDC_NEW_TAB``, ``IDC_NEW_WINDOW``, ``IDC_RESTORE_TAB``, ``IDC_SELECT_NEXT_TAB``,
  ``IDC_SELECT_PREVIOUS_TAB`` and ``IDC_EXIT``; their keys on Linux and Windows come from
  ``kAcceleratorMap`` (``chrome/browser/ui/views/accelerator_table.cc``). Other shortcuts
  (ctrl+p, ctrl+s, ctrl+f, f3, ctrl+l, ctrl+r, …) go to the page first, which may take them.
* Firefox, ``browser/base/content/browser-sets.inc``: the ``<key>`` elements marked
  ``reserved="true"`` (new window, new tab, close tab and window, reopen closed tab and
  window, private window, quit); since Firefox 48 their key events are not even fired at
  web content. Ctrl+tab and ctrl+page up/down switch tabs in the tab strip, before content.

macOS uses cmd (meta) for all of these, which no terminal app binds, so only the ctrl and alt
forms (Linux, Windows, ChromeOS) are listed, in Textual's key names.
"""

from __future__ import annotations

BROWSER_RESERVED: dict[str, str] = {
    "ctrl+n": "new window (Chrome IDC_NEW_WINDOW; Firefox key_newNavigator)",
    "ctrl+shift+n": "new incognito window (Chrome); reopen closed window (Firefox)",
    "ctrl+t": "new tab (Chrome IDC_NEW_TAB; Firefox key_newNavigatorTab)",
    "ctrl+shift+t": "reopen the closed tab (Chrome IDC_RESTORE_TAB; Firefox key_undoCloseTab)",
    "ctrl+w": "close the tab (Chrome IDC_CLOSE_TAB; Firefox key_close)",
    "ctrl+f4": "close the tab (Chrome IDC_CLOSE_TAB; Firefox key_close)",
    "ctrl+shift+w": "close the window (Chrome IDC_CLOSE_WINDOW; Firefox key_closeWindow)",
    "alt+f4": "close the window (Chrome IDC_CLOSE_WINDOW; the window manager)",
    "ctrl+tab": "next tab (Chrome IDC_SELECT_NEXT_TAB; Firefox's tab strip)",
    "ctrl+pagedown": "next tab (Chrome IDC_SELECT_NEXT_TAB; Firefox's tab strip)",
    "ctrl+shift+tab": "previous tab (Chrome IDC_SELECT_PREVIOUS_TAB; Firefox's tab strip)",
    "ctrl+pageup": "previous tab (Chrome IDC_SELECT_PREVIOUS_TAB; Firefox's tab strip)",
    "ctrl+shift+q": "quit the browser (Chrome IDC_EXIT)",
    "ctrl+q": "quit the browser (Firefox key_quitApplication, Linux)",
    "ctrl+shift+p": "new private window (Firefox key_privatebrowsing)",
}
"""Reserved key (Textual's name) → what the browser does with it instead, and where that is written."""

KEPT_FOR_TERMINALS: dict[str, str] = {
    "ctrl+q": "the command palette's Quit; in a browser, closing the tab ends the session the same way "
              "(the app saves first), so the served apps' footers do not show ctrl+q (only Firefox on "
              "Linux keeps it)",
    "ctrl+pagedown": "}",
    "ctrl+pageup": "{",
}
"""Reserved keys the apps still bind because terminals deliver them and people expect them there,
each with how a browser user reaches the same action: a one-character key is a twin binding of the
same action on the same screen (checked by the test); anything else says where the action is."""

TEXTUAL_WIDGET_KEYS = frozenset({"ctrl+w", "ctrl+pageup", "ctrl+pagedown"})
"""Reserved keys Textual's own widgets bind (Input and TextArea: ctrl+w deletes a word; every
scrolling widget: ctrl+page up/down scroll sideways). The apps neither show nor document them, and
a browser user who presses them gets the browser's action, as on any page; a binding the apps
declare themselves is checked without this allowance."""


def reserved_by_browser(key: str) -> str | None:
    """What a desktop browser does with ``key`` (a Textual key name, or several joined by commas),
    or None when the page hears it."""
    for one in key.split(","):
        found = BROWSER_RESERVED.get(one.strip())
        if found is not None:
            return found
    return None
