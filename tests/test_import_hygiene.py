"""The core library never imports Textual or click (the UI and the CLI are thin layers)."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "protocoder", "protocoder.model", "protocoder.errors", "protocoder.yamlio", "protocoder.formats",
    "protocoder.workspace", "protocoder.bibliography", "protocoder.store", "protocoder.consensus",
    "protocoder.view", "protocoder.escape", "protocoder.render", "protocoder.exchange",
    "protocoder.publish", "protocoder.agreement", "protocoder.coding_agreement", "protocoder.scaffold",
    "protocoder.identity",
]


def test_core_modules_do_not_import_textual_or_click() -> None:
    code = ("import importlib, sys\n"
            f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
            "print(sorted(m for m in ('textual', 'click', 'rich') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_check_can_fail() -> None:
    """Guard against a vacuous hygiene test: importing the CLI does load click."""
    code = "import sys, protocoder.cli; print('click' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"
