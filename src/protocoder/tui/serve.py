"""``protocoder serve``: the coding app (or the adjudication app) in a web browser.

Built on ``textual-serve``: an aiohttp server whose page runs a terminal (xterm.js) and
opens a websocket; every websocket starts one app process
(``python -m protocoder.tui.web_session``) and relays its screen and keys.

Security model. Whoever reaches the websocket can code under any reviewer's name, so:

* By default the server listens on 127.0.0.1 only, and answers only requests whose
  ``Host`` is a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``): a web page that
  renames itself to 127.0.0.1 through DNS (rebinding) cannot reach it.
* Any other ``--host`` needs an access token: generated with :func:`secrets.token_urlsafe`
  and printed in the URL, or given with ``--token``. It is checked, in constant time, on
  every request: the page, the websocket, the static files and downloads. It travels once
  in the query string (``/?token=…``); the server answers with an HttpOnly, SameSite=Strict
  cookie and a redirect to the same page without the token, so the token leaves the address
  bar and browser history, and the page's own requests carry the cookie.
* A websocket whose ``Origin`` is not this server's own address is refused, so a page from
  another site (or another port of the same machine) cannot drive a session.
* There is no TLS: across a network, reach the server through an SSH tunnel or a reverse
  proxy with TLS.

With a team file (``team.yaml``, see :mod:`protocoder.team`) there is no shared token: each
member signs in once with their own one-time link (``/signin?token=NAME.SECRET``, printed by
``protocoder team add``), which the server exchanges for a session cookie (HttpOnly,
SameSite=Strict). Every request then needs a session of a current member. Each browser
session's app runs as that member, started with the name from the sign-in: a reviewer gets
the coding app and codes (and sees) only their own cells; an adjudicator gets the
adjudication app. ``protocoder team revoke`` removes the member's sessions from disk; the
server refuses their next request and closes their open sessions within a second. A session
ends ``session_hours`` after sign-in (team.yaml, default 12): the same happens then, and the
refusal names ``protocoder team link NAME``, which issues the member a new link.

Whatever the access, one client's cost is bounded (:mod:`protocoder.tui.serving.limits`): the
terminal size on connect and on resize, the sessions per member and in all, and the failed
sign-in attempts per client and per name, which are refused before any hash is computed.

The pieces live in :mod:`protocoder.tui.serving`; this module is the entry point the CLI calls.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from ..errors import UsageError
from ..team.members import has_team, load_team
from .serving.access import check_token, generate_token, is_loopback
from .serving.limits import DEFAULT_MAX_SESSIONS, DEFAULT_SESSIONS_PER_MEMBER
from .serving.server import ReviewServer, Say

__all__ = ["ReviewServer", "check_token", "generate_token", "is_loopback", "serve_workspace"]


def serve_workspace(workspace: Path, *, app_name: str = "code", host: str = "127.0.0.1", port: int = 8000,
                    token: str | None = None, say: Say | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
                    sessions_per_member: int = DEFAULT_SESSIONS_PER_MEMBER) -> int:
    """Serve ``workspace``'s app to web browsers until stopped; return the process's exit status.

    A host that is not loopback always gets a token: ``token``, or a generated one. On
    loopback a given ``token`` is required as well; without one, only this machine can connect.
    """
    team = has_team(workspace)
    if team:
        if token is not None:
            raise UsageError("this workspace has a team (team.yaml): members sign in with their own links, so "
                             "--token (or $PROTOCODER_SERVE_TOKEN) is not used (leave it out)")
        load_team(workspace)  # a broken team file is reported now, with its line, not at the first request
    elif token is not None:
        token = check_token(token)
    elif not is_loopback(host):
        token = generate_token()
    server = ReviewServer(workspace, app_name=app_name, host=host, port=port, token=token, say=say, team=team,
                          max_sessions=max_sessions, sessions_per_member=sessions_per_member)
    try:
        status = server.run()
    except KeyboardInterrupt:  # pragma: no cover - only where signal handlers cannot be installed
        server.stopped_by, status = signal.SIGINT, 130
    print(f"protocoder serve: stopped ({signal.Signals(server.stopped_by or signal.SIGINT).name})",
          file=sys.stderr, flush=True)
    return status
