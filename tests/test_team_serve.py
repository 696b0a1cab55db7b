"""``protocoder serve`` for a team, through the real server on 127.0.0.1: members sign in with
one-time links, each session's app runs as its member, a reviewer's session never shows
another reviewer's codes, and revoking a member ends their sessions at once.

The sessions are real websockets (aiohttp's client) speaking textual-serve's protocol to real
app processes; assertions are on what the app drew and on what reached the YAML files.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from ruamel.yaml import YAML
from test_serve import Served, chromium, open_tab, start_serve, wait_until  # noqa: F401 (a fixture)

ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")

BEN_SECRET = "Zebra-crossing-basis-only-ben-wrote"
BEN_QUOTE_SECTION = "Section Q-ben-only"


def protocoder(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "protocoder", *map(str, args)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, check=False)


def add(workspace: Path, name: str, role: str, *extra: str) -> str:
    """``team add``; returns the sign-in path it printed."""
    result = protocoder("team", "add", name, "--role", role, *extra, "--workspace", workspace)
    assert result.returncode == 0, result.stderr
    match = re.search(r"(/signin\?token=\S+)", result.stdout)
    assert match, result.stdout
    return match.group(1)


@pytest.fixture
def team_workspace(bundled: Path) -> tuple[Path, dict[str, str]]:
    """The bundled review with reviewers ada and ben and adjudicator carol; ben has coded
    webarena with a basis nobody else may see."""
    links = {"ada": add(bundled, "ada", "reviewer"), "ben": add(bundled, "ben", "reviewer"),
             "carol": add(bundled, "carol", "adjudicator")}
    sheet = bundled / "protocols/webarena/codes/ben.yaml"
    sheet.write_text(f"""cells:
  open_work:
    code: E
    source: {BEN_QUOTE_SECTION}
    basis: {BEN_SECRET}
    rubric_version: "1.0"
    coded_at: 2026-08-16
notes: {{}}
""", encoding="utf-8")
    return bundled, links


@pytest.fixture
def served(team_workspace: tuple[Path, dict[str, str]], tmp_path: Path) -> Iterator[Served]:
    server = start_serve(team_workspace[0], tmp_path)
    yield server
    if server.process.poll() is None:
        server.stop()


class Terminal:
    """One browser session over a real websocket: keys in, the app's drawing out."""

    def __init__(self, websocket: aiohttp.ClientWebSocketResponse) -> None:
        self.websocket = websocket
        self.frames: list[str] = []
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.websocket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.frames.append(message.data.decode("utf-8", "replace"))
            elif message.type == aiohttp.WSMsgType.TEXT:
                self.frames.append(message.data)
        self.closed.set()

    def text(self) -> str:
        return ANSI.sub("", "".join(self.frames))

    async def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.text():
                return
            if self.closed.is_set():
                break
            await asyncio.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; last output: {self.text()[-1500:]!r}")

    async def keys(self, *keys: str, pause: float = 0.15) -> None:
        for key in keys:
            await self.websocket.send_json(["stdin", key])
            await asyncio.sleep(pause)

    async def close(self) -> None:
        await self.websocket.close()
        await asyncio.wait_for(self._reader, 30)


PAGE_DOWN, ESCAPE, F1, F3, CTRL_L, CTRL_P = "\x1b[6~", "\x1b", "\x1bOP", "\x1bOR", "\x0c", "\x10"


def base(server: Served) -> str:
    return f"http://127.0.0.1:{server.port}"


@pytest.fixture
async def client() -> AsyncIterator[Callable[[], aiohttp.ClientSession]]:
    """aiohttp client sessions (each its own cookie jar: one browser profile each)."""
    opened: list[aiohttp.ClientSession] = []

    def make() -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))  # unsafe: 127.0.0.1 is an IP
        opened.append(session)
        return session

    yield make
    for session in opened:
        await session.close()


