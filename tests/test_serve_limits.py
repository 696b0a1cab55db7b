"""Issue 32: what one client of ``protocoder serve`` may cost, through the real server on 127.0.0.1.

The terminal size is clamped on connect and on resize; sessions are capped per member and in
total, with a page that says why; sign-in attempts are limited per client and per name, refused
without a hash when they are not of the form of a link, and cost the same whether or not the name
has a link; a member deleted from team.yaml keeps no session, even when added again.
"""

from __future__ import annotations

import asyncio
import hashlib
import statistics
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import test_team_serve
from test_serve import Served, start_serve, wait_until
from test_team_serve import base, open_terminal, protocoder, sign_in

from protocoder.team import secrets as team_secrets
from protocoder.tui.serving.limits import MAX_COLUMNS, MAX_ROWS, Window, clamp_size

team_workspace = test_team_serve.team_workspace  # the fixtures, shared
client = test_team_serve.client

GOOD_FORM = "A" * team_secrets.SECRET_LENGTH
"""A secret of the right length and alphabet that is nobody's."""


@pytest.fixture
def started(tmp_path: Path) -> Any:
    servers: list[Served] = []

    def start(workspace: Path, *args: str) -> Served:
        server = start_serve(workspace, tmp_path, *args)
        servers.append(server)
        return server

    yield start
    for server in servers:
        if server.process.poll() is None:
            server.stop()


def _app_rss_mb(server: Served) -> list[float]:
    """Resident memory (MB) of each app process the server started (its children)."""
    sizes = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if int(fields.get("PPid", "0").strip() or 0) == server.process.pid:
            sizes.append(int(fields.get("VmRSS", "0 kB").split()[0]) / 1024)
    return sizes


# --------------------------------------------------------------------------- terminal size


def test_sizes_are_clamped_whatever_a_client_sends() -> None:
    assert clamp_size("20000", "20000") == (MAX_COLUMNS, MAX_ROWS)
    assert clamp_size(50000, 50000) == (MAX_COLUMNS, MAX_ROWS)
    assert clamp_size("-5", 0) == (20, 5)
    assert clamp_size("1e9", None) == (80, 24)
    assert clamp_size(float("nan"), float("inf")) == (80, 24)
    assert clamp_size(True, [1]) == (80, 24)
    assert clamp_size(132, 43.0) == (132, 43)


async def test_a_huge_terminal_on_connect_and_on_resize_is_clamped(started: Any, bundled: Path,
                                                                    client: Any) -> None:
    server = started(bundled)
    http = client()
    websocket = await http.ws_connect(f"ws://127.0.0.1:{server.port}/ws?width=20000&height=20000",
                                      origin=base(server))
    wait_until(lambda: f"({MAX_COLUMNS}×{MAX_ROWS})" in server.stderr(), "the session opened clamped")
    await websocket.send_json(["resize", {"width": 50000, "height": 50000}])
    await asyncio.sleep(3)  # the app draws at the size it was given
    wait_until(lambda: f"resize to 50000×50000 clamped to {MAX_COLUMNS}×{MAX_ROWS}" in server.stderr(),
               "the resize was clamped")
    sizes = _app_rss_mb(server)
    assert sizes and max(sizes) < 400, sizes  # unclamped, the app took 2-3 GB
    await websocket.close()


# --------------------------------------------------------------------------- session caps


async def test_a_member_has_at_most_their_share_of_sessions_and_the_page_says_why(
        started: Any, team_workspace: Any, client: Any) -> None:
    root, links = team_workspace
    server = started(root, "--sessions-per-member", "1")
    http = client()
    assert (await sign_in(http, server, links["ada"])).status == 303
    terminal = await open_terminal(http, server)
    await terminal.wait_for("WebArena")
    page = await http.get(base(server) + "/", allow_redirects=False)
    assert page.status == 429
    text = await page.text()
    assert "ada has 1 session(s) open already" in text and "Close one of them" in text
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await open_terminal(http, server)
    assert refused.value.status == 429
    # Another member is not held back by ada's tabs.
    ben = client()
    assert (await sign_in(ben, server, links["ben"])).status == 303
    assert (await ben.get(base(server) + "/", allow_redirects=False)).status == 200
    await terminal.close()
    wait_until(lambda: "session closed" in server.stderr(), "ada's session closed")
    assert (await http.get(base(server) + "/", allow_redirects=False)).status == 200


async def test_the_server_runs_at_most_max_sessions(started: Any, bundled: Path, client: Any) -> None:
    server = started(bundled, "--max-sessions", "1")
    http = client()
    websocket = await http.ws_connect(f"ws://127.0.0.1:{server.port}/ws?width=80&height=24", origin=base(server))
    wait_until(lambda: "session opened" in server.stderr(), "the first session opened")
    page = await http.get(base(server) + "/", allow_redirects=False)
    assert page.status == 429 and "--max-sessions" in await page.text()
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await http.ws_connect(f"ws://127.0.0.1:{server.port}/ws", origin=base(server))
    await websocket.close()


# --------------------------------------------------------------------------- sign-in attempts


async def _try(http: aiohttp.ClientSession, server: Served, token: str) -> tuple[int, float]:
    began = time.monotonic()
    response = await http.post(base(server) + "/signin", data={"token": token}, allow_redirects=False,
                               headers={"Origin": base(server)})
    await response.read()
    return response.status, time.monotonic() - began


