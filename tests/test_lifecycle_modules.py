"""Issue 25, the lifecycle part: one entry point, and no import cycle among the lifecycle's
modules (imports inside functions count too: a cycle hidden in a function is still one)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import protocoder.lifecycle

PACKAGE = Path(protocoder.lifecycle.__file__).parent


def lifecycle_imports() -> dict[str, set[str]]:
    """Module → the lifecycle modules it imports, anywhere in its code."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        name = path.stem
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 2 and node.module == "lifecycle":
                found |= {alias.name for alias in node.names}
        graph[name] = {module for module in found if (PACKAGE / f"{module}.py").exists()} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append([*trail[trail.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_import_cycle_between_lifecycle_modules() -> None:
    graph = lifecycle_imports()
    assert "history" in graph and "adjudication" in graph
    assert cycles(graph) == [], cycles(graph)
    assert "adjudication" not in graph["history"] and "amend" not in graph["history"], \
        "reading the history imports nothing that writes it"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_one_entry_point_loaded_on_first_use() -> None:
    code = ("import sys, protocoder.lifecycle as l\n"
            "assert not [m for m in sys.modules if m.startswith('protocoder.lifecycle.')], sys.modules\n"
            "from protocoder.lifecycle import adjudicate, correct, freeze, recheck, withdraw\n"
            "from protocoder.lifecycle.amend import correct as c\n"
            "from protocoder.lifecycle.releases import freeze as f\n"
            "from protocoder.lifecycle.recheck import recheck as r\n"
            "assert recheck is r and l.recheck is r, l.recheck\n"
            "assert correct is c and freeze is f and sorted(l.__all__) == "
            "['adjudicate', 'correct', 'freeze', 'recheck', 'withdraw']\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
