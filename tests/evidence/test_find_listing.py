"""A file listing in a code block (names and what each holds) is one passage, ranked as a reference table is.

Real documents from tests/data/real-docs* (unmodified published documentation; see each MANIFEST.md).
"""

from __future__ import annotations

from pathlib import Path

from protocoder.evidence.extract import extract
from protocoder.evidence.search import PassageIndex, field_query, source_passages
from protocoder.evidence.search.kinds import LISTING_CHARS, is_listing, listing_parts
from protocoder.storage.findings import Findings
from protocoder.storage.formats import parse_rubric
from protocoder.storage.yamlio import parse_yaml

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
LISTINGS = {("real-docs-heldout5", "repoagentbench/README.md"): "  manifest.json        # run_id",
            ("real-docs-heldout5", "strands-agents-evals/src/strands_evals/redteam/README.md"): "├── experiment.py",
            ("real-docs-heldout8", "openenv-core/README.md"): "├── outputs/              # Runtime outputs",
            ("real-docs-heldout8", "teambench/README.md"): "      setup.sh           # Workspace preparation"}


def _rubric():  # noqa: ANN202
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    return parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))


def _index(folder: str, name: str) -> PassageIndex:
    data = (DATA / folder / name).read_bytes()
    return PassageIndex.build(source_passages("readme", extract(data, "text/markdown"), data.decode("utf-8")))


def test_a_listing_is_names_with_their_comments_and_commands_with_comments_are_not() -> None:
    tree = "my_env/\n├── app.py        # Create FastAPI app\n├── Dockerfile    # Define container image\n" \
           "└── outputs/      # Runtime outputs (logs, evals)\n"
    assert is_listing(tree)
    assert is_listing("cli.py      # the command\nrun.py      # one run\ngrade.sh    # the grader\n")
    # commands with a comment after them are commands: the first word is not followed by the comment
    assert not is_listing("swebench images clean --run-id <id>   # remove leftover containers\n"
                          "swebench images build verified -j 8   # build/pull images ahead of time\n"
                          "swebench run --dataset lite           # run the lite split\n")
    # two listed lines are not enough, and a block mostly of other lines is not a listing
    assert not is_listing("a.py    # one\nb.py    # two\n")
    assert not is_listing("a.py    # one\nb.py    # two\nc.py    # three\n" + "x = 1\n" * 4)


def test_every_listing_of_the_real_documents_and_nothing_else() -> None:
    """The four code blocks of the vendored documents that list files with what each holds are listings; no
    other code block of the eight sets is (they are commands, configuration, output and drawings)."""
    found = set()
    for folder in sorted(DATA.glob("real-docs*")):
        for path in sorted(folder.rglob("*.md")):
            if path.name == "MANIFEST.md":
                continue
            index = _index(folder.name, str(path.relative_to(folder)))
            for passage in index.passages:
                if passage.kind == "listing":
                    found.add((folder.name, str(path.relative_to(folder))))
                    first = LISTINGS.get((folder.name, str(path.relative_to(folder))))
                    assert first is not None and first.strip() in passage.text, passage.text[:80]
    assert found == set(LISTINGS)


def test_a_long_listing_is_cut_at_line_ends() -> None:
    line = "name.py      # what this file holds, in a few words\n"
    per_part = LISTING_CHARS // len(line)  # whole lines that fit in one part
    text = line * (2 * per_part + 1)
    parts = listing_parts(text, 0, len(text))
    assert [b - a for a, b in parts] == [per_part * len(line), per_part * len(line), len(line)]
    assert all(b - a <= LISTING_CHARS for a, b in parts)
    assert "".join(text[a:b] for a, b in parts) == text
    assert all(text[a:b].startswith("name.py") for a, b in parts)


def test_a_listing_ranks_whole_and_points_at_a_line() -> None:
    """teambench's README (eighth set) shows a task's folder as a listing: ``setup.sh  # Workspace preparation``
    and ``workspace/  # Initial (buggy) code and data`` are what a reviewer cites for reset or retention. Cut into
    lines, they were commented lines under the floor (17th and 18th, or not listed); the listing read whole is
    in the top 10, and the candidate points at one of its lines."""
    index = _index("real-docs-heldout8", "teambench/README.md")
    rubric = _rubric()
    found = index.search(field_query(rubric, rubric.field("reset_retention")), 10)
    [listing] = [c for c in found if "setup.sh           # Workspace preparation" in c.text]
    assert listing.focus_start is not None and listing.focus_end is not None
    assert listing.start < listing.focus_start < listing.focus_end <= listing.end
    row = listing.text[listing.focus_start - listing.start:listing.focus_end - listing.start]
    assert "#" in row and "\n" not in row


def test_find_names_a_listing_line_as_a_line(tmp_path: Path) -> None:
    """The note under a listing's candidate says where its best line is in the listing, not "row … in the table"."""
    import subprocess
    import sys

    cli = [sys.executable, "-m", "protocoder"]
    workspace = tmp_path / "w"
    subprocess.run([*cli, "init", str(workspace)], check=True, capture_output=True)
    subprocess.run([*cli, "protocol", "add", "-w", str(workspace), "--id", "tb", "--name", "TeamBench"], check=True,
                   capture_output=True)
    subprocess.run([*cli, "source", "add", "-w", str(workspace), "tb", str(DATA / "real-docs-heldout8" / "teambench" /
                    "README.md"), "--id", "readme"], check=True, capture_output=True)
    done = subprocess.run([*cli, "find", "-w", str(workspace), "--cell", "tb/reset_retention"], check=True,
                          capture_output=True, text=True)
    notes = [line.strip() for line in done.stdout.splitlines() if "in the listing" in line]
    assert notes and notes[0].startswith("(line ") and "; the line: readme:" in notes[0], done.stdout
    # the README's table of facts is still a table
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert any(line.startswith("(row ") and "in the table; the row:" in line for line in lines)
