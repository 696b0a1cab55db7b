"""Widgets of the coding app."""

from .cell_editor import CellEditor
from .citations import CitationsField, KeySuggester
from .code_choice import CodeChoice, code_keys
from .field_list import FieldList
from .footer import AppFooter
from .progress import OverallProgress
from .rubric_guide import RubricGuide
from .rubric_text import RubricText, render_markdown
from .save_indicator import SaveIndicator
from .source_list import SourceList
from .text_inputs import TextBox, TextLine

__all__ = [
    "AppFooter",
    "CellEditor",
    "CitationsField",
    "CodeChoice",
    "FieldList",
    "KeySuggester",
    "OverallProgress",
    "RubricGuide",
    "RubricText",
    "SaveIndicator",
    "SourceList",
    "TextBox",
    "TextLine",
    "code_keys",
    "render_markdown",
]
