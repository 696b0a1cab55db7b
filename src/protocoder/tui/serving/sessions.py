"""Browser sessions of ``protocoder serve``: one app process per websocket, relayed until either side closes.

Each session is bounded (:mod:`.limits`): its terminal size is clamped on connect and on every
resize, and a session beyond the cap (per member, or in total) is not started; the page that
would start it says why instead (:meth:`BrowserSessions.session_refusal`).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import weakref
from collections.abc import Callable
from pathlib import Path

from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from ...team.members import Member
from .limits import clamp_size


class BrowserSessions:
    """The session half of :class:`~.server.ReviewServer` (a mixin: it shares the server's state)."""

    workspace: Path
    command: str
    download_manager: DownloadManager
    say: Callable[[str], None]
    session_cookie_name: str
    _sockets: weakref.WeakSet[web.WebSocketResponse]
    _member_sockets: dict[web.WebSocketResponse, tuple[str, str]]
    max_sessions: int
    sessions_per_member: int

    def _command(self, app_name: str, member: str | None = None) -> str:
        """The shell command of one session's app (as ``member``, for a team)."""
        argv = [sys.executable, "-m", "protocoder.tui.web_session", app_name, str(self.workspace)]
        if member is not None:
            argv += ["--as", member]
        # exec: the shell textual-serve starts the command with is replaced by the app, so
        # stopping a session reaches the app itself (cmd.exe has no exec and other quoting).
        return "exec " + shlex.join(argv) if os.name == "posix" else subprocess.list2cmdline(argv)

    def session_refusal(self, member: Member | None) -> str | None:
        """Why one more session (of ``member``) may not start now, or None."""
        if member is not None:
            mine = sum(1 for _, name in self._member_sockets.values() if name == member.name)
            if mine >= self.sessions_per_member:
                return (f"{member.name} has {mine} session(s) open already, the most one member may have "
                        f"(each is a tab or window on this server). Close one of them, then reload this page.")
        if len(self._sockets) >= self.max_sessions:
            return (f"this server has {len(self._sockets)} sessions open, the most it runs at once "
                    f"(protocoder serve --max-sessions). Try again when someone has closed theirs.")
        return None

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser session: start its app process and relay keys and screen until either side closes."""
        member: Member | None = request.get("member")
        refusal = self.session_refusal(member)
        if refusal is not None:
            self.say(f"refused a session from {request.remote}: {refusal}")
            raise web.HTTPTooManyRequests(text=f"429 Too Many Requests: {refusal}\n")
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
        width, height = clamp_size(request.query.get("width", "80"), request.query.get("height", "24"))
        command = self.command
        if member is not None:
            # The app runs as the signed-in member, in the app of their role: never a name typed in the tab.
            command = self._command("code" if member.role == "reviewer" else "adjudicate", member.name)
        # Counted before the handshake is awaited, so two tabs opening at once cannot both take the
        # last place under a cap.
        self._sockets.add(websocket)
        if member is not None:
            self._member_sockets[websocket] = (request.cookies.get(self.session_cookie_name, ""), member.name)
        try:
            await websocket.prepare(request)
        except BaseException:
            self._sockets.discard(websocket)
            self._member_sockets.pop(websocket, None)
            raise
        self.say(f"session opened from {request.remote}" + (f" for {member.name}" if member else "")
                 + f" ({width}×{height})")
        service = AppService(command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                             close=websocket.close, download_manager=self.download_manager, debug=False)
        try:
            await service.start(width, height)
            try:
                await self.relay(websocket, service)
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

    async def relay(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        """Hand the page's messages to the app until the websocket closes (textual-serve's protocol),
        with every resize clamped as the size on connect is."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            envelope = message.json()
            if not isinstance(envelope, list) or not envelope:
                continue
            kind = envelope[0]
            data = envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                width, height = clamp_size(data.get("width"), data.get("height"))
                if (width, height) != (data.get("width"), data.get("height")):
                    self.say(f"resize to {data.get('width')!r}×{data.get('height')!r} clamped to {width}×{height}")
                await service.set_terminal_size(width, height)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every browser session, which tells each app to save and quit."""
        for websocket in list(self._sockets):
            if websocket.prepared:  # one still in its handshake is not a session yet
                await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"protocoder serve stopped")
