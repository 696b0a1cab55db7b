"""RubricText: the rubric's Markdown (questions, guidance) in one widget, in the theme's colours.

Textual's ``Markdown`` widget mounts a widget per block, which made moving between
fields cost ~25 ms; Rich's ``Markdown`` paints lists and code in fixed ANSI colours. This
renders the small Markdown a rubric uses (paragraphs, emphasis, code, links, headings,
nested lists with hanging indents, code blocks, quotes) into Rich ``Text`` and grids,
styled from the current theme's variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.color import Color
from textual.widgets import Static

_PARSER = MarkdownIt("commonmark")


def _colour(variables: Mapping[str, str], name: str) -> str | None:
    value = variables.get(name)
    if not value:
        return None
    try:
        return Color.parse(value).hex
    except Exception:  # "auto 60%" and the like: leave the widget's own colour
        return None


def _styles(variables: Mapping[str, str]) -> dict[str, Style]:
    accent = _colour(variables, "text-accent")
    primary = _colour(variables, "text-primary")
    return {
        "strong": Style(bold=True),
        "em": Style(italic=True),
        "s": Style(strike=True),
        "link": Style(color=primary, underline=True),
        "code": Style(color=accent),
        "heading": Style(bold=True, color=primary),
        "bullet": Style(bold=True, color=primary),
        "quote": Style(italic=True),
    }


def _inline(token: Token, styles: Mapping[str, Style], base: Style | None = None) -> Text:
    text = Text(style=base or "")
    stack: list[Style] = []

    def current() -> Style:
        return Style.chain(*stack) if stack else Style()

    for child in token.children or []:
        kind = child.type
        if kind == "text":
            text.append(child.content, style=current())
        elif kind == "softbreak":
            text.append(" ")
        elif kind == "hardbreak":
            text.append("\n")
        elif kind == "code_inline":
            text.append(child.content, style=current() + styles["code"])
        elif kind in ("html_inline", "image"):
            text.append(child.content, style=current())
        elif kind.endswith("_open"):
            stack.append(styles.get(kind[: -len("_open")], Style()))
        elif kind.endswith("_close") and stack:
            stack.pop()
    return text


def _blocks(tokens: Sequence[Token], start: int, stop: str | None,
            styles: Mapping[str, Style]) -> tuple[list[RenderableType], int]:
    """Render block tokens from ``start`` until a token of type ``stop``; return them and the next index."""
    out: list[RenderableType] = []
    index = start
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind == stop:
            return out, index + 1
        if kind == "paragraph_open":
            out.append(_inline(tokens[index + 1], styles))
            index += 3
        elif kind == "heading_open":
            out.append(_inline(tokens[index + 1], styles, styles["heading"]))
            index += 3
        elif kind in ("bullet_list_open", "ordered_list_open"):
            ordered = kind == "ordered_list_open"
            grid = Table.grid(expand=True, padding=(0, 1, 0, 0))
            grid.add_column(no_wrap=True)
            grid.add_column(ratio=1)
            number = int(token.attrs.get("start", 1) or 1) if ordered else 0
            index += 1
            close = kind.replace("_open", "_close")
            while tokens[index].type != close:
                if tokens[index].type == "list_item_open":
                    item, index = _blocks(tokens, index + 1, "list_item_close", styles)
                    marker = f"{number}." if ordered else "•"
                    number += 1
                    grid.add_row(Text(marker, style=styles["bullet"]), Group(*item))
                else:
                    index += 1
            out.append(grid)
            index += 1
        elif kind in ("fence", "code_block"):
            out.append(Padding(Text(token.content.rstrip("\n"), style=styles["code"]), (0, 0, 0, 2)))
            index += 1
        elif kind == "blockquote_open":
            inner, index = _blocks(tokens, index + 1, "blockquote_close", styles)
            out.append(Padding(Group(*inner), (0, 0, 0, 2), style=styles["quote"]))
        else:
            index += 1  # hr, html blocks, tables: not used by rubrics
    return out, index


@lru_cache(maxsize=256)
def _render(markdown: str, palette: tuple[tuple[str, str], ...]) -> RenderableType:
    styles = _styles(dict(palette))
    blocks, _ = _blocks(_PARSER.parse(markdown), 0, None, styles)
    spaced: list[RenderableType] = []
    for block in blocks:
        if spaced:
            spaced.append(Text(""))
        spaced.append(block)
    return Group(*spaced)


def render_markdown(markdown: str, variables: Mapping[str, str]) -> RenderableType:
    """Render rubric Markdown with the colours of a theme's CSS variables."""
    palette = tuple(sorted((k, v) for k, v in variables.items() if k in ("text-accent", "text-primary")))
    return _render(markdown, palette)


class RubricText(Static):
    """Shows rubric Markdown; re-renders when the theme changes."""

    def __init__(self, markdown: str = "", **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.markdown = markdown

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _: self.show(self.markdown), init=False)
        self.show(self.markdown)

    def show(self, markdown: str) -> None:
        """Render ``markdown`` in place of what is shown."""
        self.markdown = markdown
        self.update(render_markdown(markdown, self.app.get_css_variables()))
