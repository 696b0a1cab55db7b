"""Issue 30, item 6: a big Markdown source is pinned, extracted and indexed in bounded memory.

``source add`` of a 25 MB README (a million lines) took 1.66 GB in the extraction child
(markdown-it's tokens of the whole file, held at once) and 640 MB in the command (the child's
JSON read as lists of integers, then written again as lists). The tokens are now made and
dropped one top-level block at a time, the raw map is an array, and the sidecar's JSON is
written and read a slice at a time. What is extracted is the same, to the byte: quotes made
against older snapshots still verify.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from protocoder.evidence.extract import Block, Extracted, extract, structure
from protocoder.evidence.extract.markdown import _parser, _tokens

from .docs import big_markdown, big_readme_workspace, command_peaks

REAL = Path(__file__).resolve().parent.parent / "data" / "real-docs"
DOCUMENTS = sorted(p for p in REAL.rglob("*") if p.suffix in (".md", ".html") and p.name != "MANIFEST.md")

BEFORE = {
    # sha256 of the JSON of each extraction (Extracted.to_dict, keys sorted), made by the extraction
    # before tokens were streamed (commit dd11eca): the same text, blocks, headings and raw map.
    "alpaca-eval/README.md": "f1c8bcc3c84f26d2a85165a2f6f9a7326e91803cda93894a3c450a1c6257da68",
    "bfcl-eval/README.md": "1750b4f28eb7e20fa9a2cdfcee41fededa72bbac45f325ab54ec35a35b8cf1fb",
    # extractor 7: the same text, blocks, headings and raw map; the title "Advanced Start" (a section) is now ""
    "bigcodebench/ADVANCED_USAGE.md": "ba737d60ef4dc95eacf3ad49e6006e42c207a094594d99f51b4eac49fc48ee93",
    "crfm-helm/helm/proxy/static/help.html": "383d7a4aeaa335b65708bf3e6f59aabaa23d8ac28713d03d3d761259fa943bcd",
    "evalplus/README.md": "7c77f84a3997881af74877b65d74fc9af0651dee3bee70386250969b3336fbad",
    "evalplus/docs/cli.md": "a97cfd7bd90b4433510b32c3e4defa260ea2ffca04f155f108f199f3c778f001",
    "evalplus/docs/execution.md": "d6b7621452547e2021ffec2c39c741f5fd8d7b3947a6d4f266d3a4dcbceadff6",
    "harbor/harbor/cli/template-adapter/README.md": "2f4a6cb29e8740f1c3ccc232a13c15ad505c2a86d9571fabbe5314b39c7d3dd2",
    "harbor/harbor/environments/singularity/README.md":
        "ebc9e291f0d5d86ef10608e7695ccf8fd366adfe4299ae27cf85dd2e9d35e06a",
    "intercode-bench/README.md": "70abf3585221f0627d8f743b36b0da3e5222677cf43602245322716f78ad17ad",
    "lm-eval/README.md": "717eb10265593c94c39a1bedf4209906294b72996b4c12df774c2a05378bcbfb",
    "metr-cli/metr/task-standard/workbench/README.md":
        "e343891a2df77521ae8ce990fc0dc22428abf4753f7aed43fe3f4860ec1c873d",
    "openhands-ai/README.md": "cb2611d4a88c9c436ccff6a5f08d8987f6924c97362865e3feb9b41647cb8b2b",
    "openhands-ai/openhands/app_server/sandbox/README.md":
        "abf103fc253855fedd4e639f0f3df0aa50ae7eddfb8f3020a7c7ce698fb098c5",
}
BIG_BEFORE = "e08dbb713498a2c01c92fb45bf1c8f839f7c725e526804455b343dfda6374852"  # big_markdown(20_000)


def digest(extracted: Extracted) -> str:
    return hashlib.sha256(json.dumps(extracted.to_dict(), ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def media(path: Path) -> str:
    return "text/html" if path.suffix == ".html" else "text/markdown"


def test_every_real_document_is_extracted_as_before() -> None:
    assert len(DOCUMENTS) == 14
    assert {str(p.relative_to(REAL)): digest(extract(p.read_bytes(), media(p))) for p in DOCUMENTS} == BEFORE


def test_a_big_generated_source_is_extracted_as_before() -> None:
    assert digest(extract(big_markdown(20_000), "text/markdown")) == BIG_BEFORE


EDGES = {
    "footnotes referred to before and after their definitions, twice, inline and nested": """\
# Notes

First[^a] and second[^b] and first again[^a], inline^[an inline note].

[^b]: The second, defined first.

- an item with a note[^c]

  [^c]: Defined inside the list item.

[^a]: The first,
    continued; referring to [^b].

[^unused]: Never referred to.
""",
    "link references defined at the end, in a blockquote and twice": """\
