"""``find`` at the command line on a step of a code block (round 13): the table shows the step's best command and
where it is, and the JSON says it is a step. swebench's README (tests/data/real-docs-heldout, unmodified)."""

from __future__ import annotations

import json
from pathlib import Path

from .docs import cli_workspace

SWEBENCH = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout" / "swebench" / "README.md"
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
