"""Quoting that does what the reviewer meant (issue 29, item 4), through the core functions the
reader calls (``ReadingText.sentence``, ``ReadingText.passage``, ``locate_quote``'s selector):
a match in a code block widens to its line, a sentence does not end at an abbreviation, and a
passage ending in a link's text keeps the whole link in its ``exact``."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.locate import Span, normalise, sentence_around
from protocoder.evidence.quotes import raw_selector
from protocoder.evidence.reading import ReadingText

REAL = Path(__file__).resolve().parent.parent / "data" / "real-docs"


def reading_of(markdown: str) -> ReadingText:
    return ReadingText(extract(markdown.encode(), "text/markdown"))


def widened(reading: ReadingText, match: str) -> str:
    text = reading.extracted.text
    start = text.index(match)
    return reading.passage(reading.sentence(Span(start, start + len(match))))


def test_a_match_in_a_code_block_widens_to_its_line_not_the_block() -> None:
    reading = reading_of("# Run\n\nDo this:\n\n```bash\n# install the harness\npip install harness==0.4.13\n"
                         "harness run --all  # every task, three seeds\n```\n\nThen read the logs.\n")
    assert widened(reading, "harness==") == "pip install harness==0.4.13"
    assert widened(reading, "three seeds") == "harness run --all # every task, three seeds"
    assert widened(reading, "install the") == "# install the harness"
    text = reading.extracted.text
    both = reading.sentence(Span(text.index("pip"), text.index("--all")))
    assert reading.passage(both) == "pip install harness==0.4.13 harness run --all # every task, three seeds"
    assert reading.haystack.matches_at(reading.passage(both), both.start, both.end)


def test_a_match_in_a_real_code_block_widens_to_its_line() -> None:
    reading = ReadingText(extract((REAL / "bfcl-eval" / "README.md").read_bytes(), "text/markdown"))
    assert widened(reading, "necessary values in") == "# Fill in necessary values in `.env`"


@pytest.mark.parametrize("text, match, sentence", [
    ("News. [Jun. 27, 2024]: We released version 0.4.13. The harness is faster.", "We released",
     "[Jun. 27, 2024]: We released version 0.4.13."),
    ("Judges are biased (e.g. GPT-4) towards long outputs. Rest.", "long outputs",
     "Judges are biased (e.g. GPT-4) towards long outputs."),
    ("Intro. See Fig. 2 and Sec. 3.1 for the setup. Next.", "setup", "See Fig. 2 and Sec. 3.1 for the setup."),
    ("Intro. Smith et al. reset the machine, i.e. they restore it. Next.", "restore",
     "Smith et al. reset the machine, i.e. they restore it."),
    ("Intro. Use v0.4.13. Then run it. Next.", "Then run", "Then run it."),
])
def test_a_sentence_does_not_end_at_an_abbreviation(text: str, match: str, sentence: str) -> None:
    start = text.index(match)
    span = sentence_around(text, start, start + len(match))
    assert text[span.start:span.end] == sentence


def test_a_real_news_line_widens_past_its_date() -> None:
    markdown = "# News\n\n- [Jun. 27, 2024]: We released v0.4.13 of the harness. It is faster.\n"
    assert widened(reading_of(markdown), "We released") == "[Jun. 27, 2024]: We released v0.4.13 of the harness."


@pytest.mark.parametrize("markdown, exact", [
    ("# T\n\nPull the image from [DockerHub](https://hub.docker.com/r/x/y).\n",
     "Pull the image from [DockerHub](https://hub.docker.com/r/x/y)."),
    ("# T\n\nSee the [paper](https://arxiv.org/abs/2308.03688), **[v2](http://a.b/c.pdf)**!\n",
     "See the [paper](https://arxiv.org/abs/2308.03688), **[v2](http://a.b/c.pdf)**!"),
    ("# T\n\nRead [the docs][docs]. ![logo](img/a.b.png).\n\n[docs]: https://x.org/a.b\n",
     "Read [the docs][docs]. ![logo](img/a.b.png)."),
])
def test_a_passage_ending_in_link_text_keeps_the_whole_link(markdown: str, exact: str) -> None:
    data = markdown.encode()
    extracted = extract(data, "text/markdown")
    reading = ReadingText(extracted)
    block = next(b for b in extracted.blocks if b.kind == "paragraph")
    span = Span(block.start, block.end)
    quote = reading.passage(span)
    raw_start, raw_end, got, _, _ = raw_selector(extracted, raw_text(data, "text/markdown"), "text/markdown",
                                                 quote, span.start, span.end)
    assert got == exact
    assert normalise(got) == normalise(quote)


def test_the_real_readme_sentence_ending_in_a_link_keeps_it() -> None:
    path = REAL / "alpaca-eval" / "README.md"
    data = path.read_bytes()
    extracted = extract(data, "text/markdown")
    reading = ReadingText(extracted)
    start = extracted.text.index("Our leaderboards are computed")
    span = reading.sentence(Span(start, start + 3))
    _, _, exact, _, _ = raw_selector(extracted, raw_text(data, "text/markdown"), "text/markdown",
                                     reading.passage(span), span.start, span.end)
    assert exact == ("Our leaderboards are computed on the "
                     "[AlpacaEval dataset](https://huggingface.co/datasets/tatsu-lab/alpaca_eval).")


def test_every_candidate_and_code_line_of_the_real_documents_can_be_quoted_as_the_reader_quotes_it() -> None:
    # A candidate (or one to three lines of any block) made into a quote by the reader's own
    # functions is found where it was taken: no "cannot be located" for code with # comments,
    # rules, nested fences or list lines joined into one line.
    from protocoder.evidence.search.passages import source_passages

    documents = sorted(REAL.rglob("*.md")) + [REAL / "crfm-helm" / "helm" / "proxy" / "static" / "help.html"]
    failures = []
    checked = 0
    for path in documents:
        media = "text/html" if path.suffix == ".html" else "text/markdown"
        extracted = extract(path.read_bytes(), media)
        reading = ReadingText(extracted)
        text = extracted.text
        spans = []
        for passage in source_passages("s", extracted, raw_text(path.read_bytes(), media)):
            spans += [Span(passage.start, passage.end), reading.sentence(Span(passage.start, passage.end))]
        for block in extracted.blocks:
            lines, position = [], block.start
            for line in text[block.start:block.end].split("\n"):
                lines.append(Span(position, position + len(line)))
                position += len(line) + 1
            spans += [Span(lines[i].start, lines[j].end) for i in range(len(lines))
                      for j in range(i, min(i + 3, len(lines)))]
        for span in spans:
            quote = reading.passage(span)
            if not quote:
                continue
            checked += 1
            if not reading.haystack.matches_at(quote, span.start, span.end):
                failures.append((path.name, text[span.start:span.end][:80]))
    assert checked > 5000
    assert failures == []
