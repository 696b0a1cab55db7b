"""FieldList: the rubric's fields with coded / incomplete / not-coded markers."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...model import Cell, Rubric

CODED = "✓"
INCOMPLETE = "!"
NOT_CODED = "·"


def marker(cell: Cell | None, rubric: Rubric) -> str:
    """✓ complete, ! coded but missing what the code requires, · not coded."""
    if cell is None or not cell.is_coded:
        return NOT_CODED
    return CODED if cell.is_complete(rubric) else INCOMPLETE


class FieldList(OptionList):
    """The fields of the rubric for one protocol; highlighting one shows it."""

    def show(self, rubric: Rubric, cells: Mapping[str, Cell], current: int) -> None:
        """Show every field with its marker and highlight the current one."""
        self.set_options([Option(self._prompt(rubric, fld.id, cells.get(fld.id)), id=fld.id)
                          for fld in rubric.fields])
        self.highlighted = current

    def update_marker(self, rubric: Rubric, field_id: str, cell: Cell | None) -> None:
        """Refresh one field's marker."""
        self.replace_option_prompt(field_id, self._prompt(rubric, field_id, cell))

    @staticmethod
    def _prompt(rubric: Rubric, field_id: str, cell: Cell | None) -> Text:
        # The code goes before the label: a long label is cut on the right, the code never.
        mark = marker(cell, rubric)
        code = cell.code if cell is not None and cell.code else ""
        width = max((len(c.id) for c in rubric.codes), default=0)
        fld = rubric.field(field_id)
        return Text.assemble((f"{mark} ", "bold"), (f"{code:<{width}} ", "bold"), fld.short or fld.label)