async def sign_in(http: aiohttp.ClientSession, server: Served, link: str) -> aiohttp.ClientResponse:
    """What a browser does with a sign-in link: open the page, press its button."""
    page = await http.get(base(server) + link, allow_redirects=False)
    assert page.status == 200
    body = await page.text()
    token = re.search(r'name="token" value="([^"]+)"', body).group(1)  # type: ignore[union-attr]
    return await http.post(base(server) + "/signin", data={"token": token}, allow_redirects=False,
                           headers={"Origin": base(server)})


async def open_terminal(http: aiohttp.ClientSession, server: Served) -> Terminal:
    websocket = await http.ws_connect(f"ws://127.0.0.1:{server.port}/ws?width=120&height=40",
                                      origin=base(server))
    return Terminal(websocket)


def cells_of(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return (YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}).get("cells") or {}


# --------------------------------------------------------------------------- signing in


async def test_a_link_signs_in_once_and_gives_a_strict_httponly_cookie(served: Served, client: Any,
                                                                        team_workspace: Any) -> None:
    _, links = team_workspace
    http = client()
    for path in ("/", "/static/js/textual.js", "/download/x"):
        refused = await http.get(base(served) + path, allow_redirects=False)
        assert refused.status == 403, path
        assert "sign in with your own link" in await refused.text()
    signed = await sign_in(http, served, links["ada"])
    assert signed.status == 303 and signed.headers["Location"] == "/"
    cookie = signed.headers["Set-Cookie"]
    assert cookie.startswith(f"protocoder-session-{served.port}=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert links["ada"].split("=", 1)[1] not in cookie  # the session is not the sign-in token
    assert (await http.get(base(served) + "/", allow_redirects=False)).status == 200
    # The same link again, in another browser: used up.
    again = await sign_in(client(), served, links["ada"])
    assert again.status == 403 and "was used already" in await again.text()
    # A made-up token for a real member, and a sign-in posted from another site.
    forged = await client().post(base(served) + "/signin", data={"token": "ben.not-the-secret"},
                                 headers={"Origin": base(served)}, allow_redirects=False)
    assert forged.status == 403
    foreign = await client().post(base(served) + "/signin", data={"token": links["ben"].split("=", 1)[1]},
                                  headers={"Origin": "http://attacker.example"}, allow_redirects=False)
    assert foreign.status == 403
    assert (await sign_in(client(), served, links["ben"])).status == 303  # ben's link was not spent by that
    # Secrets are on disk only hashed, and only in the ignored state folder.
    root = team_workspace[0]
    stored = (root / ".protocoder/team-secrets.json").read_text(encoding="utf-8")
    assert links["carol"].split(".", 1)[1] not in stored
    assert links["carol"].split(".", 1)[1] not in (root / "team.yaml").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- identity and blinding


async def test_a_reviewers_session_codes_as_them_and_never_shows_another_reviewers_cells(
        served: Served, client: Any, team_workspace: Any) -> None:
    root, links = team_workspace
    http = client()
    assert (await sign_in(http, served, links["ada"])).status == 303
    terminal = await open_terminal(http, served)
    await terminal.wait_for("WebArena")
    assert "Who is coding" not in terminal.text()  # the name comes from the sign-in, nothing asks
    await terminal.keys("\r")                        # open WebArena, the first protocol
    await terminal.wait_for("operations that may still")
    await terminal.keys("1")                         # ada codes the first field
    ada = root / "protocols/webarena/codes/ada.yaml"
    deadline = time.monotonic() + 30
    while not cells_of(ada) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert cells_of(ada)["open_work"]["code"] == "E"
    # Every screen the app offers a reviewer: each field, notes, the rubric aside, the
    # source reader, the key list, the command palette, the next protocols.
    await terminal.keys(PAGE_DOWN, PAGE_DOWN, PAGE_DOWN, F3, F3, "\x1bOQ", "\x1bOQ", pause=0.4)
    await terminal.keys(CTRL_L, pause=1.0)
    await terminal.keys(ESCAPE, F1, pause=0.6)
    await terminal.keys(ESCAPE, CTRL_P, pause=0.6)
    await terminal.keys(*"agree", pause=0.2)
    await terminal.keys(ESCAPE, ESCAPE, pause=0.6)
    await asyncio.sleep(2)
    shown = terminal.text()
    await terminal.close()
    assert BEN_SECRET not in shown and BEN_QUOTE_SECTION not in shown
    # casheekar's cells of the bundled review are another reviewer's too.
    assert "self-hosted and can be returned" not in shown
    assert "casheekar" not in shown and "ben" not in re.findall(r"\bben\b", shown)
    assert "Agreement" not in shown and "Krippendorff" not in shown
    assert cells_of(root / "protocols/webarena/codes/ben.yaml")["open_work"]["basis"] == BEN_SECRET
    assert "session opened from 127.0.0.1 for ada" in served.stderr()


async def test_an_adjudicator_gets_the_adjudication_app_under_their_name(served: Served, client: Any,
                                                                         team_workspace: Any) -> None:
    _, links = team_workspace
    http = client()
    assert (await sign_in(http, served, links["carol"])).status == 303
    terminal = await open_terminal(http, served)
    await terminal.wait_for("Take a cell")  # the adjudication screen (its key bar), open at once
    await asyncio.sleep(1)
    assert "Who is adjudicating" not in terminal.text()
    await terminal.close()
    assert "session opened from 127.0.0.1 for carol" in served.stderr()


# --------------------------------------------------------------------------- revoking


async def test_revoking_a_member_closes_their_open_session_and_refuses_the_next_request(
        served: Served, client: Any, team_workspace: Any) -> None:
    root, links = team_workspace
    http = client()
    assert (await sign_in(http, served, links["ben"])).status == 303
    terminal = await open_terminal(http, served)
    await terminal.wait_for("WebArena")
    result = await asyncio.to_thread(protocoder, "team", "revoke", "ben", "--workspace", root)
    assert result.returncode == 0, result.stderr
    assert "1 session(s) closed" in result.stdout
    revoked_at = time.monotonic()
    await asyncio.wait_for(terminal.closed.wait(), 10)
    assert time.monotonic() - revoked_at < 5
    refused = await http.get(base(served) + "/", allow_redirects=False)
    assert refused.status == 403
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await open_terminal(http, served)
    assert "ben" not in (root / "team.yaml").read_text(encoding="utf-8")


def _end_sessions_of(root: Path, name: str, *, seconds_ago: int = 1) -> None:
    """Move the clock of ``name``'s stored sessions: each now ended ``seconds_ago`` seconds ago."""
    import json
    from datetime import UTC, datetime, timedelta

    path = root / ".protocoder/team-secrets.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["members"][name]["sessions"].values():
        record["expires"] = (datetime.now(UTC) - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(json.dumps(data), encoding="utf-8")


async def test_a_session_ends_after_session_hours_and_the_refusal_names_the_new_link(
        served: Served, client: Any, team_workspace: Any) -> None:
    import json
    from datetime import datetime

    root, links = team_workspace
    http = client()
    assert (await sign_in(http, served, links["ada"])).status == 303
    (record,) = json.loads((root / ".protocoder/team-secrets.json").read_text(encoding="utf-8")
                           )["members"]["ada"]["sessions"].values()
    lifetime = datetime.fromisoformat(record["expires"]) - datetime.fromisoformat(record["created"])
    assert lifetime.total_seconds() == 12 * 3600  # the default
    terminal = await open_terminal(http, served)
    await terminal.wait_for("WebArena")
    _end_sessions_of(root, "ada")
    ended_at = time.monotonic()
    await asyncio.wait_for(terminal.closed.wait(), 10)  # the open session ends too
    assert time.monotonic() - ended_at < 5
    for path in ("/", "/static/js/textual.js"):
        refused = await http.get(base(served) + path, allow_redirects=False)
        assert refused.status == 403, path
        assert (await refused.text()).splitlines() == [
            "403 Forbidden: ada's session expired.",
            "Sessions last a fixed time after sign-in (session_hours in team.yaml). Sign in again with a new "
            "link: `protocoder team link ada` issues one."]
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await open_terminal(http, served)
    assert "closing ada's session: expired" in served.stderr()
    # The command the refusal names works, and its link gives a session of session_hours.
    team_file = root / "team.yaml"
    team_file.write_text(team_file.read_text(encoding="utf-8") + "session_hours: 0.5\n", encoding="utf-8")
    result = await asyncio.to_thread(protocoder, "team", "link", "ada", "--workspace", root)
    assert result.returncode == 0, result.stderr
    link = re.search(r"(/signin\?token=\S+)", result.stdout).group(1)  # type: ignore[union-attr]
    assert (await sign_in(http, served, link)).status == 303
    assert (await http.get(base(served) + "/", allow_redirects=False)).status == 200
    (record,) = json.loads((root / ".protocoder/team-secrets.json").read_text(encoding="utf-8")
                           )["members"]["ada"]["sessions"].values()  # the ended one was dropped
    lifetime = datetime.fromisoformat(record["expires"]) - datetime.fromisoformat(record["created"])
    assert lifetime.total_seconds() == 1800
    # Another member's session was never touched.
    ben = client()
    assert (await sign_in(ben, served, links["ben"])).status == 303
    _end_sessions_of(root, "ada")
    assert (await ben.get(base(served) + "/", allow_redirects=False)).status == 200


def test_a_team_server_takes_no_shared_token(team_workspace: Any) -> None:
    result = protocoder("serve", "--workspace", team_workspace[0], "--token", "correct-horse-battery-staple")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "protocoder: error: this workspace has a team (team.yaml): members sign in with their own links, so "
        "--token (or $PROTOCODER_SERVE_TOKEN) is not used (leave it out)"]


def test_serve_help_says_what_a_team_file_changes() -> None:
    result = protocoder("serve", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert ("With a team.yaml in the workspace (see `protocoder team`), every request needs the session of a "
            "member of the team") in text
    assert "printed by `protocoder team add` or `protocoder team link NAME`" in text
    assert "There is no shared token: --token (or $PROTOCODER_SERVE_TOKEN) is refused." in text
    assert "A session lasts session_hours from sign-in (team.yaml, default 12)" in text


def test_the_token_from_the_environment_is_refused_with_a_team_file_too(team_workspace: Any) -> None:
    import os

    result = subprocess.run([sys.executable, "-m", "protocoder", "serve", "--workspace", str(team_workspace[0])],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
                            env={**os.environ, "PROTOCODER_SERVE_TOKEN": "correct-horse-battery-staple"})
    assert result.returncode == 2
    assert "--token (or $PROTOCODER_SERVE_TOKEN) is not used (leave it out)" in result.stderr


# --------------------------------------------------------------------------- the member's app itself


async def test_a_members_app_lists_only_their_protocols_and_changes_no_shared_file(bundled: Path) -> None:
    from protocoder.tui.screens import ProtocolListScreen
    from protocoder.tui.web_session import MemberCoderApp

    from conftest import tree_digest

    (bundled / "team.yaml").write_text("members:\n  ada: {role: reviewer, protocols: [webarena, osworld]}\n",
                                       encoding="utf-8")
    before = tree_digest(bundled)
    app = MemberCoderApp(bundled, "ada")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert [p.id for p in app.session.protocols] == ["webarena", "osworld"]
        assert screen.table.row_count == 2
        for key in ("ctrl+d", "f3", "ctrl+e", "ctrl+r"):  # remove, add, edit protocol; add a reference
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(pilot.app.screen, ProtocolListScreen), key
            await pilot.press("y")  # a confirmation, if one had opened, would be accepted
            await pilot.pause()
        assert "changed by the workspace's owner" in " ".join(str(n.message) for n in app._notifications)
    assert tree_digest(bundled) == before


async def test_a_members_footer_and_palette_offer_only_what_a_member_may_do(bundled: Path) -> None:
    """Issue 32: the footer offered ^n Add, ^e Edit, ^d Remove to a member, who may use none of them."""
    from textual.widgets._footer import FooterKey

    from protocoder.tui.app import CoderApp
    from protocoder.tui.web_session import MemberCoderApp

    (bundled / "team.yaml").write_text("members:\n  ada: {role: reviewer}\n", encoding="utf-8")
    shown: dict[str, set[str]] = {}
    palettes: dict[str, set[str]] = {}
    for label, app in (("owner", CoderApp(bundled, "ada")), ("member", MemberCoderApp(bundled, "ada"))):
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            shown[label] = {str(key.description) for key in pilot.app.screen.query(FooterKey) if key.display}
            palettes[label] = {command.title for command in app.get_system_commands(app.screen)}
    assert {"Add", "Edit", "Remove", "Reference"} <= shown["owner"]
    assert not {"Add", "Edit", "Remove", "Reference"} & shown["member"], shown["member"]
    assert "Keys" in shown["member"] and "Quit" in shown["owner"]
    assert "Quit" not in shown["member"], "in a tab, quitting is closing it (and Firefox keeps ctrl+q)"
    assert "Add protocol" in palettes["owner"] and "Add protocol" not in palettes["member"]
    assert "Keys" in palettes["member"] and "Quit" in palettes["member"]


# --------------------------------------------------------------------------- a real browser


def test_a_member_signs_in_in_chromium_and_codes_under_their_name(served: Served, chromium: Any,  # noqa: F811
                                                                  team_workspace: Any, tmp_path: Path) -> None:
    root, links = team_workspace
    tab = open_tab(chromium, base(served) + links["ada"])
    tab.page.click("text=Sign in as ada")  # the link's page: one button spends the token
    tab.wait_for_text("WebArena")
    assert "Who is coding" not in tab.text()
    cookies = tab.page.context.cookies()
    assert [(c["name"], c["httpOnly"], c["sameSite"]) for c in cookies] == [
        (f"protocoder-session-{served.port}", True, "Strict")]
    tab.page.wait_for_function("document.activeElement === document.querySelector('#terminal textarea')")
    tab.page.wait_for_timeout(500)
    tab.press("Enter")
    tab.wait_for_text("operations that may still")
    tab.press("2")
    sheet = root / "protocols/webarena/codes/ada.yaml"
    cells = wait_until(lambda: cells_of(sheet), f"a cell in {sheet}")
    assert cells["open_work"]["code"] == "P"
    assert BEN_SECRET not in tab.text()
    tab.page.screenshot(path=str(tmp_path / "member.png"))
    # The used link, opened again in a fresh browser profile, signs nobody in.
    again = open_tab(chromium, base(served) + links["ada"])
    again.page.click("text=Sign in as ada")
    assert "was used already" in again.page.content()


async def test_a_broken_team_file_lets_nobody_in_until_it_is_fixed(served: Served, client: Any,
                                                                  team_workspace: Any) -> None:
    root, links = team_workspace
    http = client()
    assert (await sign_in(http, served, links["ada"])).status == 303
    terminal = await open_terminal(http, served)
    await terminal.wait_for("WebArena")
    team_file = root / "team.yaml"
    good = team_file.read_text(encoding="utf-8")
    team_file.write_text(good.replace("role: reviewer", "role: reviewr", 1), encoding="utf-8")
    await asyncio.wait_for(terminal.closed.wait(), 10)  # fail closed: the open session ends too
    assert (await http.get(base(served) + "/", allow_redirects=False)).status == 403
    assert "team.yaml cannot be read" in served.stderr()
    team_file.write_text(good, encoding="utf-8")
    assert (await http.get(base(served) + "/", allow_redirects=False)).status == 200  # the session is good again
