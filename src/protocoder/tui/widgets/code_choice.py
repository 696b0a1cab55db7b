"""CodeChoice: the codes a field allows, each with the key that picks it; the chosen one is marked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...model import Code

KEY_ORDER = "1234567890"
"""Keys handed out by position, in the order they sit on a keyboard."""


def code_keys(code_ids: Sequence[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """The digit key of each code: ``{key: code id}``.

    When some code ids are themselves single digits (a rubric scored ``2``, ``1``, ``0``),
    each of those is its own key, so that pressing ``1`` never picks code ``2``; the other
    codes get the digits left over, skipping ``reserved`` ones (the rubric's other digit
    codes: ``2`` never picks ``NA`` in a field that happens not to allow code ``2``).
    Otherwise codes are numbered 1, 2, … by position. A field with more than ten codes
    leaves the rest to the arrow keys and enter.
    """
    keys: dict[str, str] = {code: code for code in code_ids if len(code) == 1 and code.isdigit()}
    taken = set(keys) | {key for key in reserved if key not in code_ids}
    spare = (key for key in KEY_ORDER if key not in taken)
    for code in code_ids:
        if code in keys:
            continue
        key = next(spare, None)
        if key is None:
            break
        keys[key] = code
    return {key: keys[key] for key in sorted(keys, key=KEY_ORDER.index)}


class CodeChoice(OptionList):
    """The allowed codes of one field, one per line: ``[1] ● E  Explicit  definition…``.

    The bracketed key picks the code (see :func:`code_keys`); enter or a click picks the
    highlighted one. Either posts :class:`CodeChoice.Picked`, and the screen decides what
    to do with it (attributes down: :meth:`show`, :meth:`mark`).
    """

    BINDINGS = [
        Binding("delete", "clear_code", "Clear code", show=False, id="coding.clear_code"),
    ]

    @dataclass
    class Picked(Message):
        """The reviewer picked a code (None: cleared it)."""

        choice: CodeChoice
        code: str | None

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.codes: tuple[Code, ...] = ()
        self.chosen: str | None = None
        self.keys: dict[str, str] = {}
        """``{key: code id}`` for the codes shown."""

    def show(self, codes: tuple[Code, ...], chosen: str | None, *, reserved: Iterable[str] = ()) -> None:
        """Show these codes with ``chosen`` marked and highlighted.

        ``reserved``: code ids of the whole rubric, so that no code gets another code's digit as its key.
        """
        self.codes = codes
        self.chosen = chosen
        self.keys = code_keys([code.id for code in codes], reserved)
        self.set_options([Option(self._prompt(code), id=code.id) for code in codes])
        ids = [code.id for code in codes]
        self.highlighted = ids.index(chosen) if chosen in ids else (0 if codes else None)

    def mark(self, chosen: str | None) -> None:
        """Mark ``chosen`` without rebuilding the list."""
        self.chosen = chosen
        for code in self.codes:
            self.replace_option_prompt(code.id, self._prompt(code))

    def key_of(self, code_id: str) -> str | None:
        """The key that picks ``code_id``, if it has one."""
        return next((key for key, code in self.keys.items() if code == code_id), None)

    @property
    def key_hint(self) -> str:
        """The keys of the codes shown, in their order, for prompts: ``1–4`` or ``2, 1, 0``."""
        keys = [key for key in (self.key_of(code.id) for code in self.codes) if key is not None]
        if not keys:
            return "enter"
        digits = [int(k) for k in keys]
        if len(keys) > 2 and digits == list(range(digits[0], digits[0] + len(digits))):
            return f"{keys[0]}–{keys[-1]}"
        return ", ".join(keys)

    def _prompt(self, code: Code) -> Text:
        key = self.key_of(code.id)
        width = max((len(c.id) for c in self.codes), default=0)
        mark = "●" if code.id == self.chosen else "○"
        return Text.assemble((f"[{key}]" if key else "   ", "bold"), f" {mark} ",
                             (f"{code.id:<{width}}  {code.label}", "bold"), "  ", (code.definition, "dim"))

    def pick_key(self, key: str) -> bool:
        """Pick the code whose key is ``key``; False when no code has it."""
        code_id = self.keys.get(key)
        if code_id is None:
            return False
        self.highlighted = [code.id for code in self.codes].index(code_id)
        self.post_message(self.Picked(self, code_id))
        return True

    def action_clear_code(self) -> None:
        self.post_message(self.Picked(self, None))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Picked(self, event.option.id))
