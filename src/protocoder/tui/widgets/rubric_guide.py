"""RubricGuide: a field's definition and guidance, and what each of its codes means and requires."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll

from ...model import Field, Rubric
from .rubric_text import RubricText

REQUIREMENT_LABELS = {"source": "a source location", "basis": "a basis", "cites": "citations"}


def requirement_text(names: tuple[str, ...]) -> str:
    """``("source", "basis")`` → ``a source location, a basis``."""
    return ", ".join(REQUIREMENT_LABELS.get(name, name) for name in names)


def guide_markdown(rubric: Rubric, fld: Field) -> str:
    """The guide of one field as Markdown: definition, guidance, then every allowed code."""
    parts = [f"**{fld.label}**"]
    if fld.definition:
        parts.append(f"*Definition.* {fld.definition}")
    if fld.guidance:
        parts.append(fld.guidance)
    parts.append("**Codes**")
    for code_id in fld.codes:
        code = rubric.code(code_id)
        text = f"`{code.id}` **{code.label}**: {code.definition}"
        if code.guidance:
            text += f" {code.guidance}"
        if code.requires:
            text += f" *Requires {requirement_text(code.requires)}.*"
        parts.append(text)
    return "\n\n".join(parts)


class RubricGuide(VerticalScroll):
    """Scrollable rubric text for the field being coded; lives in the coding screen's side pane."""

    def compose(self) -> ComposeResult:
        yield RubricText(id="field-guidance")

    def show(self, rubric: Rubric, fld: Field) -> None:
        """Show ``fld``'s guide from the top."""
        self.query_one("#field-guidance", RubricText).show(guide_markdown(rubric, fld))
        self.scroll_home(animate=False)
