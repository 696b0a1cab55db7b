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
"""

from __future__ import annotations

import asyncio
import errno
import functools
import hmac
import ipaddress
import os
import shlex
import signal
import socket
import subprocess
import sys
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from ..errors import ProtocoderError, UsageError
from ..team.members import Member, Team, has_team, load_team
from ..team.secrets import SessionTable, redeem
from .web_session import APPS

TOKEN_BYTES = 24
"""Random bytes in a generated token (32 URL-safe characters)."""

MIN_TOKEN_LENGTH = 16
"""A token given with ``--token`` must be at least this long."""

SHUTDOWN_TIMEOUT = 10.0
"""Seconds a stopping server gives open sessions to save and exit."""

REVOCATION_CHECK = 0.5
"""Seconds between checks that every open team session's member is still in the team."""

SIGNIN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>protocoder · sign in</title></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>Sign in to {title}</h1>
<p>This link signs you in as <b>{name}</b>, once. Your coding is recorded under that name.</p>
<form method="post" action="/signin"><input type="hidden" name="token" value="{token}">
<button type="submit">Sign in as {name}</button></form>
</body></html>
"""
"""The page a sign-in link opens: the token is spent only by the button (a POST), so a chat
program that fetches the link to preview it does not use it up."""

FOCUS_TERMINAL = """<script>
  // The terminal takes the keyboard once the app has drawn, so the name prompt hears a
  // name typed on arrival. Without this, keys went nowhere until a click, and the click
  // that gave the terminal the keyboard also picked what it landed on: in the middle of
  // the page, the first reviewer in the prompt's list. Focusing after the first bytes
  // (not before the websocket is open) lets the page tell the app it has the focus, so
  // the focused input is drawn as such.
  (() => {
    const timer = setInterval(() => {
      const input = document.querySelector("#terminal textarea");
      if (input && document.body.classList.contains("-first-byte")) {
        clearInterval(timer);
        if (document.activeElement !== input) input.focus({ preventScroll: true });
      }
    }, 50);
  })();
</script>
"""
"""Added to textual-serve's page, whose terminal hears no key until it is clicked."""

_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}
_TOKEN_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")

Say = Callable[[str], None]


def is_loopback(host: str) -> bool:
    """True when ``host`` (a name or an address, IPv6 with or without brackets) is this machine only."""
    host = host.strip().lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def generate_token() -> str:
    """A fresh, unguessable access token that needs no escaping in a URL or a cookie."""
    import secrets

    return secrets.token_urlsafe(TOKEN_BYTES)


