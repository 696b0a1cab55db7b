"""A team's members in ``protocoder serve``: sign-in links, session cookies, revocation and expiry.

Each member signs in once with their own one-time link (``/signin?token=NAME.SECRET``), which
:meth:`TeamSignIn.handle_signin` exchanges for a session cookie; every request then needs a
session of a current member, and :meth:`TeamSignIn.close_revoked` ends the open sessions of a
member who was revoked or whose session ended.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import WSCloseCode, web

from ...errors import ProtocoderError
from ...team.members import Member, Team, load_team
from ...team.secrets import Session, SessionTable, forget, redeem, well_formed
from .access import host_of, is_loopback
from .limits import SignInLimits
from .pages import SIGNIN_PAGE

REVOCATION_CHECK = 0.5
"""Seconds between checks that every open team session's member is still in the team."""


WRONG_LINK = ("403 Forbidden: this sign-in link is wrong, was used already or was revoked.\n"
              "Ask for a new one (`protocoder team link NAME`).\n")
"""One answer for every link that does not sign in, whatever the reason."""


class TeamSignIn:
    """The team half of :class:`~.server.ReviewServer` (a mixin: it shares the server's state)."""

    workspace: Path
    host: str
    port: int
    title: str
    say: Callable[[str], None]
    sessions: SessionTable
    signin_limits: SignInLimits
    signin_executor: concurrent.futures.Executor
    _member_sockets: dict[web.WebSocketResponse, tuple[str, str]]
    _team_error: str


    @property
    def session_cookie_name(self) -> str:
        """A team member's session cookie (one per port, as the token's)."""
        return f"protocoder-session-{self.port}"

    def member(self, request: web.Request) -> Member | None:
        """The current team member whose session ``request`` carries, or None."""
        stored = self.sessions.find(request.cookies.get(self.session_cookie_name, ""))
        if stored is None or stored.ended():
            return None
        team = self._current_team()
        if team is not None and team.member(stored.member) is None:
            self._forget(stored.member)
        return self._owner(stored, team)

    def _forget(self, name: str) -> None:
        """Delete the sessions and link of ``name``, who is no longer in a readable team.yaml: pasting
        the member back into the file later does not bring them back."""
        try:
            count = forget(self.workspace, name)
        except ProtocoderError as exc:
            self.say(f"could not delete the sessions of {name}, who left team.yaml: {exc}")
            return
        self.say(f"{name} is not in team.yaml any more: {count} session(s) deleted")

    @staticmethod
    def _owner(stored: Session, team: Team | None) -> Member | None:
        """The member a stored session belongs to, if they are in the team under the record it was
        made for (deleted and added again: a new record, so the old sessions count no more)."""
        member = team.member(stored.member) if team is not None else None
        return member if member is not None and member.record == stored.record else None

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

    def team_refusal(self, request: web.Request) -> str | None:
        if is_loopback(self.host) and not is_loopback(host_of(request.host)):
            return f"host {request.host!r} is not this machine"  # DNS rebinding, as without a team
        if request.path == "/ws" or request.method != "GET":
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
                return f"request from another site ({origin!r})"
        if request.path == "/signin":
            return None
        stored = self.sessions.find(request.cookies.get(self.session_cookie_name, ""))
        if stored is not None and stored.ended() and self._owner(stored, self._current_team()) is not None:
            request["expired"] = stored.member  # the refusal names the command that issues a new link
            return f"{stored.member}'s session expired"
        member = self.member(request)
        if member is None:
            return "not signed in"
        request["member"] = member
        return None

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
        """Exchange a one-time sign-in token for a session cookie, and go to the app.

        Cheap refusals first (a token not of the form of a link; too many failed attempts from
        this client or for this name), then one scrypt, the same whether or not the name has a link,
        never more than one at a time (a flood of attempts keeps at most one core busy)."""
        form = await request.post()
        token = str(form.get("token", ""))
        if not well_formed(token):
            self.say(f"refused sign-in from {request.remote}: not a sign-in link")
            raise web.HTTPForbidden(text=WRONG_LINK)
        name = token.partition(".")[0]
        limited = self.signin_limits.refusal(request.remote or "", name)
        if limited is not None:
            why, seconds = limited
            self.say(f"refused sign-in from {request.remote}: {why}")
            raise web.HTTPTooManyRequests(text=f"429 Too Many Requests: {why}. Try again in {seconds} s.\n",
                                          headers={"Retry-After": str(seconds)})
        # scrypt takes tens of milliseconds: off the event loop, so other sessions stay live.
        try:
            team = self._current_team()
            hours = team.session_hours if team is not None else None
            member = team.member(name) if team is not None else None
            # Not a member (or no team file): a record no link has, so the same scrypt runs and fails.
            record = member.record if member is not None else "\0"
            found = await asyncio.get_running_loop().run_in_executor(
                self.signin_executor, functools.partial(redeem, self.workspace, token, hours=hours, record=record))
        except ProtocoderError as exc:  # the secrets file is busy or damaged: say so, keep serving
            self.say(f"sign-in from {request.remote} failed: {exc}")
            raise web.HTTPServiceUnavailable(text=f"503: sign-in failed: {exc}\n") from None
        if found is None:
            self.signin_limits.failed(request.remote or "", name)
            self.say(f"refused sign-in from {request.remote}: wrong, used or revoked link")
            raise web.HTTPForbidden(text=WRONG_LINK)
        name, session = found
        self.say(f"{name} signed in from {request.remote}")
        response = web.HTTPSeeOther("/")
        response.set_cookie(self.session_cookie_name, session, httponly=True, samesite="Strict", path="/",
                            secure=request.secure or request.headers.get("X-Forwarded-Proto") == "https")
        raise response

    async def close_revoked(self) -> None:
        """Close, within :data:`REVOCATION_CHECK` seconds, every open session whose member was
        revoked or whose session ended."""
        while True:
            await asyncio.sleep(REVOCATION_CHECK)
            if not self._member_sockets:
                continue
            team = self._current_team()
            for websocket, (session, name) in list(self._member_sockets.items()):
                if not websocket.prepared:
                    continue  # still in its handshake: checked at the next round
                stored = self.sessions.find(session)
                if stored is not None and stored.member == name and stored.ended():
                    why = "expired"  # the app saves what was typed, as when the tab closes
                elif stored is None or stored.member != name or self._owner(stored, team) is None:
                    why = "revoked"
                    if stored is not None and team is not None and team.member(name) is None:
                        self._forget(name)
                else:
                    continue
                self._member_sockets.pop(websocket, None)
                self.say(f"closing {name}'s session: {why}")
                await websocket.close(code=WSCloseCode.POLICY_VIOLATION, message=why.encode())
