"""Adding, editing and removing protocols and references from the app (files checked on disk)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from protocoder.storage.workspace import load_review
from protocoder.tui.screens import BibtexScreen, CodingScreen, ConfirmModal, ProtocolFormScreen, ProtocolListScreen

from .helpers import app_for, focused_id, loaded, settle, type_text

ENTRY = """@misc{barres2025tau2,
  author = {Barres, Victor and Dong, Honghua},
  title  = {$\\tau^2$-Bench: Evaluating conversational agents in a dual-control environment},
  year   = {2025},
  url    = {https://arxiv.org/abs/2506.07982}
}"""


async def paste(pilot: Pilot, text: str) -> None:
    """Paste into the focused text area as a terminal does: the app forwards it to the focus."""
    assert isinstance(pilot.app.focused, TextArea)
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def fill(pilot: Pilot, text: str) -> None:
    """Replace the focused input's text."""
    focused = pilot.app.focused
    assert isinstance(focused, Input), focused
    focused.value = ""
    await type_text(pilot, text)


async def test_add_protocol_with_two_sources_and_a_reference_then_code_it(workspace: Path, sheet_of) -> None:
    bib_before = (workspace / "references.bib").read_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+r")
        assert isinstance(pilot.app.screen, BibtexScreen)
        await paste(pilot, ENTRY)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)

        await pilot.press("f3")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, ProtocolFormScreen)
        assert focused_id(pilot) == "form-name"
        await type_text(pilot, "τ²-Bench Retail")
        assert form.query_one("#form-id", Input).value == "tau2-bench-retail"  # proposed from the name
        await pilot.press("tab", "tab")
        assert focused_id(pilot) == "form-cites"
        await type_text(pilot, "barres2025")
        await pilot.press("right")  # completion from the bibliography, new key included
        assert form.query_one("#form-cites", Input).value == "barres2025tau2"
        await pilot.press("tab")  # the first source's title: reading order, no button before it
        await type_text(pilot, "τ²-Bench paper")
        await pilot.press("tab")
        await type_text(pilot, "https://arxiv.org/abs/2506.07982v2")
        await pilot.press("tab")
        await type_text(pilot, "arXiv v2")
        await pilot.press("f3")  # a second source
        await pilot.pause()
        assert "source-title" in pilot.app.focused.classes  # type: ignore[union-attr]
        await type_text(pilot, "tau2-bench repository")
        await pilot.press("tab")
        await type_text(pilot, "https://github.com/sierra-research/tau2-bench")
        await pilot.press("tab")
        await type_text(pilot, "commit 3f2a9c1")
        await pilot.press("tab")
        await fill(pilot, "2026-08-01")
        await pilot.press("ctrl+s")
        await pilot.pause()

        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert screen.selected_id == "tau2-bench-retail"
        assert screen.table.get_cell("tau2-bench-retail", "coded") == "0/3"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, CodingScreen)
        assert pilot.app.screen.protocol_id == "tau2-bench-retail"
        await pilot.press("3", "ctrl+q")  # open_work = NR
        await settle(pilot)

    bib_after = (workspace / "references.bib").read_bytes()
    assert bib_after.startswith(bib_before)
    assert bib_after[len(bib_before):].decode().strip("\n") == ENTRY
    text = (workspace / "protocols/tau2-bench-retail/protocol.yaml").read_text()
    assert "name: τ²-Bench Retail" in text
    assert "cites: [barres2025tau2]" in text
    protocol = load_review(workspace).protocol("tau2-bench-retail")
    assert [(s.title, s.url, s.version, s.accessed) for s in protocol.sources] == [
        ("τ²-Bench paper", "https://arxiv.org/abs/2506.07982v2", "arXiv v2", date.today()),
        ("tau2-bench repository", "https://github.com/sierra-research/tau2-bench", "commit 3f2a9c1",
         date(2026, 8, 1)),
    ]
    assert "- tau2-bench-retail" in (workspace / "protocoder.yaml").read_text()
    assert sheet_of("tau2-bench-retail").cells["open_work"].code == "NR"