def check_token(token: str) -> str:
    """Return ``token`` if it can be used as an access token; raise :class:`UsageError` saying why not."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise UsageError(f"--token must be at least {MIN_TOKEN_LENGTH} characters long "
                         "(leave it out and serve generates one)")
    if not set(token) <= _TOKEN_ALPHABET:
        raise UsageError("--token may use only letters, digits and - _ . ~ (it travels in a URL)")
    return token


def _host_of(netloc: str) -> str:
    """The host part of ``host:port`` (IPv6 in brackets or not)."""
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def _url_host(host: str) -> str:
    """``host`` as it appears in a URL: IPv6 addresses in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class ReviewServer(Server):
    """textual-serve's server for one workspace's app, with the checks described in the module docs."""

    def __init__(self, workspace: Path, *, app_name: str = "code", host: str = "127.0.0.1", port: int = 8000,
                 token: str | None = None, say: Say | None = None, team: bool = False) -> None:
        if app_name not in APPS:
            raise UsageError(f"--app must be one of {', '.join(APPS)}")
        self.workspace = workspace.resolve()
        super().__init__(self._command(app_name), host=host, port=port, title=f"protocoder · {self.workspace.name}")
        self.app_name = app_name
        self.token = token
        self.say: Say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.stopped_by: int | None = None
        self._sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()
        self.team = team
        """Members sign in (team.yaml): each session runs as its member."""
        self.sessions = SessionTable(self.workspace)
        self._member_sockets: dict[web.WebSocketResponse, tuple[str, str]] = {}
        """Open team sessions: websocket → (session token, member name)."""
        self._team_error = ""
        """The last problem of team.yaml that was logged (each is logged once)."""

    def _command(self, app_name: str, member: str | None = None) -> str:
        """The shell command of one session's app (as ``member``, for a team)."""
        argv = [sys.executable, "-m", "protocoder.tui.web_session", app_name, str(self.workspace)]
        if member is not None:
            argv += ["--as", member]
        # exec: the shell textual-serve starts the command with is replaced by the app, so
        # stopping a session reaches the app itself (cmd.exe has no exec and other quoting).
        return "exec " + shlex.join(argv) if os.name == "posix" else subprocess.list2cmdline(argv)

    @property
    def session_cookie_name(self) -> str:
        """A team member's session cookie (one per port, as the token's)."""
        return f"protocoder-session-{self.port}"

    def member(self, request: web.Request) -> Member | None:
        """The current team member whose session ``request`` carries, or None."""
        name = self.sessions.member_of(request.cookies.get(self.session_cookie_name, ""))
        if name is None:
            return None
        team = self._current_team()
        return team.member(name) if team is not None else None

    def _still_member(self, name: str) -> bool:
        """True when ``name`` is in the team file as it is now."""
        team = self._current_team()
        return team is not None and team.member(name) is not None

    def _current_team(self) -> Team | None:
        """The team file as it is now; None (nobody is let in) while it is missing or broken."""
        try:
            team = load_team(self.workspace)
        except ProtocoderError as exc:  # fail closed: a hand edit gone wrong lets nobody in
            if str(exc) != self._team_error:  # said once, not at every request
                self._team_error = str(exc)
                self.say(f"team.yaml cannot be read, so every member is refused until it is fixed: {exc}")
            return None
        self._team_error = ""
        return team

    @property
    def cookie_name(self) -> str:
        """The token's cookie: cookies are shared by every port of a host, so each port has its own."""
        return f"protocoder-token-{self.port}"

    # ------------------------------------------------------------------ checks

    def _refusal(self, request: web.Request) -> str | None:
        """Why ``request`` must be refused, or None when it may go on."""
        if self.team:
            return self._team_refusal(request)
        if self.token is None:
            # No token: loopback only, and only under a loopback name (DNS rebinding).
            if not is_loopback(_host_of(request.host)):
                return f"host {request.host!r} is not this machine"
        else:
            given = request.query.get("token") or request.cookies.get(self.cookie_name) or ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return "wrong access token" if given else "no access token"
        if request.path == "/ws":
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
                return f"websocket from another site ({origin!r})"
        return None

    def _team_refusal(self, request: web.Request) -> str | None:
        if is_loopback(self.host) and not is_loopback(_host_of(request.host)):
            return f"host {request.host!r} is not this machine"  # DNS rebinding, as without a team
        if request.path == "/ws" or request.method != "GET":
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
                return f"request from another site ({origin!r})"
        if request.path == "/signin":
            return None
        stored = self.sessions.find(request.cookies.get(self.session_cookie_name, ""))
        if stored is not None and stored.ended() and self._still_member(stored.member):
            request["expired"] = stored.member  # the refusal names the command that issues a new link
            return f"{stored.member}'s session expired"
        member = self.member(request)
        if member is None:
            return "not signed in"
        request["member"] = member
        return None

    @web.middleware
    async def guard(self, request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Refuse (403) every request that fails :meth:`_refusal`; trade a good token in the URL for a cookie."""
        reason = self._refusal(request)
        if reason is not None:
            self.say(f"refused {request.method} {request.path} from {request.remote}: {reason}")
            if "expired" in request:
                name = request["expired"]
                advice = (f"Sessions last a fixed time after sign-in (session_hours in team.yaml). Sign in "
                          f"again with a new link: `protocoder team link {name}` issues one.")
            elif self.team:
                advice = ("This protocoder server is for its team: sign in with your own link "
                          "(/signin?token=...; `protocoder team link NAME` issues a new one).")
            elif self.token is not None:
                advice = ("This protocoder server needs its access token: open the address that "
                          "`protocoder serve` printed (it ends in ?token=...).")
            else:
                advice = ("This protocoder server answers only on this machine: open "
                          f"http://127.0.0.1:{self.port}/")
            raise web.HTTPForbidden(text=f"403 Forbidden: {reason}.\n{advice}\n")
        if self.token is not None and "token" in request.query and request.path == "/":
            # Move the token from the URL into a cookie, and the browser to a URL without it.
            query = request.url.query.copy()
            query.popall("token")
            response = web.HTTPSeeOther(request.rel_url.with_query(query))
            response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict", path="/",
                                secure=request.secure or request.headers.get("X-Forwarded-Proto") == "https")
            raise response
        return await handler(request)

    # ------------------------------------------------------------------ routes

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        if self.team:
            app.add_routes([web.get("/signin", self.handle_signin_page), web.post("/signin", self.handle_signin)])
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def handle_index(self, request: web.Request) -> web.Response:
        """The page: a terminal that connects back to this server under the name the browser used."""
        # The browser's own address for the server, not the bind address: 0.0.0.0 or a
        # name behind a proxy is what the server knows, not what the browser reached.
        secure = request.secure or request.headers.get("X-Forwarded-Proto") == "https"
        origin = f"{'https' if secure else 'http'}://{request.host}"
        page = aiohttp_jinja2.render_string("app_index.html", request, {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{'wss' if secure else 'ws'}://{request.host}/ws",
            "config": {"static": {"url": f"{origin}/static/"}},
            "application": {"name": self.title},
        })
        return web.Response(text=page.replace("</body>", FOCUS_TERMINAL + "</body>", 1), content_type="text/html")

    async def handle_signin_page(self, request: web.Request) -> web.Response:
        """What a sign-in link opens: one button that spends the token."""
        import html

        token = request.query.get("token", "")
        name = token.partition(".")[0]
        if not name or len(token) > 200:
            raise web.HTTPForbidden(text="403 Forbidden: this is not a sign-in link.\n")
        page = SIGNIN_PAGE.format(title=html.escape(self.title), name=html.escape(name),
                                  token=html.escape(token, quote=True))
        # same-origin: the token in this page's address never goes to another site in a
        # Referer, while the button's POST keeps its Origin (no-referrer would make it "null").
        return web.Response(text=page, content_type="text/html", headers={"Referrer-Policy": "same-origin",
                                                                            "Cache-Control": "no-store"})

    async def handle_signin(self, request: web.Request) -> web.Response:
        """Exchange a one-time sign-in token for a session cookie, and go to the app."""
        form = await request.post()
        token = str(form.get("token", ""))
        # scrypt takes tens of milliseconds: off the event loop, so other sessions stay live.
        try:
            team = self._current_team()
            hours = team.session_hours if team is not None else None
            found = await asyncio.get_running_loop().run_in_executor(
                None, functools.partial(redeem, self.workspace, token, hours=hours))
        except ProtocoderError as exc:  # the secrets file is busy or damaged: say so, keep serving
            self.say(f"sign-in from {request.remote} failed: {exc}")
            raise web.HTTPServiceUnavailable(text=f"503: sign-in failed: {exc}\n") from None
        if found is None:
            self.say(f"refused sign-in from {request.remote}: wrong, used or revoked link")
            raise web.HTTPForbidden(text="403 Forbidden: this sign-in link is wrong, was used already or was "
                                         "revoked.\nAsk for a new one (`protocoder team link NAME`).\n")
        name, session = found
        self.say(f"{name} signed in from {request.remote}")
        response = web.HTTPSeeOther("/")
        response.set_cookie(self.session_cookie_name, session, httponly=True, samesite="Strict", path="/",
                            secure=request.secure or request.headers.get("X-Forwarded-Proto") == "https")
        raise response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser session: start its app process and relay keys and screen until either side closes."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        command = self.command
        member: Member | None = request.get("member")
        if member is not None:
            # The app runs as the signed-in member, in the app of their role: never a name typed in the tab.
            command = self._command("code" if member.role == "reviewer" else "adjudicate", member.name)
        await websocket.prepare(request)
        self._sockets.add(websocket)
        if member is not None:
            self._member_sockets[websocket] = (request.cookies.get(self.session_cookie_name, ""), member.name)
        self.say(f"session opened from {request.remote}" + (f" for {member.name}" if member else ""))
        service = AppService(command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                             close=websocket.close, download_manager=self.download_manager, debug=False)
        try:
            await service.start(width, height)
            try:
                await self._process_messages(websocket, service)
            finally:
                # Tells the app to quit and waits for it: it saves what is pending first.
                await service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as exc:  # a malformed message from the page ends that session only
            self.say(f"session from {request.remote} ended: {exc!r}")
        finally:
            self._sockets.discard(websocket)
            self._member_sockets.pop(websocket, None)
            self.say(f"session closed from {request.remote}")
        return websocket

    async def _close_revoked(self) -> None:
        """Close, within :data:`REVOCATION_CHECK` seconds, every open session whose member was
        revoked or whose session ended."""
        while True:
            await asyncio.sleep(REVOCATION_CHECK)
            if not self._member_sockets:
                continue
            team = self._current_team()
            for websocket, (session, name) in list(self._member_sockets.items()):
                stored = self.sessions.find(session)
                if stored is not None and stored.member == name and stored.ended():
                    why = "expired"  # the app saves what was typed, as when the tab closes
                elif stored is None or stored.member != name or team is None or team.member(name) is None:
                    why = "revoked"
                else:
                    continue
                self._member_sockets.pop(websocket, None)
                self.say(f"closing {name}'s session: {why}")
                await websocket.close(code=WSCloseCode.POLICY_VIOLATION, message=why.encode())

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every browser session, which tells each app to save and quit."""
        for websocket in list(self._sockets):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"protocoder serve stopped")

    # ------------------------------------------------------------------ running

    def run(self) -> int:
        """Serve until SIGINT or SIGTERM; return the exit status (130 after Ctrl-C, 143 after SIGTERM).

        Raises :class:`ProtocoderError` when the address cannot be listened on (a port in use).
        """
        return asyncio.run(self._serve())

    async def _serve(self) -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def stop_on(signum: int) -> None:
            self.stopped_by = signum
            stop.set()

        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop_on, signum)
        except NotImplementedError:  # pragma: no cover - Windows: Ctrl-C arrives as KeyboardInterrupt
            pass
        runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None,
                               shutdown_timeout=SHUTDOWN_TIMEOUT)
        await runner.setup()
        watcher: asyncio.Task[None] | None = None
        try:
            try:
                await web.TCPSite(runner, self.host, self.port).start()
            except OSError as exc:
                raise ProtocoderError(self._bind_error(exc)) from None
            self._announce(runner.addresses)
            watcher = asyncio.create_task(self._close_revoked()) if self.team else None
            await stop.wait()
        finally:
            if watcher is not None:
                watcher.cancel()
            await runner.cleanup()
        return 128 + (self.stopped_by or signal.SIGINT)

    def _bind_error(self, exc: OSError) -> str:
        where = f"{_url_host(self.host)}:{self.port}"
        if exc.errno == errno.EADDRINUSE:
            return f"cannot serve on {where}: the port is in use (choose another with --port)"
        if exc.errno == errno.EADDRNOTAVAIL:
            return f"cannot serve on {where}: this machine has no such address (check --host)"
        if exc.errno == errno.EACCES:
            return f"cannot serve on {where}: permission denied (ports below 1024 need privileges; try --port 8000)"
        reason = exc.strerror or str(exc)
        return f"cannot serve on {where}: {reason.rsplit(': ', 1)[-1]}"

    def _announce(self, addresses: list[Any]) -> None:
        port = addresses[0][1] if addresses else self.port
        self.port = port  # the port the OS chose for --port 0
        host = self.host
        if host in ("", "0.0.0.0", "::"):
            host = socket.gethostname()  # all interfaces: name the machine, not 0.0.0.0
        url = f"http://{_url_host(host)}:{port}/"
        if self.token is not None:
            url += f"?token={self.token}"
        if self.team:
            print(f"Serving {self.workspace} to its team (team.yaml) at {url}", flush=True)
            print("Each member signs in with their own link from `protocoder team add` (or `team link NAME`): "
                  "reviewers code only their own cells, adjudicators adjudicate. There is no TLS: across a "
                  "network, use an SSH tunnel or a reverse proxy with TLS.", flush=True)
            print("Ctrl-C stops the server.", flush=True)
            return
        what = "coding app" if self.app_name == "code" else "adjudication app"
        print(f"Serving the {what} for {self.workspace} at {url}", flush=True)
        if self.token is not None:
            print("Anyone with this address can code in this workspace under any reviewer's name: share it "
                  "only with your reviewers. There is no TLS: across a network, use an SSH tunnel or a "
                  "reverse proxy with TLS.", flush=True)
        print("Each browser tab asks who is coding. Ctrl-C stops the server.", flush=True)


def serve_workspace(workspace: Path, *, app_name: str = "code", host: str = "127.0.0.1", port: int = 8000,
                    token: str | None = None, say: Say | None = None) -> int:
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
    server = ReviewServer(workspace, app_name=app_name, host=host, port=port, token=token, say=say, team=team)
    try:
        status = server.run()
    except KeyboardInterrupt:  # pragma: no cover - only where signal handlers cannot be installed
        server.stopped_by, status = signal.SIGINT, 130
    print(f"protocoder serve: stopped ({signal.Signals(server.stopped_by or signal.SIGINT).name})",
          file=sys.stderr, flush=True)
    return status
