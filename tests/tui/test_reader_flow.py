"""The reader shows a hard-wrapped Markdown paragraph as running text, soft-wrapped to the pane,
while code blocks and table rows keep their lines; offsets, matches and quotes are unchanged."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from protocoder.evidence.extract.dispatch import extract
from protocoder.evidence.quotes import locate_quote
from protocoder.evidence.reading import ReadingText, quote_text
from protocoder.evidence.snapshots import Snapshots
from protocoder.model import Quote
from protocoder.storage.paths import Paths
from protocoder.storage.workspace import load_review
from protocoder.tui.screens.reader import ReaderScreen
from protocoder.tui.widgets.reader import FlowingText

from .helpers import app_for, settle, type_text
from .test_focus_model import open_webarena

# Written as most READMEs are: every sentence hard-wrapped in the source, with the constructs
# around it that must keep their lines (a fenced code block, a table) or flow (list items,
# a blockquote, an admonition, a footnote).
README = """# agentbench-harness

agentbench-harness runs the tasks of
the AgentBench suite in isolated
containers and
grades each attempt with the *task's own*
checker, see [the docs](https://example.org/docs) and `agentbench --help`.

## Install

- Python 3.11 or newer is
  needed on the host.
  - Docker must be running
    before the first task.
- Nothing else.

> Every container is removed
> after its attempt is graded.

> [!NOTE]
> Results are cached per task
> and per model.

```bash
pip install agentbench-harness
agentbench run --all
```

| task | seconds |
|------|---------|
| os   | 120     |

Scores are reported per task.[^1]

[^1]: A task's score is the mean
    over three attempts.
"""

PARAGRAPH = ("agentbench-harness runs the tasks of the AgentBench suite in isolated containers and grades "
             "each attempt with the task's own checker, see the docs and agentbench --help.")


def pin_readme(workspace: Path, cli) -> None:
    """Pin the hard-wrapped README to webarena through the real CLI."""
    page = workspace / "README.md"
    page.write_text(README, encoding="utf-8")
    result = cli("source", "add", "webarena", str(page), "--workspace", str(workspace), "--id", "readme")
    assert result.exit_code == 0, result.output
    page.unlink()


def extracted_text(workspace: Path) -> tuple[str, str]:
    """The pinned README's extracted text and the text the reader showed before (source breaks kept)."""
    source = next(s for s in load_review(workspace).protocol("webarena").sources if s.id == "readme")
    extracted = Snapshots(Paths(workspace)).text(source.sha256, source.media_type)
    return extracted.text, ReadingText(extracted).display


async def open_reader(pilot) -> ReaderScreen:
    await open_webarena(pilot)
    await pilot.press("ctrl+l")  # 80 columns: the reader takes the whole screen
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ReaderScreen), screen
    return screen


async def test_paragraphs_flow_code_and_tables_keep_their_lines(workspace: Path, cli) -> None:
    pin_readme(workspace, cli)
    text, before = extracted_text(workspace)
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_reader(pilot)
        area = screen.reader.text_area
        lines = area.document.lines
        shown = area.text
        assert screen.reader.source is not None and screen.reader.source.id == "readme"
        # One character for one: only line breaks became spaces, so every offset is the same.
        assert len(shown) == len(before)
        assert all(a == b or (a, b) == (" ", "\n") for a, b in zip(shown, before, strict=True))
        assert before.count("\n") > shown.count("\n")
        # Each paragraph, list item, blockquote, admonition and footnote is one line of the text...
        for flowing in (PARAGRAPH, "Python 3.11 or newer is needed on the host.",
                        "Docker must be running before the first task.",
                        "Every container is removed after its attempt is graded.",
                        "Results are cached per task and per model.",
                        "A task's score is the mean over three attempts."):
            assert flowing in lines, flowing
        # ...soft-wrapped to the screen: the paragraph takes more rows than lines.
        row = lines.index(PARAGRAPH)
        assert len(PARAGRAPH) > area.content_size.width
        assert area.wrapped_document.get_offsets(row)  # where the line wraps: at least once
        # The code block and the table keep theirs; so do the separators between blocks.
        index = lines.index("pip install agentbench-harness")
        assert lines[index + 1] == "agentbench run --all"
        assert "task\tseconds" in lines and "os\t120" in lines
        assert lines[lines.index("Python 3.11 or newer is needed on the host.") + 1] == \
            "Docker must be running before the first task."
        assert "" in lines  # blank lines between blocks
        assert text.count("\n") == before.count("\n")  # the extracted text itself is untouched


