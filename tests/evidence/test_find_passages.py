"""Passages as a reader sees them, on the vendored real documentation (tests/data/real-docs).

Code blocks are cut into the units a reviewer quotes (a command with its comment line), never
into windows across commands; news, tables of contents and badges are told apart; headings
come without the document's title and emoji; and every candidate ``find`` shows for any field
of any real document can be quoted by the reader's own path (its text as the reader makes a
quote, located by the code ``quote add`` uses) in a real workspace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.search import code_units, source_passages
from protocoder.evidence.search.candidate import unit_words
from protocoder.evidence.search.kinds import CODE_GROUP_CHARS, code_groups

from conftest import copy_bundled

REAL_DOCS = Path(__file__).resolve().parents[1] / "data" / "real-docs"
FRESH_DOCS = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout"
DOCUMENTS = sorted(p.relative_to(REAL_DOCS).as_posix() for p in REAL_DOCS.rglob("*")
                   if p.suffix in (".md", ".html") and p.name != "MANIFEST.md")
FIELDS = ("open_work", "reset_retention", "separate_evidence")


def passages(name: str) -> list:
    path = REAL_DOCS / name
    media = "text/html" if path.suffix == ".html" else "text/markdown"
    data = path.read_bytes()
    return source_passages(name, extract(data, media), raw_text(data, media))


def test_fourteen_documents() -> None:
    assert len(DOCUMENTS) == 14


def test_a_command_keeps_its_comment_and_two_commands_never_share_a_unit() -> None:
    block = ("# Mount the current directory\n# Clean up after the run\ndocker run --rm -v $(pwd):/app img \\\n"
             "    --flag value\nrm -rf /tmp/*\n\n# Example\npip install pkg\nenv.reset()  # back to the start\n"
             "# trailing note")
    units = [(block[a:b], kind) for a, b, kind in code_units(block, 0, len(block))]
    assert units == [
        ("# Mount the current directory", "comment"),
        ("# Clean up after the run\ndocker run --rm -v $(pwd):/app img \\\n    --flag value", "comment"),
        ("rm -rf /tmp/*", "code"),
        ("# Example\npip install pkg", "install"),
        ("env.reset()  # back to the start", "comment"),
        ("# trailing note", "comment"),
    ]


def test_real_code_blocks_are_cut_into_commands_and_steps() -> None:
    """A code block is cut at its blank lines into steps; a step of at most ``CODE_GROUP_CHARS`` is one passage
    (round 12), its commands (``code_units``) what a candidate points at; a longer one stays its commands."""
    found = {p.text: p.kind for p in passages("bigcodebench/ADVANCED_USAGE.md")}
    # The clean-up step a reviewer cites for open work: the comment that introduces it, the kill and the rm.
    cleanup = next(t for t in found if t.startswith("# You are strongly recommended to use the following command"))
    assert "xargs -r kill" in cleanup and cleanup.endswith("rm -rf /tmp/*") and found[cleanup] == "comment"
    assert [cleanup[a:b].split("\n")[-1][:10] for a, b, _ in unit_words(cleanup)] == ["pids=$(ps ", "rm -rf /tm"]
    steps = 0
    for name in DOCUMENTS:
        raw = (REAL_DOCS / name).read_text(encoding="utf-8")
        for passage in passages(name):
            if passage.kind not in ("code", "comment", "install") or (
                    passage.raw_start is not None and "```" in raw[passage.raw_start:passage.raw_end]):
                continue  # a paragraph of prose with the code block written into it (the next test)
            assert not re.search(r"\n[ \t]*\n", passage.text), (name, passage.text)  # never across a blank line
            lines = [line for line in passage.text.splitlines() if line.strip()]
            commands = [i for i, line in enumerate(lines) if not line.lstrip().startswith(("#", "//"))
                        and not (i and lines[i - 1].rstrip().endswith("\\"))]
            if len(commands) > 1:
                steps += 1
                assert len(passage.text) <= CODE_GROUP_CHARS, (name, passage.text)
                assert len(unit_words(passage.text)) > 1
    assert steps > 20  # the fourteen documents' code is mostly steps of several commands


def test_a_step_is_joined_up_to_its_length_and_never_across_a_blank_line() -> None:
    block = ("# build\nharness build --all\nharness run --tasks all\n\nharness clean\n\n"
             + "\n".join(f"harness run --task {n:03d} --attempts 3 --keep-logs" for n in range(12)))
    grouped = [(block[a:b], kind) for a, b, kind in code_groups(block, code_units(block, 0, len(block)))]
    assert grouped[0] == ("# build\nharness build --all\nharness run --tasks all", "comment")
    assert grouped[1] == ("harness clean", "code")
    # twelve commands in one run are over CODE_GROUP_CHARS: they stay twelve passages, not a window of them
    assert len(block.split("\n\n")[2]) > CODE_GROUP_CHARS and len(grouped) == 2 + 12
    # one kind when the units share it; install lines together stay install lines
    installs = "pip install a\npip install b"
    assert code_groups(installs, code_units(installs, 0, len(installs))) == [(0, len(installs), "install")]



def fresh_passages(name: str) -> list:
    data = (FRESH_DOCS / name).read_bytes()
    return source_passages(name, extract(data, "text/markdown"), raw_text(data, "text/markdown"))


def test_a_code_block_written_into_a_paragraph_is_read_with_its_sentence() -> None:
    """A sentence with the code block right under it, no blank line between (``Parallel execution ...`` +
    ``python run_multienv.py ... --num_envs 10``), is one passage (``mixed``: weighed as prose, floored as
    code); a code block with blank lines around its fences stays cut into commands (swebench's ``Other
    commands:`` block)."""
    desktop = fresh_passages("desktop-env/README.md")
    parallel = [p for p in desktop if "--num_envs 10" in p.text]
    assert len(parallel) == 1
    assert parallel[0].text.startswith("Parallel execution (example showing switching provider to docker)")
    assert parallel[0].kind == "mixed" and "--client_password password" in parallel[0].text
    # All its code installs: an install paragraph, demoted as install lines are.
    alone = [p for p in desktop if "pip install desktop-env" in p.text]
    assert [p.kind for p in alone] == ["install"] and alone[0].text.startswith("Alternatively, you can install")
    swebench = {p.text: p.kind for p in fresh_passages("swebench/README.md")}
    assert swebench["Other commands:"] == "prose"
    # its four commands are one step (round 12); the clean-up line is the third of its commands
    clean = [t for t in swebench if "swebench images clean --run-id" in t]
    assert len(clean) == 1 and clean[0].startswith("swebench images build verified") and swebench[clean[0]] == "comment"
    assert [clean[0][a:b] for a, b, _ in unit_words(clean[0])][2] == (
        "swebench images clean --run-id <run_id>       # remove leftover containers")


def test_news_tables_of_contents_and_badges_are_told_apart() -> None:
    evalplus = passages("evalplus/README.md")
    news = [p for p in evalplus if "officially released" in p.text]
    assert news and all(p.kind == "news" for p in news)
    assert any(p.kind == "toc" and "Quick Start" in p.text for p in evalplus)  # the 📰News • 🔥Quick Start bar
    bfcl = passages("bfcl-eval/README.md")
    toc = [p for p in bfcl if p.heading == "Table of Contents"]
    assert toc and all(p.kind == "toc" for p in toc)
    lm_eval = passages("lm-eval/README.md")
    assert all(p.kind == "news" for p in lm_eval if p.text.startswith("[2025/12]"))
    # A BibTeX entry under "Citation" is not evidence of anything ("Processing" is not a process).
    assert all(p.kind == "boilerplate" for p in evalplus if "booktitle" in p.text)
    # Running text under ordinary headings stays prose.
    assert any(p.kind == "prose" and p.text.startswith("We introduce the Berkeley Function Calling") for p in bfcl)


def test_headings_leave_out_the_document_title_and_emoji() -> None:
    for name in DOCUMENTS:
        found = passages(name)
        assert found, name
        for passage in found:
            assert "📰" not in passage.heading and "🔥" not in passage.heading and "🚀" not in passage.heading
    metr = passages("metr-cli/metr/task-standard/workbench/README.md")
    assert all(not p.heading.startswith("METR Task Standard workbench") for p in metr)
    assert any(p.heading == "Usage › Running tests" for p in metr)
    assert any(p.heading == "News" for p in passages("evalplus/README.md"))


@pytest.fixture(scope="module")
def real_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled review with every real document pinned as a source of one protocol each."""
    from click.testing import CliRunner

    from protocoder.cli import main
    from protocoder.storage.workspace import load_review

    root = copy_bundled(tmp_path_factory.mktemp("real") / "review")
    ids = [p.id for p in load_review(root).protocols]
    for number, name in enumerate(DOCUMENTS):
        result = CliRunner().invoke(main, ["source", "add", ids[number % len(ids)], str(REAL_DOCS / name), "--id",
                                           f"doc{number}", "--workspace", str(root)])
        assert result.exit_code == 0, result.output
    # The fresh held-out documents too: their passages are paragraphs joined across Markdown markup.
    fresh = sorted(p for p in FRESH_DOCS.rglob("*.md") if p.name != "MANIFEST.md")
    assert len(fresh) == 7
    for number, path in enumerate(fresh):
        result = CliRunner().invoke(main, ["source", "add", ids[number % len(ids)], str(path), "--id",
                                           f"fresh{number}", "--workspace", str(root)])
        assert result.exit_code == 0, result.output
    return root


