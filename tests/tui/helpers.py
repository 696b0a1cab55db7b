"""Shared steps for driving the coding app with Pilot."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import Input, TextArea

from protocoder.tui.app import CoderApp, make_app
from protocoder.tui.screens import CodingScreen, ErrorScreen


def app_for(workspace: Path, reviewer: str | None = "ada") -> CoderApp:
    """The app as the CLI builds it, for a reviewer it does not ask to confirm (test_identity.py
    goes through the CLI, where a reviewer new to the workspace is confirmed first)."""
    return make_app(workspace, reviewer)


async def loaded(pilot: Pilot) -> None:
    """Wait until the workspace is loaded and the list is filled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def settle(pilot: Pilot, timeout: float = 10.0) -> None:
    """Let queued writes reach disk, or stop at a screen the write queue is waiting on.

    Not ``workers.wait_for_complete()``: the writer waits for the reviewer while it
    shows a conflict or an error, and the test is the reviewer.
    """
    app = pilot.app
    deadline = asyncio.get_running_loop().time() + timeout
    await pilot.pause()
    while asyncio.get_running_loop().time() < deadline:
        saver = getattr(app, "saver", None)
        if saver is None or not saver.running:
            break
        if app.screen is not app.screen_stack[0] and isinstance(app.screen, ModalScreen | ErrorScreen):
            break
        await pilot.pause(0.01)
    else:
        raise AssertionError("writes did not finish")
    await pilot.pause()


async def type_keys(pilot: Pilot, text: str) -> None:
    """Type text key by key (newlines as enter): slow, so kept for short strings."""
    await pilot.press(*["enter" if ch == "\n" else ch for ch in text])


async def type_text(pilot: Pilot, text: str) -> None:
    """Type text into the focused input at once, as a paste would (one change event)."""
    focused = pilot.app.focused
    if isinstance(focused, Input):
        focused.insert_text_at_cursor(text)
    elif isinstance(focused, TextArea):
        focused.insert(text)
    else:
        raise AssertionError(f"no text input has the focus: {focused!r}")
    await pilot.pause()


def coding(pilot: Pilot) -> CodingScreen:
    screen = pilot.app.screen
    assert isinstance(screen, CodingScreen), screen
    return screen


def focused_id(pilot: Pilot) -> str | None:
    focused = pilot.app.focused
    return focused.id if focused is not None else None


def no_blink(pilot: Pilot) -> None:
    """Stop cursors blinking so that screenshots do not depend on timing."""
    for widget in pilot.app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False


def screen_text(pilot: Pilot) -> list[str]:
    """What the terminal shows now, one string per row (the rendered screen, modals included)."""
    strips = pilot.app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


def shown(pilot: Pilot, text: str) -> bool:
    """True when ``text`` appears on one row of the screen as rendered."""
    return any(text in row for row in screen_text(pilot))


def notices(pilot: Pilot) -> list[str]:
    """The messages of the notifications on screen now."""
    return [notification.message for notification in pilot.app._notifications]
