"""Widgets of the coding app."""

from .citations import CitationsField, KeySuggester
from .code_choice import CodeChoice
from .field_list import FieldList
from .progress import OverallProgress
from .rubric_text import RubricText, render_markdown
from .save_indicator import SaveIndicator

__all__ = [
    "CitationsField",
    "CodeChoice",
    "FieldList",
    "KeySuggester",
    "OverallProgress",
    "RubricText",
    "SaveIndicator",
    "render_markdown",
]