See [the runner][runner], [the API], and [twice][dup].

> [inner]: https://example.org/inner
> Quoted [inner] text.

[runner]: https://example.org/runner "Runner"
[the api]: <https://example.org/api>
[dup]: https://example.org/first
[dup]: https://example.org/second
""",
    "loose lists, code after blank lines, HTML blocks, admonitions, tables, setext headings": """\
Title
=====

1. one

2. two


   still two

       code in two

<div>

*html* block

</div>

> [!NOTE]
> Read this.

| a | b |
|---|---|
| 1 | 2 |
text after the table
---

    indented code

    after a blank line
```
unclosed fence
""",
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_the_streamed_tokens_are_markdown_its_tokens(name: str) -> None:
    md = _parser()
    assert list(_tokens(md, EDGES[name])) == md.parse(EDGES[name])


FRAGMENTS = ["# H", "Setext\n===", "text [a] and [b][c] and [^1] and ^[inline]", "[a]: /u", "[c]: /v 'T'",
             "[^1]: note\n    more", "[^2]: other", "ref [^2] again [^1]", "- item\n\n  cont", "- [a]: /inlist",
             "1. one\n2. two", "> quote [a]\n> [d]: /q", "```\ncode [a]: x\n```", "    indented", "<div>\nhtml\n</div>",
             "| a | b |\n|---|---|\n| 1 | 2 |", "---", "", "", "> [!NOTE]\n> body", '!!! note "T"\n    body', "[d]",
             "lazy\ncontinuation", "* a\n    * b\n\n      [^3]: deep", "[^3]", "\r\n", "\t- tab"]


def test_the_streamed_tokens_of_mixed_documents_are_markdown_its_tokens() -> None:
    # Definitions before and after their uses, nested in lists and quotes, in code (not definitions).
    md, rng = _parser(), random.Random(5)
    for _ in range(400):
        document = "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 14)))
        assert list(_tokens(md, document)) == md.parse(document), document


def test_the_streamed_tokens_of_every_real_document_are_markdown_its_tokens() -> None:
    md = _parser()
    for path in DOCUMENTS:
        if path.suffix == ".md":
            text = path.read_text(encoding="utf-8")
            assert list(_tokens(md, text)) == md.parse(text), path


def test_the_sidecar_json_is_written_and_read_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Slices of 64 bytes: blocks cut everywhere, also where a heading holds "],[" (no place to cut).
    monkeypatch.setattr(structure, "_SLICE", 64)
    awkward = Extracted("a]],[b c", [], [(0, 1, 'h]],["x')], "t",
                        [Block(0, 1, "paragraph", ("a]],[b", '"],[c\\')), Block(2, 8, "heading", ())], [(0, 0, 1)])
    documents = [extract(p.read_bytes(), media(p)) for p in DOCUMENTS[:4]]
    for extracted in [*documents, awkward, Extracted("x", raw_segments=None), Extracted("x", raw_segments=[])]:
        head = {"format": 1, "sha256": "0" * 64}
        text = extracted.to_json(head)
        assert text == json.dumps({**head, **extracted.to_dict()}, ensure_ascii=False, separators=(",", ":"))
        loaded = Extracted.load_json(text.encode())
        plain = json.loads(text)
        assert list(loaded.pop("blocks")) == plain.pop("blocks")
        raw = loaded.pop("raw")
        assert (None if raw is None else list(raw)) == plain.pop("raw")
        assert loaded == plain
        again = Extracted.from_dict(Extracted.load_json(text.encode()))
        assert (again.text, again.blocks, again.headings, again.raw_segments) == \
            (extracted.text, extracted.blocks, extracted.headings, extracted.raw_segments)


def source_add_peaks(tmp_path: Path, lines: int) -> tuple[float, float]:
    """(the command's, the extraction child's) peak memory in MB for ``source add`` of a README of ``lines`` lines."""
    folder, source = big_readme_workspace(tmp_path, lines)
    return command_peaks("source", "add", "-w", str(folder), "big", str(source), "--id", "big")


def test_source_add_memory_grows_by_less_than_500_bytes_a_line(tmp_path: Path) -> None:
    # A tenth of the million lines, against a twentieth: the growth per line, so that the
    # interpreter's own size does not count. It was about 1,600 bytes a line in the child, 600 in the command.
    small, large = source_add_peaks(tmp_path, 20_000), source_add_peaks(tmp_path, 120_000)
    for name, before, after in zip(("command", "extraction child"), small, large, strict=True):
        assert (after - before) * 1024 * 1024 / 100_000 < 500, (name, small, large)


@pytest.mark.slow
def test_a_million_line_readme_is_pinned_in_under_500_mb(tmp_path: Path) -> None:
    own, child = source_add_peaks(tmp_path, 1_000_000)
    assert own < 500 and child < 500, (own, child)
