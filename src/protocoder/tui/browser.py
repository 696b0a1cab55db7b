"""Opening a source's URL: in a browser when one can be opened, else on the clipboard.

Textual's own ``App.open_url`` ignores whether anything opened, so on a server without a
browser the reviewer was told "Opening …" and nothing happened. On Linux without a
display, Python's ``webbrowser`` would start a text-mode browser inside the very terminal
the app is drawing in, so it is not asked at all unless ``$BROWSER`` names one.
"""

from __future__ import annotations

import os
import sys
import webbrowser
from collections.abc import Mapping

from textual.app import App

from ..storage.formats import openable_url


def graphical_browser_possible(environ: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """True when a browser could open a window here (or ``$BROWSER`` says which one to use)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if environ.get("BROWSER"):
        return True
    if platform.startswith(("darwin", "win", "cygwin")):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> bool:
    """Ask the system's browser to open ``url``; False when there is none or it refused."""
    if not graphical_browser_possible():
        return False
    try:
        return bool(webbrowser.open(url, new=2))
    except Exception:  # webbrowser raises whatever its launcher raises (OSError, webbrowser.Error, …)
        return False


def open_or_copy(app: App[object], url: str) -> bool:
    """Open ``url`` for the reviewer, or copy it to the clipboard and say so. True when opened.

    In a web browser (``protocoder serve``) the page opens it in a new tab; in a terminal
    the system's browser is asked. When that fails, the URL goes to the clipboard through
    the terminal (OSC 52, which most terminals and tmux with ``set-clipboard on`` accept)
    and the notice shows it in full, so it can be copied by hand too.
    """
    target = openable_url(url)
    if target is None:  # validate's check: a javascript: or file: URL in a cloned protocol is never opened
        app.notify(f"Not opened: {url!r} is not an http(s) address or a DOI. Fix the source's url in its "
                   "protocol.yaml (protocoder validate names it).", title="Not opened", severity="error",
                   timeout=12, markup=False)
        return False
    url = target
    if app.is_web:
        app.open_url(url)
        app.notify(f"Opened in a new browser tab: {url}", markup=False)
        return True
    if open_in_browser(url):
        app.notify(f"Opening {url}", markup=False)
        return True
    app.copy_to_clipboard(url)
    app.notify(f"No browser could be opened here. The URL is on the clipboard (if the terminal accepts "
               f"that):\n{url}", title="No browser", severity="warning", timeout=12, markup=False)
    return False
