"""What runs for one browser session of ``protocoder serve``: the coding or the adjudication app.

``protocoder serve`` (:mod:`.serve`) starts ``python -m protocoder.tui.web_session APP WORKSPACE``
once per browser tab, with Textual's web driver on its standard input and output. The apps
are the terminal ones, except that the person in the tab is always asked who they are: the
server's ``$PROTOCODER_REVIEWER`` or git ``user.name`` belong to whoever started the server.
The prompt gives no command-line advice (``--reviewer``): a browser tab has no command line.
The adjudication app asks for the adjudicator's name the same way. A tab that closes, or a
server that stops, ends the app as a terminal session ends: the coding screen writes pending
text as it unmounts, and the reviewer's session lock is given back.
"""

from __future__ import annotations

import sys
from pathlib import Path

from textual import events

from .adjudicate import AdjudicationApp, AdjudicationScreen
from .app import CoderApp
from .screens import ReviewerModal

APPS = ("code", "adjudicate")
"""The apps ``protocoder serve --app`` can serve."""


class BrowserReviewerPrompt(ReviewerModal):
    """The name prompt of a browser tab: nothing about ``--reviewer``, which a tab cannot give."""

    NEXT_TIME = None


class AdjudicatorPrompt(ReviewerModal):
    """The name prompt of the adjudication app in a browser tab."""

    QUESTION = "Who is adjudicating?"
    NEXT_TIME = None
    NEW_ID = "adjudicator id: {id} — enter starts adjudicating"

    def _intro(self) -> str:
        return "Type your name: it is recorded with every decision you make."


class WebCoderApp(CoderApp):
    """The coding app for a browser tab: always asks who is coding, without command-line advice."""

    REVIEWER_PROMPT = BrowserReviewerPrompt

    def __init__(self, workspace: Path) -> None:
        # Never the server's $PROTOCODER_REVIEWER or git user.name: the app asks.
        super().__init__(workspace, None)


class WebAdjudicationApp(AdjudicationApp):
    """The adjudication app for a browser tab: asks who is adjudicating first."""

    def __init__(self, workspace: Path) -> None:
        super().__init__(workspace, "")

    def on_mount(self, event: events.Mount) -> None:
        # Textual also calls the base class's handler unless told not to: that one would
        # open the adjudication screen before anyone has said who they are.
        event.prevent_default()

        def start(name: str | None) -> None:
            if not name:
                self.exit()
                return
            self.adjudicator = name
            self.push_screen(AdjudicationScreen(self.workspace, name))

        self.push_screen(AdjudicatorPrompt(), start)


def run_session(app_name: str, workspace: Path) -> None:
    """Run one browser session's app (``code`` or ``adjudicate``) on ``workspace`` until it exits."""
    if app_name == "code":
        WebCoderApp(workspace).run()
    elif app_name == "adjudicate":
        WebAdjudicationApp(workspace).run()
    else:
        raise SystemExit(f"protocoder: unknown app {app_name!r} (one of {', '.join(APPS)})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m protocoder.tui.web_session code|adjudicate WORKSPACE")
    run_session(sys.argv[1], Path(sys.argv[2]))

