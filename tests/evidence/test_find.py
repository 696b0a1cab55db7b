"""``protocoder find`` and independence recording, through the real CLI on real files.

A Markdown README with every construct, an HTML page and a pdflatex-typeset PDF are pinned
for one protocol of a copy of the bundled review; ``find`` ranks their passages for rubric
fields (JSON shape, the 80-column table, the cache under ``.protocoder/find/`` and its
rebuild after ``source update``), refuses in one line where it cannot answer, and stays
off with ``candidates: false``. Cells record ``assisted: true``; ``agree --split assisted``
and the methods paragraph report them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.evidence.extract import Extracted, extract
from protocoder.evidence.search import CACHE_DIR, HEADING_SEPARATOR, passages_of
from protocoder.model import Cell
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

from .docs import latex_pdf
from conftest import copy_bundled, tree_digest

README = """# HarborBench

[![CI](https://img.shields.io/badge/ci-passing-green.svg)](https://ci.example.org)

HarborBench measures coding agents on *maintenance* tasks taken from **real** repositories.

> [!NOTE]
> Version 2 changed the harness; scores are not comparable with version 1.

## Installation

1. Install Docker.
   - On Linux, add your user to the `docker` group.
   - On macOS, use Docker Desktop.
2. Run `pip install harborbench`.

## Environment

| Component | Lifetime |
|---|---|
| task container | one attempt |
| package cache volume | shared by all attempts |

Every attempt starts in a fresh container built from the task image, and the container is
deleted after grading.[^1] The package cache volume is kept between attempts to save time.

```bash
harbor run --task fix-login --model gpt-4o
```

## Grading

The grader runs the hidden tests right after the agent stops; background processes the
agent left running are killed when the container is deleted, without waiting for them.

<details><summary>Why not wait?</summary>Waiting made runs slow.</details>

[^1]: Containers of failed attempts are kept for an hour for debugging.
"""

HTML = """<!DOCTYPE html><html><head><title>Harbor docs</title><script>var x = "reset";</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Harbor documentation</h1>
<h2>Parallel runs</h2>
<p>Attempts run in parallel on one machine; each gets its own Docker network, so no attempt can reach
another attempt's services.</p>
<h2>Credits</h2><p>Thanks to our sponsors.</p>
</body></html>
"""

PAPER = r"""
\title{HarborBench: Maintenance Tasks for Agents}
\maketitle
\section{Introduction}
Agents are asked to keep software working as its dependencies move.
\section{Protocol}
Trials are independent: each trial restores the database from the same dump before the agent starts.
"""

README_V2 = README.replace("The package cache volume is kept between attempts to save time.",
                           "Nothing is kept between attempts: the package cache is rebuilt every time.")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def refused(result: Result) -> str:
    """The one line a refusal prints (stderr), with no traceback."""
    assert result.exit_code != 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("find-docs")
    (folder / "README.md").write_text(README, encoding="utf-8")
    (folder / "README-v2.md").write_text(README_V2, encoding="utf-8")
    (folder / "docs.html").write_text(HTML, encoding="utf-8")
    return {"md": folder / "README.md", "md2": folder / "README-v2.md", "html": folder / "docs.html"}


@pytest.fixture
def workspace(tmp_path: Path, cli, documents: dict[str, Path]) -> Path:
    """The bundled review with the README and the HTML page pinned for swe-bench."""
    root = copy_bundled(tmp_path / "review")
    ok(cli("source", "add", "swe-bench", documents["md"], "--id", "readme", "--workspace", root))
    ok(cli("source", "add", "swe-bench", documents["html"], "--id", "docs", "--workspace", root))
    return root


def find_json(cli, root: Path, cell: str, *extra: str) -> list[dict]:
    return json.loads(ok(cli("find", "--cell", cell, "--format", "json", "--workspace", root, *extra)).stdout)


# --------------------------------------------------------------------------- passages


def test_passages_of_markdown_keep_heading_paths_and_every_block() -> None:
    extracted = extract(README.encode(), "text/markdown")
    segments = passages_of(extracted)
    texts = {" ".join(extracted.text[s.start:s.end].split()): s.heading for s in segments}
    # Heading paths, outermost first, without the document's title (every passage is under it).
    grading = next(h for t, h in texts.items() if t.startswith("The grader runs the hidden tests"))
    assert grading == "Grading" and HEADING_SEPARATOR not in grading
    # The heading lines themselves are not passages; the admonition, the list and the table are.
    assert "Grading" not in texts and "Environment" not in texts
    assert any("Version 2 changed the harness" in t for t in texts)
    assert any("task container" in t and "one attempt" in t for t in texts)
    assert any("Run pip install harborbench." in t for t in texts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["word ", "Sentence ends. ", "\n", "\n\n", "   ", "x" * 90, "é", "\t"]),
                max_size=400),
       st.lists(st.integers(min_value=0, max_value=4000), max_size=6))
def test_passages_partition_the_text_in_order(pieces: list[str], heading_offsets: list[int]) -> None:
    text = "".join(pieces)
    headings = [(offset, 1 + i % 3, f"H{i}") for i, offset in enumerate(sorted(set(heading_offsets)))
                if offset < len(text)]
    segments = passages_of(Extracted(text, [], headings))
    last_end = 0
    for segment in segments:
        assert last_end <= segment.start < segment.end <= len(text)
        body = text[segment.start:segment.end]
        assert body == body.strip() and body  # no empty passage, no edge whitespace
        assert len(body) <= 2 * 700 + 1
        last_end = segment.end
    # Every non-space character of the text is in some passage (heading lines aside).
    covered = sum(len(text[s.start:s.end].replace(" ", "").replace("\n", "").replace("\t", "")) for s in segments)
    if not headings:
        assert covered == len(text.replace(" ", "").replace("\n", "").replace("\t", ""))


_MD_PIECES = ["# Title\n\n", "## Setup\n\n", "### Deep\n\n", "Plain words here.\n\n", "A **bold** and `code` run.\n\n",
              "- item one\n- item two\n  - nested item\n\n", "1. first\n2. second\n\n",
              "| a | b |\n|---|---|\n| x | y |\n| z | w |\n\n", "> [!NOTE]\n> A note.\n\n", "> quoted text\n\n",
              "```bash\nrun --flag\n```\n\n", "See [the docs](https://example.org/d).\n\n", "Footnote here.[^1]\n\n",
              "[^1]: The footnote text.\n\n", "<details><summary>More</summary>Hidden.</details>\n\n",
              "x" * 300 + ". " + "y" * 500 + ".\n\n", "Émile's café — naïve.\n\n"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_MD_PIECES), min_size=1, max_size=25))
def test_block_passages_of_real_markdown_are_ordered_and_map_to_the_raw_file(pieces: list[str]) -> None:
    from protocoder.evidence.extract import ExtractionError

    raw = "".join(pieces)
    try:
        extracted = extract(raw.encode(), "text/markdown")
    except ExtractionError:
        return  # nothing but markup: no text to search
    segments = passages_of(extracted)
    last_end = 0
    for segment in segments:
        assert last_end <= segment.start < segment.end <= len(extracted.text)
        body = extracted.text[segment.start:segment.end]
        assert body.strip()
        last_end = segment.end
        assert not segment.heading.endswith(HEADING_SEPARATOR)
        # The raw range holds the passage as written (footnotes are laid out last, so raw
        # ranges need not be in order): its first and last words are there.
        assert segment.raw_start is not None and segment.raw_end is not None
        assert 0 <= segment.raw_start < segment.raw_end <= len(raw)
        written = raw[segment.raw_start:segment.raw_end]
        words_of = re.findall(r"\w+", body)
        assert words_of[0] in written and words_of[-1] in written, (body, written)


# --------------------------------------------------------------------------- find through the CLI


def test_find_json_ranks_evidence_across_sources(workspace: Path, cli, tmp_path: Path) -> None:
    paper = latex_pdf(tmp_path / "tex", "paper", PAPER)
    ok(cli("source", "add", "swe-bench", paper, "--id", "paper", "--workspace", workspace))
    found = find_json(cli, workspace, "swe-bench/separate_evidence")
    assert found and all({"source", "heading", "text", "score", "start", "end", "raw_start", "raw_end"} <= set(c)
                         for c in found)
    assert [c["score"] for c in found] == sorted((c["score"] for c in found), reverse=True)
    by_source = {c["source"] for c in found}
    assert by_source == {"readme", "docs", "paper"}  # all three pinned sources are searched
    html_hit = next(c for c in found if c["source"] == "docs")
    assert "own Docker network" in html_hit["text"]
    assert html_hit["heading"] == f"Harbor documentation{HEADING_SEPARATOR}Parallel runs"
    pdf_hit = next(c for c in found if c["source"] == "paper")
    assert "restores the database" in " ".join(pdf_hit["text"].split())
    assert "Protocol" in pdf_hit["heading"]
    # Offsets point into the snapshot's extracted text (its sidecar).
    review = load_review(workspace)
    sha = next(s.sha256 for s in review.protocol("swe-bench").sources if s.id == "docs")
    sidecar = json.loads((workspace / "sources" / f"{sha}.text.json").read_text(encoding="utf-8"))
    assert sidecar["text"][html_hit["start"]:html_hit["end"]] == html_hit["text"]
    # Raw offsets point into the file as written (HTML source with its tags); a PDF has none.
    raw_html = (workspace / "sources" / f"{sha}.html").read_text(encoding="utf-8")
    assert html_hit["raw_start"] is not None
    raw_passage = raw_html[html_hit["raw_start"]:html_hit["raw_end"]]
    assert raw_passage.startswith("Attempts run in parallel") and raw_passage.endswith("services.")
    assert pdf_hit["raw_start"] is None and pdf_hit["raw_end"] is None


def test_markdown_candidates_carry_raw_offsets_into_the_file_as_written(workspace: Path, cli) -> None:
    found = find_json(cli, workspace, "swe-bench/open_work", "--limit", "20")
    review = load_review(workspace)
    sha = next(s.sha256 for s in review.protocol("swe-bench").sources if s.id == "readme")
    raw = (workspace / "sources" / f"{sha}.md").read_text(encoding="utf-8")
    grading = next(c for c in found if c["text"].startswith("The grader runs the hidden tests"))
    assert raw[grading["raw_start"]:grading["raw_end"]] == grading["text"]
    # A list passage keeps its Markdown markers in the raw range: the file's text as written.
    listing = find_json(cli, workspace, "swe-bench/reset_retention", "--query", "macOS Docker Desktop",
                        "--limit", "1")[0]
    assert "Docker Desktop" in listing["text"]
    assert "- On macOS, use Docker Desktop." in raw[listing["raw_start"]:listing["raw_end"]]


def test_find_open_work_puts_the_grading_passage_first(workspace: Path, cli) -> None:
    found = find_json(cli, workspace, "swe-bench/open_work", "--limit", "3")
    assert len(found) <= 3
    assert found[0]["text"].startswith("The grader runs the hidden tests")


def test_query_words_lift_a_passage(workspace: Path, cli) -> None:
    plain = find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20")
    sponsors = [c for c in plain if "sponsors" in c["text"]]
    assert not sponsors or plain.index(sponsors[0]) > 0
    typed = find_json(cli, workspace, "swe-bench/reset_retention", "--query", "sponsors thanks")
    assert "sponsors" in typed[0]["text"]


def test_table_fits_80_columns(workspace: Path, cli) -> None:
    out = ok(cli("find", "--cell", "swe-bench/reset_retention", "--limit", "20", "--workspace", workspace)).stdout
    lines = out.splitlines()
    assert lines[0].startswith("Candidates for swe-bench/reset_retention (2 sources searched)")
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert any("readme:" in line for line in lines)


def test_find_writes_only_its_cache(workspace: Path, cli) -> None:
    before = tree_digest(workspace)
    ok(cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace))
    assert tree_digest(workspace) == before  # the review's files are untouched: find never sets `assisted`
    cached = list((workspace / ".protocoder" / CACHE_DIR / "swe-bench").iterdir())
    assert len(cached) == 1 and (cached[0] / "passages.json").is_file()


def test_cache_is_used_and_rebuilt_after_source_update(workspace: Path, cli, documents: dict[str, Path]) -> None:
    first = find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20")
    folder = workspace / ".protocoder" / CACHE_DIR / "swe-bench"
    (key,) = [p.name for p in folder.iterdir()]
    # The next query reads the cache (the index folder is not written again) and answers the same.
    stamp = (folder / key / "manifest.json").stat().st_mtime_ns
    assert find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20") == first
    assert (folder / key / "manifest.json").stat().st_mtime_ns == stamp
    # A new version of the README: a new key, the new text, the old index gone.
    ok(cli("source", "update", "swe-bench", "readme", documents["md2"], "--workspace", workspace))
    found = find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20")
    texts = " ".join(c["text"] for c in found)
    assert "the package cache is rebuilt every time" in texts
    assert [p.name for p in folder.iterdir()] != [key] and len(list(folder.iterdir())) == 1


def test_an_edited_cache_is_not_trusted(workspace: Path, cli) -> None:
    expected = find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20")
    folder = workspace / ".protocoder" / CACHE_DIR / "swe-bench"
    (key,) = [p.name for p in folder.iterdir()]
    payload_path = folder / key / "passages.json"
    payload = json.loads(payload_path.read_text(encoding="utf-8"))
    index = next(i for i, p in enumerate(payload["passages"]) if "package cache volume is kept" in p[4])
    payload["passages"][index][4] = payload["passages"][index][4].replace("to save time", "MARKED IN CACHE")
    payload_path.write_text(json.dumps(payload), encoding="utf-8")
    # The edited text does not verify against the manifest: the index is rebuilt from the snapshot.
    found = find_json(cli, workspace, "swe-bench/reset_retention", "--limit", "20")
    assert found == expected and not any("MARKED IN CACHE" in c["text"] for c in found)
    assert "MARKED IN CACHE" not in (folder / key / "passages.json").read_text(encoding="utf-8")


def test_another_protocols_index_copied_under_this_key_is_not_used(workspace: Path, cli, tmp_path: Path) -> None:
    lorem = tmp_path / "other.md"
    lorem.write_text("# Other\n\nEach trial restores a snapshot of the virtual machine before it starts.\n",
                     encoding="utf-8")
    ok(cli("source", "add", "webarena", lorem, "--id", "other", "--workspace", workspace))
    find_json(cli, workspace, "webarena/reset_retention")
    expected = find_json(cli, workspace, "swe-bench/reset_retention")
    cache = workspace / ".protocoder" / CACHE_DIR
    (mine,) = (cache / "swe-bench").iterdir()
    (theirs,) = (cache / "webarena").iterdir()
    shutil.rmtree(mine)
    shutil.copytree(theirs, mine)  # webarena's index, manifest and all, under swe-bench's key
    found = find_json(cli, workspace, "swe-bench/reset_retention")
    assert found == expected and all(c["source"] in ("readme", "docs") for c in found)


@pytest.mark.parametrize("damage", ["passages.json", "body/data.csc.index.npy", "heading/vocab.index.json"])
def test_a_broken_cache_is_rebuilt(workspace: Path, cli, damage: str) -> None:
    expected = find_json(cli, workspace, "swe-bench/open_work")
    (cached,) = (workspace / ".protocoder" / CACHE_DIR / "swe-bench").iterdir()
    target = cached / damage
    assert target.is_file()
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 3])  # truncated, as by a full disk
    assert find_json(cli, workspace, "swe-bench/open_work") == expected
    # The rebuilt index replaced the damaged one: the cache is whole again.
    from protocoder.evidence.search import read_index

    assert read_index(cached) is not None
    assert [p.name for p in cached.parent.iterdir()] == [cached.name]


# --------------------------------------------------------------------------- refusals


def test_unknown_protocol_and_field_are_one_line(workspace: Path, cli) -> None:
    line = refused(cli("find", "--cell", "nope/open_work", "--workspace", workspace))
    assert "no protocol 'nope'" in line
    line = refused(cli("find", "--cell", "swe-bench/nope", "--workspace", workspace))
    assert "no field 'nope'" in line and "open_work" in line
    line = refused(cli("find", "--cell", "swe-bench", "--workspace", workspace))
    assert "PROTOCOL/FIELD" in line


def test_no_pinned_source_names_source_add(bundled: Path, cli) -> None:
    line = refused(cli("find", "--cell", "webarena/open_work", "--workspace", bundled))
    assert "no pinned sources" in line and "protocoder source add webarena FILE" in line
    assert not (bundled / ".protocoder" / CACHE_DIR).exists()


def test_absent_snapshots(workspace: Path, cli) -> None:
    review = load_review(workspace)
    shas = {s.id: s.sha256 for s in review.protocol("swe-bench").sources if s.id}
    # One absent: the others are searched and a warning names the missing one.
    (workspace / "sources" / f"{shas['docs']}.html").unlink()
    result = ok(cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace))
    assert "not searched, snapshot not present here: docs" in result.stderr
    assert "Candidates for swe-bench/open_work (1 source searched)" in result.stdout
    assert not (workspace / ".protocoder" / CACHE_DIR / "swe-bench").exists() or not any(
        (workspace / ".protocoder" / CACHE_DIR / "swe-bench").iterdir())
    # All absent: one line naming the command that pins them again.
    shutil.rmtree(workspace / "sources")
    line = refused(cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace))
    assert "no snapshot of protocol 'swe-bench' is present here" in line
    assert "protocoder source update swe-bench readme FILE" in line


def test_empty_result_is_honest(bundled: Path, cli, tmp_path: Path) -> None:
    # A source that shares no word with the field's query: an honest empty answer, exit 0.
    lorem = tmp_path / "lorem.txt"
    lorem.write_text("Lorem ipsum dolor sit amet.\n\nConsectetur adipiscing elit.\n", encoding="utf-8")
    ok(cli("source", "add", "webarena", lorem, "--id", "lorem", "--workspace", bundled))
    out = ok(cli("find", "--cell", "webarena/open_work", "--workspace", bundled)).stdout
    assert out.startswith("No passage of webarena's 1 source shares a word with the query of open_work")
    assert json.loads(ok(cli("find", "--cell", "webarena/open_work", "--format", "json",
                             "--workspace", bundled)).stdout) == []
    typed = find_json(cli, bundled, "webarena/open_work", "--query", "lorem")
    assert [c["text"] for c in typed] == ["Lorem ipsum dolor sit amet."]


def test_candidates_off_refuses_for_a_blind_first_pass(workspace: Path, cli) -> None:
    settings_file = workspace / "protocoder.yaml"
    settings_file.write_text(settings_file.read_text(encoding="utf-8") + "candidates: false\n", encoding="utf-8")
    before = tree_digest(workspace)
    line = refused(cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace))
    assert "blind first pass" in line and "candidates: true" in line
    assert tree_digest(workspace) == before and not (workspace / ".protocoder" / CACHE_DIR).exists()
    # The command it names works: turned on again, find answers.
    settings_file.write_text(settings_file.read_text(encoding="utf-8").replace("candidates: false",
                                                                               "candidates: true"), encoding="utf-8")
    ok(cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace))


def test_candidates_must_be_true_or_false(bundled: Path, cli) -> None:
    settings_file = bundled / "protocoder.yaml"
    settings_file.write_text(settings_file.read_text(encoding="utf-8") + "candidates: maybe\n", encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code != 0
    assert "protocoder.yaml" in result.stderr and "expected true or false for 'candidates'" in result.stderr


# --------------------------------------------------------------------------- rubric keys


def test_search_terms_are_read_and_checked(bundled: Path, cli) -> None:
    review = load_review(bundled)
    assert "timeout" in review.rubric.field("open_work").search_terms
    assert "synchronous" in review.rubric.code("NA").search_terms
    rubric = bundled / "rubric" / "evaluation-boundary.yaml"
    text = rubric.read_text(encoding="utf-8")
    rubric.write_text(text.replace("    search_terms: [reset, restore,", "    search_terms: [[reset], restore,"),
                      encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code != 0
    assert "rubric/evaluation-boundary.yaml:" in result.stderr and "search_terms" in result.stderr


def test_search_terms_change_the_ranking(workspace: Path, cli) -> None:
    before = find_json(cli, workspace, "swe-bench/separate_evidence", "--limit", "20")
    rubric = workspace / "rubric" / "evaluation-boundary.yaml"
    text = rubric.read_text(encoding="utf-8")
    rubric.write_text(text.replace("    search_terms: [isolation,", "    search_terms: [sponsors, isolation,"),
                      encoding="utf-8")
    after = find_json(cli, workspace, "swe-bench/separate_evidence", "--limit", "20")
    def sponsors_rank(found: list[dict]) -> int:
        return next((i for i, c in enumerate(found) if "sponsors" in c["text"]), len(found))

    assert sponsors_rank(after) < len(after)
    assert sponsors_rank(after) < sponsors_rank(before)


# --------------------------------------------------------------------------- independence


def _two_reviewers(root: Path, assisted_protocol: str) -> None:
    review = load_review(root)
    store = Store(review.paths)
    for protocol in ("swe-bench", "webarena"):
        for index, field_id in enumerate(review.rubric.field_ids):
            store.save_cell(Cell(protocol, field_id, "second", "NR" if index == 0 else "E", source="README",
                                 basis="read it", assisted=protocol == assisted_protocol), review.rubric)


def test_assisted_is_stored_and_read(bundled: Path) -> None:
    _two_reviewers(bundled, "swe-bench")
    text = (bundled / "protocols/swe-bench/codes/second.yaml").read_text(encoding="utf-8")
    assert text.count("assisted: true") == 3
    assert "assisted" not in (bundled / "protocols/webarena/codes/second.yaml").read_text(encoding="utf-8")
    review = load_review(bundled)
    assert not review.errors
    assert review.cells("swe-bench", "open_work")["second"].assisted
    assert not review.cells("webarena", "open_work")["second"].assisted
    # Turning it off alone is saved (and the key goes).
    store = Store(review.paths)
    from dataclasses import replace

    cell = review.cells("swe-bench", "open_work")["second"]
    store.save_cell(replace(cell, assisted=False), review.rubric)
    assert not load_review(bundled).cells("swe-bench", "open_work")["second"].assisted


def test_assisted_must_be_a_boolean(bundled: Path, cli) -> None:
    _two_reviewers(bundled, "swe-bench")
    sheet = bundled / "protocols/swe-bench/codes/second.yaml"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("assisted: true", "assisted: sometimes", 1),
                     encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code != 0
    assert "protocols/swe-bench/codes/second.yaml:" in result.stderr and "'assisted'" in result.stderr


def test_agree_split_assisted(bundled: Path, cli) -> None:
    _two_reviewers(bundled, "swe-bench")
    data = json.loads(ok(cli("agree", "--split", "assisted", "--format", "json", "--bootstrap", "0",
                             "--workspace", bundled)).stdout)
    assert set(data) == {"unassisted", "assisted"}
    pooled = {name: next(g for g in report["groups"] if g["group"] == "all") for name, report in data.items()}
    # The bundled review's reviewer coded every cell; the second reviewer coded two protocols' cells,
    # swe-bench's with candidates shown: 3 assisted units, 3 unassisted units coded by both.
    assert pooled["assisted"]["n_units_paired"] == 3
    assert pooled["unassisted"]["n_units_paired"] == 3
    assert data["assisted"]["settings"]["split"] == "assisted"
    table = ok(cli("agree", "--split", "assisted", "--bootstrap", "0", "--workspace", bundled)).stdout
    assert table.index("Unassisted units") < table.index("Assisted units")
    csv_text = ok(cli("agree", "--split", "assisted", "--format", "csv", "--bootstrap", "0",
                      "--workspace", bundled)).stdout
    assert csv_text.splitlines()[0].startswith("split,group,")
    assert {line.split(",")[0] for line in csv_text.splitlines()[1:]} == {"unassisted", "assisted"}


def test_agree_split_needs_a_workspace(tmp_path: Path, cli) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("unit,rater,code\nu1,a,E\nu1,b,E\n", encoding="utf-8")
    result = cli("agree", "--ratings", ratings, "--split", "assisted")
    assert result.exit_code == 2 and "needs a workspace" in result.stderr


def test_methods_paragraph_counts_assisted_cells(bundled: Path, cli, tmp_path: Path) -> None:
    _two_reviewers(bundled, "swe-bench")
    out = tmp_path / "out"
    ok(cli("render", "--workspace", bundled, "--out", out, "--bootstrap", "0"))
    methods = (out / "methods.md").read_text(encoding="utf-8")
    coded = sum(1 for c in load_review(bundled).all_cells() if c.code is not None)
    assert f"In 3 of the {coded} coded cells, the reviewer was shown candidate passages" in methods
    # Without assisted cells the sentence is not there.
    for path in (bundled / "protocols/swe-bench/codes/second.yaml",):
        path.write_text(path.read_text(encoding="utf-8").replace("    assisted: true\n", ""), encoding="utf-8")
    ok(cli("render", "--workspace", bundled, "--out", out, "--bootstrap", "0", "--force"))
    assert "candidate passages" not in (out / "methods.md").read_text(encoding="utf-8")


def test_methods_paragraph_counts_assisted_cells_of_a_single_reviewer(bundled: Path, cli, tmp_path: Path) -> None:
    from dataclasses import replace

    review = load_review(bundled)
    assert review.reviewers == ("casheekar",) or list(review.reviewers) == ["casheekar"]
    store = Store(review.paths)
    for protocol in ("swe-bench", "webarena"):
        for field_id in review.rubric.field_ids[:2]:
            cell = review.cells(protocol, field_id)["casheekar"]
            store.save_cell(replace(cell, assisted=True), review.rubric)
    coded = sum(1 for c in load_review(bundled).all_cells() if c.code is not None)
    out = tmp_path / "out"
    ok(cli("render", "--workspace", bundled, "--out", out, "--bootstrap", "0"))
    methods = (out / "methods.md").read_text(encoding="utf-8").splitlines()
    one = methods.index("All cells were coded by one reviewer; agreement between reviewers was not assessed.")
    assert methods[one + 1] == (f"In 4 of the {coded} coded cells, the reviewer was shown candidate passages "
                                "ranked by the tool before choosing the code.")
    assert f"In 4 of the {coded} coded cells" in (out / "report.html").read_text(encoding="utf-8")
    # A release keeps the count: rendering it later says the same, whatever the live cells say since.
    ok(cli("freeze", "--workspace", bundled, "--label", "v1", "--by", "casheekar", "--bootstrap", "0"))
    assert json.loads((bundled / "releases/v1/view.json").read_text(encoding="utf-8"))["assisted"] == {
        "assisted_cells": 4, "coded_cells": coded}
    for protocol in ("swe-bench", "webarena"):
        path = bundled / f"protocols/{protocol}/codes/casheekar.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("    assisted: true\n", ""), encoding="utf-8")
    ok(cli("render", "--workspace", bundled, "--out", tmp_path / "release", "--release", "v1", "--bootstrap", "0"))
    assert f"In 4 of the {coded} coded cells" in (tmp_path / "release/methods.md").read_text(encoding="utf-8")
    # Live, without assisted cells, the paragraph says nothing of candidates.
    ok(cli("render", "--workspace", bundled, "--out", tmp_path / "live", "--bootstrap", "0"))
    assert "candidate passages" not in (tmp_path / "live/methods.md").read_text(encoding="utf-8")


def test_a_state_folder_linked_out_of_the_workspace_gets_no_cache(workspace: Path, cli, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    state = workspace / ".protocoder"
    if state.exists():
        shutil.rmtree(state)
    state.symlink_to(outside, target_is_directory=True)
    # The workspace check refuses it before find runs: one line, and nothing written there.
    result = cli("find", "--cell", "swe-bench/open_work", "--workspace", workspace)
    assert result.exit_code != 0 and "leads outside the workspace" in result.stderr
    assert not any(outside.iterdir())
