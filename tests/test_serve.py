"""``protocoder serve``: the coding app in a web browser, and who may reach it.

The server runs as a real subprocess on a free port against a copy of the bundled review.
HTTP checks speak to it with http.client (so no redirect is followed and any Host or
Origin header can be sent); the browser checks drive Debian's Chromium headless through
Playwright (never a downloaded browser) and assert on what reached the reviewer's YAML file.
"""

from __future__ import annotations

import http.client
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from ruamel.yaml import YAML

from protocoder.storage.workspace import load_review
from protocoder.tui.adjudicate import AdjudicationScreen
from protocoder.tui.app import make_app
from protocoder.tui.screens import ProtocolListScreen, ReviewerModal
from protocoder.tui.serve import check_token, is_loopback
from protocoder.tui.web_session import WebAdjudicationApp, WebCoderApp

CHROMIUM = os.environ.get("PROTOCODER_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WEBSOCKET_HANDSHAKE = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                       "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


# --------------------------------------------------------------------------- a running server


@dataclass
class Served:
    """A ``protocoder serve`` subprocess and what it printed when it started."""

    process: subprocess.Popen[bytes]
    url: str
    stderr_path: Path
    banner: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    @property
    def token(self) -> str | None:
        return parse_qs(urlsplit(self.url).query).get("token", [None])[0]

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str, str]:
        """Send ``signum``; return the exit status, the rest of stdout, and stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            out, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
            raise AssertionError("protocoder serve did not stop within 30 s") from None
        return self.process.returncode, out.decode(errors="replace"), self.stderr()


def start_serve(workspace: Path, tmp_path: Path, *args: str) -> Served:
    """Start ``protocoder serve --port 0`` and wait for the line with its URL."""
    stderr_path = tmp_path / f"serve-{time.monotonic_ns()}.err"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "protocoder", "serve", "--workspace", str(workspace),
                                    "--port", "0", *args], stdout=subprocess.PIPE, stderr=stderr,
                                   stdin=subprocess.DEVNULL, cwd=tmp_path, bufsize=0)
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + 30
    banner: list[str] = []
    while time.monotonic() < deadline and selector.select(timeout=deadline - time.monotonic()):
        line = process.stdout.readline().decode()
        if not line:
            break
        banner.append(line.rstrip("\n"))
        if "Ctrl-C stops" in line:
            match = re.search(r"http://\S+", banner[0])
            assert match, banner
            return Served(process, match.group(0), stderr_path, banner)
    process.kill()
    raise AssertionError(f"protocoder serve did not start: {banner} {stderr_path.read_text()}")


@pytest.fixture
def serve(bundled: Path, tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Start servers on the bundled review; every one is stopped at the end of the test."""
    started: list[Served] = []

    def start(*args: str, workspace: Path | None = None) -> Served:
        served = start_serve(workspace or bundled, tmp_path, *args)
        started.append(served)
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            served.stop()


