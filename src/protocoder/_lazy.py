"""Package names imported from their submodule on first use (PEP 562), so that a one-shot command
loads only what it runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any], table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps each name to the submodule defining it.

    The first look-up imports the submodule and binds the name in ``namespace`` (the package's
    globals), over a submodule of the same name that the import may have bound there.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    return __getattr__
