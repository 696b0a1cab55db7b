"""The data path runs one way: the layers of ``src/protocoder``, listed once, and no import cycle.

The source is read with :mod:`ast`, never imported, so that every import counts: at module
level, inside a function, inside ``try`` or ``if``, and under ``if TYPE_CHECKING:`` (an
annotation that names a higher layer's class is a dependency on it, and two modules that
name each other's classes for typing are one idea split in two, or need an interface in a
lower module). The one exception: a package's ``__init__`` may name its own submodules'
functions under ``TYPE_CHECKING`` when it loads them on first use (PEP 562), which gives
those names their types without importing anything.

The same checks keep the rest of the house in order: no module imports another module's
private name (``from .cleaning import _first_line``: a helper shared by siblings gets a
public name), no module grows past :data:`MAX_LINES`, and the benchmarks (flat scripts that
import one another) have no import cycle either.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src"
BENCHMARKS = REPO / "benchmarks"

MAX_LINES = 500
"""The most lines a module may have: past that it holds two ideas (split it along them)."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # lowest first; a module may import from its own layer and the layers before it, never after
    ("base", ("protocoder", "protocoder.errors", "protocoder._interrupt", "protocoder.background",
              "protocoder.schemas")),
    ("model", ("protocoder.model",)),
    ("storage", ("protocoder.storage", "protocoder.identity", "protocoder.scaffold",
                 "protocoder.team")),
    ("lifecycle", ("protocoder.lifecycle",)),
    ("analysis", ("protocoder.agreement", "protocoder.coding_agreement", "protocoder.evidence",
                  "protocoder.render")),
    ("publish", ("protocoder.publish", "protocoder.exchange", "protocoder.interop")),
    ("apps", ("protocoder.tui",)),
    ("command line", ("protocoder.cli", "protocoder.__main__")),
)
"""The layers, from the model up to the command line that starts everything."""


@dataclass(frozen=True)
class Import:
    """One import statement's target inside the package."""

    source: str
    target: str
    line: int
    type_checking: bool


def module_name(path: Path, root: Path = SOURCE) -> str:
    """``src/protocoder/storage/files.py`` → ``protocoder.storage.files`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root: Path = SOURCE) -> dict[str, Path]:
    """Every module of the package by name, without the generated code of the built-in templates."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        if path.parent.name == "compiled" and path.name.startswith("t_"):
            continue  # Jinja2's code for a template: imports only jinja2, run in the template's namespace
        modules[module_name(path, root)] = path
    return modules


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The line numbers of every statement under an ``if TYPE_CHECKING:``."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    """The package modules ``name`` imports: ``from .x import y`` is module ``x.y`` if there is one, else ``x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    guarded = _type_checking_lines(tree)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in modules else prefix
                       for alias in node.names]
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target != name:
                yield Import(name, target, node.lineno, node.lineno in guarded)