def test_every_candidate_of_every_real_document_can_be_quoted_as_the_reader_quotes_it(real_workspace: Path) -> None:
    from protocoder.evidence.locate import Span
    from protocoder.evidence.quotes.locating import locate_quote
    from protocoder.evidence.reading import ReadingText
    from protocoder.evidence.search import find_passages
    from protocoder.evidence.snapshots import Snapshots
    from protocoder.model import Quote
    from protocoder.storage.workspace import load_review

    review = load_review(real_workspace)
    snapshots = Snapshots(review.paths)
    checked = 0
    failures = []
    for protocol in review.protocols:
        sources = {s.id: s for s in protocol.sources if s.has_snapshot}
        if not sources:
            continue
        readings = {sid: ReadingText(snapshots.text(s.sha256, s.media_type)) for sid, s in sources.items()}
        for field in FIELDS:
            for candidate in find_passages(review, protocol.id, field, limit=1000):
                # The reader selects the candidate's range, and q quotes it: its text made into a quote.
                text = readings[candidate.source].passage(Span(candidate.start, candidate.end))
                quote = locate_quote(Quote(candidate.source, text, start=candidate.start, end=candidate.end),
                                     sources[candidate.source], snapshots)
                checked += 1
                if quote is None:
                    failures.append((protocol.id, candidate.source, candidate.text[:80]))
    assert checked > 1000
    assert failures == []