def request(served: Served, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    """GET ``path`` without following redirects; the response body is read."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    response.body = response.read()  # type: ignore[attr-defined]
    connection.close()
    return response


# --------------------------------------------------------------------------- rules


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.3.4.5", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("example.org", False), ("", False),
])
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_tokens_that_cannot_protect_are_refused(bundled: Path, cli: Callable[..., Any]) -> None:
    assert check_token("a" * 16) == "a" * 16
    for token, why in (("short", "at least 16"), ("x" * 20 + "&next=1", "only letters")):
        result = cli("serve", "--workspace", bundled, "--token", token)
        assert result.exit_code == 2
        assert why in result.stderr and result.stderr.count("\n") == 1
        assert "Traceback" not in result.stderr


def test_serve_refuses_a_folder_that_is_not_a_workspace(tmp_path: Path, cli: Callable[..., Any]) -> None:
    result = cli("serve", "--workspace", tmp_path)
    assert result.exit_code == 2
    assert "not a protocoder workspace" in result.stderr


# --------------------------------------------------------------------------- the process


def test_ctrl_c_stops_with_one_line_and_status_130(serve: Callable[..., Served]) -> None:
    served = serve()
    assert served.url.startswith("http://127.0.0.1:") and served.token is None
    status, out, err = served.stop(signal.SIGINT)
    assert status == 130
    assert err.strip().splitlines() == ["protocoder serve: stopped (SIGINT)"]
    assert "Traceback" not in out + err


def test_a_port_in_use_is_one_line_and_status_1(bundled: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "protocoder", "serve", "--workspace", str(bundled),
                                 "--port", str(port)], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"protocoder: error: cannot serve on 127.0.0.1:{port}: the port is in use (choose another with --port)"]
    assert result.stdout == ""


def test_serve_finds_the_workspace_from_a_folder_inside_it(bundled: Path, tmp_path: Path) -> None:
    inside = bundled / "protocols" / "webarena" / "codes"
    process = subprocess.Popen([sys.executable, "-m", "protocoder", "serve", "--port", "0"], cwd=inside,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    first = process.stdout.readline().decode()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert f"for {bundled.resolve()} at http://127.0.0.1:" in first


# --------------------------------------------------------------------------- who may connect


def test_loopback_answers_only_under_a_loopback_name(serve: Callable[..., Served]) -> None:
    served = serve()
    assert request(served, "/").status == 200
    assert request(served, "/", {"Host": f"localhost:{served.port}"}).status == 200
    # A page whose name was rebound to 127.0.0.1 sends its own name as Host.
    rebound = request(served, "/", {"Host": f"attacker.example:{served.port}"})
    assert rebound.status == 403
    assert b"answers only on this machine" in rebound.body  # type: ignore[attr-defined]
    # A page from another site may not open a session, even on loopback.
    foreign = request(served, "/ws", {**WEBSOCKET_HANDSHAKE, "Origin": "http://attacker.example"})
    assert foreign.status == 403
    same_machine_other_port = request(served, "/ws", {**WEBSOCKET_HANDSHAKE, "Origin": "http://127.0.0.1:1"})
    assert same_machine_other_port.status == 403
    assert "refused GET /ws" in served.stderr()


def test_a_host_that_is_not_loopback_gets_a_generated_token(serve: Callable[..., Served]) -> None:
    served = serve("--host", "0.0.0.0")
    assert served.token is not None and len(served.token) >= 32
    assert any("There is no TLS" in line for line in served.banner)
    assert request(served, "/").status == 403
    assert request(served, f"/?token={served.token}").status == 303


def test_without_the_token_every_route_is_refused(serve: Callable[..., Served]) -> None:
    served = serve("--token", "correct-horse-battery-staple")
    token = served.token
    assert token == "correct-horse-battery-staple"
    for path in ("/", "/ws", "/static/js/textual.js", "/static/css/xterm.css", "/download/anything"):
        headers = WEBSOCKET_HANDSHAKE if path == "/ws" else {}
        assert request(served, path, headers).status == 403, path
        wrong = request(served, path + "?token=correct-horse-battery-stapl", headers)
        assert wrong.status == 403, path
        cookie = request(served, path, {**headers, "Cookie": f"protocoder-token-{served.port}=nope-nope-nope-no"})
        assert cookie.status == 403, path
    refused = request(served, "/")
    assert b"needs its access token" in refused.body  # type: ignore[attr-defined]


def test_the_token_in_the_url_becomes_a_cookie(serve: Callable[..., Served]) -> None:
    served = serve("--token", "correct-horse-battery-staple")
    first = request(served, f"/?fontsize=14&token={served.token}")
    assert first.status == 303
    assert first.headers["Location"] == "/?fontsize=14"  # the token leaves the address bar
    cookie = first.headers["Set-Cookie"]
    name = f"protocoder-token-{served.port}"
    assert cookie.startswith(f"{name}={served.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    with_cookie = {"Cookie": f"{name}={served.token}"}
    page = request(served, "/?fontsize=14", with_cookie)
    assert page.status == 200
    body = page.body.decode()  # type: ignore[attr-defined]
    assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in body
    assert served.token not in body
    assert request(served, "/static/js/textual.js", with_cookie).status == 200
    # The websocket with the cookie is accepted (101) and starts a session.
    upgraded = request(served, "/ws", {**WEBSOCKET_HANDSHAKE, **with_cookie,
                                       "Origin": f"http://127.0.0.1:{served.port}"})
    assert upgraded.status == 101


# --------------------------------------------------------------------------- the apps a tab runs


def _shown(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_a_tab_asks_who_is_coding_without_command_line_advice(bundled: Path) -> None:
    async with make_app(bundled, None).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # In a terminal the prompt says how to skip it next time ...
        assert "--reviewer" in _shown(pilot.app.screen, "#reviewer-intro")
    async with WebCoderApp(bundled).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal)
        # ... a browser tab has no command line to give --reviewer or $PROTOCODER_REVIEWER on.
        assert _shown(prompt, ".dialog-title") == "Who is coding?"
        assert "--reviewer" not in _shown(prompt, "#reviewer-intro")
        assert "PROTOCODER_REVIEWER" not in _shown(prompt, "#reviewer-intro")
        await pilot.press(*"Grace Hopper")
        assert "new reviewer id: grace-hopper" in _shown(prompt, "#reviewer-id")
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
        assert pilot.app.session.reviewer == "grace-hopper"


async def test_a_tab_of_the_adjudication_app_asks_who_is_adjudicating(bundled: Path) -> None:
    async with WebAdjudicationApp(bundled).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = pilot.app.screen
        assert isinstance(prompt, ReviewerModal)
        assert _shown(prompt, ".dialog-title") == "Who is adjudicating?"
        intro = _shown(prompt, "#reviewer-intro")
        assert "recorded with every decision" in intro and "--reviewer" not in intro
        assert "Nobody has coded" not in intro  # casheekar has: that line is about reviewers
        await pilot.press(*"Carol")
        assert "adjudicator id: carol" in _shown(prompt, "#reviewer-id")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, AdjudicationScreen)
        assert pilot.app.screen.adjudicator == "carol"


# --------------------------------------------------------------------------- a real browser


ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


class Tab:
    """A browser tab on the served app, with the text the app has drawn in it so far."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.frames: list[str] = []
        page.on("websocket", self._watch)

    def _watch(self, websocket: Any) -> None:
        websocket.on("framereceived", lambda payload: self.frames.append(
            payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""))

    def text(self) -> str:
        """Everything the app wrote to the terminal, without escape sequences."""
        return ANSI.sub("", "".join(self.frames))

    def wait_for_text(self, text: str, timeout: float = 30, poll_ms: int = 100) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.text():
                return
            self.page.wait_for_timeout(poll_ms)
        raise AssertionError(f"{text!r} never appeared in the browser; last output: {self.text()[-1500:]!r}")

    def type(self, text: str) -> None:
        self.page.keyboard.type(text, delay=20)

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def read_cells(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    return data.get("cells") or {}


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (skipped, with the reason, when missing)."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)) and not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; or set PROTOCODER_TEST_CHROMIUM)")
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                         "(pip install -e '.[test]')")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_tab(browser: Any, url: str) -> Tab:
    """A new browser profile (its own cookies) with one tab on ``url``."""
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    tab = Tab(page)
    page.goto(url)
    return tab


