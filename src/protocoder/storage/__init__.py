"""The storage layer: every byte protocoder reads from or writes to a workspace.

The flow, one module per step::

    yamlio     bytes ⇄ YAML: capped reads, safe parsing with line numbers, atomic writes, locks
    formats    YAML data → model objects (rubric, protocols, reviewer sheets, adjudications),
               each problem pinned to its file, line and column
    workspace  the folder layout (:class:`Paths`) and :func:`load_review`, which reads a
               whole workspace into a :class:`Review` and never raises for bad content
    store      :class:`Store`, the only writer: the CLI, the apps and import all save through it

Everything above this layer (lifecycle, agreement, render, the apps) sees model objects,
never YAML or file paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import Store
    from .workspace import Paths, Review, load_review, open_workspace

__all__ = ["Paths", "Review", "Store", "load_review", "open_workspace"]

_EXPORTS = {"Paths": "workspace", "Review": "workspace", "load_review": "workspace",
            "open_workspace": "workspace", "Store": "store"}


def __getattr__(name: str) -> Any:
    # Lazy, so that importing one storage module does not import them all.
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
