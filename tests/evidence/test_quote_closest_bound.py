"""Issue 30, item 8: the closest-passage search of a quote that is not found is bounded in
length and time — an 8 KB passage that is not in a large source is answered in ≤ 2 s, and the
refusal still names the file, the cell and the closest passage."""

from __future__ import annotations

import random
import time
from pathlib import Path

from click.testing import CliRunner

from protocoder.cli import main
from protocoder.evidence.locate import Haystack
from protocoder.evidence.quotes import closest_passage

from conftest import copy_bundled, tree_digest

WORDS = ["agent", "task", "container", "reset", "score", "grader", "the", "of", "environment", "model", "run",
         "tests", "episode", "budget"]


def big_text(lines: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "\n".join(f"- item {i}: " + " ".join(rng.choice(WORDS) for _ in range(4)) for i in range(lines))


def long_quotes(seed: int = 3) -> list[str]:
    """8 KB passages that are not in the text: unknown words, the text's own words repeated, a mix."""
    rng = random.Random(seed)
    return [("lorem ipsum dolor sit amet " * 400)[:8000],
            ("agent task container reset " * 400)[:8000],
            " ".join(rng.choice([*WORDS, "zebra", "quokka"]) for _ in range(1500))[:8000]]


def test_the_closest_passage_of_a_long_quote_in_a_large_text_is_found_in_bounded_time() -> None:
    text = big_text(200_000)  # 7 MB
    assert len(text) > 6_000_000
    from protocoder.evidence.extract.structure import Extracted

    extracted = Extracted(text)
    haystack = Haystack(text)
    for quote in long_quotes():
        assert haystack.find(quote) is None
        started = time.monotonic()
        closest = closest_passage(extracted, haystack, quote)
        elapsed = time.monotonic() - started
        assert elapsed <= 2.0, (quote[:40], elapsed)
        if "lorem" not in quote:
            assert closest is not None and closest.end > closest.start


def test_quote_add_of_a_long_passage_not_in_the_source_answers_fast_and_names_everything(tmp_path: Path) -> None:
    root = copy_bundled(tmp_path / "review")
    source = tmp_path / "big.md"
    source.write_text("# Big harness\n\n" + big_text(40_000).replace("\n", "\n\n"), encoding="utf-8")
    runner = CliRunner()
    added = runner.invoke(main, ["source", "add", "swe-bench", str(source), "--id", "big", "--workspace", str(root)])
    assert added.exit_code == 0, added.output
    before = tree_digest(root)
    paragraphs = big_text(40_000).split("\n")[20_000:20_300]
    quote = " ".join(paragraphs)[:8000].replace("item 20100:", "item twenty:")  # a long quote with one slip
    assert len(quote) >= 8000
    started = time.monotonic()
    result = runner.invoke(main, ["quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar",
                                  "--source", "big", "--workspace", str(root), "-"], input=quote)
    elapsed = time.monotonic() - started
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert "swe-bench/open_work (casheekar)" in line and "sources/" in line and "closest passage" in line
    assert "item 20000:" in line  # the passage where the quote begins
    assert elapsed <= 2.0 + _loading_allowance(root), elapsed
    assert tree_digest(root) == before


def _loading_allowance(root: Path) -> float:
    """What opening the workspace and the snapshot's text costs on this machine (not the search)."""
    from protocoder.evidence.snapshots import Snapshots
    from protocoder.storage.workspace import load_review

    started = time.monotonic()
    review = load_review(root)
    source = next(s for s in review.protocol("swe-bench").sources if s.id == "big")
    Snapshots(review.paths).haystack(source.sha256, source.media_type)
    return time.monotonic() - started