def sign_in(tab: Tab, name: str, reviewer_id: str, question: str = "Who is coding?") -> None:
    """Answer the name prompt as someone who has just opened the page: no click first.

    The page gives the terminal the keyboard by itself; a click would also land on the app
    (in the middle of the page, on the first reviewer of the prompt's list, and pick it).
    """
    tab.wait_for_text(question)
    assert "--reviewer" not in tab.text(), "a browser tab has no command line to give --reviewer on"
    # The page hands the terminal the keyboard within 50 ms of the first frame; a person
    # starts typing later than that, a test on a busy machine may not.
    tab.page.wait_for_function("document.activeElement === document.querySelector('#terminal textarea')")
    tab.type(name)
    tab.wait_for_text(f"id: {reviewer_id} ")  # the whole name arrived, first key included
    tab.press("Enter")


def test_a_cell_coded_in_chromium_reaches_the_reviewers_file(serve: Callable[..., Served], chromium: Any,
                                                             bundled: Path, tmp_path: Path) -> None:
    review = load_review(bundled)
    assert review.rubric is not None
    first_protocol = review.protocols[0]
    first_field = review.rubric.fields[0]
    sheet = bundled / "protocols" / first_protocol.id / "codes" / "grace-hopper.yaml"
    served = serve()

    tab = open_tab(chromium, served.url)
    sign_in(tab, "Grace Hopper", "grace-hopper")
    tab.wait_for_text(first_protocol.name)
    tab.page.wait_for_timeout(500)
    tab.press("Enter")                    # open the first protocol in the list
    tab.wait_for_text(first_field.question[:30])
    tab.press("1")                        # the first allowed code of the first field
    cells = wait_until(lambda: read_cells(sheet), f"a cell in {sheet}")
    assert cells[first_field.id]["code"] == first_field.codes[0]
    tab.page.screenshot(path=str(tmp_path / "coding.png"))

    # Text typed just before the tab closes is saved, not lost with the session.
    tab.press("Tab")                      # the source location
    tab.type("Sec. 4.2")                  # at once: no key typed just after tab is lost
    # Once the app has drawn the text it has the keys; the tab closes well within the
    # half-second pause after which typing is saved anyway.
    typed = time.monotonic()
    tab.wait_for_text("Sec. 4.2", poll_ms=5)
    tab.page.context.close()
    assert time.monotonic() - typed < 0.4, "too slow to test the save on close"
    wait_until(lambda: read_cells(sheet).get(first_field.id, {}).get("source") == "Sec. 4.2",
               "the source location typed before the tab closed")
    assert "session closed" in wait_until(lambda: "session closed" in served.stderr() and served.stderr(),
                                          "the server to see the session end")


