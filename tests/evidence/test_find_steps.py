"""``find`` at the command line on a step of a code block (round 13): the table shows the step's best command and
where it is, and the JSON says it is a step. swebench's README (tests/data/real-docs-heldout, unmodified)."""

from __future__ import annotations

import json
from pathlib import Path

from .docs import cli_workspace

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SWEBENCH = DATA / "real-docs-heldout" / "swebench" / "README.md"
COMMAND = "swebench images clean --run-id <run_id>       # remove leftover containers"


def test_find_names_a_steps_best_command(tmp_path: Path) -> None:
    workspace, run = cli_workspace(tmp_path, "swe", "SWE-bench", SWEBENCH, "readme")
    args = ["find", "-w", workspace, "--cell", "swe/reset_retention"]
    found = json.loads(run(*args, "--format", "json").stdout)
    step = next(c for c in found if c["step"])
    assert step["text"].startswith("swebench images build verified")
    assert step["text"][step["focus_start"] - step["start"]:step["focus_end"] - step["start"]] == COMMAND
    assert not any(c["step"] for c in found if "\n" not in c["text"])  # one command alone is no step
    table = run(*args).stdout.splitlines()
    at = next(n for n, line in enumerate(table) if "swebench images clean" in line)
    assert table[at].split() == COMMAND.split()  # the command, not the step's first line
    assert table[at + 1].strip() == (f"(command 3 of 4 in the step; the command: "
                                     f"readme:{step['focus_start']}-{step['focus_end']})")


def _focus(folder: str, name: str, field_id: str, holding: str) -> str:
    """The focus text of the first of ``find``'s candidates (cold, 10) for ``field_id`` on a real document whose
    text holds ``holding``."""
    from protocoder.evidence.extract import extract, raw_text
    from protocoder.evidence.search import PassageIndex, field_query, source_passages
    from protocoder.storage.findings import Findings
    from protocoder.storage.formats import parse_rubric
    from protocoder.storage.yamlio import parse_yaml

    data = (DATA / folder / name).read_bytes()
    index = PassageIndex.build(source_passages("s", extract(data, "text/markdown"), raw_text(data, "text/markdown")))
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    rubric = parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))
    found = index.search(field_query(rubric, rubric.field(field_id)), 10)
    return next(c.focus_text for c in found if holding in c.text and c.focus_start is not None)


def test_the_row_or_command_pointed_at_is_chosen_by_rare_query_words() -> None:
    """A table's row, a listing's line and a step's command are chosen by their query words weighed by how rare
    each is among the passages: toolbench's ``--keep-sandbox`` row (retaining the trial's working tree, what a
    reviewer cites for reset or retention) rather than ``--models``, whose words every row shares; repoagentbench's
    ``workdir/  # isolated copy of the task`` rather than ``manifest.json``. By weight alone neither was chosen."""
    assert _focus("real-docs-heldout7", "toolbench/userdocs/guides/running-a-benchmark.md", "reset_retention",
                  "--keep-sandbox").startswith("--keep-sandbox\tRetain the full trial working tree")
    assert _focus("real-docs-heldout5", "repoagentbench/README.md", "separate_evidence",
                  "workdir/").strip().startswith("workdir/             # isolated copy of the task")
