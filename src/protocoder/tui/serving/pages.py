"""The HTML ``protocoder serve`` writes itself; the terminal page is textual-serve's template."""

from __future__ import annotations

SIGNIN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>protocoder · sign in</title></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>Sign in to {title}</h1>
<p>This link signs you in as <b>{name}</b>, once. Your coding is recorded under that name.</p>
<form method="post" action="/signin"><input type="hidden" name="token" value="{token}">
<button type="submit">Sign in as {name}</button></form>
</body></html>
"""
"""The page a sign-in link opens: the token is spent only by the button (a POST), so a chat
program that fetches the link to preview it does not use it up."""

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

FULL_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>protocoder · no room for another session</title></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>{title}</h1>
<p>No new session was opened: {why}</p>
</body></html>
"""
"""The page instead of the app when one more session would pass a cap (answered with 429)."""

FONTS = """<link rel="preload" href="{static}fonts/RobotoMono-VariableFont_wght.ttf" as="font" type="font/ttf"
  crossorigin>
<style>
  /* The terminal's font family ('Roboto Mono', set by textual.js) is made of faces from this
     server and from the reader's own system, never from another host. The last face declared is
     tried first for the characters of its range, and only when it has the glyph: emoji, then CJK,
     then Roboto Mono (shipped with textual-serve) for everything else. Debian: fonts-noto-color-emoji
     and fonts-noto-cjk provide the system faces. */
  @font-face {{ font-family: "Roboto Mono"; font-weight: 100 900; font-display: block;
    src: url("{static}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }}
  @font-face {{ font-family: "Roboto Mono"; font-weight: 100 900; font-style: italic; font-display: block;
    src: url("{static}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }}
  @font-face {{ font-family: "Roboto Mono"; font-weight: 100 900;
    src: local("Noto Sans Mono CJK SC"), local("NotoSansMonoCJKsc-Regular"), local("Noto Sans Mono CJK JP"),
         local("NotoSansMonoCJKjp-Regular"), local("Noto Sans CJK SC"), local("NotoSansCJKsc-Regular"),
         local("PingFang SC"), local("Microsoft YaHei"), local("MS Gothic");
    unicode-range: U+1100-11FF, U+2E80-2FDF, U+3000-9FFF, U+A960-A97F, U+AC00-D7FF, U+F900-FAFF, U+FE30-FE4F,
                   U+FF00-FFEF, U+20000-3FFFF; }}
  @font-face {{ font-family: "Roboto Mono"; font-weight: 100 900;
    src: local("Noto Color Emoji"), local("NotoColorEmoji"), local("Apple Color Emoji"), local("Segoe UI Emoji"),
         local("Twemoji Mozilla");
    unicode-range: U+200D, U+20E3, U+2190-21FF, U+2300-23FF, U+2460-24FF, U+25A0-27BF, U+2900-297F, U+2B00-2BFF,
                   U+3030, U+303D, U+3297, U+3299, U+FE0F, U+1F000-1FAFF, U+E0020-E007F; }}
</style>
"""
"""Replaces textual-serve's stylesheet link to Google Fonts: the page asks no other host for anything.
``{static}`` is the server's own static URL."""
