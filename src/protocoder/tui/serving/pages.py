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