async def test_a_quote_across_former_line_breaks_is_stored_as_before(workspace: Path, cli, sheet_of) -> None:
    pin_readme(workspace, cli)
    text, _ = extracted_text(workspace)
    start = text.index("the AgentBench suite")
    end = text.index(" with the", start)
    assert "\n" in text[start:end]  # the passage crosses two of the source's line breaks
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_reader(pilot)
        area = screen.reader.text_area
        # Select as the keyboard does: cursor at the passage on its line as shown, shift+right to its end.
        row = area.document.lines.index(PARAGRAPH)
        area.move_cursor((row, PARAGRAPH.index("the AgentBench suite")))
        await pilot.pause()
        await pilot.press(*["shift+right"] * (end - start))
        await pilot.pause()
        assert area.selected_text == text[start:end].replace("\n", " ")
        await pilot.press("q", "enter")
        await settle(pilot)
        # A search across a former line break finds it on one row.
        await pilot.press("slash")
        await type_text(pilot, "isolated containers")
        await pilot.press("enter")
        await pilot.pause()
        match = screen.reader.matches[0]
        assert text[match.start:match.end] == "isolated\ncontainers"
        (first_row, _), (last_row, _) = area.selection
        assert first_row == last_row == row
    quote = sheet_of("webarena").cells["open_work"].quotes[-1]
    # What the old reader stored for the same selection: the extracted text at the same offsets,
    # on one line, located in the snapshot (raw offsets, exact, prefix, suffix) the same way.
    assert (quote.source, quote.start, quote.end) == ("readme", start, end)
    review = load_review(workspace)
    source = next(s for s in review.protocol("webarena").sources if s.id == "readme")
    before = locate_quote(Quote("readme", quote_text(text[start:end]), start=start, end=end), source,
                          Snapshots(Paths(workspace)))
    assert quote == before
    assert quote.text == quote_text(text[start:end])
    assert quote.text == "the AgentBench suite in isolated containers and grades each attempt"


async def test_plain_text_keeps_its_lines(workspace: Path, cli) -> None:
    """A plain-text file's paragraph may be a list written line by line: shown as before."""
    page = workspace / "NOTES.txt"
    page.write_text("Steps:\n1. build the image\n2. run the tasks\n", encoding="utf-8")
    result = cli("source", "add", "webarena", str(page), "--workspace", str(workspace), "--id", "notes")
    assert result.exit_code == 0, result.output
    page.unlink()
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_reader(pilot)
        assert screen.reader.source is not None and screen.reader.source.id == "notes"
        assert screen.reader.text_area.document.lines[:3] == ["Steps:", "1. build the image", "2. run the tasks"]


_WORDS = st.text(alphabet="abc xyz", min_size=1, max_size=12).map(str.strip).filter(bool)
_LINES = st.lists(_WORDS, min_size=1, max_size=4).map("\n".join)


@given(st.lists(st.tuples(st.sampled_from(["", "- ", "> ", "    "]), _LINES), min_size=1, max_size=6))
def test_flowing_keeps_every_offset(parts: list[tuple[str, str]]) -> None:
    """Whatever the Markdown, the text shown differs from the old only where a line break became
    a space, and (row, column) on screen maps back to the same offsets of the extracted text."""
    source = "\n\n".join(prefix + body.replace("\n", "\n" + prefix) for prefix, body in parts)
    extracted = extract(source.encode(), "text/markdown")
    old, new = ReadingText(extracted), FlowingText(extracted)
    assert len(new.display) == len(old.display)
    assert all(a == b or (a, b) == (" ", "\n") for a, b in zip(new.display, old.display, strict=True))
    for block in extracted.blocks:
        if block.kind == "code":  # an indented block keeps its lines
            assert new.display[new.to_display(block.start):new.to_display(block.end)] == \
                extracted.text[block.start:block.end]
    for offset in range(len(new.display) + 1):
        assert new.offset(*new.location(offset)) == offset
        assert new.to_extracted(offset) == old.to_extracted(offset)
