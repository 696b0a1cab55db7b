"""Browser sessions of ``protocoder serve``: one app process per websocket, relayed until either side closes."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import weakref
from collections.abc import Callable
from pathlib import Path

from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import to_int

from ...team.members import Member


class BrowserSessions:
    """The session half of :class:`~.server.ReviewServer` (a mixin: it shares the server's state)."""

    workspace: Path
    command: str
    download_manager: DownloadManager
    say: Callable[[str], None]
    session_cookie_name: str
    _sockets: weakref.WeakSet[web.WebSocketResponse]
    _member_sockets: dict[web.WebSocketResponse, tuple[str, str]]
    _process_messages: Callable[[web.WebSocketResponse, AppService], object]

    def _command(self, app_name: str, member: str | None = None) -> str:
        """The shell command of one session's app (as ``member``, for a team)."""
        argv = [sys.executable, "-m", "protocoder.tui.web_session", app_name, str(self.workspace)]
        if member is not None:
            argv += ["--as", member]
        # exec: the shell textual-serve starts the command with is replaced by the app, so
        # stopping a session reaches the app itself (cmd.exe has no exec and other quoting).
        return "exec " + shlex.join(argv) if os.name == "posix" else subprocess.list2cmdline(argv)

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
                await self._process_messages(websocket, service)  # type: ignore[misc]
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


    async def on_shutdown(self, app: web.Application) -> None:
        """Close every browser session, which tells each app to save and quit."""
        for websocket in list(self._sockets):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"protocoder serve stopped")
