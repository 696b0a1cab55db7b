"""Rubric semantics are declared, not guessed from code ids (issue 13, item 4).

A checklist-style rubric with numeric codes and a not-applicable code that is not named
``NA`` must validate, code, and measure agreement exactly as a rubric spelled the
paper's way does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocoder.storage.workspace import load_review

from conftest import tree_digest

CHECKLIST = """\
id: checklist
title: A pass/fail checklist
version: "1.0"
codes:
  - {id: 1, label: Pass, short: Pass, definition: The item is met., color: "#1b7837"}
  - {id: 0, label: Fail, definition: The item is not met.}
  - {id: na, label: Does not apply, definition: The item cannot apply., role: not-applicable, requires: [basis]}
order: [0, 1]
fields:
  - id: t.1
    label: The benchmark reports how many times each task was run.
    short: Repeated runs
    codes: [1, 0, na]
  - id: t.2
    label: The benchmark states its time limits.
    codes: [1, 0, na]
"""


def checklist_workspace(root: Path, cli, rubric: str = CHECKLIST) -> Path:
    assert cli("init", root).exit_code == 0
    (root / "rubric" / "evaluation-boundary.yaml").unlink()
    (root / "rubric" / "checklist.yaml").write_text(rubric, encoding="utf-8")
    settings = root / "protocoder.yaml"
    settings.write_text(settings.read_text(encoding="utf-8").replace("rubric: evaluation-boundary",
                                                                     "rubric: checklist"), encoding="utf-8")
    for protocol in ("alpha", "beta", "gamma", "delta"):
        assert cli("protocol", "add", "--workspace", root, "--id", protocol, "--name", protocol.title()).exit_code == 0
    return root


def code(root: Path, protocol: str, reviewer: str, cells: dict[str, object]) -> None:
    lines = ["cells:"]
    for field_id, value in cells.items():
        lines += [f"  {field_id}:", f"    code: {value}", "    source: Paper Sec. 2", "    basis: It says so.",
                  '    rubric_version: "1.0"']
    path = root / "protocols" / protocol / "codes" / f"{reviewer}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_numeric_code_ids_are_the_same_codes_however_they_are_written(tmp_path: Path, cli) -> None:
    root = checklist_workspace(tmp_path / "ws", cli)
    code(root, "alpha", "ada", {"t.1": 1, "t.2": "'0'"})
    code(root, "alpha", "bo", {"t.1": "'1'", "t.2": 0})
    result = cli("validate", "--workspace", root)
    assert result.exit_code == 0, result.stderr
    review = load_review(root)
    assert review.rubric is not None
    assert review.rubric.code_ids == ("1", "0", "na")
    assert review.rubric.order == ("0", "1")
    assert review.rubric.field("t.1").short_label == "Repeated runs"
    assert review.rubric.field("t.2").short_label == review.rubric.field("t.2").label
    assert review.rubric.code("1").color == "#1b7837" and review.rubric.code("1").short_label == "Pass"
    assert review.rubric.na_codes == ("na",)
    cells = review.cells("alpha", "t.1")
    assert cells["ada"].code == cells["bo"].code == "1"
    assert review.cells("alpha", "t.2")["ada"].code == review.cells("alpha", "t.2")["bo"].code == "0"


@pytest.mark.parametrize(("old", "new", "message"), [
    ("codes: [1, 0, na]\n  - id: t.2", "codes: []\n  - id: t.2", "a field must allow at least one code"),
    ("role: not-applicable", "role: missing", "unknown role 'missing'"),
    ('color: "#1b7837"', 'color: green', "must be written #RRGGBB"),
    ("short: Repeated runs", "short: " + "x" * 30, "a short label has at most 24 characters"),
    ("order: [0, 1]", "order: [0, 1, na]", "the ordinal scale leaves not-applicable codes out"),
    ("codes: [1, 0, na]\n  - id: t.2", "codes: [1, 1]\n  - id: t.2", "the field lists a code twice"),
])
def test_rubric_mistakes_are_reported_at_their_line(tmp_path: Path, cli, old: str, new: str, message: str) -> None:
    assert old in CHECKLIST
    root = checklist_workspace(tmp_path / "ws", cli)
    (root / "rubric" / "checklist.yaml").write_text(CHECKLIST.replace(old, new, 1), encoding="utf-8")
    before = tree_digest(root)
    result = cli("validate", "--workspace", root)
    assert result.exit_code == 1
    line = CHECKLIST.replace(old, new, 1).splitlines().index(
        next(text for text in CHECKLIST.replace(old, new, 1).splitlines() if new.splitlines()[0] in text)) + 1
    located = [text for text in result.stderr.splitlines() if text.startswith(f"rubric/checklist.yaml:{line}:")]
    assert any(message in text for text in located), result.stderr
    assert tree_digest(root) == before


def test_a_code_named_na_without_a_role_is_a_warning_that_says_what_to_add(tmp_path: Path, cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", root).exit_code == 0
    rubric = root / "rubric" / "evaluation-boundary.yaml"
    text = rubric.read_text(encoding="utf-8")
    assert "    role: not-applicable" in text
    rubric.write_text("\n".join(line for line in text.splitlines() if not line.startswith("    role:")) + "\n",
                      encoding="utf-8")
    result = cli("validate", "--workspace", root)
    assert "code 'NA' declares no role: add 'role: not-applicable'" in result.stderr


def test_na_exclude_acts_on_the_declared_role_not_on_the_id(tmp_path: Path, cli) -> None:
    root = checklist_workspace(tmp_path / "ws", cli)
    code(root, "alpha", "ada", {"t.1": 1, "t.2": "na"})
    code(root, "alpha", "bo", {"t.1": 1, "t.2": "na"})
    code(root, "beta", "ada", {"t.1": 0, "t.2": "na"})
    code(root, "beta", "bo", {"t.1": 1, "t.2": 1})
    code(root, "gamma", "ada", {"t.1": "na", "t.2": 0})
    code(root, "gamma", "bo", {"t.1": "na", "t.2": 0})
    code(root, "delta", "ada", {"t.1": 1, "t.2": 0})
    code(root, "delta", "bo", {"t.1": 0, "t.2": 0})

    def pooled(*options: str) -> dict[str, object]:
        result = cli("agree", "--workspace", root, "--format", "json", "--bootstrap", "0", *options)
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        return {"settings": report["settings"], "all": report["groups"][-1]}

    counted, excluded = pooled(), pooled("--na", "exclude")
    assert counted["all"]["n_units_paired"] == 8
    # Four pairs of ratings coded 'na' are dropped: the result is not the one with 'na' counted.
    assert excluded["all"]["n_units_paired"] == 5
    assert excluded["settings"]["na_code"] == "na" and excluded["settings"]["na_excluded"] == 5
    assert "na" not in excluded["settings"]["categories"]
    table = cli("agree", "--workspace", root, "--bootstrap", "0", "--na", "exclude").stdout
    assert "not applicable (na): excluded" in table


def test_na_exclude_without_a_declared_not_applicable_code_is_refused(tmp_path: Path, cli) -> None:
    root = checklist_workspace(tmp_path / "ws", cli, CHECKLIST.replace(", role: not-applicable", ""))
    code(root, "alpha", "ada", {"t.1": 1})
    code(root, "alpha", "bo", {"t.1": 0})
    result = cli("agree", "--workspace", root, "--na", "exclude")
    assert result.exit_code == 2
    assert "declares no not-applicable code" in result.stderr and "role: not-applicable" in result.stderr


def test_ratings_csv_takes_its_not_applicable_codes_from_the_command_line(tmp_path: Path, cli) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("unit,rater,code\nu1,a,pass\nu1,b,pass\nu2,a,n/a\nu2,b,n/a\nu3,a,fail\nu3,b,pass\n",
                       encoding="utf-8")
    result = cli("agree", "--ratings", ratings, "--na", "exclude", "--na-code", "n/a", "--format", "json",
                 "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["settings"]["na_excluded"] == 2 and report["groups"][-1]["n_units"] == 2