def test_a_second_tab_for_the_same_reviewer_is_read_only(serve: Callable[..., Served], chromium: Any,
                                                         bundled: Path) -> None:
    review = load_review(bundled)
    assert review.rubric is not None
    first_protocol, first_field = review.protocols[0], review.rubric.fields[0]
    sheet = bundled / "protocols" / first_protocol.id / "codes" / "ada.yaml"
    served = serve()

    writer = open_tab(chromium, served.url)
    sign_in(writer, "ada", "ada")
    writer.wait_for_text(first_protocol.name)

    reader = open_tab(chromium, served.url)
    sign_in(reader, "ada", "ada")
    reader.wait_for_text("read-only")
    reader.wait_for_text(first_protocol.name)
    reader.page.wait_for_timeout(500)
    reader.press("Enter")
    reader.wait_for_text(first_field.question[:30])
    reader.press("2")
    reader.page.wait_for_timeout(2000)
    assert read_cells(sheet) == {}, "the read-only tab wrote"

    writer.page.wait_for_timeout(500)
    writer.press("Enter")
    writer.wait_for_text(first_field.question[:30])
    writer.press("2")
    cells = wait_until(lambda: read_cells(sheet), "the writing tab's cell")
    assert cells[first_field.id]["code"] == first_field.codes[1]


