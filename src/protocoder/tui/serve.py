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
"""

from __future__ import annotations

import asyncio
import errno
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
from .web_session import APPS

TOKEN_BYTES = 24
"""Random bytes in a generated token (32 URL-safe characters)."""

MIN_TOKEN_LENGTH = 16
"""A token given with ``--token`` must be at least this long."""

SHUTDOWN_TIMEOUT = 10.0
"""Seconds a stopping server gives open sessions to save and exit."""

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
                 token: str | None = None, say: Say | None = None) -> None:
        if app_name not in APPS:
            raise UsageError(f"--app must be one of {', '.join(APPS)}")
        self.workspace = workspace.resolve()
        argv = [sys.executable, "-m", "protocoder.tui.web_session", app_name, str(self.workspace)]
        # exec: the shell textual-serve starts the command with is replaced by the app, so
        # stopping a session reaches the app itself (cmd.exe has no exec and other quoting).
        command = "exec " + shlex.join(argv) if os.name == "posix" else subprocess.list2cmdline(argv)
        super().__init__(command, host=host, port=port, title=f"protocoder · {self.workspace.name}")
        self.app_name = app_name
        self.token = token
        self.say: Say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.stopped_by: int | None = None
        self._sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()

    @property
    def cookie_name(self) -> str:
        """The token's cookie: cookies are shared by every port of a host, so each port has its own."""
        return f"protocoder-token-{self.port}"

    # ------------------------------------------------------------------ checks

    def _refusal(self, request: web.Request) -> str | None:
        """Why ``request`` must be refused, or None when it may go on."""
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

    @web.middleware
    async def guard(self, request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Refuse (403) every request that fails :meth:`_refusal`; trade a good token in the URL for a cookie."""
        reason = self._refusal(request)
        if reason is not None:
            self.say(f"refused {request.method} {request.path} from {request.remote}: {reason}")
            if self.token is not None:
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

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser session: start its app process and relay keys and screen until either side closes."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        await websocket.prepare(request)
        self._sockets.add(websocket)
        self.say(f"session opened from {request.remote}")
        service = AppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
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
            self.say(f"session closed from {request.remote}")
        return websocket

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
        try:
            try:
                await web.TCPSite(runner, self.host, self.port).start()
            except OSError as exc:
                raise ProtocoderError(self._bind_error(exc)) from None
            self._announce(runner.addresses)
            await stop.wait()
        finally:
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
    if token is not None:
        token = check_token(token)
    elif not is_loopback(host):
        token = generate_token()
    server = ReviewServer(workspace, app_name=app_name, host=host, port=port, token=token, say=say)
    try:
        status = server.run()
    except KeyboardInterrupt:  # pragma: no cover - only where signal handlers cannot be installed
        server.stopped_by, status = signal.SIGINT, 130
    print(f"protocoder serve: stopped ({signal.Signals(server.stopped_by or signal.SIGINT).name})",
          file=sys.stderr, flush=True)
    return status