async def test_bad_protocol_input_is_explained_and_nothing_written(workspace: Path, tree_bytes) -> None:
    before = tree_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("f3")
        await pilot.pause()
        form = pilot.app.screen
        await type_text(pilot, "WebArena")
        assert "exists already" in str(form.query_one("#form-id-hint").render())
        await pilot.press("tab")
        await fill(pilot, "Web Arena!")
        assert "not a safe id" in str(form.query_one("#form-id-hint").render())
        await pilot.press("tab")
        await type_text(pilot, "nosuchkey2099")
        await pilot.press("tab")
        await type_text(pilot, "Paper")
        await pilot.press("tab")
        await type_text(pilot, "arxiv.org/abs/1")
        await pilot.press("tab")
        await type_text(pilot, "v1")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolFormScreen)
        problems = str(form.query_one("#form-problems").render())
        assert "not a safe id" in problems
        assert "citation key 'nosuchkey2099' is not in references.bib" in problems
        assert "needs a scheme" in problems
        await pilot.press("escape")  # typed text is never dropped without asking
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
    assert tree_bytes() == before


async def test_bad_bibtex_is_explained_and_nothing_written(workspace: Path, tree_bytes) -> None:
    before = tree_bytes()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+r")
        screen = pilot.app.screen
        await paste(pilot, "@misc{zhou2024webarena,\n  title = {Again},\n  year = {2024}\n}")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "citation key 'zhou2024webarena' already exists" in str(screen.query_one("#bibtex-problems").render())
        screen.query_one("#bibtex-text", TextArea).clear()
        await paste(pilot, "@misc{broken,\n  title = {No end}")
        await pilot.press("ctrl+s")
        await pilot.pause()
        problems = str(screen.query_one("#bibtex-problems").render())
        assert problems.startswith("<pasted entry>:")
        assert isinstance(pilot.app.screen, BibtexScreen)
        await pilot.press("escape")  # cancels, even from inside the text, once the paste may go
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
    assert tree_bytes() == before


async def test_edit_a_protocols_sources(workspace: Path) -> None:
    path = workspace / "protocols/webarena/protocol.yaml"
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, ProtocolFormScreen)
        assert form.query_one("#form-name", Input).value == "WebArena"
        assert form.query_one("#form-id", Input).disabled
        version = form.query(".source-version").first(Input)
        assert version.value == "ICLR 2024"
        version.focus()
        await pilot.pause()
        await fill(pilot, "ICLR 2024 (camera-ready)")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolListScreen)
    text = path.read_text()
    assert text.startswith("# WebArena: metadata and the public sources reviewed for it.\n")
    assert "version: ICLR 2024 (camera-ready)" in text
    assert "version: arXiv preprint, 2025" in text
    assert "name: WebArena\n" in text


async def test_remove_asks_twice_when_cells_are_coded(workspace: Path) -> None:
    folder = workspace / "protocols/agentcanary"
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await type_text(pilot, "canary")  # filter, then act on the only row left
        assert pilot.app.screen.selected_id == "agentcanary"  # type: ignore[attr-defined]
        await pilot.press("ctrl+d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        # casheekar coded all three cells: the count is named and a second yes is needed.
        assert "3 coded cell(s)" in str(pilot.app.screen.query_one(".dialog-title").render())
        await pilot.press("n")
        await pilot.pause()
        assert folder.is_dir()
        await pilot.press("ctrl+d", "y", "y")
        await settle(pilot)
        assert not folder.exists()
        screen = pilot.app.screen
        assert isinstance(screen, ProtocolListScreen)
        assert "agentcanary" not in screen.table.rows
    assert "agentcanary" not in (workspace / "protocoder.yaml").read_text()


async def test_command_palette_offers_adding_a_protocol(workspace: Path) -> None:
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+p")
        await type_text(pilot, "Add protocol")
        await pilot.pause(0.3)  # the palette searches in the background
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProtocolFormScreen)
        await pilot.press("ctrl+s")  # empty form: explained, not written
        problems = str(pilot.app.screen.query_one("#form-problems").render())
        assert "the protocol needs a name" in problems and "at least one source" in problems