def layer_of(name: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix that names the module's package."""
    best, best_length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def all_imports(modules: dict[str, Path]) -> list[Import]:
    """Every import between the package's modules."""
    return [found for name, path in modules.items() for found in imports_of(name, path, modules)]


def upward_imports(modules: dict[str, Path], root: Path = SOURCE) -> list[str]:
    """Each import from a lower layer to a higher one, as ``file:line: a (layer) imports b (layer)``."""
    problems = []
    for found in all_imports(modules):
        source_layer, target_layer = layer_of(found.source), layer_of(found.target)
        if target_layer > source_layer:
            problems.append(f"{modules[found.source].relative_to(root).as_posix()}:{found.line}: {found.source} "
                            f"({LAYERS[source_layer][0]}) imports {found.target} ({LAYERS[target_layer][0]})")
    return problems


def _lazy_facade(found: Import, modules: dict[str, Path]) -> bool:
    """A package's ``__init__`` naming its own submodule under ``TYPE_CHECKING`` (a PEP 562 facade)."""
    return (found.type_checking and modules[found.source].name == "__init__.py"
            and found.target.startswith(found.source + "."))


def import_cycles(modules: dict[str, Path]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan's
    algorithm); imports for typing count, but for a package's lazy facade (:func:`_lazy_facade`)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for found in all_imports(modules):
        if not _lazy_facade(found, modules):
            graph[found.source].add(found.target)
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so that a deep chain of imports cannot hit the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = lowest[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = lowest[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    lowest[node] = min(lowest[node], index[successor])
            else:
                work.pop()
                if work:
                    lowest[work[-1][0]] = min(lowest[work[-1][0]], lowest[node])
                if lowest[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def private_imports(modules: dict[str, Path], root: Path = SOURCE) -> list[str]:
    """Each import of another module's private name, as ``file:line: a imports _name from b``."""
    problems = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                source = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source not in modules or source == name:
                continue  # outside the package (a library's private name is its own business)
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{source}.{alias.name}" not in modules:  # a private *module* may be imported
                    problems.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {name} imports "
                                    f"{alias.name} from {source}")
    return problems


def long_modules(modules: dict[str, Path], limit: int = MAX_LINES) -> list[str]:
    """Each module past ``limit`` lines, as ``name: N lines``."""
    counts = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules.items()}
    return [f"{name}: {count} lines" for name, count in sorted(counts.items()) if count > limit]


def flat_modules(folder: Path) -> dict[str, Path]:
    """The scripts of a folder that import each other by name (``benchmarks/``): name → path."""
    return {path.stem: path for path in sorted(folder.glob("*.py"))}


MODULES = package_modules()


def test_every_module_has_a_layer() -> None:
    """A new top-level module or package must be placed in :data:`LAYERS` before it can be imported."""
    assert [name for name in MODULES if layer_of(name) < 0] == []


def test_no_import_runs_up_the_layers() -> None:
    assert upward_imports(MODULES) == []


def test_no_import_cycle_between_modules() -> None:
    assert import_cycles(MODULES) == []


def test_no_import_cycle_between_the_benchmarks() -> None:
    benchmarks = flat_modules(BENCHMARKS)
    assert "run" in benchmarks
    assert import_cycles(benchmarks) == []
    assert private_imports(benchmarks, BENCHMARKS) == []


def test_no_module_imports_another_modules_private_name() -> None:
    assert private_imports(MODULES) == []


def test_no_module_is_longer_than_the_limit() -> None:
    assert long_modules(MODULES) == []


def _write_package(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package_modules(root)


def test_the_layer_check_can_fail(tmp_path: Path) -> None:
    """A storage module that imports the lifecycle inside a function is caught, with its line."""
    modules = _write_package(tmp_path, {
        "protocoder/__init__.py": "",
        "protocoder/model.py": "",
        "protocoder/storage/__init__.py": "",
        "protocoder/storage/store.py": "from ..model import x\n\ndef f():\n    from ..lifecycle import consensus\n",
        "protocoder/lifecycle/__init__.py": "",
        "protocoder/lifecycle/consensus.py": "from protocoder.storage.store import f\n",
    })
    assert upward_imports(modules, tmp_path) == [
        "protocoder/storage/store.py:4: protocoder.storage.store (storage) imports "
        "protocoder.lifecycle.consensus (lifecycle)"]


def test_the_cycle_check_can_fail(tmp_path: Path) -> None:
    """A loop of three modules is one cycle; the same loop closed only under TYPE_CHECKING is none."""
    loop = {
        "protocoder/__init__.py": "",
        "protocoder/lifecycle/__init__.py": "",
        "protocoder/lifecycle/a.py": "from . import b\n",
        "protocoder/lifecycle/b.py": "from .c import thing\n",
    }
    modules = _write_package(tmp_path / "runtime", {**loop,
                                                    "protocoder/lifecycle/c.py": "import protocoder.lifecycle.a\n"})
    assert import_cycles(modules) == [["protocoder.lifecycle.a", "protocoder.lifecycle.b", "protocoder.lifecycle.c"]]
    modules = _write_package(tmp_path / "typing", {**loop, "protocoder/lifecycle/c.py": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n")})
    assert import_cycles(modules) == [["protocoder.lifecycle.a", "protocoder.lifecycle.b", "protocoder.lifecycle.c"]]


def test_a_lazy_facade_is_no_cycle_but_a_typing_ring_is(tmp_path: Path) -> None:
    """A package naming its submodule for typing (PEP 562) is none; a screen naming its app for typing,
    while the app imports the screen, is one."""
    modules = _write_package(tmp_path, {
        "protocoder/__init__.py": "",
        "protocoder/render/__init__.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                          "    from .files import render_view\n"),
        "protocoder/render/files.py": "from . import FORMATS\n",
        "protocoder/tui/__init__.py": "",
        "protocoder/tui/app.py": "from .screens.coding import CodingScreen\n",
        "protocoder/tui/screens/__init__.py": "",
        "protocoder/tui/screens/coding.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                             "    from ..app import CoderApp\n"),
    })
    assert import_cycles(modules) == [["protocoder.tui.app", "protocoder.tui.screens.coding"]]


def test_the_benchmark_cycle_check_can_fail(tmp_path: Path) -> None:
    """Two scripts that import each other (run.py's constant, bench_agreement.py's generator) are a cycle."""
    (tmp_path / "run.py").write_text("def part():\n    from bench_agreement import generate\n", encoding="utf-8")
    (tmp_path / "bench_agreement.py").write_text("from run import KRIPPENDORFF\n", encoding="utf-8")
    assert import_cycles(flat_modules(tmp_path)) == [["bench_agreement", "run"]]


def test_the_private_name_check_can_fail(tmp_path: Path) -> None:
    """A sibling's private helper is caught, with its line; a private module, a module's own names
    and a library's private names are not."""
    modules = _write_package(tmp_path, {
        "protocoder/__init__.py": "",
        "protocoder/evidence/__init__.py": "",
        "protocoder/evidence/cleaning.py": "def _first_line(text):\n    return text\n",
        "protocoder/evidence/html.py": ("from ._private import helper\nfrom re import _compile\n"
                                        "from .cleaning import _first_line, clean\n"),
        "protocoder/evidence/_private.py": "from . import _private\n",
    })
    assert private_imports(modules, tmp_path) == [
        "protocoder/evidence/html.py:3: protocoder.evidence.html imports _first_line from protocoder.evidence.cleaning"]


def test_the_size_check_can_fail(tmp_path: Path) -> None:
    modules = _write_package(tmp_path, {"protocoder/__init__.py": "", "protocoder/big.py": "x = 1\n" * 501,
                                        "protocoder/small.py": "x = 1\n" * 500})
    assert long_modules(modules) == ["protocoder.big: 501 lines"]
