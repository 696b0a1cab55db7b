"""Issue 23, as a property: random key sequences on the real coding app, with real files, never
change a saved cell except through an action the visible focus allows, and text typed into a
cell's inputs is never lost to a focus change (it reaches disk or is still in its input).

The app runs at 80×24 (the reader on a screen of its own) and 120×40 (the reader as a pane);
a snapshot is pinned to webarena through the real CLI so the reader has text to search. The
short run is the default; ``pytest -m slow`` runs many more and longer sequences.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from textual.widgets import Input, TextArea

from protocoder.model import Rubric
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review
from protocoder.tui.app import make_app
from protocoder.tui.screens import CodingScreen
from protocoder.tui.session import split_cites
from protocoder.tui.widgets import CodeChoice

from .helpers import loaded, settle
from .test_focus_model import WEB_PAGE
from conftest import copy_bundled

REVIEWER = "casheekar"
NAVIGATION = ["]", "[", "tab", "shift+tab", "escape", "enter", "ctrl+l", "slash", "ctrl+z", "delete"]
DIGITS = ["1", "2", "3", "4"]
TEXT = ["x", "y", "space"]
INPUTS = ("cell-source", "cell-basis", "cell-cites")
FOCUS_MOVES = ("tab", "shift+tab", "escape", "ctrl+l")

keys = st.lists(st.one_of(st.sampled_from(NAVIGATION), st.sampled_from(DIGITS),
                          st.lists(st.sampled_from(TEXT), min_size=1, max_size=4)), min_size=1, max_size=30)
sizes = st.sampled_from([(80, 24), (120, 40)])


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled review with a Markdown snapshot pinned to webarena (copied for each example)."""
    from click.testing import CliRunner

    from protocoder.cli import main

    root = copy_bundled(tmp_path_factory.mktemp("sequences") / "review")
    page = root.parent / "page.md"
    page.write_text(WEB_PAGE, encoding="utf-8")
    result = CliRunner().invoke(main, ["source", "add", "webarena", str(page), "--workspace", str(root)])
    assert result.exit_code == 0, result.output
    return root


def _norm(text: str, name: str = "") -> str:
    # Citations are saved as a list of keys: compare them as the app splits them.
    if name == "cell-cites":
        return ", ".join(split_cites(text))
    return " ".join(text.split())


@dataclass
class Seen:
    """What the reviewer could see before a key: where the focus is, and the cell's inputs."""

    coding_on_top: bool
    focus: object
    protocol: str | None = None
    field: str | None = None
    values: dict[str, str] = dataclass_field(default_factory=dict)
    code_keys: dict[str, str] = dataclass_field(default_factory=dict)
    highlighted: str | None = None


def _coding(app) -> CodingScreen | None:
    return next((s for s in app.screen_stack if isinstance(s, CodingScreen)), None)


def _values(screen: CodingScreen) -> dict[str, str]:
    return {"cell-source": screen.query_one("#cell-source", Input).value,
            "cell-basis": screen.query_one("#cell-basis", TextArea).text,
            "cell-cites": screen.query_one("#cell-cites", Input).value}


def _look(app) -> Seen:
    screen = _coding(app)
    seen = Seen(coding_on_top=app.screen is screen and screen is not None, focus=app.focused)
    if screen is not None and screen.is_mounted:
        choice = screen.code_choice
        seen.protocol, seen.field = screen.protocol_id, screen.field.id
        seen.values = _values(screen)
        seen.code_keys = dict(choice.keys)
        if choice.highlighted is not None:
            seen.highlighted = choice.get_option_at_index(choice.highlighted).id
    return seen


def _disk(store: Store, rubric: Rubric, protocol: str, field_id: str) -> tuple[str | None, dict[str, str]]:
    cell = store.read_sheet(protocol, REVIEWER, rubric)[0].cells.get(field_id)
    if cell is None:
        return None, dict.fromkeys(INPUTS, "")
    return cell.code, {"cell-source": cell.source, "cell-basis": cell.basis, "cell-cites": ", ".join(cell.cites)}


