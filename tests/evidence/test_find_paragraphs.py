"""Round 4 of ``find`` on real documentation: a passage is the author's paragraph, changelogs are not
demoted, a heading's words do not rank every passage under it (``benchmarks/find_ablation.py`` says why)."""

from __future__ import annotations

from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.search import PassageIndex, Query, source_passages

README = """# Harness

## Running

Each run starts from a fresh container, configured with:
- `--rm` so that the container is removed when the run ends
- `--network none` so that nothing else is reachable

```bash
# build the images first
harness build --all
harness run --tasks all

harness clean --all
```

{long}

A second paragraph.
"""

LONG = " ".join(f"Sentence {n} of a long paragraph says the harness keeps its logs." for n in range(20))


def _passages(text: str, *, with_raw: bool = True) -> list:
    data = text.encode()
    return source_passages("readme", extract(data, "text/markdown"), raw_text(data, "text/markdown")
                           if with_raw else None)


def test_a_passage_is_the_blank_line_paragraph_and_code_stays_cut_into_commands() -> None:
    found = _passages(README.format(long=LONG))
    texts = [p.text for p in found]
    # The sentence that introduces a list and the list are one passage, as the author wrote them.
    lead = [p for p in found if p.text.startswith("Each run starts from a fresh container")]
    assert len(lead) == 1 and "--network none" in lead[0].text and lead[0].kind == "prose"
    # A long paragraph is not cut into pieces of about 450 characters.
    assert len(LONG) > 1000 and sum(1 for t in texts if "long paragraph" in t) == 1
    # Code is cut at its blank lines into steps (round 12): the commands written together are one passage.
    assert "# build the images first\nharness build --all\nharness run --tasks all" in texts
    assert "harness clean --all" in texts
    assert "A second paragraph." in texts
    raw = README.format(long=LONG)
    for passage in found:
        assert passage.raw_start is not None and passage.raw_end is not None
        assert "\n\n" not in raw[passage.raw_start:passage.raw_end]  # never across a blank line of the file


def test_without_the_raw_text_passages_stay_the_extraction_blocks() -> None:
    found = _passages(README.format(long=LONG), with_raw=False)
    assert not any(p.text.startswith("Each run starts") and "--network" in p.text for p in found)
    assert sum(1 for p in found if "long paragraph" in p.text) > 1


CHANGELOG = """# Eval

## Usage

Run the eval with its defaults. The container keeps its state: the container image is pulled once.

## Changelog

### [2-B] - 2026-02-16

- The scorer now resets the container between samples, so no state is carried over from the previous sample.
"""


def test_a_changelog_entry_that_answers_the_field_is_not_pushed_below_prose() -> None:
    found = _passages(CHANGELOG)
    entry = next(p for p in found if "resets the container" in p.text)
    assert entry.kind == "news"
    ranked = PassageIndex.build(found).search(Query(((1.0, "reset container state carried over"),)), 10)
    assert ranked[0].text == entry.text


SECTIONS = """# Tool

## Zorblax settings

Nothing about it here.

Nor here.

## Other

Set zorblax to two.
"""


def test_a_heading_word_does_not_list_every_passage_under_the_heading() -> None:
    ranked = PassageIndex.build(_passages(SECTIONS)).search(Query(((1.0, "zorblax"),)), 10)
    assert [c.text for c in ranked] == ["Set zorblax to two."]
    assert ranked[0].heading == "Other"


def test_two_sections_of_one_name_without_a_blank_line_stay_two_passages() -> None:
    found = _passages("# Doc\n\n## Setup\nFirst part.\n## Setup\nSecond part.\n")
    assert [p.text for p in found] == ["First part.", "Second part."]
