"""Issue 14.6: a source's URL reaches the reviewer even where no browser can be opened."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import pytest

from protocoder.tui.browser import graphical_browser_possible
from protocoder.tui.screens import SourceModal

from .helpers import app_for, loaded, notices, screen_text, shown

URL = "https://arxiv.org/abs/2307.13854"


def test_a_browser_is_only_tried_where_one_can_open_a_window() -> None:
    assert not graphical_browser_possible({}, "linux")
    assert graphical_browser_possible({"DISPLAY": ":0"}, "linux")
    assert graphical_browser_possible({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert graphical_browser_possible({"BROWSER": "firefox"}, "linux")
    assert graphical_browser_possible({}, "darwin")


@pytest.mark.parametrize("desktop, browser", [
    (False, "never asked"),   # a server over ssh: no display, so no text-mode browser in our terminal
    (True, "refuses"),        # webbrowser.open returns False
    (True, "raises"),         # the launcher fails
])
async def test_no_browser_copies_the_url_and_says_so(workspace: Path, monkeypatch, desktop: bool,
                                                     browser: str) -> None:
    asked: list[str] = []

    def fake_open(url: str, **_: object) -> bool:
        asked.append(url)
        if browser == "raises":
            raise webbrowser.Error("could not locate runnable browser")
        return False

    monkeypatch.setattr(webbrowser, "open", fake_open)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    if desktop:
        monkeypatch.setenv("DISPLAY", ":0")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "o")
        await pilot.pause()
        assert asked == ([URL] if desktop else [])
        assert pilot.app.clipboard == URL, "the URL went to the clipboard (OSC 52 through the terminal)"
        [notice] = notices(pilot)
        assert notice.startswith("No browser could be opened here. The URL is on the clipboard")
        assert notice.endswith(URL), "the notice shows the whole URL"
        assert "Opening" not in notice


async def test_the_whole_url_is_shown_on_demand_and_can_be_copied(workspace: Path, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("BROWSER", raising=False)
    long_url = "https://example.org/" + "a-very-long-path-segment/" * 6 + "end"
    protocol = workspace / "protocols/webarena/protocol.yaml"
    protocol.write_text(protocol.read_text(encoding="utf-8").replace(URL, long_url), encoding="utf-8")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert not shown(pilot, "segment/end"), "the side column cuts the URL"
        await pilot.press("u")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, SourceModal)
        url_text = str(modal.query_one("#source-url").render())
        assert url_text == long_url
        rows = "".join(row.strip("█▌▐ ") for row in screen_text(pilot))
        assert long_url in rows, "wrapped, never cut"
        await pilot.press("c")
        await pilot.pause()
        assert pilot.app.clipboard == long_url
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, SourceModal)


async def test_a_desktop_browser_opens_the_source(workspace: Path, monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "open", lambda url, **_: opened.append(url) or True)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "ctrl+o")
        await pilot.pause()
        assert opened == [URL]
        assert notices(pilot) == [f"Opening {URL}"]
        assert pilot.app.clipboard == ""


@pytest.mark.parametrize("bad", ["javascript:alert(document.cookie)", "file:///etc/passwd"])
async def test_a_url_validate_refuses_is_never_opened(workspace: Path, monkeypatch, bad: str) -> None:
    """Issue 30.7: the app loads a protocol whose source URL validate flags, but `o` never hands it on."""
    asked: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, **_: asked.append(url) or True)
    monkeypatch.setenv("DISPLAY", ":0")
    protocol = workspace / "protocols/webarena/protocol.yaml"
    protocol.write_text(protocol.read_text(encoding="utf-8").replace(URL, bad), encoding="utf-8")
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter", "o")
        await pilot.pause()
        assert asked == [] and pilot.app.clipboard != bad
        [notice] = notices(pilot)
        assert notice.startswith(f"Not opened: {bad!r} is not an http(s) address or a DOI"), notice


def test_a_doi_opens_through_doi_org() -> None:
    from protocoder.storage.formats import openable_url

    assert openable_url("doi:10.48550/arXiv.2307.13854") == "https://doi.org/10.48550/arXiv.2307.13854"
    assert openable_url(URL) == URL
    assert openable_url("javascript:alert(1)") is None and openable_url("https:") is None
