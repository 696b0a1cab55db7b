"""A table is one passage; a table candidate points at its best row (``Candidate.focus_start`` /
``focus_end``), which ``find`` shows instead of the table's header. Through the real CLI on a real README
(cua-bench's table of ``cb run`` flags, tests/data/real-docs-heldout7) and on the row choice itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocoder.evidence.search.candidate import best_row, row_words, table_rows

from .test_find import find_json, ok
from conftest import copy_bundled

CUA_BENCH = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout7" / "cua-bench" / "README.md"
ATTEMPTS = "--attempts N · Run every variant N times (fresh sandbox each); summary.json reports pass@k."


@pytest.fixture
def workspace(tmp_path: Path, cli) -> Path:
    """The bundled review with cua-bench's README pinned for swe-bench."""
    root = copy_bundled(tmp_path / "review")
    ok(cli("source", "add", "swe-bench", CUA_BENCH, "--id", "cua-bench", "--workspace", root))
    return root


def test_find_shows_a_table_candidates_best_row_and_not_its_header(workspace: Path, cli) -> None:
    out = ok(cli("find", "--cell", "swe-bench/reset_retention", "--query", "fresh attempts", "--limit", "3",
                 "--workspace", workspace)).stdout
    lines = out.splitlines()
    assert lines[0] == "Candidates for swe-bench/reset_retention (1 source searched)"
    # The heading line is as before: the table's whole range and its heading.
    assert lines[1].startswith("  1. ") and lines[1].endswith("  cua-bench:1397-2728  Running tasks"), out
    shown = " ".join(line.strip() for line in lines[2:4])
    assert shown == ATTEMPTS, out
    assert lines[4] == "      (row 7 of 9 in the table; the row: cua-bench:2462-2551)", out
    assert "Flag" not in out  # the header row is not what is shown
    assert all(len(line) <= 80 for line in lines)


def test_find_json_has_the_best_rows_offsets_inside_a_table_and_none_for_prose(workspace: Path, cli) -> None:
    found = find_json(cli, workspace, "swe-bench/reset_retention", "--query", "fresh attempts")
    review_text = json.loads(next((workspace / "sources").glob("*.text.json")).read_text(encoding="utf-8"))["text"]
    tables = [c for c in found if c["text"].startswith("Flag\tMeaning\n")]
    assert len(tables) == 1
    table = tables[0]
    assert table["start"] < table["focus_start"] < table["focus_end"] <= table["end"]
    row = review_text[table["focus_start"]:table["focus_end"]]
    assert row == "--attempts N\tRun every variant N times (fresh sandbox each); summary.json reports pass@k."
    prose = [c for c in found if c is not table]
    assert prose and all(c["focus_start"] is None and c["focus_end"] is None for c in prose)


def test_without_typed_words_the_row_holding_the_most_query_weight_is_shown(workspace: Path, cli) -> None:
    """With the field's query alone, the chosen row is one of the table's flags (which one: the row whose
    distinct query words weigh most), never the header."""
    found = find_json(cli, workspace, "swe-bench/reset_retention")
    table = next(c for c in found if c["focus_start"] is not None)
    row = table["text"][table["focus_start"] - table["start"]:table["focus_end"] - table["start"]]
    assert row.startswith("--") and "\t" in row and "\n" not in row


TABLE = "Flag\tMeaning\n--cache\tKeep the cache between runs.\n--fresh\tStart each run in a fresh container.\n" \
        "--reuse\tReuse the container between runs.\n"


def test_the_best_row_skips_the_header_and_ties_go_to_the_first() -> None:
    rows = row_words(TABLE)
    assert [TABLE[start:end].split("\t")[0] for start, end, _ in rows] == ["--cache", "--fresh", "--reuse"]
    # The header holds "flag" and "meaning": never chosen while there are rows under it.
    assert best_row(rows, {"flag": 9.0, "mean": 9.0}) == (rows[0][0], rows[0][1])
    # "contain" is in two rows at the same weight: the first of them.
    assert best_row(rows, {"contain": 1.0}) == (rows[1][0], rows[1][1])
    # Summed weights: "reus" and "contain" outweigh "fresh" and "contain".
    assert best_row(rows, {"contain": 1.0, "fresh": 1.0, "reus": 1.5}) == (rows[2][0], rows[2][1])
    # Distinct words: "cache" twice in the first row counts once (1.0 < 0.6 + 0.6).
    assert best_row(rows, {"cach": 1.0, "contain": 0.6, "fresh": 0.6}) == (rows[1][0], rows[1][1])


def test_a_table_of_one_row_is_its_own_best_row_and_rows_lose_their_edges() -> None:
    assert best_row(row_words("Flag\tMeaning"), {}) == (0, len("Flag\tMeaning"))
    text = "A\tB\n\n  x\ty  \n"
    assert table_rows(text) == [(0, 3), (7, 10)]
    assert best_row(row_words(text), {}) == (7, 10)
    assert best_row(row_words(""), {"a": 1.0}) is None
