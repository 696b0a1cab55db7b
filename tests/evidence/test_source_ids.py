"""A new source's default id is short: the document's name where its title gives one (issue 29's
"a source's default id … from its first meaningful heading", read as a reviewer types it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocoder.evidence.naming import SHORT_ID_LENGTH, short_id
from protocoder.model import is_slug

from .docs import cli_workspace

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.parametrize(("title", "expected"), [
    # the name before a subtitle
    ("TeamBench: Evaluating Structured LLM Teamwork via OS-Enforced Role Separation", "teambench"),
    ("AlpacaEval : An Automatic Evaluator for Instruction-following Language Models", "alpacaeval"),
    ("Multi-SWE-bench: A Multilingual Benchmark for Issue Resolving", "multi-swe-bench"),
    ("Core Runner — Design", "core-runner"),
    ("τ-bench: A Benchmark for Tool-Agent-User Interaction", "tau-bench"),
    # a one-word short name in brackets that starts as the title does; not any bracketed word
    ("Berkeley Function Calling Leaderboard (BFCL)", "bfcl"),
    ("Behaviour Suite for Reinforcement Learning (bsuite)", "bsuite"),
    ("Installation (Linux)", "installation-linux"),
    # the first words, without a leading article or a trailing preposition
    ("The Continuous-Improvement Stack for Agents", "continuous-improvement-stack"),
    ("A Benchmark for Long-Horizon Agents", "benchmark-for-long-horizon"),
    ("LLM-based Multi-Agent Evaluation & Benchmark Framework", "llm-based-multi-agent-evaluation"),
    ("Contributing to AutoGenBench", "contributing-to-autogenbench"),
    ("The per-sample lifecycle in task/run.py", "per-sample-lifecycle"),
    ("SWE-bench", "swe-bench"),
    ("README", "readme"),
    # nothing to name it by: the caller falls back to "source"
    ("🚀", ""),
    (": subtitle only", "subtitle-only"),
])
def test_short_id(title: str, expected: str) -> None:
    assert short_id(title) == expected


def test_a_long_first_word_is_kept_whole() -> None:
    word = "supercalifragilisticexpialidocious"
    assert short_id(f"{word} benchmark") == word


@pytest.mark.parametrize("folder", sorted(p.name for p in DATA.glob("real-docs*") if p.is_dir()))
def test_every_real_document_gets_a_short_safe_id(folder: str) -> None:
    """Every title the real documents give (nine sets) makes a safe id of at most SHORT_ID_LENGTH
    characters, or of one word."""
    from protocoder.evidence.snapshots import extract_document

    for path in sorted((DATA / folder).rglob("*")):
        if not path.is_file() or path.name in ("MANIFEST.md", "fetch.sh"):
            continue
        _, _, extracted = extract_document(path.read_bytes(), path.name, str(path))
        made = short_id(extracted.title or path.stem)
        assert made and is_slug(made), (path, extracted.title)
        assert len(made) <= SHORT_ID_LENGTH or "-" not in made, (path, extracted.title, made)


def test_source_add_prints_the_short_id_and_quotes_use_it(tmp_path: Path) -> None:
    """At the command line, on a real README whose title is 77 characters long: the id printed is the
    project's name, a second pin of another document with the same name gets ``-2``, and ``quote add``
    takes the id."""
    workspace, run = cli_workspace(tmp_path, "tb", "TeamBench")
    readme = DATA / "real-docs-heldout8" / "teambench" / "README.md"
    added = run("source", "add", "-w", workspace, "tb", readme)
    assert "teambench" in added.stdout.split(), added.stdout
    copy = tmp_path / "README.md"
    copy.write_bytes(readme.read_bytes() + b"\nOne more line.\n")
    again = run("source", "add", "-w", workspace, "tb", copy)
    assert "teambench-2" in again.stdout.split(), again.stdout
    text = readme.read_text(encoding="utf-8")
    sentence = next(line.strip() for line in text.splitlines() if line.strip().startswith("TeamBench"))[:60]
    quoted = run("quote", "add", "-w", workspace, "--cell", "tb/reset_retention", "--reviewer", "ana", "--source",
                 "teambench", sentence, check=False)
    assert quoted.returncode == 0, quoted.stderr
