"""Issue 32 in a real browser: Debian's Chromium through Playwright against the real server.

What a headless browser can show: the page asks no other host for anything, CJK text is drawn
with a real glyph (not a box), the keys that moved off ctrl+t and ctrl+n reach the app as the
key events a desktop browser sends, ctrl+a in a text input selects all, and the sign-in page
names the review. What it cannot show, keys the browser keeps for itself (a headless browser
delivers them), is tested against the written rule in ``tests/tui/test_keys_browser.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import test_serve
import test_team_serve
from test_serve import Served, open_tab, read_cells, sign_in, wait_until

from protocoder.storage.workspace import load_review

chromium = test_serve.chromium  # the fixtures, shared
serve = test_serve.serve
team_workspace = test_team_serve.team_workspace

GLYPH_PROBE = """async (text) => {
  await document.fonts.ready;
  const draw = (t) => {
    const canvas = document.createElement("canvas");
    canvas.width = 64; canvas.height = 64;
    const ctx = canvas.getContext("2d");
    ctx.font = "40px 'Roboto Mono', Monaco, 'Courier New', monospace";  // the terminal's family
    ctx.fillStyle = "#fff"; ctx.textBaseline = "top";
    ctx.fillText(t, 4, 4);
    return Array.from(ctx.getImageData(0, 0, 64, 64).data);
  };
  const drawn = draw(text), missing = draw("\\u{10FFFD}");  // a private-use code point: no font has it
  const ink = drawn.filter((v, i) => i % 4 === 3 && v > 0).length;
  const colours = new Set();
  for (let i = 0; i < drawn.length; i += 4) if (drawn[i + 3] > 200) colours.add(drawn.slice(i, i + 3).join());
  return {ink, same_as_missing: drawn.join() === missing.join(), colours: colours.size};
}"""


def test_the_page_asks_no_other_host_for_anything(serve: Callable[..., Served], chromium: Any) -> None:
    served = serve()
    context = chromium.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    tab = test_serve.Tab(page)
    page.goto(served.url)
    tab.wait_for_text("Who is coding?")
    page.wait_for_timeout(500)
    hosts = {urlsplit(url).hostname for url in requested if not url.startswith(("data:", "blob:"))}
    assert hosts == {"127.0.0.1"}, requested
    assert any(url.endswith("/static/fonts/RobotoMono-VariableFont_wght.ttf") for url in requested), requested
    html = page.content()
    assert "googleapis" not in html and "<h1" not in html


def test_cjk_text_is_drawn_with_a_glyph_not_a_box(serve: Callable[..., Served], chromium: Any) -> None:
    served = serve()
    tab = open_tab(chromium, served.url)
    tab.wait_for_text("Who is coding?")
    probe = tab.page.evaluate(GLYPH_PROBE, "評価")
    assert probe["ink"] > 50 and not probe["same_as_missing"], probe


def test_emoji_are_drawn_in_colour(serve: Callable[..., Served], chromium: Any) -> None:
    fonts = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=False).stdout \
        if shutil.which("fc-list") else ""
    if "emoji" not in fonts.lower():
        pytest.skip("no colour emoji font on this system (Debian: apt-get install fonts-noto-color-emoji); "
                    "the page names it as a local() face, so it is used once installed")
    served = serve()
    tab = open_tab(chromium, served.url)
    tab.wait_for_text("Who is coding?")
    probe = tab.page.evaluate(GLYPH_PROBE, "\U0001F50D")
    assert probe["ink"] > 50 and not probe["same_as_missing"] and probe["colours"] > 3, probe


def test_the_moved_keys_and_select_all_work_as_a_desktop_browser_sends_them(
        serve: Callable[..., Served], chromium: Any, bundled: Path) -> None:
    review = load_review(bundled)
    assert review.rubric is not None
    first = review.protocols[0]
    served = serve()
    tab = open_tab(chromium, served.url)
    sign_in(tab, "Grace Hopper", "grace-hopper")
    tab.wait_for_text(first.name)
    tab.page.wait_for_timeout(500)
    tab.press("F3")  # was ctrl+n, which opens a browser window instead: the protocol form
    tab.wait_for_text("Add source (f3)")
    tab.press("Escape")
    tab.page.wait_for_timeout(500)
    tab.press("Enter")  # code the first protocol
    tab.wait_for_text(review.rubric.fields[0].question[:30])
    tab.press("Tab")  # the source location
    tab.type("Sec. 9.9")
    tab.page.wait_for_timeout(300)
    tab.press("Control+a")  # selects all, as in a browser's text field: the next key replaces it
    tab.type("App. B")
    sheet = bundled / "protocols" / first.id / "codes" / "grace-hopper.yaml"
    wait_until(lambda: read_cells(sheet).get(review.rubric.fields[0].id, {}).get("source") == "App. B",
               "the source location replaced after ctrl+a")
    labels = [prompt.label for prompt in review.rubric.prompts]
    before = len(tab.text())
    tab.press("F3")  # was ctrl+t, which opens a browser tab instead: the descriptive notes
    for _ in range(300):  # Playwright hands over the frames only while it is called
        if sum(label in tab.text()[before:] for label in labels) >= 2:
            break
        tab.page.wait_for_timeout(100)
    else:
        raise AssertionError(f"the notes never appeared after f3: {tab.text()[before:][-1500:]!r}")


def test_the_sign_in_page_names_the_review(team_workspace: Any, chromium: Any, tmp_path: Path) -> None:
    root, links = team_workspace
    served = test_serve.start_serve(root, tmp_path)
    try:
        tab = open_tab(chromium, f"http://127.0.0.1:{served.port}{links['ada']}")
        heading = tab.page.inner_text("h1")
        assert heading == "Sign in to protocoder · Evaluation-boundary documentation of ten agent-evaluation " \
                          "protocols", heading
        assert root.name not in heading
    finally:
        served.stop()
