"""Extraction of real documentation (issue 29, item 3): MkDocs markup read as a reader sees it,
a source's default title from its first meaningful heading (not an HTML banner or "News"),
every heading a location, without emoji."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from protocoder.cli import main
from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.locate import normalise
from protocoder.evidence.snapshots import position
from protocoder.storage.workspace import load_review

from conftest import copy_bundled

REAL = Path(__file__).resolve().parent.parent / "data" / "real-docs"

MKDOCS = """# Harness guide

!!! note "Reset policy"
    Every task is reset before each attempt.

    Caches are cleared between runs.

??? tip
    Seeds are fixed per task.

--8<-- "docs/snippets/install.md"

Read the [runner docs][runner] and the [API][harness.api.Runner].

[runner]: https://example.org/runner
"""


def run(*args: object, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def test_mkdocs_admonitions_snippets_and_reference_links_read_as_text() -> None:
    data = MKDOCS.encode()
    extracted = extract(data, "text/markdown")
    text = extracted.text
    assert "!!!" not in text and "???" not in text and "--8<--" not in text and "][" not in text
    assert "Reset policy\nEvery task is reset before each attempt." in text
    assert "Read the runner docs and the API." in text
    kinds = {extracted.text[b.start:b.end]: b.kind for b in extracted.blocks}
    assert kinds["Every task is reset before each attempt."] == "admonition"
    assert kinds["Caches are cleared between runs."] == "admonition"  # not an indented code block
    assert kinds["Seeds are fixed per task."] == "admonition"
    raw = raw_text(data, "text/markdown")
    assert raw is not None
    for block in extracted.blocks:
        if extracted.text[block.start:block.end] == "Tip":
            continue  # a title the file does not write
        span = extracted.raw_span(block.start, block.end)
        assert span is not None
        assert normalise(raw[span[0]:span[1]]).endswith(normalise(text[block.start:block.end])), block


def test_a_readme_opening_with_a_banner_is_titled_by_its_first_meaningful_heading() -> None:
    titles = {name: extract((REAL / name).read_bytes(), "text/markdown").title
              for name in ("openhands-ai/README.md", "evalplus/README.md", "intercode-bench/README.md",
                           "lm-eval/README.md")}
    assert titles == {"openhands-ai/README.md": "OpenHands", "evalplus/README.md": "EvalPlus",
                      "intercode-bench/README.md": "Intercode",
                      "lm-eval/README.md": "Language Model Evaluation Harness"}
    banner_then_news = ('<p align="center"><img src="banner.png" width="600"></p>\n\n## 📰 News\n\n'
                        "- **[Jun. 27, 2024]**: v0.4.13 released.\n\n## Sandboxed task runner\n\nText.\n")
    extracted = extract(banner_then_news.encode(), "text/markdown")
    assert extracted.title == ""  # the news item is prose: the heading after it names a section, not the document
    assert position(extracted, extracted.text.index("v0.4.13")) == ("", "News")


@pytest.mark.parametrize(("name", "title"), [
    # <h4><a><img alt="Logo of UpTrain - an open-source platform …"></a></h4>: was "of UpTrain - …"
    ("real-docs-heldout11/uptrain/README.md",
     "UpTrain - an open-source platform to evaluate and improve LLM applications"),
    # "# [![Open In Colab](…)] [![Website](…)] [![Blog](…)]": a heading of badges was the title; the prose comes
    # next, so no heading names it (named after its file)
    ("real-docs-heldout12/rliable/README.md", ""),
    # an HTML logo (src docs/img/logo.png, alt "Level Based Foraging (LBF)"), then <h1> Table of Contents </h1>:
    # the section name was the title
    ("real-docs-heldout13/lbforaging/README.md", "Level Based Foraging (LBF)"),
    # <img src="…/hud_logo.svg" alt="HUD"> inside <picture>: a logo by its file's name (was named after its file)
    ("real-docs-heldout7/hud/README.md", "HUD"),
    # a logo file whose alt text is a tagline is no name (PareaLogoLight.png, "Test, evaluate & monitor your AI …")
    ("real-docs-heldout13/parea-ai/README.md", ""),
])
def test_badges_section_names_and_logos_in_a_banner(name: str, title: str) -> None:
    assert extract((REAL.parent / name).read_bytes(), "text/markdown").title == title


def test_a_readme_whose_headings_are_all_sections_is_named_after_its_file(tmp_path: Path) -> None:
    # OSWorld's README (desktop-env) has no H1: a banner of links, then "## 📢 Updates", "## 💾 Installation"
    # with "### VMware/VirtualBox (Desktop, Laptop, Bare Metal Machine)" under it, ..., "## Acknowledgement for
    # OSWorld-Verified". None of these names the document; its first line is the banner's links.
    osworld = REAL.parent / "real-docs-heldout" / "desktop-env" / "README.md"
    assert extract(osworld.read_bytes(), "text/markdown").title == ""
    assert extract(b"## Installation on Linux\n\nText.\n\n### Docker runner\n\nMore.\n", "text/markdown").title == ""
    assert extract(b"## Setup\n\nText.\n\n## Docker runner\n\nMore.\n", "text/markdown").title == "Docker runner"
    assert extract(b"Plain notes with no heading.\n\nMore.\n", "text/markdown").title == "Plain notes with no heading."
    root = copy_bundled(tmp_path / "review")
    ok(run("source", "add", "swe-bench", osworld, "--workspace", root))
    source = load_review(root).protocol("swe-bench").sources[-1]
    assert (source.id, source.title) == ("readme", "README")  # not "vmware-virtualbox-desktop-laptop-bare-metal-mach"


def test_headings_are_locations_without_emoji_and_the_text_keeps_them(tmp_path: Path) -> None:
    root = copy_bundled(tmp_path / "review")
    doc = tmp_path / "README.md"
    doc.write_text('<div align="center"><img src="logo.png" alt="Taskbox logo"></div>\n\n## 📰 News\n\n'
                   "- **[2024-06-01]**: Jobs now share no state.\n\n## 💽 Storage\n\n"
                   "Every run writes to a fresh volume that is deleted afterwards.\n", encoding="utf-8")
    ok(run("source", "add", "swe-bench", doc, "--workspace", root))
    protocol = load_review(root).protocol("swe-bench")
    source = protocol.sources[-1]
    assert source.id == "taskbox" and source.title == "Taskbox"  # not "news"
    for text in ("Every run writes to a fresh volume that is deleted afterwards.", "Jobs now share no state."):
        ok(run("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source",
               "taskbox", "--workspace", root, "-", stdin=text))
    quotes = load_review(root).cells("swe-bench", "reset_retention")["casheekar"].quotes
    assert [(q.section, q.text) for q in quotes[-2:]] == [
        ("Storage", "Every run writes to a fresh volume that is deleted afterwards."),
        ("News", "Jobs now share no state.")]
    ok(run("render", "--workspace", root, "--format", "latex", "--quotes"))
    latex = "".join(path.read_text(encoding="utf-8") for path in (root / "output").glob("*.tex"))
    assert "fresh volume" in latex and "Storage" in latex
    assert "U+1F4BD" not in latex and "U+1F4F0" not in latex


def test_rest_directives_read_as_their_names() -> None:
    data = b"Harness\n=======\n\n.. note::\n\n   Every task is reset.\n\n.. warning:: Shared caches\n   are kept.\n"
    extracted = extract(data, "text/plain")
    assert ".." not in extracted.text and "::" not in extracted.text
    assert "Note:" in extracted.text and "Warning: Shared caches\n   are kept." in extracted.text
    raw = raw_text(data, "text/plain")
    assert raw is not None
    start = extracted.text.index("Every task")
    span = extracted.raw_span(start, start + len("Every task is reset."))
    assert span is not None and raw[span[0]:span[1]] == "Every task is reset."


def test_a_quote_stored_with_an_emoji_section_prints_without_it(tmp_path: Path) -> None:
    # Quotes made before headings lost their emoji keep "💽 Storage" on file; the tables show "Storage".
    root = copy_bundled(tmp_path / "review")
    doc = tmp_path / "README.md"
    doc.write_text("# Taskbox\n\n## Storage\n\nEvery run writes to a fresh volume.\n", encoding="utf-8")
    ok(run("source", "add", "swe-bench", doc, "--workspace", root))
    ok(run("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source", "taskbox",
           "--workspace", root, "Every run writes to a fresh volume."))
    sheet = root / "protocols/swe-bench/codes/casheekar.yaml"
    text = sheet.read_text(encoding="utf-8")
    assert "section: Storage" in text
    sheet.write_text(text.replace("section: Storage", "section: 💽 Storage"), encoding="utf-8")
    ok(run("render", "--workspace", root, "--format", "latex", "--quotes"))
    latex = "".join(path.read_text(encoding="utf-8") for path in (root / "output").glob("*.tex"))
    assert "fresh volume" in latex and "Storage" in latex and "U+1F4BD" not in latex


ADMONITION_DOCS = [REAL.parent / "real-docs-heldout" / "agentdojo" / "docs" / "concepts" / "functions_runtime.md",
                   REAL.parent / "real-docs-heldout" / "agentdojo" / "docs" / "concepts" / "task_suite_and_tasks.md",
                   REAL.parent / "real-docs-heldout4" / "inspect-k8s-sandbox" / "docs" / "docs" / "design" /
                   "limitations.md"]
"""Every vendored document with MkDocs admonitions (``grep -rl '^\\s*[!?]\\{3\\}' tests/data``)."""


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("doc", ADMONITION_DOCS, ids=lambda doc: doc.name)
def test_admonition_bodies_read_as_mkdocs_renders_them(doc: Path) -> None:
    """Each paragraph, list item and code block MkDocs shows inside an admonition (Python-Markdown's
    ``admonition`` and pymdown's ``details``, the reference implementations, render the real file) is
    one block of the extraction with the same words: a paragraph of the admonition's body is an
    admonition block, never an indented code block, also after two blank lines inside the body."""
    markdown = pytest.importorskip("markdown")
    pytest.importorskip("pymdownx")
    lxml_html = pytest.importorskip("lxml.html")
    data = doc.read_bytes()
    # The extensions a Material for MkDocs site lists for admonitions, collapsible ones and fences in them.
    rendered = markdown.markdown(data.decode("utf-8"),
                                 extensions=["admonition", "pymdownx.details", "pymdownx.superfences"])
    page = lxml_html.fromstring(f"<div>{rendered}</div>")
    extracted = extract(data, "text/markdown")
    kinds: dict[str, list[str]] = {}
    for block in extracted.blocks:
        kinds.setdefault(_words(extracted.text[block.start:block.end]), []).append(block.kind)
    shown = []
    for box in page.xpath('//div[contains(concat(" ", @class, " "), " admonition ")] | //details'):
        for element in box.xpath('./p[not(contains(@class, "admonition-title"))] | .//li/p | .//li[not(p)] | '
                                 './/pre'):
            kind = {"p": "list_item" if element.getparent().tag == "li" else "admonition", "li": "list_item",
                    "pre": "code"}[element.tag]
            shown.append((_words(element.text_content()), kind))
    assert shown
    assert [(text, kind) for text, kind in shown if kind not in kinds.get(text, [])] == []


def test_an_admonition_body_goes_on_past_blank_lines_while_it_is_indented() -> None:
    """Python-Markdown ends an admonition at the first block not indented by four spaces, however many
    blank lines come before it (markdown-it's plugin ended it at two blank lines)."""
    data = (b"# Runner\n\n!!! note \"Reset\"\n    Every task is reset.\n\n\n    Caches are cleared.\n\n\n\n"
            b"        docker system prune\n\n    Seeds are fixed.\n\n\nAfter the note.\n\n    an indented code block\n")
    extracted = extract(data, "text/markdown")
    kinds = [(extracted.text[b.start:b.end], b.kind) for b in extracted.blocks]
    assert kinds == [("Runner", "heading"), ("Reset", "admonition"), ("Every task is reset.", "admonition"),
                     ("Caches are cleared.", "admonition"), ("docker system prune", "code"),
                     ("Seeds are fixed.", "admonition"), ("After the note.", "paragraph"),
                     ("an indented code block", "code")]
    raw = raw_text(data, "text/markdown")
    assert raw is not None
    start = extracted.text.index("Caches are cleared.")
    span = extracted.raw_span(start, start + len("Caches are cleared."))
    assert span is not None and raw[span[0]:span[1]] == "Caches are cleared."


def test_a_banner_image_that_is_not_a_logo_never_names_the_document(tmp_path: Path) -> None:
    """SWE-bench's README opens with its mascot, ``<img alt="Kawi the SWE-Llama">``, then sections only
    (News, Overview, Set Up, Usage, Downloads, Contributions, Citation & license, Our Other Projects): no
    heading names the document, and neither does the picture, so it is named after its file. A logo's
    alt text (``OpenHands logo``) is the project's name and still names it."""
    swebench = REAL.parent / "real-docs-heldout" / "swebench" / "README.md"
    assert 'alt="Kawi the SWE-Llama"' in swebench.read_text(encoding="utf-8")
    assert extract(swebench.read_bytes(), "text/markdown").title == ""
    root = copy_bundled(tmp_path / "review")
    ok(run("source", "add", "swe-bench", swebench, "--workspace", root))
    source = load_review(root).protocol("swe-bench").sources[-1]
    assert (source.id, source.title) == ("readme", "README")  # not "kawi-the-swe-llama"
    mascot = '<p align="center"><img src="mascot.svg" alt="Kawi the Task-Llama"></p>\n\n'
    assert extract(f"{mascot}## 📰 News\n\nText.\n\n## Sandboxed runner\n\nMore.\n".encode(),
                   "text/markdown").title == "Sandboxed runner"
    assert extract(f"{mascot}## 📰 News\n\nText.\n\n## 🚀 Set Up\n\nMore.\n".encode(), "text/markdown").title == ""
    logo = '<div align="center"><img src="logo.png" alt="Taskbox Logo"></div>\n\n'
    assert extract(f"{logo}## 📰 News\n\nText.\n\n## Sandboxed runner\n\nMore.\n".encode(),
                   "text/markdown").title == "Taskbox"


def test_a_heading_after_the_readmes_prose_names_a_section_not_the_document(tmp_path: Path) -> None:
    """MiniWoB++'s README has no title heading: badges, two pictures without alt text, three paragraphs
    saying what MiniWoB++ is, then ``# Installation``, ``# Example Usage``, ``# Environments``,
    ``# Citation``. Those headings name sections; the source is named after its file, as OSWorld's is.
    AgentLab's, SWE-smith's and Gymnasium's READMEs also say what they are before their first heading."""
    miniwob = REAL.parent / "real-docs-heldout3" / "miniwob" / "README.md"
    text = miniwob.read_text(encoding="utf-8")
    assert text.index("The MiniWoB++ (Mini World of Bits++) library contains") < text.index("# Installation")
    assert extract(miniwob.read_bytes(), "text/markdown").title == ""
    root = copy_bundled(tmp_path / "review")
    ok(run("source", "add", "swe-bench", miniwob, "--workspace", root))
    source = load_review(root).protocol("swe-bench").sources[-1]
    assert (source.id, source.title) == ("readme", "README")  # not "example-usage"
    for name in ("real-docs-heldout3/agentlab/README.md", "real-docs-heldout4/swesmith/README.md",
                 "real-docs-heldout6/gymnasium/README.md"):
        # not "Supported Benchmarks", "Build Environments", "Environments"
        assert extract((REAL.parent / name).read_bytes(), "text/markdown").title == "", name
    # A heading at the very top still names the document; a section name there does not.
    assert extract((REAL.parent / "real-docs-heldout6/autogenbench/CONTRIBUTING.md").read_bytes(),
                   "text/markdown").title == "Contributing to AutoGenBench"  # was named after its file
    for name in ("real-docs/bigcodebench/ADVANCED_USAGE.md", "real-docs-heldout6/agbenchmark/agbenchmark/README.md"):
        # not "Advanced Start", "As a user": the first of their sections
        assert extract((REAL.parent / name).read_bytes(), "text/markdown").title == "", name
    # Crafter's README opens with a status line, then a badge, then "# Crafter": a label is no prose.
    assert extract((REAL.parent / "real-docs-heldout5/crafter/README.md").read_bytes(),
                   "text/markdown").title == "Crafter"
