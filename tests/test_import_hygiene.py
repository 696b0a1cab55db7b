"""The core library never imports Textual or click (the UI and the CLI are thin layers)."""

from __future__ import annotations

import ast
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


FAMILIES = tuple(sorted(path.stem for path in (Path(__file__).resolve().parents[1] / "src" / "protocoder" / "cli")
                        .glob("*.py") if path.stem not in ("__init__", "common")))
"""The command modules (a new one is found here, and must be named in ``cli.COMMANDS``)."""


def _families_loaded_by(command: list[str], cwd: Path) -> list[str]:
    code = ("import sys\nfrom protocoder.cli import main\n"
            f"try:\n    main({command!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m in "
            f"{[f'protocoder.cli.{f}' for f in FAMILIES]!r}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd)
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("command", "family"), [
    (["quote", "list"], ["evidence"]),
    (["find", "--help"], ["finding"]),
    (["validate"], ["reviewing"]),
    (["--version"], []),
], ids=["quote-list", "find-help", "validate", "version"])
def test_a_command_loads_only_its_own_family(bundled: Path, command: list[str], family: list[str]) -> None:
    """A one-shot command imports its own command module, not every family's (``cli.COMMANDS``)."""
    assert _families_loaded_by(command, bundled) == family


def test_help_lists_every_command_and_loads_every_family(bundled: Path) -> None:
    """Guard against a vacuous check: ``--help`` describes every command, so it loads them all."""
    assert _families_loaded_by(["--help"], bundled) == sorted(FAMILIES)


def test_the_command_table_names_every_top_level_command_of_the_families() -> None:
    """A top-level command defined in a family module but missing from ``COMMANDS`` would never
    run; an entry pointing at a missing or misnamed command would fail only when typed."""
    import importlib

    import click

    from protocoder.cli import COMMANDS, main

    defined: dict[str, str] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"protocoder.cli.{family}")
        commands = {name: value for name, value in vars(module).items() if isinstance(value, click.Command)}
        children = {id(child) for value in commands.values() if isinstance(value, click.Group)
                    for child in value.commands.values()}
        defined |= {value.name: f"{family}:{name}" for name, value in commands.items() if id(value) not in children}
    assert defined == COMMANDS
    assert sorted(main.list_commands(click.Context(main))) == sorted(COMMANDS)
    assert all(main.get_command(click.Context(main), name).name == name for name in COMMANDS)


REAL_README = Path(__file__).resolve().parent / "data" / "real-docs" / "alpaca-eval" / "README.md"
"""A published README (see tests/data/real-docs/MANIFEST.md), pinned for the ``find`` checks below."""

BUILDING_ONLY = ("bm25s", "scipy", "numpy", "protocoder.evidence.search.passages",
                 "protocoder.evidence.extract.dispatch", "protocoder.evidence.snapshots")
"""What only building an index needs: bm25s and the scipy and numpy it imports, the cutting into
passages, the extractors, the snapshots (a query against a cached index reads the saved arrays and
JSON with the standard library; numpy comes back only for the semantic extra's vectors). Building
reads the extracted text from the sidecars ``source add`` wrote, and decodes the raw file (``raw_text``,
in the extractors' module) to cut passages at the file's own blank lines."""


