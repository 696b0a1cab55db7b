"""The manual (docs/, built with MkDocs) stays true to the code: the site builds with
``--strict``, its command table names exactly the commands there are, and the command
reference generated from the click commands documents every one of them."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from protocoder.cli import main

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every command the command line has, as typed after ``protocoder`` (``source add``)."""
    paths: set[str] = set()
    for name, command in group.commands.items():
        if command.hidden:
            continue
        if isinstance(command, click.Group):
            paths |= command_paths(command, (*prefix, name))
        else:
            paths.add(" ".join((*prefix, name)))
    return paths


def table_commands(page: Path) -> set[str]:
    """The commands the first column of the page's "At a glance" table names."""
    text = page.read_text(encoding="utf-8")
    table = text.split("## At a glance", 1)[1].split("\n## ", 1)[0]
    first_column = [line.split(" | ", 1)[0] for line in table.splitlines() if line.startswith("| `")]
    # `protocoder source add PROTOCOL FILE [--id ID]` → "source add": the words before the arguments
    return {re.split(r" (?=[A-Z\[\-\"'(])", usage)[0]
            for column in first_column for usage in re.findall(r"`protocoder ([^`]*)`", column)}


def test_the_command_table_names_every_command_and_no_other() -> None:
    documented = table_commands(DOCS / "commands.md")
    assert command_paths() - documented == set(), "commands missing from docs/commands.md"
    assert documented - command_paths() == set(), "docs/commands.md names commands that do not exist"


def test_the_table_check_can_fail(tmp_path: Path) -> None:
    page = tmp_path / "commands.md"
    page.write_text("# Commands\n\n## At a glance\n\n| command | what |\n|---|---|\n"
                    "| `protocoder render [--format md]` | tables |\n| `protocoder source frobnicate X` | nothing |\n",
                    encoding="utf-8")
    assert table_commands(page) == {"render", "source frobnicate"}
    assert "source frobnicate" not in command_paths() and "validate" in command_paths()


def nav_files(config: str) -> list[str]:
    """The page files the mkdocs.yml nav lists."""
    return re.findall(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*$", config, flags=re.MULTILINE)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    listed = nav_files((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as .ci/run builds it (``--strict``: a broken link or a missing page fails)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[test]' installs it)")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                            cwd=REPO, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    return out


def test_the_site_builds_strict_with_a_reference_of_every_command(site: Path) -> None:
    html = (site / "commands" / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<h[2-6] id="(protocoder-[a-z0-9-]+)"', html))
    for path in command_paths():
        assert f"protocoder-{path.replace(' ', '-')}" in anchors, f"no reference section for {path}"
    # the reference carries each command's own help text, not a copy
    assert main.commands["validate"].help.split("\n")[0].strip()[:40] in html.replace("\n", " ")


def test_the_readmes_links_lead_to_files_that_exist() -> None:
    """The README points into docs/ for everything it no longer says itself."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = [target.split("#", 1)[0] for target in re.findall(r"\]\(([^)\s]+)\)", readme)
               if "://" not in target]
    assert targets, "the README links into the manual"
    assert [t for t in targets if not (REPO / t).exists()] == []


def test_the_quick_start_is_two_commands_and_ci_runs_them() -> None:
    """The README's quick start (repeated on the manual's home page) is what .ci/run runs."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["pip install -e '.[test]' && protocoder render", "pytest"]
    assert block in (DOCS / "index.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -q -e '.[test]' && protocoder render" in ci and "\npytest\n" in ci
