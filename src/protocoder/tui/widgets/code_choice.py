"""CodeChoice: the codes a field allows, with their definitions; digits pick one."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...model import Code


class CodeChoice(OptionList):
    """The allowed codes of one field; the chosen one is marked ●.

    Enter, a click or the digit key of a code posts :class:`CodeChoice.Picked`; the
    screen decides what to do with it (attributes down: :meth:`show`).
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

    def show(self, codes: tuple[Code, ...], chosen: str | None) -> None:
        """Show these codes with ``chosen`` marked and highlighted."""
        self.codes = codes
        self.chosen = chosen
        self.set_options([Option(self._prompt(number, code), id=code.id)
                          for number, code in enumerate(codes, 1)])
        ids = [code.id for code in codes]
        self.highlighted = ids.index(chosen) if chosen in ids else 0

    def mark(self, chosen: str | None) -> None:
        """Mark ``chosen`` without rebuilding the list."""
        self.chosen = chosen
        for number, code in enumerate(self.codes, 1):
            self.replace_option_prompt(code.id, self._prompt(number, code))

    def _prompt(self, number: int, code: Code) -> Text:
        mark = "●" if code.id == self.chosen else "○"
        return Text.assemble(f"{number} {mark} ", (f"{code.id} {code.label}", "bold"), ": ",
                             (code.definition, "dim"))

    def pick(self, number: int) -> bool:
        """Pick the code numbered ``number`` (1-based); False when there is none."""
        if not 1 <= number <= len(self.codes):
            return False
        self.highlighted = number - 1
        self.post_message(self.Picked(self, self.codes[number - 1].id))
        return True

    def action_clear_code(self) -> None:
        self.post_message(self.Picked(self, None))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Picked(self, event.option.id))
