"""Issue 34: a cell of plain values is read without the typed readers (``formats.sheets.plain_cell``),
and gives exactly the cell and the findings the readers give.

Checked through :func:`parse_sheet` itself, once as it runs and once with the shortcut turned off:
on every sheet of a generated review, on arbitrary cell mappings, and on the values the readers
change or report (where the shortcut must not answer).
"""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.storage.findings import MAX_TEXT_LENGTH, Findings
from protocoder.storage.formats import sheets
from protocoder.storage.formats.sheets import CELL_KEYS, parse_sheet, plain_cell
from protocoder.storage.workspace import load_review
from protocoder.storage.yamlio import parse_yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from generate import generate  # noqa: E402

PATH = Path("protocols/p/codes/ada.yaml")


def _both(data: Any, rubric: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(sheet, findings) with the shortcut, then without it."""
    results = []
    for shortcut in (True, False):
        with monkeypatch.context() as patch:
            if not shortcut:
                patch.setattr(sheets, "plain_cell", lambda *args: None)
            found = Findings("x.yaml", "")
            results.append((parse_sheet(data, found, "p", "ada", PATH, rubric), found.items))
    return results[0], results[1]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plain") / "review"
    generate(root, protocols=30, seed=17)
    return root


def test_every_generated_cell_is_plain_and_read_as_the_readers_read_it(generated: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rubric = load_review(generated).rubric
    files = sorted(generated.glob("protocols/*/codes/*.yaml"))
    assert len(files) == 90
    for path in files:
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
        assert all(plain_cell(raw, "p", field, "ada") is not None for field, raw in data["cells"].items())
        fast, slow = _both(data, rubric, monkeypatch)
        assert fast == slow


TEXTS = st.one_of(st.none(), st.text(max_size=30), st.just(""), st.just("  "), st.just("x" * (MAX_TEXT_LENGTH + 1)),
                  st.integers(-3, 3), st.floats(allow_nan=False, width=32), st.booleans(),
                  st.dates(), st.datetimes(timezones=st.sampled_from([None, UTC])),
                  st.lists(st.text(max_size=5), max_size=2))
CITES = st.one_of(TEXTS, st.lists(st.one_of(st.text(max_size=6), st.just(" k "), st.just(" "), st.integers(0, 2)),
                                  max_size=3))


@settings(max_examples=2000, deadline=None)
@given(st.dictionaries(st.sampled_from([*CELL_KEYS, "extra", 1]), TEXTS, max_size=9), CITES, st.booleans())
def test_any_cell_is_read_alike_with_and_without_the_shortcut(raw: dict, cites: Any, with_cites: bool) -> None:
    if with_cites:
        raw["cites"] = cites
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = _both({"cells": {"reset_retention": raw}}, None, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("raw", [
    {"code": "E", "coded_at": "2026-08-15"},  # text, checked as a moment by the reader
    {"code": "E", "coded_at": datetime(2026, 8, 15, 12, tzinfo=UTC)},  # written with Z
    {"code": "E", "rubric_version": 1.0},  # reported: write it in quotes
    {"code": "E", "rubric_version": 1},  # written as text by the reader
    {"code": 1},
    {"code": "E", "cites": "key"},  # one key without brackets
    {"code": "E", "cites": [" "]},
    {"code": "E", "cites": [1]},
    {"code": "E", "basis": "x" * (MAX_TEXT_LENGTH + 1)},
    {"code": "E", "assisted": True},
    {"code": "E", "quotes": [{"source": "s", "text": "t"}]},
    {"code": "E", "colour": "red"},
    {1: "E"},
    ["E"],
])
def test_values_the_readers_change_or_report_leave_the_shortcut(raw: Any) -> None:
    assert plain_cell(raw, "p", "f", "ada") is None


def test_a_plain_cell_is_built_as_the_readers_build_it() -> None:
    cell = plain_cell({"code": "E", "source": "Sec. 2", "basis": "b", "cites": [" k1", "k2 "], "rubric_version": "1.0",
                       "coded_at": date(2026, 8, 15)}, "p", "f", "ada")
    assert cell is not None
    assert (cell.code, cell.cites, cell.coded_at, cell.quotes, cell.assisted) == ("E", ("k1", "k2"), "2026-08-15", (),
                                                                                   False)
    assert plain_cell({"code": ""}, "p", "f", "ada").code is None  # a draft, as the readers make it