async def test_sign_in_attempts_are_limited_per_name_and_per_client(started: Any, team_workspace: Any,
                                                                    client: Any) -> None:
    root, links = team_workspace
    server = started(root)
    http = client()
    statuses = [(await _try(http, server, f"ada.{GOOD_FORM}"))[0] for _ in range(6)]
    assert statuses == [403] * 5 + [429]
    response = await http.post(base(server) + "/signin", data={"token": f"ada.{GOOD_FORM}"},
                               allow_redirects=False, headers={"Origin": base(server)})
    assert response.status == 429 and int(response.headers["Retry-After"]) >= 1
    assert "too many failed sign-in attempts for ada" in await response.text()
    # A good link of another member still signs in, and does not count: twenty reviewers behind
    # one proxy sign in within the same minute. Failures count against the client's 10 a minute.
    assert (await _try(http, server, links["ben"].split("=", 1)[1]))[0] == 303
    statuses = [(await _try(http, server, f"zed.{GOOD_FORM}"))[0] for _ in range(6)]
    assert statuses == [403] * 5 + [429], "the eleventh failure from this client is refused"
    assert "too many failed sign-in attempts from this address" in server.stderr()


async def test_a_link_that_is_not_of_the_form_costs_no_hash_and_a_missing_link_costs_the_same(
        started: Any, team_workspace: Any, client: Any) -> None:
    root, _ = team_workspace
    # ben signs in once, so he has no unused link; ada has one.
    server = started(root)
    http = client()
    with_link, without_link = [], []
    for _ in range(3):  # per name at most 5 failures a minute; per client 10
        with_link.append((await _try(http, server, f"ada.{GOOD_FORM}"))[1])
        without_link.append((await _try(http, server, f"nobody.{GOOD_FORM}"))[1])
    # Without a link the answer took 1 ms where an scrypt takes tens: the stand-in hash evens it out.
    assert statistics.median(without_link) >= 0.5 * statistics.median(with_link), (with_link, without_link)


def test_redeem_hashes_once_for_a_well_formed_token_and_never_for_another(bundled: Path,
                                                                          monkeypatch: Any) -> None:
    calls: list[int] = []
    real = hashlib.scrypt

    def counting(*args: Any, **kwargs: Any) -> bytes:
        calls.append(1)
        return real(*args, **kwargs)

    token = team_secrets.issue_signin(bundled, "ada", "r1")
    monkeypatch.setattr(hashlib, "scrypt", counting)
    for malformed in ("ada", "ada.", "ada.short", f"ada.{GOOD_FORM}!", "." + GOOD_FORM, f"ada.{GOOD_FORM}x"):
        assert team_secrets.redeem(bundled, malformed) is None
    assert calls == []
    assert team_secrets.redeem(bundled, f"nobody.{GOOD_FORM}") is None
    assert team_secrets.redeem(bundled, token, record="r2") is None  # issued for an earlier membership
    assert len(calls) == 2
    found = team_secrets.redeem(bundled, token, record="r1")
    assert found is not None and len(calls) == 3


def test_the_window_forgets_old_attempts() -> None:
    now = [0.0]
    window = Window(2, 60, clock=lambda: now[0])
    window.add("a")
    assert not window.full("a")
    window.add("a")
    assert window.full("a") and not window.full("b")
    assert window.retry_after("a") == 61
    now[0] = 60.5
    assert not window.full("a")


# --------------------------------------------------------------------------- team file hygiene


async def test_a_member_deleted_by_hand_and_added_again_gets_no_old_session(started: Any, team_workspace: Any,
                                                                            client: Any) -> None:
    root, links = team_workspace
    server = started(root)
    http = client()
    assert (await sign_in(http, server, links["ada"])).status == 303
    assert (await http.get(base(server) + "/", allow_redirects=False)).status == 200
    team_file = root / "team.yaml"
    original = team_file.read_text(encoding="utf-8")
    team_file.write_text("".join(line for line in original.splitlines(keepends=True) if "ada:" not in line),
                         encoding="utf-8")
    assert (await http.get(base(server) + "/", allow_redirects=False)).status == 403
    # Added again with the CLI: a new record, a new link; the old cookie stays refused.
    result = await asyncio.to_thread(protocoder, "team", "add", "ada", "--role", "reviewer", "--workspace", root)
    assert result.returncode == 0, result.stderr
    assert (await http.get(base(server) + "/", allow_redirects=False)).status == 403
    # Pasted back by hand exactly as it was: the sessions were deleted when she left, so still refused.
    team_file.write_text(original, encoding="utf-8")
    assert (await http.get(base(server) + "/", allow_redirects=False)).status == 403


async def test_team_add_prints_the_link_for_the_running_servers_port(started: Any, team_workspace: Any,
                                                                       client: Any) -> None:
    root, _ = team_workspace
    server = started(root)
    result = await asyncio.to_thread(protocoder, "team", "add", "dora", "--role", "reviewer", "--workspace", root)
    assert result.returncode == 0, result.stderr
    assert f"on the running server: http://127.0.0.1:{server.port}/signin?token=dora." in result.stdout
    link = result.stdout.split(f"http://127.0.0.1:{server.port}", 1)[1].split()[0]
    assert (await sign_in(client(), server, link)).status == 303
    server.stop()
    result = await asyncio.to_thread(protocoder, "team", "link", "dora", "--workspace", root)
    assert "no server is running for this workspace now" in result.stdout
