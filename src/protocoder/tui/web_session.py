"""What runs for one browser session of ``protocoder serve``: the coding or the adjudication app.

``protocoder serve`` (:mod:`.serve`) starts ``python -m protocoder.tui.web_session APP WORKSPACE``
once per browser tab, with Textual's web driver on its standard input and output. The apps
are the terminal ones, except that the person in the tab is always asked who they are: the
server's ``$PROTOCODER_REVIEWER`` or git ``user.name`` belong to whoever started the server.
The prompt gives no command-line advice (``--reviewer``): a browser tab has no command line.
The adjudication app asks for the adjudicator's name the same way. A tab that closes, or a
server that stops, ends the app as a terminal session ends: the coding screen writes pending
text as it unmounts, and the reviewer's session lock is given back.

With a team (``team.yaml``) the server starts ``... APP WORKSPACE --as NAME`` with the name the
member signed in under: the app asks nothing, codes as that reviewer only (it loads only their
own files, so no other reviewer's codes, quotes, notes, agreement or final view are in the
process at all), and offers nothing that writes files shared with others (protocols, sources,
references).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from textual import events
from textual.app import SystemCommand
from textual.screen import Screen

from .adjudicate import AdjudicationApp, AdjudicationScreen
from .app import CoderApp
from .screens import ReviewerModal
from .session import Session

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


IN_A_TAB_HIDES = frozenset({"quit"})
"""Keys a browser tab's footer does not show: quitting is closing the tab (the app saves first),
and ctrl+q quits Firefox on Linux (see ``browser_keys``). The command palette keeps Quit."""


class WebCoderApp(CoderApp):
    """The coding app for a browser tab: always asks who is coding, without command-line advice."""

    REVIEWER_PROMPT = BrowserReviewerPrompt
    FOOTER_HIDES = IN_A_TAB_HIDES

    def __init__(self, workspace: Path) -> None:
        # Never the server's $PROTOCODER_REVIEWER or git user.name: the app asks.
        super().__init__(workspace, None)


class WebAdjudicationApp(AdjudicationApp):
    """The adjudication app for a browser tab: asks who is adjudicating first."""

    FOOTER_HIDES = IN_A_TAB_HIDES

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


TEAM_ONLY = ("A team member codes only their own cells: protocols, sources and references are changed by the "
             "workspace's owner (on the command line or with `protocoder code`).")


class MemberSession(Session):
    """A team reviewer's session: the protocols are those team.yaml assigns to them."""

    def load(self) -> None:
        super().load()
        from ..team.members import load_team
        from ..team.progress import assignments

        team = load_team(self.paths.root)
        if team is None:
            return
        plan = assignments(team, [p.id for p in self.protocols])
        if self.reviewer in plan:
            assigned = set(plan[self.reviewer])
            self.protocols = [p for p in self.protocols if p.id in assigned]


class MemberCoderApp(CoderApp):
    """The coding app of a signed-in team reviewer: the server gives the name, nothing asks for it."""

    SESSION = MemberSession
    FOOTER_HIDES = IN_A_TAB_HIDES | {"add_protocol", "edit_protocol", "remove_protocol", "add_reference"}
    """What a member may not do is not offered in the footer (the keys say why if pressed anyway)."""
    PALETTE_HIDES = frozenset({"Add protocol", "Add reference (BibTeX)", "Edit protocol", "Remove protocol",
                               "Edit this protocol"})
    """Nor in the command palette."""

    def __init__(self, workspace: Path, reviewer: str) -> None:
        # origin None: the server vouches for the name (it comes from the sign-in).
        super().__init__(workspace, reviewer)

    # Each of these writes files every reviewer shares (protocol.yaml, sources, references.bib,
    # or, for remove, every reviewer's codes): not for one reviewer's session.
    def add_protocol(self) -> None:
        self.notify(TEAM_ONLY, severity="warning")

    def edit_protocol(self, protocol_id: str) -> None:
        self.notify(TEAM_ONLY, severity="warning")

    def remove_protocol(self, protocol_id: str) -> None:  # type: ignore[override]  # the base is a worker
        self.notify(TEAM_ONLY, severity="warning")

    def add_reference(self) -> None:
        self.notify(TEAM_ONLY, severity="warning")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        return (command for command in super().get_system_commands(screen) if command.title not in self.PALETTE_HIDES)


class MemberAdjudicationApp(AdjudicationApp):
    """The adjudication app of a signed-in adjudicator, in a browser tab."""

    FOOTER_HIDES = IN_A_TAB_HIDES


def run_session(app_name: str, workspace: Path, member: str | None = None) -> None:
    """Run one browser session's app (``code`` or ``adjudicate``) on ``workspace`` until it exits;
    ``member``: the signed-in team member it runs as (nothing asks who is there)."""
    if os.environ.get("PROTOCODER_SERVE_TRACE"):  # benchmarks/bench_serve.py --trace: where a key's time goes
        from .serving.trace import install

        install(member or f"pid{os.getpid()}")
    if app_name == "code":
        (WebCoderApp(workspace) if member is None else MemberCoderApp(workspace, member)).run()
    elif app_name == "adjudicate":
        (WebAdjudicationApp(workspace) if member is None else MemberAdjudicationApp(workspace, member)).run()
    else:
        raise SystemExit(f"protocoder: unknown app {app_name!r} (one of {', '.join(APPS)})")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[3] == "--as":
        run_session(sys.argv[1], Path(sys.argv[2]), sys.argv[4])
    elif len(sys.argv) == 3:
        run_session(sys.argv[1], Path(sys.argv[2]))
    else:
        raise SystemExit("usage: python -m protocoder.tui.web_session code|adjudicate WORKSPACE [--as NAME]")

