"""protocoder under load: median wall time and peak memory of the main operations.

For each size N (protocols; 3 fields, 3 reviewers by default) a seeded synthetic review
is written with :mod:`generate` (``protocoder init`` plus YAML files), and every row
below runs in a fresh process, ``--runs`` times (the median is shown):

  start-up           ``protocoder --version``: interpreter and CLI start-up alone
  load + validate    ``protocoder validate``
  render all formats ``protocoder render --format all --bootstrap 0`` (loads and validates
                     first, as it always does; agreement tables with point estimates)
  agreement          ``protocoder agree --bootstrap 1000 --format json`` on the workspace
  krippendorff.alpha pandas reads a ratings CSV of the same codes (unit, rater, code) and
                     ``krippendorff.alpha`` computes nominal alpha: the baseline
  agree --ratings    ``protocoder agree --ratings`` that CSV, ``--bootstrap 1000``
  import             ``protocoder import`` of a CSV holding a fourth reviewer's cells for
                     the whole review (N x 3 rows, long bases) into a fresh copy
  coding app         ``make_app(...).run_test()`` until the protocol list is on screen (first
                     screen), until it is filled (list ready), and pagedown from cell to cell
                     (next cell: median of 12 moves, across protocols); the functions of
                     ``benchmarks/bench_tui.py`` (``one_run``), with the reviewer set to alice

Wall time: ``time.perf_counter`` around the child process (CLI rows, start-up included)
or as measured inside the child (TUI rows, the app's own clock). Peak memory: the child
process's ``ru_maxrss`` from ``os.wait4`` (Linux: resident set, KiB), imports included.

Run: ``python benchmarks/run.py [--sizes 10,100,1000,10000] [--runs 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import _basis, generate  # noqa: E402

PY = sys.executable
STARTUP = "start-up (`protocoder --version`)"
VALIDATE = "load + validate (`validate`)"
RENDER = "render all formats (`render --bootstrap 0`, validates first)"
AGREE = "agreement, 1,000 bootstrap resamples (`agree`)"
BASELINE = "`krippendorff.alpha` on the same codes (CSV, pandas)"
AGREE_CSV = "`agree --ratings` on that CSV, 1,000 resamples"
IMPORT = "import a CSV of a 4th reviewer (N × 3 rows)"
TUI_FIRST = "coding app: first screen"
TUI_READY = "coding app: protocol list ready"
TUI_MOVE = "coding app: next cell (median)"
TARGETS = {
    RENDER: (1000, 2.0),
    VALIDATE: (1000, 2.0),
    TUI_READY: (1000, 1.0),
}

KRIPPENDORFF = """
import sys
import krippendorff
import pandas as pd
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
df["value"] = df["code"].map({"E": 0.0, "P": 1.0, "NR": 2.0, "NA": 3.0})
matrix = df.pivot(index="rater", columns="unit", values="value").to_numpy(dtype=float)
print(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
"""

TUI = """
import asyncio, json, statistics, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
try:
    import bench_tui
    from protocoder.tui.app import make_app  # noqa: F401
except Exception as exc:  # the TUI is not importable (yet)
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
bench_tui.REVIEWER = sys.argv[3]
run = asyncio.run(bench_tui.one_run(Path(sys.argv[2]), 12))
moves = list(run["fields"]) + list(run["protocols"])
print(json.dumps({"first": run["first"], "ready": run["ready"], "move": statistics.median(moves)}))
"""


class Measured:
    """Median wall time and peak memory of one operation at one size (or why it failed)."""

    def __init__(self, seconds: float | None, rss_kib: int | None, error: str = "") -> None:
        self.seconds, self.rss_kib, self.error = seconds, rss_kib, error

    def cell(self) -> str:
        if self.seconds is None:
            return "not available" if "not available" in self.error else "failed"
        shown = f"{self.seconds * 1000:.0f} ms" if self.seconds < 1 else f"{self.seconds:.2f} s"
        return f"{shown} · {self.rss_kib / 1024:.0f} MB" if self.rss_kib else shown


def child(argv: Sequence[str], *, cwd: Path | None = None) -> tuple[float, int, int, str, str]:
    """Run ``argv``; return (wall seconds, exit status, ru_maxrss KiB, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(list(argv), stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (elapsed, process.returncode, usage.ru_maxrss, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"))


def median_of(runs: list[tuple[float, int]]) -> Measured:
    return Measured(statistics.median(t for t, _ in runs), max(m for _, m in runs))


def time_cli(argv: Sequence[str], runs: int, prepare: object = None) -> Measured:
    results = []
    for _ in range(runs):
        if callable(prepare):
            prepare()
        elapsed, status, rss, _, err = child(argv)
        if status != 0:
            lines = err.strip().splitlines()
            return Measured(None, None, lines[-1] if lines else f"exit status {status}")
        results.append((elapsed, rss))
    return median_of(results)


def write_ratings(workspace: Path, target: Path) -> int:
    """The workspace's codes as a long CSV (unit, rater, code), via ``protocoder export``."""
    _, status, _, out, err = child([PY, "-m", "protocoder", "export", "--workspace", str(workspace)])
    if status != 0:
        raise SystemExit(f"export failed: {err}")
    rows = [(f"{r['protocol']}/{r['field']}", r["reviewer"], r["code"])
            for r in csv.DictReader(out.splitlines()) if r["code"]]
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["unit", "rater", "code"])
        writer.writerows(rows)
    return len(rows)


def write_import_csv(workspace: Path, target: Path, seed: int) -> int:
    """A fourth reviewer, dave, coding every cell of the review (with long bases)."""
    from protocoder.storage.workspace import load_review

    review = load_review(workspace)
    rubric = review.require_valid()
    rng = random.Random(seed)
    rows = 0
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["protocol", "field", "reviewer", "code", "source", "basis", "cites"])
        for index, protocol in enumerate(review.protocols):
            for fld in rubric.fields:
                writer.writerow([protocol.id, fld.id, "dave", rng.choice(fld.codes), f"Paper Sec. {rng.randint(1, 9)}",
                                 _basis(rng, index), ";".join(protocol.cites)])
                rows += 1
    return rows


def time_tui(workspace: Path, reviewer: str, runs: int) -> dict[str, Measured]:
    firsts, readies, moves = [], [], []
    for _ in range(runs):
        _, status, rss, out, err = child([PY, "-c", TUI, str(HERE), str(workspace), reviewer])
        line = out.strip().splitlines()[-1] if out.strip() else ""
        data = json.loads(line) if status == 0 and line.startswith("{") else {"error": err.strip()[-300:]}
        if "error" in data:
            failed = Measured(None, None, f"not available: {data['error']}")
            return {TUI_FIRST: failed, TUI_READY: failed, TUI_MOVE: failed}
        firsts.append((data["first"], rss))
        readies.append((data["ready"], rss))
        moves.append((data["move"], rss))
    return {TUI_FIRST: median_of(firsts), TUI_READY: median_of(readies),
            TUI_MOVE: median_of(moves)}


def measure(size: int, runs: int, seed: int, tmp: Path, skip_tui: bool) -> dict[str, Measured]:
    workspace = tmp / f"review-{size}"
    started = time.perf_counter()
    counts = generate(workspace, protocols=size, seed=seed)
    print(f"  {size} protocols: {counts['cells']:,} reviewer cells written in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    cli = [PY, "-m", "protocoder"]
    ws = ["--workspace", str(workspace)]
    rows: dict[str, Measured] = {}
    rows[STARTUP] = time_cli([*cli, "--version"], runs)
    rows[VALIDATE] = time_cli([*cli, "validate", *ws], runs)
    rows[RENDER] = time_cli([*cli, "render", *ws, "--format", "all", "--bootstrap", "0",
                                            "--out", str(tmp / f"out-{size}")], runs)
    rows[AGREE] = time_cli([*cli, "agree", *ws, "--bootstrap", "1000", "--seed", "1",
                                                   "--format", "json"], runs)
    ratings = tmp / f"ratings-{size}.csv"
    write_ratings(workspace, ratings)
    rows[BASELINE] = time_cli([PY, "-c", KRIPPENDORFF, str(ratings)], runs)
    rows[AGREE_CSV] = time_cli([*cli, "agree", "--ratings", str(ratings), "--bootstrap", "1000",
                                                  "--seed", "1", "--format", "json"], runs)
    import_csv = tmp / f"import-{size}.csv"
    write_import_csv(workspace, import_csv, seed)
    copy = tmp / f"import-target-{size}"

    def fresh_copy() -> None:
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(workspace, copy)

    rows[IMPORT] = time_cli([*cli, "import", "--workspace", str(copy), str(import_csv)],
                                                       runs, prepare=fresh_copy)
    shutil.rmtree(copy, ignore_errors=True)
    if not skip_tui:
        rows.update(time_tui(workspace, "alice", runs))
    shutil.rmtree(workspace, ignore_errors=True)
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help="protocol counts, e.g. 10,100,1000 [10,100,1000,10000]")
    parser.add_argument("--runs", type=int, default=None, help="runs per cell, median shown [3; 1 with --quick]")
    parser.add_argument("--quick", action="store_true", help="one run each, sizes 10,100 (unless --sizes)")
    parser.add_argument("--no-tui", action="store_true", help="skip the TUI rows")
    parser.add_argument("--seed", type=int, default=20260815)
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("10,100" if args.quick else "10,100,1000,10000")).split(",")]
    runs = args.runs or (1 if args.quick else 3)

    results: dict[int, dict[str, Measured]] = {}
    with tempfile.TemporaryDirectory(prefix="protocoder-bench-") as tmp:
        for size in sizes:
            results[size] = measure(size, runs, args.seed, Path(tmp), args.no_tui)

    names: list[str] = []
    for rows in results.values():
        names += [name for name in rows if name not in names]
    print(f"protocoder benchmark: {machine()}")
    print(f"{' '.join(sys.argv[1:]) or '(defaults)'}; 3 fields, 3 reviewers; median of {runs} run(s); "
          "time · peak RSS of the process\n")
    header = "| operation | " + " | ".join(f"{size:,} protocols" for size in sizes) + " |"
    print(header)
    print("|---|" + "---:|" * len(sizes))
    for name in names:
        cells = [results[size][name].cell() if name in results[size] else "" for size in sizes]
        print(f"| {name} | " + " | ".join(cells) + " |")
    errors = {f"{name} at {size}": m.error for size, rows in results.items() for name, m in rows.items() if m.error}
    for where, error in errors.items():
        print(f"\n{where}: {error}")

    print()
    for size, rows in results.items():
        agree, base = rows.get(AGREE), rows.get(BASELINE)
        same = rows.get(AGREE_CSV)
        if agree and base and agree.seconds and base.seconds and same and same.seconds:
            print(f"{size:,} protocols: agree (workspace, bootstrap 1000) = {agree.seconds / base.seconds:.2f}x "
                  f"krippendorff; agree --ratings (same CSV, bootstrap 1000) = {same.seconds / base.seconds:.2f}x")
    if len(sizes) > 1:
        low, high = sizes[-2], sizes[-1]
        print(f"\ngrowth from {low:,} to {high:,} protocols ({high / low:g}x the cells; linear = {high / low:g}x):")
        for name in names:
            a, b = results[low].get(name), results[high].get(name)
            start = results[high].get(STARTUP)
            if a and b and a.seconds and b.seconds and name != STARTUP and name != TUI_MOVE:
                fixed = start.seconds if start and start.seconds and not name.startswith("coding app") else 0.0
                ratio = (b.seconds - fixed) / max(a.seconds - fixed, 1e-9)
                print(f"  {name}: {b.seconds / a.seconds:.1f}x ({ratio:.1f}x without start-up)")
    print()
    for name, (size, limit) in TARGETS.items():
        m = results.get(size, {}).get(name)
        if m is not None and m.seconds is not None:
            verdict = "met" if m.seconds < limit else f"MISSED by {m.seconds - limit:.2f} s"
            print(f"target: {name} at {size:,} protocols < {limit:g} s: {m.seconds:.2f} s, {verdict}")


if __name__ == "__main__":
    main()
