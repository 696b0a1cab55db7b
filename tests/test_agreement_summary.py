"""Issue 31.3: ``agree`` reads in one screen, and evidence agreement compares structured evidence.

The default output of a small review fits a terminal: cells and the main coefficients per
field with their intervals, the disagreeing cells with each reviewer's code, then what to run
next; intervals on too few cells are withheld, saying the threshold and why; a count of
dropped resamples never prints as a bracketed number. "Same source" compares the pinned
sources two cells quote (by id), not their free-text locations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from evidence.docs import make_pdf
from evidence.test_overlap import LINES, copy_codes

from protocoder.agreement._report import MIN_INTERVAL_UNITS
from protocoder.storage.workspace import load_review


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_the_default_report_fits_a_screen_and_names_every_disagreement(two: Path, cli) -> None:
    out = ok(cli("agree", "--workspace", two, "--bootstrap", "500", "--seed", "3"))
    lines = out.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 80, out
    assert lines[0] == "Agreement of 2 reviewers (alice, casheekar): 30 of 30 cells coded by both"
    assert re.search(r"^field\s+cells\s+percent agreement\s+Cohen's κ\s+Kripp\. α$", out, re.M)
    assert re.search(r"^open_work\s+10\s+0\.900\s+0\.833\s+0\.840$", out, re.M)
    assert re.search(r"^\s+\[0\.\d\d, 1\.00\]\s+\[", out, re.M), "intervals under the values"
    assert "Disagreements (3 cells):" in out
    for row in (r"webarena\s+open_work\s+P\s+NR", r"cybench\s+reset_retention\s+NR\s+E",
                r"tau-bench\s+separate_evidence\s+P\s+E"):
        assert re.search(row, out), row
    assert re.search(r"protocoder adjudicate\s+decide the 3 unresolved cells", out)
    assert not re.search(r"\d \[\d+\]", out), "a count in brackets reads as a citation"
    assert "p_a" not in out and "BP" not in out and "paired" not in out, "abbreviations the legend never explains"


def test_intervals_on_too_few_cells_are_withheld_and_the_threshold_is_said(tmp_path: Path, cli) -> None:
    rows = ["unit,rater,code,group"]
    codes = {"u1": "EE", "u2": "PE", "u3": "PP", "v1": "EE", "v2": "EP", "v3": "NN", "w1": "EE", "w2": "PP",
             "w3": "NE"}
    for unit, (a, b) in codes.items():
        rows += [f"{unit},ada,{a},{unit[0]}", f"{unit},bo,{b},{unit[0]}"]
    ratings = tmp_path / "r.csv"
    ratings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = ok(cli("agree", "--ratings", ratings, "--bootstrap", "300", "--seed", "1"))
    table = out.split("Below each value")[0]
    assert re.search(r"^u \*\s+3\s+0\.667", table, re.M) and "[" not in table, "no interval on 3 cells"
    assert f"* No interval: fewer than {MIN_INTERVAL_UNITS} cells coded by two or more reviewers" in out
    assert "too few distinct resamples" in out
    assert "resamples dropped" not in out, "no word on the resamples of an interval not shown"
    assert "Disagreements (3 cells):" in out and re.search(r"u2\s+u\s+P\s+E", out)
    assert len(out.splitlines()) <= 24


def test_full_keeps_every_coefficient(two: Path, cli) -> None:
    out = ok(cli("agree", "--workspace", two, "--bootstrap", "0", "--format", "full"))
    assert "Gwet's AC1" in out and "specific agreement" in out
    assert "paired: units with two or more ratings; p_a: percent agreement" in out and "BP: Brennan-Prediger" in out


def test_same_source_compares_quoted_source_ids_not_free_text(bundled: Path, tmp_path: Path, cli) -> None:
    """Both reviewers quote the same pinned paper on webarena/open_work but write its location
    differently: the same source (by id), where the old string comparison said 0."""
    copy_codes(load_review(bundled), "ada")
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(make_pdf([LINES]))
    ok(cli("source", "add", "webarena", paper, "--id", "paper", "--workspace", bundled))
    for reviewer, text, location in (("casheekar", LINES[0], "Sec. 3.2"), ("ada", LINES[0], "Section 3.2, p. 4")):
        ok(cli("quote", "add", "--cell", "webarena/open_work", "--reviewer", reviewer, "--source", "paper", text,
               "--workspace", bundled))
        ok(cli("cell", "set", "--cell", "webarena/open_work", "--reviewer", reviewer, "--source", location,
               "--workspace", bundled))
    report = json.loads(ok(cli("agree", "--format", "json", "--bootstrap", "0", "--workspace", bundled)))
    groups = {g["group"]: g for g in report["groups"]}
    assert groups["open_work"]["evidence"]["same_source"]["value"] == 1.0
    assert groups["open_work"]["evidence"]["quote_overlap"]["value"] == 1.0
    assert groups["reset_retention"]["evidence"]["same_source"]["note"] == "no cell quotes a pinned source"
    assert report["settings"]["evidence_source"] == "quoted source ids"
    ok(cli("render", "--workspace", bundled, "--format", "md", "--bootstrap", "0"))
    methods = (bundled / "output/methods.md").read_text(encoding="utf-8")
    assert "the share quoting the same pinned sources (compared by source id, not by the free-text location)" \
        in methods
