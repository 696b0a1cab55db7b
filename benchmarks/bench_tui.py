"""Speed of the coding app: start-up and moving between cells, at 10, 100 and 1,000 protocols.

Generates a workspace in a temporary directory (the bundled rubric, N protocols with one
source each, and one reviewer's file for every other protocol, written as plain YAML
text) and times, through ``App.run_test`` at 80x24, the median of ``--runs`` runs of:

  first screen  app start (constructing the app included) until the protocol list is on
                screen, still loading (the workspace is read in a worker thread);
  list ready    app start until the list is filled and can be used;
  cold start    a fresh ``python`` process, imports included, until the list is filled;
  next field    the action bound to pagedown on the coding screen, until the screen has
                been repainted with the next field;
  next protocol the same on a protocol's last field, until the next protocol is painted
                (its sheet is read from disk on the way).

Targets: list ready under 1 s at 1,000 protocols; moving between cells under 50 ms.
The max column catches the occasional full garbage collection (~100-300 ms here; with
``gc.disable()`` the worst move measured 35 ms).
Run: ``python benchmarks/bench_tui.py [--runs 5] [--sizes 10,100,1000]``. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REVIEWER = "bench"
TARGET_START = 1.0
TARGET_MOVE = 0.050

COLD = """
import sys, time
start = time.perf_counter()
from pathlib import Path
from protocoder.tui.app import make_app

async def auto_pilot(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    assert pilot.app.list_screen.loaded
    pilot.app.exit(time.perf_counter() - start)

print(make_app(Path(sys.argv[1]), sys.argv[2]).run(headless=True, size=(80, 24), auto_pilot=auto_pilot))
"""


def generate(root: Path, count: int) -> None:
    """Write a workspace with ``count`` protocols; every other one is partly coded."""
    shutil.copytree(REPO / "rubric", root / "rubric")
    shutil.copy(REPO / "references.bib", root / "references.bib")
    (root / "protocoder.yaml").write_text("title: Benchmark review\nrubric: evaluation-boundary\n")
    for index in range(count):
        pid = f"p{index:04d}"
        folder = root / "protocols" / pid
        (folder / "codes").mkdir(parents=True)
        (folder / "protocol.yaml").write_text(
            f"id: {pid}\nname: Protocol {index}\ncites: [zhou2024webarena]\nsources:\n"
            f"  - title: Paper {index}\n    url: https://example.org/{index}\n    version: v1\n"
            "    accessed: 2026-01-01\n")
        if index % 2 == 0:
            (folder / "codes" / f"{REVIEWER}.yaml").write_text(
                "cells:\n  open_work:\n    code: NR\n    source: Sec. 3\n    basis: Nothing is said.\n"
                "    cites: [zhou2024webarena]\n    rubric_version: '1.0'\n    coded_at: 2026-08-15\n")


async def one_run(root: Path, moves: int) -> dict[str, float | list[float]]:
    """Start the app once, open the first protocol and page through fields and protocols."""
    from protocoder.tui.app import make_app
    from protocoder.tui.screens import CodingScreen

    start = time.perf_counter()
    app = make_app(root, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        first_screen = time.perf_counter() - start
        await app.workers.wait_for_complete()
        await pilot.pause()
        ready = time.perf_counter() - start
        assert app.list_screen.loaded
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CodingScreen)
        fields, protocols = [], []
        for _ in range(moves):
            before = screen.protocol_id
            painted = asyncio.Event()
            t0 = time.perf_counter()
            # The action pagedown is bound to, then the first repaint that shows its result.
            await app.run_action("next_field", screen)
            screen.call_after_refresh(painted.set)
            await painted.wait()
            elapsed = time.perf_counter() - t0
            (protocols if screen.protocol_id != before else fields).append(elapsed)
            await pilot.pause()  # let everything settle before the next move (not timed)
        await pilot.press("ctrl+q")
        await pilot.pause()
    return {"first": first_screen, "ready": ready, "fields": fields, "protocols": protocols}


def cold_start(root: Path) -> float:
    """Seconds from a fresh interpreter to the filled list."""
    out = subprocess.run([sys.executable, "-c", COLD, str(root), REVIEWER], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--moves", type=int, default=12, help="pagedown presses per run")
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "ws"
            root.mkdir()
            generate(root, size)
            runs = [asyncio.run(one_run(root, args.moves)) for _ in range(args.runs)]
            colds = [cold_start(root) for _ in range(args.runs)]
        fields = [t for run in runs for t in run["fields"]]  # type: ignore[union-attr]
        protocols = [t for run in runs for t in run["protocols"]]  # type: ignore[union-attr]
        rows.append((size, statistics.median(r["first"] for r in runs),  # type: ignore[misc]
                     statistics.median(r["ready"] for r in runs), statistics.median(colds),  # type: ignore[misc]
                     statistics.median(fields), max(fields), statistics.median(protocols), max(protocols)))
    print(f"median of {args.runs} runs; moves: median (max) over {args.moves} pagedowns per run\n")
    print(f"{'protocols':>9} | {'first screen':>12} | {'list ready':>10} | {'cold start':>10} | "
          f"{'next field':>17} | {'next protocol':>17}")
    print("-" * 92)
    for size, first, ready, cold, fmed, fmax, pmed, pmax in rows:
        print(f"{size:>9} | {first * 1000:>9.0f} ms | {ready * 1000:>7.0f} ms | {cold * 1000:>7.0f} ms | "
              f"{fmed * 1000:>6.1f} ({fmax * 1000:>5.1f}) ms | {pmed * 1000:>6.1f} ({pmax * 1000:>5.1f}) ms")
    start_met = rows[-1][2] < TARGET_START
    move_met = max(max(r[4], r[6]) for r in rows) < TARGET_MOVE
    print(f"\ntargets: list ready < {TARGET_START:g} s at the largest size ({'met' if start_met else 'MISSED'}); "
          f"next field/protocol median < {TARGET_MOVE * 1000:.0f} ms ({'met' if move_met else 'MISSED'})")


if __name__ == "__main__":
    main()