HARNESS = """\"\"\"Run one task in a fresh container.\"\"\"

import subprocess


def run(task):
    # Every trial gets its own container, removed when it exits.
    container = start(task.image, remove=True)
    try:
        return container.run(task.command, timeout=task.timeout)
    finally:
        # Kill what the agent left running before the score is read.
        container.kill()

The harness waits for the scorer before it reports a result. Scores are read
from the container's log once every process has exited.
"""


def test_a_harness_pinned_as_text_is_cut_into_its_code_lines() -> None:
    extracted = extract(HARNESS.encode(), "text/plain")
    found = [(p.text, p.kind) for p in source_passages("harness", extracted)]
    # the function, written without a blank line, is one step; its commands are what a candidate points at
    step = next(text for text, kind in found if text.startswith("def run(task):") and kind == "comment")
    commands = [step[a:b].strip() for a, b, _ in unit_words(step)]
    assert "# Every trial gets its own container, removed when it exits.\n    container = start(task.image, " \
           "remove=True)" in commands
    assert "# Kill what the agent left running before the score is read.\n        container.kill()" in commands
    assert commands[0] == "def run(task):"
    # Running text in the same file stays one passage of prose.
    assert any(kind == "prose" and text.startswith("The harness waits for the scorer") and "exited." in text
               for text, kind in found)
