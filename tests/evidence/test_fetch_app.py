"""The protocol form pins a file or a URL (at 80x24, through Textual's Pilot): the snapshot is
stored and protocol.yaml names it at once; a URL that fails is explained in the form and
nothing is written."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static
from tui.helpers import app_for, loaded

from protocoder.tui.screens import ProtocolFormScreen

from .webserver import LocalServer, answer, serve
from conftest import tree_digest

PAGE = b"<!DOCTYPE html><html><head><title>Harness notes</title></head><body><h1>Harness notes</h1>" \
       b"<p>Each task gets a fresh container.</p></body></html>"


async def _form(pilot) -> ProtocolFormScreen:  # noqa: ANN001 (Textual's Pilot is generic)
    await loaded(pilot)
    await pilot.press("ctrl+e")
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, ProtocolFormScreen)
    return form


async def _pin(pilot, form: ProtocolFormScreen, target: str) -> str:  # noqa: ANN001
    field = form.query_one("#form-pin", Input)
    field.focus()
    field.value = target
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return str(form.query_one("#form-pin-hint", Static).render())


async def test_the_form_pins_a_local_file_and_a_url(bundled: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Reset policy\n\nEvery attempt starts from a clean checkout.\n", encoding="utf-8")
    path = bundled / "protocols" / "webarena" / "protocol.yaml"
    with serve(LocalServer()) as web:
        web.routes["/notes.html"] = answer(200, PAGE)
        async with app_for(bundled).run_test(size=(80, 24)) as pilot:
            form = await _form(pilot)
            hint = await _pin(pilot, form, str(notes))
            assert hint.startswith("Pinned source reset-policy"), hint
            assert "id: reset-policy" in path.read_text(encoding="utf-8")
            hint = await _pin(pilot, form, web.url("/notes.html"))
            assert hint.startswith("Pinned source harness-notes"), hint
            text = path.read_text(encoding="utf-8")
            assert f"final_url: {web.url('/notes.html')}" in text
            titles = [editor.value("title") for editor in form.query(".source-editor")]
            assert titles[-2:] == ["Reset policy", "Harness notes"]
            await pilot.press("ctrl+s")  # saving the form keeps the pinned sources and their snapshots
            await pilot.pause()
            assert not isinstance(pilot.app.screen, ProtocolFormScreen)
    text = path.read_text(encoding="utf-8")
    assert "id: reset-policy" in text and "id: harness-notes" in text and "sha256:" in text


async def test_a_url_that_fails_is_explained_and_nothing_is_written(bundled: Path) -> None:
    before = tree_digest(bundled)
    with serve(LocalServer()) as web:
        async with app_for(bundled).run_test(size=(80, 24)) as pilot:
            form = await _form(pilot)
            hint = await _pin(pilot, form, web.url("/gone"))
            assert hint == f"Not pinned: {web.url('/gone')}: the server answered 404 Not Found", hint
            assert form.query_one("#form-pin-hint", Static).has_class("-invalid")
    assert tree_digest(bundled) == before


async def test_the_source_dialog_says_where_a_source_came_from(bundled: Path) -> None:
    from protocoder.tui.screens import SourceModal

    path = bundled / "protocols" / "webarena" / "protocol.yaml"
    commit = "c" * 40
    path.write_text(path.read_text(encoding="utf-8").replace(
        "    version: ICLR 2024\n    accessed: 2026-08-15\n",
        "    version: ICLR 2024\n    accessed: 2026-08-15\n"
        "    final_url: https://arxiv.org/pdf/2307.13854v4\n    retrieved_at: 2026-12-03T09:30:00Z\n"
        f"    repository: https://github.com/web-arena-x/webarena\n    rev: main\n    commit: {commit}\n"
        "    path: README.md\n", 1), encoding="utf-8")
    async with app_for(bundled).run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, SourceModal)
        assert str(modal.query_one("#source-origin", Static).render()).splitlines() == [
            "read from: https://arxiv.org/pdf/2307.13854v4", "retrieved: 2026-12-03T09:30:00Z",
            "repository: https://github.com/web-arena-x/webarena (main)", f"commit: {commit}", "path: README.md"]