def test_with_a_token_the_browser_codes_and_a_stranger_is_refused(serve: Callable[..., Served], chromium: Any,
                                                                  bundled: Path) -> None:
    review = load_review(bundled)
    assert review.rubric is not None
    served = serve("--token", "correct-horse-battery-staple")
    bare = served.url.split("?", 1)[0]

    stranger = chromium.new_context().new_page()
    response = stranger.goto(bare)
    assert response is not None and response.status == 403
    assert "needs its access token" in stranger.content()
    stranger.context.close()

    tab = open_tab(chromium, served.url)
    assert "token=" not in tab.page.url
    sign_in(tab, "Lin", "lin")
    protocol, field_ = review.protocols[0], review.rubric.fields[0]
    tab.wait_for_text(protocol.name)
    tab.page.wait_for_timeout(500)
    tab.press("Enter")
    tab.wait_for_text(field_.question[:30])
    tab.press("3")
    sheet = bundled / "protocols" / protocol.id / "codes" / "lin.yaml"
    cells = wait_until(lambda: read_cells(sheet), f"a cell in {sheet}")
    assert cells[field_.id]["code"] == field_.codes[2]


def test_the_adjudication_app_in_chromium_records_a_decision(serve: Callable[..., Served], chromium: Any,
                                                             bundled: Path, cli: Callable[..., Any]) -> None:
    # A second reviewer who disagrees with casheekar on one cell.
    exported = cli("export", "--workspace", bundled).stdout.replace(",casheekar,", ",alice,")
    assert "webarena,open_work,alice,NR" in exported
    (bundled / "alice.csv").write_text(exported.replace("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                                       encoding="utf-8")
    assert cli("import", "--workspace", bundled, bundled / "alice.csv").exit_code == 0
    served = serve("--app", "adjudicate")

    tab = open_tab(chromium, served.url)
    sign_in(tab, "Carol", "carol", question="Who is adjudicating?")
    tab.wait_for_text("Adjudication · 1 unresolved cell")
    tab.page.wait_for_timeout(500)
    tab.press("3")                        # NR
    tab.press("Control+s")                # refused without a reason: the reason box takes the focus
    tab.wait_for_text("A reason is required")
    tab.page.wait_for_timeout(500)
    tab.type("No source says what happens to background work.")
    tab.press("Control+s")
    consensus = bundled / "protocols" / "webarena" / "consensus.yaml"
    wait_until(consensus.is_file, str(consensus))
    review = load_review(bundled)
    decision = review.adjudications[("webarena", "open_work")][-1]
    assert (decision.code, decision.by) == ("NR", "carol")
    assert decision.reason == "No source says what happens to background work."


def test_ctrl_c_with_an_open_tab_saves_its_typing_first(serve: Callable[..., Served], chromium: Any,
                                                        bundled: Path) -> None:
    review = load_review(bundled)
    assert review.rubric is not None
    protocol, field_ = review.protocols[0], review.rubric.fields[0]
    sheet = bundled / "protocols" / protocol.id / "codes" / "mo.yaml"
    served = serve()
    tab = open_tab(chromium, served.url)
    sign_in(tab, "mo", "mo")
    tab.wait_for_text(protocol.name)
    tab.page.wait_for_timeout(500)
    tab.press("Enter")
    tab.wait_for_text(field_.question[:30])
    tab.press("2")
    wait_until(lambda: read_cells(sheet), f"a cell in {sheet}")
    tab.press("Tab")
    tab.type("App. C")
    tab.wait_for_text("App. C", poll_ms=5)

    stopping = time.monotonic()
    status, out, err = served.stop(signal.SIGINT)
    # Sessions are closed at once (about 2 s here), not left to aiohttp's shutdown timeout (10 s).
    assert time.monotonic() - stopping < 8
    assert status == 130
    assert err.strip().splitlines()[-1] == "protocoder serve: stopped (SIGINT)"
    assert "Traceback" not in out + err
    assert read_cells(sheet)[field_.id]["source"] == "App. C"
    assert not (bundled / ".protocoder").exists() or all(
        _lock_is_free(lock) for lock in (bundled / ".protocoder").glob("session-*.lock"))


def _lock_is_free(path: Path) -> bool:
    """True when no process holds the session lock at ``path`` (the app gave it back)."""
    from protocoder.storage.files import try_hold_lock

    handle = try_hold_lock(path)
    if handle is None:
        return False
    handle.close()
    return True
