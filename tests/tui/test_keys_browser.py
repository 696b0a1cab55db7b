"""Issue 32: no key of the served apps is one a desktop browser keeps for itself.

The rule is the one list in ``protocoder.tui.browser_keys`` (with its sources): a headless
browser delivers every key, so the check is against the written rule, on every binding of every
screen and widget class of the apps (their own ``BINDINGS``, and what they inherit from Textual).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

from textual.binding import Binding
from textual.dom import DOMNode
from textual.widgets import Input

import protocoder.tui
from protocoder.tui.adjudicate import AdjudicationScreen, make_adjudication_app
from protocoder.tui.browser_keys import KEPT_FOR_TERMINALS, TEXTUAL_WIDGET_KEYS, reserved_by_browser
from protocoder.tui.screens import CodingScreen, ProtocolFormScreen
from protocoder.tui.widgets import TextBox, TextLine

from .helpers import app_for, loaded


def _app_classes() -> list[type[DOMNode]]:
    """Every screen, widget and app class defined in protocoder.tui (imported module by module)."""
    found: dict[str, type[DOMNode]] = {}
    for info in pkgutil.walk_packages(protocoder.tui.__path__, "protocoder.tui."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, DOMNode) and value.__module__.startswith("protocoder."):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def _own_bindings(cls: type[DOMNode]) -> list[Binding]:
    return [b if isinstance(b, Binding) else Binding(*b) for b in cls.__dict__.get("BINDINGS", [])]


def test_the_walk_finds_the_served_screens() -> None:
    names = {cls.__name__ for cls in _app_classes()}
    assert {"CodingScreen", "ProtocolListScreen", "ProtocolFormScreen", "AdjudicationScreen", "ReaderScreen",
            "CoderApp", "AdjudicationApp", "MemberCoderApp", "TextLine", "TextBox"} <= names


def test_no_binding_of_the_apps_is_a_key_the_browser_keeps() -> None:
    wrong = []
    for cls in _app_classes():
        own = _own_bindings(cls)
        for binding in own:
            for key in binding.key.split(","):
                key = key.strip()
                what = reserved_by_browser(key)
                if what is None:
                    continue
                twin = KEPT_FOR_TERMINALS.get(key)
                if twin is None:
                    wrong.append(f"{cls.__qualname__}: {key} ({binding.action}) — the browser: {what}")
                elif len(twin) == 1 and not any(b.key == twin and b.action == binding.action for b in own):
                    wrong.append(f"{cls.__qualname__}: {key} ({binding.action}) is kept for terminals, "
                                 f"but its browser twin {twin!r} is not bound to the same action")
        # What Textual's base classes bind: only the editing and scrolling keys the apps never show.
        for key, bindings in cls._merge_bindings().key_to_bindings.items():
            if reserved_by_browser(key) and key not in KEPT_FOR_TERMINALS and key not in TEXTUAL_WIDGET_KEYS:
                wrong.append(f"{cls.__qualname__} inherits {key} ({bindings[0].action})")
    assert not wrong, "\n".join(wrong)


def test_the_rule_knows_the_keys_chrome_keeps() -> None:
    for key in ("ctrl+n", "ctrl+t", "ctrl+w", "ctrl+shift+n", "ctrl+shift+t", "ctrl+shift+w", "ctrl+tab",
                "f3,ctrl+t"):
        assert reserved_by_browser(key), key
    for key in ("f3", "ctrl+s", "ctrl+p", "ctrl+a", "ctrl+e", "f1", "ctrl+g"):
        assert reserved_by_browser(key) is None, key


async def test_ctrl_a_selects_all_of_a_text_input_as_in_a_browser(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f3")  # the protocol form: its inputs are TextLines
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolFormScreen)
        line = pilot.app.focused
        assert isinstance(line, TextLine)
        line.value = "https://example.org/auto-filled"
        await pilot.press("ctrl+a", "x")
        await pilot.pause()
        assert line.value == "x", "ctrl+a selected the whole text, so typing replaced it"
    assert TextBox._merge_bindings().key_to_bindings["ctrl+a"][0].action == "select_all"
    from protocoder.tui.screens.protocol_list import FilterInput  # the list's filter

    assert issubclass(FilterInput, Input)
    assert FilterInput._merge_bindings().key_to_bindings["ctrl+a"][0].action == "select_all"


async def test_every_moved_key_is_in_the_command_palette(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Add protocol", "Quit"} <= titles
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        assert {"Descriptive notes", "Next protocol", "Previous protocol", "Quit"} <= {
            c.title for c in app.get_system_commands(app.screen)}
        await pilot.press("escape", "escape", "f3")
        await pilot.pause()
        assert isinstance(app.screen, ProtocolFormScreen)
        assert "Add source" in {c.title for c in app.get_system_commands(app.screen)}
    adjudication = make_adjudication_app(workspace, "carol")
    async with adjudication.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(adjudication.screen, AdjudicationScreen)
        assert {"Take a cell", "Record decision", "Quotes", "Quit"} <= {
            c.title for c in adjudication.get_system_commands(adjudication.screen)}
