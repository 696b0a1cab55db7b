"""The README's first steps in a new workspace run as written, and the manual's tables read right.

Every line of the README's workspace block runs in a fresh folder through the installed
``protocoder`` command, in order (the coding app, which needs a terminal, is left out),
with the ``refs.bib`` and ``README.md`` its lines name written first.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from mkdocs_hooks import unescape_table_pipes  # noqa: E402


def readme_flow() -> list[str]:
    """The command lines of the README's block that starts with ``protocoder init``."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = next(b for b in readme.split("```sh\n")[1:] if b.startswith("protocoder init"))
    return [line.split("  #", 1)[0].strip() for line in block.split("```", 1)[0].splitlines() if line.strip()]


def test_the_readme_flow_runs_in_a_new_workspace(tmp_path: Path) -> None:
    lines = readme_flow()
    assert any(line.startswith("protocoder protocol add") for line in lines), "the flow adds its protocol"
    entry = re.search(r"@\w+\{jimenez2024swebench,.*?\n\}", (REPO / "references.bib").read_text(encoding="utf-8"),
                      re.S)
    assert entry is not None
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "PROTOCODER_REVIEWER": "ada"}
    if shutil.which("protocoder", path=env["PATH"]) is None:
        pytest.skip("the protocoder console script is not installed")
    cwd = tmp_path
    for line in lines:
        if line.startswith("protocoder code"):
            continue  # the coding app needs a terminal
        if line.startswith("protocoder init"):
            first, _, then = line.partition(" && ")
            result = subprocess.run(first, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
            assert result.returncode == 0, (line, result.stderr)
            cwd = cwd / then.removeprefix("cd ").strip()
            (cwd / "refs.bib").write_text(entry.group(0) + "\n", encoding="utf-8")
            shutil.copy(REPO / "tests" / "data" / "real-docs" / "alpaca-eval" / "README.md", cwd / "README.md")
            continue
        result = subprocess.run(line, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
        assert result.returncode == 0, (line, result.stderr)
    assert (cwd / "output" / "summary.md").is_file()


def test_table_code_spans_show_a_bare_pipe_on_the_site() -> None:
    page = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert "`protocoder render [--format md\\|latex" in page, "GitHub needs the escape in the page"
    site = unescape_table_pipes(page)
    assert "`protocoder render [--format md|latex|html|all]" in site
    assert "\\|" not in "".join(line for line in site.splitlines() if line.startswith("|"))
    # outside a code span, and outside a table, the text is left alone
    assert unescape_table_pipes("| a \\| b | `x\\|y` |\nnot `a\\|b`") == "| a \\| b | `x|y` |\nnot `a\\|b`"


def test_the_built_site_has_no_escaped_pipe_in_code(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[test]' installs it)")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                            cwd=REPO, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "commands" / "index.html").read_text(encoding="utf-8")
    assert "<code>protocoder render [--format md|latex|html|all]" in html
    assert re.findall(r"<code>[^<]*\\\|[^<]*</code>", html) == []
