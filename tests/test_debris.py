"""Issue 26: a command killed by SIGKILL leaves no debris that outlives the next command.

A real child process runs ``protocoder adjudicate`` on a released cell (the case that writes
``.protocoder/pending.json``) and is SIGKILLed at the exact moment its temporary file is on
disk (it announces that moment on stdout, then waits to be killed): the next command, even a
read-only one, removes the temporary; nothing else changes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_lifecycle import edit, released, two  # noqa: F401  (fixtures)

# Pauses the chosen atomic write between writing its temporary and renaming it over the target.
PAUSING_CHILD = textwrap.dedent("""
    import os, sys, time
    target = os.environ["PAUSE_AT"]
    real_replace = os.replace
    def paused_replace(src, dst, *args, **kwargs):
        if os.path.basename(os.fspath(dst)) == target:
            print("in the write", flush=True)
            time.sleep(600)
        return real_replace(src, dst, *args, **kwargs)
    os.replace = paused_replace
    from protocoder.cli import main
    main(sys.argv[1:], prog_name="protocoder")
""")


def killed_mid_write(argv: list[str], target: str) -> None:
    process = subprocess.Popen([sys.executable, "-c", PAUSING_CHILD, *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "PAUSE_AT": target})
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == b"in the write", (line, process.stderr.read() if process.stderr else b"")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for folder in (root / ".protocoder", root / "output")
                  if folder.is_dir() for p in folder.rglob(".*.tmp"))


@pytest.mark.parametrize("next_command", [["validate"], ["status"], ["recover"]])
def test_a_killed_adjudication_leaves_nothing_behind_after_the_next_command(released: Path,  # noqa: F811
                                                                            next_command: list[str]) -> None:
    edit(released / "protocols/webarena/codes/alice.yaml", "code: P", "code: E")
    before = {str(p.relative_to(released)): p.read_bytes() for p in released.rglob("*")
              if p.is_file() and ".protocoder" not in p.parts}
    killed_mid_write(["adjudicate", "--workspace", str(released), "--cell", "webarena/open_work", "--code", "E",
                      "--reason", "Settled again", "--by", "dana"], "pending.json")
    assert [name for name in leftovers(released) if name.startswith(".protocoder/.pending.json.")], \
        "the kill landed inside the journal's write"
    done = subprocess.run([sys.executable, "-m", "protocoder", *next_command, "--workspace", str(released)],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert leftovers(released) == []
    after = {str(p.relative_to(released)): p.read_bytes() for p in released.rglob("*")
             if p.is_file() and ".protocoder" not in p.parts}
    assert after == before, "the killed adjudication wrote nothing (its journal never existed)"


def workspace_temporaries(root: Path) -> list[str]:
    """protocoder's temporaries anywhere in the workspace but its state and output folders."""
    return sorted(str(p.relative_to(root)) for p in root.rglob(".*.tmp")
                  if not {".protocoder", "output"} & set(p.relative_to(root).parts))


@pytest.mark.parametrize("next_command", [["validate"], ["status"], ["recover"], ["export"]])
def test_a_killed_write_beside_the_review_files_is_removed_by_the_next_command(two: Path,  # noqa: F811
                                                                              next_command: list[str]) -> None:
    """Issue 30.8: a SIGKILLed adjudicate left protocols/<id>/.consensus.yaml.*.tmp, which showed in
    git status and which validate, status and recover left in place."""
    before = {str(p.relative_to(two)): p.read_bytes() for p in two.rglob("*")
              if p.is_file() and ".protocoder" not in p.parts}
    killed_mid_write(["adjudicate", "--workspace", str(two), "--cell", "webarena/open_work", "--code", "NR",
                      "--reason", "meeting", "--by", "dana"], "consensus.yaml")
    left = workspace_temporaries(two)
    assert left and all(name.startswith("protocols/webarena/.consensus.yaml.") for name in left), left
    # Not protocoder's naming, or not a file it writes there: never touched.
    kept = [two / "protocols/webarena/.notes.txt.abcdefgh.tmp", two / "protocols/webarena/codes/.mine.tmp",
            two / ".draft.md.abcdefgh.tmp"]
    for path in kept:
        path.write_text("someone else's")
    done = subprocess.run([sys.executable, "-m", "protocoder", *next_command, "--workspace", str(two)],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert workspace_temporaries(two) == sorted(str(p.relative_to(two)) for p in kept)
    after = {str(p.relative_to(two)): p.read_bytes() for p in two.rglob("*")
             if p.is_file() and ".protocoder" not in p.parts and p not in kept}
    assert after == before, "the killed adjudication wrote nothing"
