"""Extraction that keeps structure, on real documents: the fixture README (every Markdown
construct), the fixture HTML page, a text file with CRLF line ends, and a PDF typeset by
pdflatex. Every block's raw range must say what the block says."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocoder.evidence.extract import (
    EXTRACTOR_VERSION,
    Extracted,
    document_title,
    extract,
    extract_bounded,
    is_version_heading,
    meaningful_section,
    raw_text,
)
from protocoder.evidence.locate import normalise
from protocoder.evidence.snapshots import position

from .docs import latex_pdf

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str, media_type: str) -> tuple[Extracted, str]:
    data = (FIXTURES / name).read_bytes()
    raw = raw_text(data, media_type)
    assert raw is not None
    return extract(data, media_type), raw


def block_texts(extracted: Extracted, kind: str) -> list[str]:
    return [extracted.text[b.start:b.end] for b in extracted.blocks if b.kind == kind]


def test_markdown_blocks_keep_list_items_rows_admonitions_and_footnotes_apart() -> None:
    extracted, _ = load("README.md", "text/markdown")
    items = block_texts(extracted, "list_item")
    # Nested items are blocks of their own; the parent item stops where the nested list starts.
    assert "--max-steps K stops an episode after K actions (the default is 30)." in items
    assert "A stopped episode is scored as a failure, never as a partial success." in items
    assert "Network access is off unless --allow-network is given." in items  # a "*" bullet
    assert block_texts(extracted, "table_row")[:2] == ["Suite\tTasks\tMetric\tGrader",
                                                       "OS interaction\t144\tsuccess rate\texact match"]
    admonitions = block_texts(extracted, "admonition")
    assert admonitions[0].startswith("Every task is reset to its initial snapshot")
    assert "[!" not in extracted.text  # the markers say what a block is; they are not its text
    assert block_texts(extracted, "footnote") == [
        "Numbers from Table 3 of the AgentBench paper, version 2 (October 2023).",
        "The standard error is computed with the seeds as the unit of resampling."]
    assert "[^" not in extracted.text
    assert block_texts(extracted, "code") == ["agentbench run --suite os --model gpt-4o --seeds 3"]
    paths = {extracted.text[b.start:b.end]: b.path for b in extracted.blocks}
    sandbox = next(text for text in paths if text.startswith("Each task runs in a container"))
    assert sandbox.endswith("Logs are kept under runs/<date>/ for 30\u00a0days.")
    assert paths[sandbox] == ("agentbench-harness", "Usage", "Sandbox")


def test_every_block_has_a_raw_range_that_says_the_same() -> None:
    for name, media_type in (("README.md", "text/markdown"), ("page.html", "text/html")):
        extracted, raw = load(name, media_type)
        assert extracted.blocks
        for block in extracted.blocks:
            span = extracted.raw_span(block.start, block.end)
            assert span is not None
            assert normalise(raw[span[0]:span[1]]) == normalise(extracted.text[block.start:block.end]), (name, block)


def test_link_text_is_kept_and_its_url_stays_in_the_raw_range() -> None:
    extracted, raw = load("README.md", "text/markdown")
    passage = "See the paper\nand the leaderboard for results."
    start = extracted.text.index(passage)
    assert "https://arxiv.org/abs/2308.03688" not in extracted.text
    span = extracted.raw_span(start, start + len(passage))
    assert span is not None
    assert raw[span[0]:span[1]] == ("See the [paper](https://arxiv.org/abs/2308.03688)\n"
                                    "and the [leaderboard][board] for results.")


def test_sections_pass_over_version_lines_and_the_title() -> None:
    extracted, _ = load("README.md", "text/markdown")

    def section(passage: str) -> str:
        return position(extracted, extracted.text.index(passage))[1]

    assert section("Fixed a grader bug") == "Changelog"
    assert section("Seeds are now recorded") == "Changelog"
    assert section("Every task is reset") == ""  # under the package's title only
    assert section("A stopped episode is scored") == "Usage"
    assert section("Scores in the table above") == "Tasks"
    assert section("Logs are kept under") == "Sandbox"
    for line in ("v0.3.1", "[1.2.0] - 2024-01-01", "1.2.0", "Version 2.0 (May 2024)", "[Unreleased]",
                 "v2.1.0-beta.1"):
        assert is_version_heading(line), line
    for line in ("Evaluation protocol", "3.2 Stopping rule", "Python 3.11 support", "2024 results"):
        assert not is_version_heading(line), line
    assert meaningful_section(("pkg", "Usage", "v1.0"), "pkg") == "Usage"
    assert meaningful_section(("pkg",), "pkg") == ""


BADGES = ("[![PyPI](https://img.shields.io/pypi/v/taskbox.svg)](https://pypi.org/project/taskbox/)\n"
          '<p align="center"><img src="banner.png" width="500"></p>\n\n'
          "[Docs](https://taskbox.dev) | [Paper](https://arxiv.org/abs/1) | [Leaderboard](#leaderboard)\n\n")


@pytest.mark.parametrize(("opening", "title"), [
    ("", "Taskbox Runner"),  # badges, a banner, a link bar: front matter
    ("**Status:** Stable release\n\n", "Taskbox Runner"),  # a label is no prose
    ("- [Install](#install)\n- [Usage](#usage)\n\n", "Taskbox Runner"),  # a table of contents
    ('<a href="https://taskbox.dev">Read the documentation on our site</a> | <a href="#paper">Read our paper '
     "on arXiv</a>\n\n", "Taskbox Runner"),  # a bar of HTML links
    ("Taskbox runs every task in a fresh sandbox.\n\n", ""),  # a sentence: what follows are sections
    ("> [!WARNING]\n> Taskbox is research software and may change.\n\n", ""),
    ("```\npip install taskbox\n```\n\n", ""),  # code is content
])
def test_a_heading_names_the_document_only_before_its_prose(opening: str, title: str) -> None:
    document = f"{BADGES}{opening}# Taskbox Runner\n\nText.\n\n# Usage\n\nMore text here.\n"
    assert extract(document.encode(), "text/markdown").title == title
    # The same rule for a banner heading in HTML: after a paragraph it heads a section.
    html_banner = '<div align="center"><h1>Taskbox</h1></div>\n\n'
    assert extract(f"{BADGES}{opening}{html_banner}## Setup\n\nText.\n".encode(), "text/markdown").title == \
        ("Taskbox" if title else "")


def test_document_title_takes_only_the_headings_before_the_prose() -> None:
    headings = [(0, 1, "Taskbox Runner"), (40, 1, "Usage")]
    assert document_title(headings, prose=20) == "Taskbox Runner"
    assert document_title(headings, prose=0) == ""
    assert document_title([(0, 1, "Install"), (40, 1, "Taskbox Runner")], prose=20) == ""
    assert document_title([(0, 1, "Install"), (40, 1, "Taskbox Runner")]) == "Taskbox Runner"  # no prose: no limit
    # Section names: how to start, for whom; a section name followed by "to" or "of" names its subject.
    assert document_title([(0, 2, "🔥 Advanced Start"), (80, 2, "Remote Evaluation")], prose=20) == ""
    assert document_title([(0, 2, "As a user"), (80, 2, "Contributing")], prose=20) == ""
    assert document_title([(0, 1, "Contributing to Taskbox"), (80, 2, "Tests")], prose=30) == "Contributing to Taskbox"
    assert document_title([(0, 1, "Contributing"), (80, 2, "Tests")], prose=30) == ""
    assert document_title([(0, 1, "Contributing to"), (80, 2, "Tests")], prose=30) == ""


def test_html_blocks_rows_items_and_admonitions() -> None:
    extracted, raw = load("page.html", "text/html")
    assert block_texts(extracted, "table_row") == ["Site\tTasks\tEvaluator", "Shopping\t187\tstring match",
                                                   "GitLab\t180\tprogram check"]
    assert "Cookies and local storage are cleared." in block_texts(extracted, "list_item")
    assert block_texts(extracted, "admonition") == ["Results obtained with a different viewport size are not "
                                                    "comparable."]
    assert "window.analytics" not in extracted.text
    row = next(b for b in extracted.blocks if extracted.text[b.start:b.end].startswith("GitLab"))
    assert row.path == ("WebArena harness", "Scoring")
    start = extracted.text.index("The browser is reset to the task's start URL")
    span = extracted.raw_span(start, start + len("The browser is reset to the task's start URL"))
    assert span is not None and raw[span[0]:span[1]] == "The browser is reset to the task&#39;s start URL"


def test_plain_text_offsets_count_in_the_file_as_written(tmp_path: Path) -> None:
    data = (b"Harness notes\r\n\r\n1 Resets\r\nEvery task is reset\r\nbefore each attempt.\r\n\r\n"
            b"2 Limits\r\nThirty steps.\r\n")
    extracted = extract(data, "text/plain")
    raw = data.decode()
    start = extracted.text.index("Every task")
    end = extracted.text.index("attempt.") + len("attempt.")
    span = extracted.raw_span(start, end)
    assert span is not None and raw[span[0]:span[1]] == "Every task is reset\r\nbefore each attempt."
    assert [(b.kind, b.path) for b in extracted.blocks] == [
        ("paragraph", ()), ("heading", ("1 Resets",)), ("paragraph", ("1 Resets",)), ("heading", ("2 Limits",)),
        ("paragraph", ("2 Limits",))]


def test_the_sidecar_form_keeps_blocks_and_raw_offsets() -> None:
    data = (FIXTURES / "README.md").read_bytes()
    here = extract(data, "text/markdown")
    there = extract_bounded(data, "text/markdown")  # through the child process and JSON
    assert there.blocks == here.blocks and there.raw_segments == here.raw_segments
    assert Extracted.from_dict(here.to_dict()).raw_offset(100) == here.raw_offset(100)
    assert EXTRACTOR_VERSION >= 2


PDF_BODY = r"""
\section{Evaluation workflow}
The official harness runs every task in a fresh container, and the final score is the fraction of
tasks whose tests pass. An efficient agent finishes within the budget; a run that exceeds the
budget is counted as a failure. Contamination is assessed by comparing release dates.
\section{Reproducibility}
All configurations, seeds and prompts are published with the results so that the evaluation can be
repeated independently by other groups.
"""


def test_pdf_has_paragraph_blocks_and_no_raw_offsets(tmp_path: Path) -> None:
    pdf = latex_pdf(tmp_path, "paper", PDF_BODY)
    extracted = extract(pdf.read_bytes(), "application/pdf")
    assert extracted.raw_offset(0) is None and not extracted.has_raw
    kinds = [b.kind for b in extracted.blocks]
    assert "heading" in kinds and "paragraph" in kinds
    paragraph = next(b for b in extracted.blocks if "All configurations" in extracted.text[b.start:b.end])
    assert paragraph.path[-1].endswith("Reproducibility")


@pytest.mark.parametrize("media_type", ["text/markdown", "text/html", "text/plain"])
def test_raw_offsets_are_monotonic_within_each_block(media_type: str) -> None:
    name = {"text/markdown": "README.md", "text/html": "page.html", "text/plain": "README.md"}[media_type]
    extracted, _ = load(name, media_type)
    for block in extracted.blocks:
        offsets = [extracted.raw_offset(i) for i in range(block.start, block.end)]
        assert all(o is not None for o in offsets)
        assert offsets == sorted(offsets), block  # type: ignore[type-var]
