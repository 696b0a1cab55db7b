"""The core library never imports Textual or click (the UI and the CLI are thin layers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _core_modules() -> list[str]:
    """Every module of the package except the apps (``tui``) and the command line."""
    import pkgutil

    import protocoder

    names = ["protocoder"]
    for info in pkgutil.walk_packages(protocoder.__path__, "protocoder."):
        if info.name.startswith(("protocoder.tui", "protocoder.cli", "protocoder.__main__")):
            continue
        if info.name.startswith("protocoder.render.compiled.t_"):
            continue  # template code, run by Jinja in a namespace holding its environment (imports only jinja2)
        names.append(info.name)
    return names


CORE_MODULES = _core_modules()


def test_core_modules_do_not_import_textual_or_click() -> None:
    code = ("import importlib, sys\n"
            f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
            "print(sorted(m for m in ('textual', 'click', 'rich', 'textual_serve', 'aiohttp') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_check_can_fail() -> None:
    """Guard against a vacuous hygiene test: importing the CLI does load click."""
    code = "import sys, protocoder.cli; print('click' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


def test_the_command_line_loads_the_web_server_only_for_serve() -> None:
    """``protocoder serve`` needs aiohttp; every other command starts without it."""
    code = ("import sys, protocoder.cli; import protocoder.tui.app\n"
            "print(sorted(m for m in ('textual_serve', 'aiohttp') if m in sys.modules))\n"
            "import protocoder.tui.serve; print('textual_serve' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["[]", "True"]


@pytest.mark.parametrize("command", [["--version"], ["validate"], ["status"]], ids=lambda c: c[0].lstrip("-"))
def test_commands_that_never_render_do_not_load_the_renderer(bundled: Path, command: list[str]) -> None:
    """``--version``, ``validate`` and ``status`` import neither Jinja2 nor the renderer's modules
    (``protocoder.render`` itself, which holds only constants, may be imported)."""
    code = ("import sys\nfrom protocoder.cli import main\n"
            f"try:\n    main({command!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'markupsafe', 'markdown_it')"
            " or m.startswith('protocoder.render.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=bundled)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_renderer_check_can_fail(bundled: Path) -> None:
    """Guard against a vacuous check: rendering does load Jinja2 and the renderer."""
    code = ("import sys\nfrom protocoder.cli import main\n"
            "main(['render', '--out', 'out', '--format', 'md'], standalone_mode=False)\n"
            "print('jinja2' in sys.modules, 'protocoder.render.files' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=bundled)
    assert result.stdout.strip().splitlines()[-1] == "True True"
