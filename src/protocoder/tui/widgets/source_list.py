"""SourceList: a protocol's pinned sources, numbered, with the share of each the reviewer has read and
the highlighted one's URL and date below."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...model import Source


class SourceList(Vertical):
    """The sources of one protocol; ``o`` opens the highlighted one and ``u`` shows its whole URL."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.sources: tuple[Source, ...] = ()

    def compose(self) -> ComposeResult:
        yield OptionList(id="source-list")
        yield Static("", id="source-detail")

    @property
    def options(self) -> OptionList:
        return self.query_one("#source-list", OptionList)

    def show(self, sources: tuple[Source, ...], read: Mapping[str, str] | None = None) -> None:
        """Show these sources (the first highlighted, or the one highlighted before when they are the same),
        each with the share read when ``read`` (source id → ``"63%"``) has it."""
        same = sources == self.sources
        before = self.options.highlighted
        self.sources = sources
        read = read or {}
        self.options.set_options([
            # The share read first on its line: a narrow list cuts the end of the version.
            Option(Text.assemble((f"{number} ", "bold"), source.title,
                                 ("\n  " + (f"{read[source.id]} read · " if source.id in read else "") + source.version,
                                  "dim")),
                   id=str(number - 1))
            for number, source in enumerate(sources, 1)])
        if sources:
            self.options.highlighted = before if same and before is not None and before < len(sources) else 0
        self._show_detail()

    @property
    def selected(self) -> Source | None:
        """The highlighted source, if any."""
        index = self.options.highlighted
        if index is None or index >= len(self.sources):
            return None
        return self.sources[index]

    def _show_detail(self) -> None:
        detail = self.query_one("#source-detail", Static)
        source = self.selected
        if source is None:
            detail.update("no sources pinned" if not self.sources else "")
            return
        detail.update(Text.assemble((source.url or "(no URL)", "underline" if source.url else "dim"),
                                    f"\naccessed {source.accessed.isoformat()}",
                                    ("\no: open · u: full URL" if source.url else "", "dim")))

    @on(OptionList.OptionHighlighted, "#source-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_detail()
