"""CitationsField: citation keys with completion from the bibliography, unknown keys flagged."""

from __future__ import annotations

import bisect

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.suggester import Suggester
from textual.widgets import Input, Static

from ..session import split_cites
from .text_inputs import TextLine


class KeySuggester(Suggester):
    """Completes the last key typed (``zhou2024webarena, ali`` → ``…, aliyev2024``)."""

    def __init__(self, keys: list[str]) -> None:
        # No cache: the list is shared with the session and grows when references are added.
        super().__init__(use_cache=False, case_sensitive=True)
        self.keys = keys

    async def get_suggestion(self, value: str) -> str | None:
        start = max(value.rfind(sep) for sep in ", ;") + 1
        token = value[start:]
        if not token:
            return None
        index = bisect.bisect_left(self.keys, token)
        if index < len(self.keys) and self.keys[index].startswith(token) and self.keys[index] != token:
            return value[:start] + self.keys[index]
        return None


class CitationsField(Vertical):
    """An input for citation keys and a line that names keys not in ``references.bib``."""

    def __init__(self, keys: list[str], *, input_id: str, placeholder: str = "keys, comma-separated",
                 compact: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.keys = keys
        self._input_id = input_id
        self._placeholder = placeholder
        self._compact = compact

    def compose(self) -> ComposeResult:
        yield TextLine(id=self._input_id, placeholder=self._placeholder, suggester=KeySuggester(self.keys),
                       compact=self._compact)
        yield Static("", classes="cite-hint")

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    @property
    def cites(self) -> tuple[str, ...]:
        """The keys typed, each once."""
        return split_cites(self.input.value)

    def unknown(self) -> list[str]:
        """Typed keys that are not in the bibliography."""
        known = set(self.keys)
        return [key for key in self.cites if key not in known]

    def check(self) -> None:
        """Refresh the line under the input."""
        unknown = self.unknown()
        hint = self.query_one(".cite-hint", Static)
        hint.update(f"not in references.bib: {', '.join(unknown)}" if unknown else "")
        hint.set_class(bool(unknown), "-unknown")
        hint.display = bool(unknown)  # no empty line under the input while every key is known

    def on_input_changed(self, event: Input.Changed) -> None:
        # Let the screen see the change too (it saves); only refresh the hint here.
        self.check()
