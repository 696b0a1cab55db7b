"""The aiohttp server of ``protocoder serve``: the checks on every request, the routes, running."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import hmac
import re
import signal
import socket
import sys
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server, to_int

from ...errors import ProtocoderError, UsageError
from ...team.secrets import SessionTable
from ..web_session import APPS
from .access import host_of, is_loopback, url_host
from .limits import DEFAULT_MAX_SESSIONS, DEFAULT_SESSIONS_PER_MEMBER, SignInLimits
from .pages import FOCUS_TERMINAL, FONTS, FULL_PAGE
from .sessions import BrowserSessions
from .signin import TeamSignIn

SHUTDOWN_TIMEOUT = 10.0
"""Seconds a stopping server gives open sessions to save and exit."""

Say = Callable[[str], None]


_OTHER_HOST_LINK = re.compile(r"<link\b[^>]*\bhref=\"(?:https?:)?//[^\"]*\"[^>]*>", re.IGNORECASE)


def own_page(page: str, static: str) -> str:
    """textual-serve's terminal page, made to ask no other host for anything (its Google Fonts link
    becomes faces from this server and the system, :data:`~.pages.FONTS`), with the focus script."""
    foreign = [m.group(0) for m in _OTHER_HOST_LINK.finditer(page) if static not in m.group(0)]
    for link in foreign:
        page = page.replace(link, "")
    page = page.replace("</head>", FONTS.format(static=static) + "</head>", 1)
    return page.replace("</body>", FOCUS_TERMINAL + "</body>", 1)


def review_title(root: Path) -> str:
    """The review's title from ``protocoder.yaml``; the folder's name when it has none or cannot be read."""
    from ...errors import ProtocoderError
    from ...storage.files import read_text
    from ...storage.findings import Findings
    from ...storage.formats import parse_settings
    from ...storage.paths import Paths
    from ...storage.yamlio import parse_yaml

    paths = Paths(root)
    try:
        if paths.settings.is_file() and not paths.leaves_workspace(paths.settings):
            text = read_text(paths.settings, paths.show(paths.settings))
            title = parse_settings(parse_yaml(text, "protocoder.yaml"), Findings("protocoder.yaml", text)).title
            if title.strip():
                return " ".join(title.split())
    except (ProtocoderError, OSError, ValueError):
        pass  # the page then names the folder, as before
    return root.name


class ReviewServer(TeamSignIn, BrowserSessions, Server):
    """textual-serve's server for one workspace's app, with the checks described in :mod:`protocoder.tui.serve`."""

    def __init__(self, workspace: Path, *, app_name: str = "code", host: str = "127.0.0.1", port: int = 8000,
                 token: str | None = None, say: Say | None = None, team: bool = False,
                 max_sessions: int = DEFAULT_MAX_SESSIONS,
                 sessions_per_member: int = DEFAULT_SESSIONS_PER_MEMBER) -> None:
        if app_name not in APPS:
            raise UsageError(f"--app must be one of {', '.join(APPS)}")
        self.workspace = workspace.resolve()
        self.review_title = review_title(self.workspace)
        """The review's title (protocoder.yaml), or the folder's name when it has none."""
        super().__init__(self._command(app_name), host=host, port=port, title=f"protocoder · {self.review_title}")
        self.max_sessions = max_sessions
        self.sessions_per_member = sessions_per_member
        self.signin_limits = SignInLimits()
        self.signin_executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="signin")
        """One sign-in hash at a time: a flood of attempts keeps at most one core busy."""
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

    @property
    def cookie_name(self) -> str:
        """The token's cookie: cookies are shared by every port of a host, so each port has its own."""
        return f"protocoder-token-{self.port}"

    # ------------------------------------------------------------------ checks

    def _refusal(self, request: web.Request) -> str | None:
        """Why ``request`` must be refused, or None when it may go on."""
        if self.team:
            return self.team_refusal(request)
        if self.token is None:
            # No token: loopback only, and only under a loopback name (DNS rebinding).
            if not is_loopback(host_of(request.host)):
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
        refusal = self.session_refusal(request.get("member"))
        if refusal is not None:  # the page would start one session too many: it says why instead
            import html

            return web.Response(text=FULL_PAGE.format(title=html.escape(self.title), why=html.escape(refusal)),
                                status=429, content_type="text/html", headers={"Retry-After": "30"})
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
        return web.Response(text=own_page(page, f"{origin}/static/"), content_type="text/html")


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
            watcher = asyncio.create_task(self.close_revoked()) if self.team else None
            await stop.wait()
        finally:
            if watcher is not None:
                watcher.cancel()
            await runner.cleanup()
            self.signin_executor.shutdown(wait=False, cancel_futures=True)
            if self.team:
                from ...team.address import clear_address

                clear_address(self.workspace)
        return 128 + (self.stopped_by or signal.SIGINT)

    def _bind_error(self, exc: OSError) -> str:
        where = f"{url_host(self.host)}:{self.port}"
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
        url = f"http://{url_host(host)}:{port}/"
        if self.team:  # `team add` and `team link` print whole links for this address
            from ...team.address import record_address

            try:
                record_address(self.workspace, url)
            except (OSError, ProtocoderError) as exc:
                self.say(f"could not record the address for `protocoder team link`: {exc}")
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