async def _run(template: Path, presses: list[str], size: tuple[int, int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "review"
        shutil.copytree(template, workspace)
        rubric = load_review(workspace).rubric
        assert rubric is not None
        store = Store(load_review(workspace).paths)
        codes: dict[tuple[str, str], str | None] = {}
        """The codes the reviewer set on purpose (and the file's, for cells not touched)."""
        history: list[tuple[str, str, str | None, str | None]] = []

        def expected(protocol: str, field_id: str) -> str | None:
            if (protocol, field_id) not in codes:
                codes[(protocol, field_id)] = _disk(store, rubric, protocol, field_id)[0]
            return codes[(protocol, field_id)]

        app = make_app(workspace, REVIEWER)
        async with app.run_test(size=size) as pilot:
            await loaded(pilot)
            await pilot.press("enter")
            await pilot.pause()
            for number, key in enumerate(presses):
                seen = _look(app)
                if seen.protocol is not None and seen.field is not None:
                    expected(seen.protocol, seen.field)
                await pilot.press(key)
                await settle(pilot)
                where = f"key {number} {key!r} of {presses} at {size}"
                # The model: the code changes only through the codes, with the focus on them.
                on_codes = seen.coding_on_top and isinstance(seen.focus, CodeChoice)
                if on_codes and seen.protocol and seen.field:
                    cell = (seen.protocol, seen.field)
                    new = {"enter": seen.highlighted, "delete": None}.get(key, seen.code_keys.get(key, "-"))
                    if key in ("enter", "delete", *seen.code_keys) and new != "-" and new != codes[cell]:
                        history.append((*cell, codes[cell], new))
                        codes[cell] = new
                if key == "ctrl+z" and seen.coding_on_top and not isinstance(seen.focus, TextArea):
                    mine = [i for i, entry in enumerate(history) if entry[0] == seen.protocol]
                    if mine:
                        protocol, field_id, was, now = history.pop(mine[-1])
                        if codes[(protocol, field_id)] == now:
                            codes[(protocol, field_id)] = was
                for (protocol, field_id), code in codes.items():
                    assert _disk(store, rubric, protocol, field_id)[0] == code, \
                        f"{protocol}/{field_id} changed without the codes having the focus: {where}"
                # Text: what the inputs held before a key that did not type into them is on disk or still shown.
                if seen.protocol is None or seen.field is None:
                    continue
                typed_into = seen.focus.id if isinstance(seen.focus, Input | TextArea) else None
                _, on_disk = _disk(store, rubric, seen.protocol, seen.field)
                screen = _coding(app)
                still = (screen is not None and screen.is_mounted and screen.protocol_id == seen.protocol
                         and screen.field.id == seen.field)
                shown_now = _values(screen) if still and screen is not None else {}
                for name, value in seen.values.items():
                    # Every key but those that move the focus edits the input it is typed into
                    # (] [ / are text there, enter is a new line in the basis, ctrl+z undoes typing).
                    if name == typed_into and key not in FOCUS_MOVES:
                        continue
                    kept = {_norm(on_disk[name], name), _norm(shown_now.get(name, ""), name)}
                    assert _norm(value, name) in kept, f"{name} {value!r} was lost: {where} (disk {on_disk[name]!r})"
            final = _look(app)
        # Quitting writes what is still only on screen.
        if final.protocol is not None and final.field is not None:
            _, on_disk = _disk(store, rubric, final.protocol, final.field)
            for name, value in final.values.items():
                assert _norm(on_disk[name], name) == _norm(value, name), \
                    f"{name} {value!r} never reached disk ({presses})"


# No shrinking by default (it can take minutes on an app): the failing sequence is printed as drawn.
@settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(chunks=keys, size=sizes)
# The cases of issue 23, always run: a digit in the reader pane, ] from the reader, typing after tab.
@example(chunks=["ctrl+l", "]", "2"], size=(120, 40))
@example(chunks=["ctrl+l", "2", "escape", "tab", ["x", "y"], "tab"], size=(120, 40))
@example(chunks=["ctrl+l", "]", "escape", "2", "ctrl+z"], size=(80, 24))
def test_key_sequences_change_cells_only_through_the_focus(template: Path, chunks, size) -> None:
    presses = [key for chunk in chunks for key in (chunk if isinstance(chunk, list) else [chunk])]
    asyncio.run(_run(template, presses, size))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(chunks=st.lists(st.one_of(st.sampled_from(NAVIGATION), st.sampled_from(DIGITS),
                                 st.lists(st.sampled_from(TEXT), min_size=1, max_size=6)), min_size=10, max_size=80),
       size=sizes)
def test_long_key_sequences_change_cells_only_through_the_focus(template: Path, chunks, size) -> None:
    presses = [key for chunk in chunks for key in (chunk if isinstance(chunk, list) else [chunk])]
    asyncio.run(_run(template, presses, size))