def _loaded_by_find(cwd: Path) -> list[str]:
    code = ("import sys\nfrom protocoder.cli import main\n"
            "try:\n    main(['find', '--cell', 'swe-bench/open_work'], standalone_mode=False)\nexcept SystemExit:\n"
            "    pass\n"
            f"print(sorted(m for m in {list(BUILDING_ONLY)!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd)
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_find_with_a_cached_index_imports_nothing_that_builds_one(bundled: Path, cli) -> None:
    """The first ``find`` builds the protocol's index (bm25s, scipy, the snapshots: the check can fail);
    the next one reads the cached index with the standard library, for a one-shot ``find`` that starts fast."""
    import importlib.util

    if importlib.util.find_spec("wordllama") is not None:
        pytest.skip("the semantic extra is installed: its model and vectors need numpy")
    added = cli("source", "add", "swe-bench", REAL_README, "--id", "readme", "--workspace", bundled)
    assert added.exit_code == 0, added.output
    assert _loaded_by_find(bundled) == sorted(BUILDING_ONLY)
    assert _loaded_by_find(bundled) == []


QUOTING_SPARES = ("bibtexparser", "protocoder.evidence.extract.bounded")
"""What ``quote add`` does without, in a workspace whose ``references.bib`` has no entry and whose
source's sidecar is cached: the BibTeX parser and the bounded extraction (its child process)."""
READERS = ("html.parser", "protocoder.evidence.extract.html", "protocoder.evidence.extract.pdf",
           "protocoder.evidence.extract.markdown", "protocoder.evidence.extract.plain")
"""The readers of each media type, which that ``quote add`` of a README's cached sidecar needs none of: it
compares the quote with the raw file's decoded text."""


SEARCH_SPARES = ("difflib", "html")
"""What a ``quote add`` that finds its quote in a README does without: difflib (the closest passage, for a quote
not found) and html (the rarer character references; the README's ``&#40;`` is decoded without it)."""


def _loaded_by_quote_add(workspace: Path, modules: tuple[str, ...] = QUOTING_SPARES) -> list[str]:
    code = ("import sys\nfrom protocoder.cli import main\n"
            f"main(['quote', 'add', '--workspace', {str(workspace)!r}, '--cell', 'lm/open_work', '--reviewer', 'ada',"
            " '--source', 'readme', 'Automatic Evaluator'], standalone_mode=False)\n"
            f"print(sorted(m for m in {list(modules)!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Quoted readme" in result.stdout
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_quote_add_with_a_cached_sidecar_loads_neither_the_bibtex_parser_nor_the_extraction(tmp_path: Path,
                                                                                            cli) -> None:
    """A one-shot ``quote add`` reads the sidecar ``source add`` wrote and an entry-less bibliography without
    their parsers; the check can fail: with the sidecar gone the snapshot is extracted again (in the bounded
    child), and with a new entry in ``references.bib`` the bibliography is parsed (once: the next command
    reads the parse from ``.protocoder/cache/`` until the file changes again)."""
    from protocoder.evidence.snapshots import sidecar_file
    from protocoder.storage.paths import Paths

    workspace = tmp_path / "ws"
    for args in (("init", workspace), ("protocol", "add", "--id", "lm", "--name", "LM", "--workspace", workspace),
                 ("source", "add", "lm", REAL_README, "--id", "readme", "--workspace", workspace)):
        done = cli(*args)
        assert done.exit_code == 0, done.output
    assert _loaded_by_quote_add(workspace, QUOTING_SPARES + READERS + SEARCH_SPARES) == []

    def unquote() -> None:
        assert cli("quote", "remove", "--workspace", workspace, "--cell", "lm/open_work", "--reviewer", "ada",
                   "Automatic Evaluator").exit_code == 0

    unquote()
    for sidecar in (workspace / "sources").glob("*.text.json"):
        assert sidecar == sidecar_file(Paths(workspace), sidecar.name.split(".")[0])
        sidecar.unlink()
    with (workspace / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write("@misc{lm, title = {LM}, year = {2024}}\n")
    assert _loaded_by_quote_add(workspace) == sorted(QUOTING_SPARES)
    unquote()
    assert "bibtexparser" not in _loaded_by_quote_add(workspace), "the parse is read from the cache"
    unquote()
    with (workspace / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write("@misc{lm2, title = {LM 2}, year = {2025}}\n")
    assert "bibtexparser" in _loaded_by_quote_add(workspace), "a changed file is parsed again"


def test_packages_load_their_names_lazily_with_the_one_helper() -> None:
    """Issue 34: a package that loads its names on first use does it with ``_lazy.lazy_names``; no
    package writes its own module ``__getattr__`` (four copies of it had drifted apart)."""
    src = Path(__file__).resolve().parent.parent / "src" / "protocoder"
    own = [str(path.relative_to(src)) for path in sorted(src.rglob("*.py")) if path.parent.name != "compiled"
           and path.name != "_lazy.py"
           and any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
                   for node in ast.parse(path.read_text(encoding="utf-8")).body)]
    assert own == []
    import protocoder.render
    import protocoder.storage

    assert protocoder.storage.Store.__name__ == "Store" and protocoder.render.render_view.__name__ == "render_view"


def test_a_one_cell_save_loads_no_temporary_file_module(tmp_path: Path, cli) -> None:
    """Atomic writes make their temporary beside the file themselves (``files.new_temporary``): a one-cell
    save such as ``quote add`` imports neither tempfile nor the shutil and random it loads (about 4 ms)."""
    workspace = tmp_path / "ws"
    for args in (("init", workspace), ("protocol", "add", "--id", "lm", "--name", "LM", "--workspace", workspace),
                 ("source", "add", "lm", REAL_README, "--id", "readme", "--workspace", workspace)):
        done = cli(*args)
        assert done.exit_code == 0, done.output
    assert _loaded_by_quote_add(workspace, ("tempfile", "shutil", "random")) == []
