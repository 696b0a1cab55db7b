"""protocoder under load: wall time and peak memory of the main operations, and the ratios
the performance targets are stated in, all measured in one run.

Part 1 (the size table). For each size N (protocols; 3 fields, 3 reviewers) a seeded
synthetic review is written with :mod:`generate` and every row below runs in a fresh
process, ``--runs`` times, the rows taking turns (one round runs each row once), so that
a busy machine slows all of them alike; the median is shown:

  start-up           ``protocoder --version``
  load + validate    ``protocoder validate``
  render all formats ``protocoder render --format all --bootstrap 0`` (loads and validates
                     first, as it always does; agreement tables with point estimates)
  agreement          ``protocoder agree --bootstrap 1000`` on the workspace
  krippendorff.alpha the same codes as a ratings CSV (unit, rater, code): read with the
                     ``csv`` module into a numpy matrix, ``krippendorff.alpha`` (nominal)
  agree --ratings    ``protocoder agree --ratings`` that CSV, 1,000 resamples
  import             ``protocoder import`` of a fourth reviewer's cells (N x 3 rows, long
                     bases) into a fresh copy of the review
  coding app         ``make_app(...).run_test()`` until the protocol list is on screen, until
                     it is filled, and pagedown from cell to cell (``bench_tui.one_run``)

Part 2 (ratios, each measured as the median over rounds of the ratio within a round):

  agreement on a ratings CSV  10,000 units x 5 raters: ``agree --ratings`` (point estimates,
                     and 1,000 resamples) and Python ``irrCAC`` (pandas; p_a, Fleiss,
                     alpha, AC1, BP) against the lean ``krippendorff`` process above
  many fields        a 43-item checklist x 10 protocols x 2 reviewers (860 cells) against
                     the 3-field rubric x 143 protocols x 2 reviewers (858 cells):
                     ``render --format all``, ``agree``, ``freeze``
  one core           ``validate`` + ``render --format all`` at 1,000 x 3 x 3 against a bare
                     process that parses the same YAML files with PyYAML's C loader, with
                     and without ``PROTOCODER_SERIAL=1``
  one-shot commands  one ``find`` (index cached) and one ``quote add`` on a 10-protocol review with
                     a pinned README, against ``python -c pass`` (limit 0.15 s each)
  import vs render   importing a fourth reviewer (3 x N rows) against ``render --bootstrap 0``
                     of the result, at 10,000 protocols (1,000 with --quick)
  find               ``find_real.py``: recall@5/10/20 of candidate passages on real documentation
                     (every set, cold and warm, with plain BM25 and document order; the
                     targets on the newest set, unseen until measured once);
                     ``find_recall.py``: the same on the unit corpus, and a query over 1,000
                     pinned sources (limit 100 ms)

Every child runs with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` removed, as
an installed package runs) after one untimed warm-up run, through the ``protocoder``
console script. Wall time: ``time.perf_counter`` around the child (start-up included), or
the app's own clock for the TUI rows. Peak memory: the child's ``ru_maxrss`` from
``os.wait4``; children are started by a small launcher process (about 10 MB), so that the
benchmark's own memory does not count in theirs.

A team coding at once through ``protocoder serve`` (20 reviewers' websocket sessions, save
latency from key to disk) is measured separately: ``python benchmarks/bench_serve.py``.

Run: ``python benchmarks/run.py [--sizes 10,100,1000,10000] [--runs 3] [--quick]
[--only sizes|ratios|agreement|one-core|one-shot|import]``. The peer processes are in ``peers.py``.
Needs the ``bench`` extra (``pip install -e '.[test,bench]'``) for irrCAC and PyYAML.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_import import import_scaling, write_csv  # noqa: E402
from generate import generate  # noqa: E402
from peers import BARE, IRRCAC, KRIPPENDORFF, YAML_FLOOR  # noqa: E402

PY = sys.executable
# The console script, as a user runs it (``python -m`` would add runpy's start-up).
_SCRIPT = Path(PY).with_name("protocoder")
CLI = [str(_SCRIPT)] if _SCRIPT.is_file() else [PY, "-m", "protocoder"]
STARTUP = "start-up (`protocoder --version`)"
VALIDATE = "load + validate (`validate`)"
RENDER = "render all formats (`render --bootstrap 0`, validates first)"
AGREE = "agreement, 1,000 bootstrap resamples (`agree`)"
BASELINE = "`krippendorff.alpha` on the same codes (csv module, numpy)"
AGREE_CSV = "`agree --ratings` on that CSV, 1,000 resamples"
IMPORT = "import a CSV of a 4th reviewer (N × 3 rows)"
TUI_FIRST = "coding app: first screen"
TUI_READY = "coding app: protocol list ready"
TUI_MOVE = "coding app: next cell (median)"

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


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


@dataclass
class Command:
    """One timed command: argv, an untimed step run before each run, extra environment."""

    argv: list[str]
    prepare: Callable[[], None] | None = None
    env: dict[str, str] = field(default_factory=dict)


class Measured:
    """Median wall time and peak memory of one operation (or why it failed)."""

    def __init__(self, times: list[float], rss_kib: int | None, error: str = "",
                 cpu: list[float] | None = None) -> None:
        self.times, self.rss_kib, self.error = times, rss_kib, error
        self.cpu = cpu or []
        """CPU seconds (user + system) of each run: less moved by other processes than wall time."""

    @property
    def cpu_seconds(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu and not self.error else None

    @property
    def seconds(self) -> float | None:
        return statistics.median(self.times) if self.times and not self.error else None

    def cell(self) -> str:
        if self.seconds is None:
            return "not available" if "not available" in self.error else "failed"
        return f"{shown(self.seconds)} · {self.rss_kib / 1024:.0f} MB" if self.rss_kib else shown(self.seconds)


def shown(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


# Children are started by this small process, started first: a child's peak memory
# (ru_maxrss) counts the pages of the process that spawned it, and this one stays small
# while the benchmark itself grows (generated reviews, pandas).
LAUNCHER = r"""
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    job = json.loads(line)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(job["argv"], stdout=out, stderr=err, env=job["env"])
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        print(json.dumps({"elapsed": elapsed, "status": os.waitstatus_to_exitcode(status), "rss": usage.ru_maxrss,
                          "cpu": usage.ru_utime + usage.ru_stime,
                          "stdout": out.read().decode(errors="replace")[-4000:],
                          "stderr": err.read().decode(errors="replace")[-4000:]}), flush=True)
"""
_launcher: subprocess.Popen[str] | None = None


def child(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, int, int, str, str, float]:
    """Run ``argv``; return (wall seconds, exit status, ru_maxrss KiB, end of stdout, end of stderr,
    CPU seconds of the child and its children)."""
    global _launcher
    if _launcher is None:
        _launcher = subprocess.Popen([PY, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert _launcher.stdin is not None and _launcher.stdout is not None
    _launcher.stdin.write(json.dumps({"argv": list(argv), "env": child_env(**(env or {}))}) + "\n")
    _launcher.stdin.flush()
    done = json.loads(_launcher.stdout.readline())
    return done["elapsed"], done["status"], done["rss"], done["stdout"], done["stderr"], done["cpu"]


def rounds(commands: dict[str, Command], runs: int) -> dict[str, Measured]:
    """Run every command ``runs`` times, taking turns (after one untimed warm-up each)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    rss: dict[str, int] = dict.fromkeys(commands, 0)
    errors: dict[str, str] = {}
    names = list(commands)
    for round_index in range(runs + 1):
        # Rotate the order so that no command always runs right after the same one.
        for name in names[round_index % len(names):] + names[:round_index % len(names)]:
            if name in errors:
                continue
            command = commands[name]
            if command.prepare is not None:
                command.prepare()
            elapsed, status, peak, _, err, used = child(command.argv, command.env)
            if status != 0:
                lines = err.strip().splitlines()
                errors[name] = lines[-1] if lines else f"exit status {status}"
            elif round_index:  # round 0 warms up (bytecode, page cache)
                times[name].append(elapsed)
                cpu[name].append(used)
                rss[name] = max(rss[name], peak)
    return {name: Measured(times[name], rss[name] or None, errors.get(name, ""), cpu[name]) for name in commands}


def ratio(results: dict[str, Measured], name: str, base: str, *, cpu: bool = False) -> float | None:
    """Median over rounds of the ratio of ``name`` to ``base`` measured in the same round (wall
    times, or with ``cpu`` the CPU times)."""
    a, b = results[name], results[base]
    if a.seconds is None or b.seconds is None:
        return None
    first, second = (a.cpu, b.cpu) if cpu else (a.times, b.times)
    return statistics.median(x / y for x, y in zip(first, second, strict=True))


def write_ratings(workspace: Path, target: Path) -> int:
    """The workspace's codes as a long CSV (unit, rater, code), via ``protocoder export``."""
    done = subprocess.run([*CLI, "export", "--workspace", str(workspace)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"export failed: {done.stderr}")
    out = done.stdout
    rows = [(f"{r['protocol']}/{r['field']}", r["reviewer"], r["code"])
            for r in csv.DictReader(out.splitlines()) if r["code"]]
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["unit", "rater", "code"])
        writer.writerows(rows)
    return len(rows)


def write_import_csv(workspace: Path, target: Path, seed: int) -> int:
    """A fourth reviewer, dave, coding every cell of the review (with long bases)."""
    return write_csv(workspace, target, None, seed)


def fresh_copy(source: Path, target: Path) -> Callable[[], None]:
    def prepare() -> None:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
    return prepare


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------
# Part 1: the size table


def time_tui(workspace: Path, reviewer: str, runs: int) -> dict[str, Measured]:
    firsts, readies, moves, peak = [], [], [], 0
    for _ in range(runs):
        _, status, rss, out, err, _ = child([PY, "-c", TUI, str(HERE), str(workspace), reviewer])
        line = out.strip().splitlines()[-1] if out.strip() else ""
        data = json.loads(line) if status == 0 and line.startswith("{") else {"error": err.strip()[-300:]}
        if "error" in data:
            failed = Measured([], None, f"not available: {data['error']}")
            return {TUI_FIRST: failed, TUI_READY: failed, TUI_MOVE: failed}
        firsts.append(data["first"])
        readies.append(data["ready"])
        moves.append(data["move"])
        peak = max(peak, rss)
    return {TUI_FIRST: Measured(firsts, peak), TUI_READY: Measured(readies, peak), TUI_MOVE: Measured(moves, peak)}


def measure_size(size: int, runs: int, seed: int, tmp: Path, skip_tui: bool) -> dict[str, Measured]:
    workspace = tmp / f"review-{size}"
    started = time.perf_counter()
    counts = generate(workspace, protocols=size, seed=seed)
    log(f"  {size} protocols: {counts['cells']:,} reviewer cells written in {time.perf_counter() - started:.1f} s")
    ws = ["--workspace", str(workspace)]
    ratings = tmp / f"ratings-{size}.csv"
    write_ratings(workspace, ratings)
    import_csv = tmp / f"import-{size}.csv"
    write_import_csv(workspace, import_csv, seed)
    copy = tmp / f"import-target-{size}"
    commands = {
        STARTUP: Command([*CLI, "--version"]),
        VALIDATE: Command([*CLI, "validate", *ws]),
        RENDER: Command([*CLI, "render", *ws, "--format", "all", "--bootstrap", "0", "--out", str(tmp / "out")]),
        AGREE: Command([*CLI, "agree", *ws, "--bootstrap", "1000", "--seed", "1", "--format", "json"]),
        BASELINE: Command([PY, "-c", KRIPPENDORFF, str(ratings)]),
        AGREE_CSV: Command([*CLI, "agree", "--ratings", str(ratings), "--bootstrap", "1000", "--seed", "1",
                            "--format", "json"]),
        IMPORT: Command([*CLI, "import", "--workspace", str(copy), str(import_csv)],
                        prepare=fresh_copy(workspace, copy)),
    }
    rows = rounds(commands, runs)
    shutil.rmtree(copy, ignore_errors=True)
    if not skip_tui:
        rows.update(time_tui(workspace, "alice", runs))
    shutil.rmtree(workspace, ignore_errors=True)
    return rows


def size_table(sizes: list[int], results: dict[int, dict[str, Measured]]) -> list[str]:
    names: list[str] = []
    for rows in results.values():
        names += [name for name in rows if name not in names]
    lines = ["| operation | " + " | ".join(f"{size:,} protocols" for size in sizes) + " |",
             "|---|" + "---:|" * len(sizes)]
    for name in names:
        cells = [results[size][name].cell() if name in results[size] else "" for size in sizes]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for size, rows in results.items():
        for name, m in rows.items():
            if m.error:
                lines.append(f"\n{name} at {size:,} protocols: {m.error}")
    return lines


# ----------------------------------------------------------------------------------------
# Part 2: ratios


@dataclass
class Target:
    """One measured ratio against its limit."""

    what: str
    value: float | None
    limit: float

    def row(self) -> str:
        if self.value is None:
            return f"| {self.what} | failed | ≤ {self.limit:g}× |"
        verdict = "met" if self.value <= self.limit else "**missed**"
        return f"| {self.what} | {self.value:.2f}× | ≤ {self.limit:g}×: {verdict} |"


def agreement_comparison(tmp: Path, runs: int, seed: int) -> tuple[list[str], list[Target]]:
    from bench_agreement import generate as generate_ratings

    path = tmp / "ratings-10000x5.csv"
    n_ratings = generate_ratings(path, 10_000, 5, 0.05, seed)
    log(f"  agreement: 10,000 units x 5 raters, {n_ratings:,} ratings")
    commands = {
        "lean": Command([PY, "-c", KRIPPENDORFF, str(path)]),
        # What both processes pay before reading a byte: Python and numpy.
        "floor": Command([PY, "-c", "import numpy"]),
        "irrcac": Command([PY, "-c", IRRCAC, str(path)]),
        "point": Command([*CLI, "agree", "--ratings", str(path), "--bootstrap", "0"]),
        "boot": Command([*CLI, "agree", "--ratings", str(path)]),
        "json": Command([*CLI, "agree", "--ratings", str(path), "--format", "json"]),
    }
    labels = {
        "lean": "`krippendorff.alpha`: csv module, numpy matrix (nominal alpha only)",
        "floor": "`python -c 'import numpy'`: the start-up both pay",
        "irrcac": "Python `irrCAC` (pandas): Fleiss, alpha, AC1, BP",
        "point": "`agree --ratings FILE --bootstrap 0`: every coefficient, point estimates",
        "boot": "`agree --ratings FILE`: every coefficient, 1,000 resamples",
        "json": "`agree --ratings FILE --format json`: the same, as JSON with every disagreement",
    }
    results = rounds(commands, runs)
    lines = [f"Agreement on a ratings CSV: 10,000 units × 5 raters ({n_ratings:,} ratings), whole process, "
             f"median of {runs} rounds", "", "| process | time · peak memory | × krippendorff |", "|---|---:|---:|"]
    for name, label in labels.items():
        r = ratio(results, name, "lean")
        lines.append(f"| {label} | {results[name].cell()} | {'' if r is None else f'{r:.2f}×'} |")
    targets = [
        Target("`agree --ratings`, point estimates, vs lean `krippendorff`", ratio(results, "point", "lean"), 1.0),
        Target("`agree --ratings`, 1,000 resamples, vs lean `krippendorff`", ratio(results, "boot", "lean"), 1.5),
    ]
    return lines, targets


def many_fields(tmp: Path, runs: int, seed: int) -> tuple[list[str], list[Target]]:
    wide, narrow = tmp / "fields-43", tmp / "fields-3"
    a = generate(wide, protocols=10, fields=43, reviewers=2, seed=seed, checklist=True)
    b = generate(narrow, protocols=143, fields=3, reviewers=2, seed=seed)
    log(f"  many fields: {a['cells']} cells (43 fields) against {b['cells']} cells (3 fields)")
    commands: dict[str, Command] = {}
    for key, root in (("43", wide), ("3", narrow)):
        ws = ["--workspace", str(root)]
        copy = tmp / f"freeze-{key}"
        commands[f"render-{key}"] = Command([*CLI, "render", *ws, "--format", "all", "--out", str(tmp / f"out-{key}")])
        commands[f"agree-{key}"] = Command([*CLI, "agree", *ws])
        commands[f"freeze-{key}"] = Command([*CLI, "freeze", "--workspace", str(copy), "--label", "v1", "--by",
                                             "bench", "--allow-unresolved"], prepare=fresh_copy(root, copy))
    results = rounds(commands, runs)
    lines = [f"Many fields, same cells: 43 fields × 10 protocols × 2 reviewers ({a['cells']} cells) against "
             f"3 fields × 143 protocols × 2 reviewers ({b['cells']} cells), median of {runs} rounds", "",
             "| command | 3 fields | 43 fields | ratio |", "|---|---:|---:|---:|"]
    targets = []
    for op, label in (("render", "`render --format all`"), ("agree", "`agree`"),
                      ("freeze", "`freeze --allow-unresolved`")):
        r = ratio(results, f"{op}-43", f"{op}-3")
        lines.append(f"| {label} | {results[f'{op}-3'].cell()} | {results[f'{op}-43'].cell()} | "
                     f"{'' if r is None else f'{r:.2f}×'} |")
        targets.append(Target(f"{label}, 43 fields vs 3 fields, same cells", r, 1.5))
    return lines, targets


def one_core(tmp: Path, runs: int, seed: int) -> tuple[list[str], list[Target]]:
    root = tmp / "scale-1000"
    counts = generate(root, protocols=1000, seed=seed)
    n_yaml = sum(1 for _ in root.rglob("*.yaml"))
    log(f"  one core: 1,000 protocols x 3 fields x 3 reviewers, {n_yaml:,} YAML files")
    ws = ["--workspace", str(root)]
    commands = {"floor": Command([PY, "-c", YAML_FLOOR, str(root)])}
    for key, env in (("two", {}), ("serial", {"PROTOCODER_SERIAL": "1"})):
        commands[f"validate-{key}"] = Command([*CLI, "validate", *ws], env=env)
        commands[f"render-{key}"] = Command([*CLI, "render", *ws, "--format", "all", "--out", str(tmp / "scale-out")],
                                            env=env)
    results = rounds(commands, runs)

    def both(key: str, cpu: bool = False) -> tuple[float | None, float | None]:
        v, r, f = results[f"validate-{key}"], results[f"render-{key}"], results["floor"]
        if v.seconds is None or r.seconds is None or f.seconds is None:
            return None, None
        vs, rs, fs = (v.cpu, r.cpu, f.cpu) if cpu else (v.times, r.times, f.times)
        total = statistics.median(x + y for x, y in zip(vs, rs, strict=True))
        return total, statistics.median((x + y) / z for x, y, z in zip(vs, rs, fs, strict=True))

    floor_cpu = results["floor"].cpu_seconds
    lines = [f"On one core: `validate` + `render --format all` at 1,000 protocols × 3 fields × 3 reviewers "
             f"({counts['cells']:,} cells, {n_yaml:,} YAML files) against parsing those files with PyYAML's "
             f"C loader, median of {runs} rounds (wall time, and CPU time of the process and its children)", "",
             "| process | time | × C-loader parse | CPU time | × C-loader parse |", "|---|---:|---:|---:|---:|",
             f"| PyYAML `CSafeLoader`, every YAML file | {results['floor'].cell()} | 1.00× | "
             f"{'' if floor_cpu is None else shown(floor_cpu)} | 1.00× |"]
    targets = []
    for key, label in (("two", "validate + render (second core used when idle)"),
                       ("serial", "validate + render, `PROTOCODER_SERIAL=1`")):
        total, r = both(key)
        total_cpu, r_cpu = both(key, cpu=True)
        lines.append(f"| {label} | {'failed' if total is None else shown(total)} | "
                     f"{'' if r is None else f'{r:.2f}×'} | {'' if total_cpu is None else shown(total_cpu)} | "
                     f"{'' if r_cpu is None else f'{r_cpu:.2f}×'} |")
        targets.append(Target(f"{label} vs C-loader parse", r, 3.5))
        # CPU time, which other processes on the machine move far less than wall time.
        targets.append(Target(f"{label} vs C-loader parse, CPU time", r_cpu, 3.5))
    return lines, targets


# A real README (vendored, see tests/data/real-docs/MANIFEST.md) pinned for the one-shot commands.
ONE_SHOT_DOC = HERE.parent / "tests" / "data" / "real-docs" / "alpaca-eval" / "README.md"
ONE_SHOT_QUOTE = "Automatic Evaluator"
ONE_SHOT_LIMIT = 0.15
"""Seconds a one-shot command (one ``find``, one ``quote add``) may take, start-up included."""


def one_shot(tmp: Path, runs: int, seed: int) -> tuple[list[str], list[Target]]:
    """One ``find`` (its index cached by the untimed warm-up) and one ``quote add`` (the quote removed,
    untimed, before each run), against the interpreter starting with nothing to do."""
    root = tmp / "one-shot"
    generate(root, protocols=10, seed=seed)
    ws = ["--workspace", str(root)]
    subprocess.run([*CLI, "source", "add", *ws, "bench-00000", str(ONE_SHOT_DOC), "--id", "readme"],
                   check=True, capture_output=True, env=child_env())
    cell = ["--cell", "bench-00000/open_work", "--reviewer", "alice"]

    def unquote() -> None:
        subprocess.run([*CLI, "quote", "remove", *ws, *cell, ONE_SHOT_QUOTE], capture_output=True, env=child_env())

    commands = {
        "bare": Command([PY, "-c", BARE]),
        "version": Command([*CLI, "--version"]),
        "find": Command([*CLI, "find", *ws, "--cell", "bench-00000/open_work"]),
        "quote": Command([*CLI, "quote", "add", *ws, *cell, "--source", "readme", ONE_SHOT_QUOTE], prepare=unquote),
    }
    labels = {"bare": "`python -c pass`: the interpreter, nothing imported",
              "version": "`protocoder --version`: the command line, no command loaded",
              "find": "`protocoder find --cell P/F` (index cached)",
              "quote": "`protocoder quote add --cell P/F --reviewer R --source S TEXT`"}
    results = rounds(commands, runs)
    lines = [f"One-shot commands: a 10-protocol review with one pinned README ({ONE_SHOT_DOC.stat().st_size:,} bytes), "
             f"whole process, median of {runs} rounds", "",
             "| process | time · peak memory | × `python -c pass` | CPU time |", "|---|---:|---:|---:|"]
    for name, label in labels.items():
        r, used = ratio(results, name, "bare"), results[name].cpu_seconds
        lines.append(f"| {label} | {results[name].cell()} | {'' if r is None else f'{r:.1f}×'} | "
                     f"{'' if used is None else shown(used)} |")
    targets = []
    for name, label in (("find", "one `find` process"), ("quote", "one `quote add` process")):
        seconds, used = results[name].seconds, results[name].cpu_seconds
        targets.append(Target(f"{label}, s / {ONE_SHOT_LIMIT} s", None if seconds is None else seconds / ONE_SHOT_LIMIT,
                              1.0))
        targets.append(Target(f"{label}, CPU s / {ONE_SHOT_LIMIT} s", None if used is None else used / ONE_SHOT_LIMIT,
                              1.0))
    return lines, targets


def import_vs_render(tmp: Path, size: int, runs: int, seed: int) -> tuple[list[str], list[Target]]:
    root = tmp / f"import-{size}"
    generate(root, protocols=size, seed=seed)
    import_csv = tmp / f"import-{size}.csv"
    n_rows = write_import_csv(root, import_csv, seed)
    imported = tmp / f"imported-{size}"
    fresh_copy(root, imported)()
    _, status, _, _, err, _ = child([*CLI, "import", "--workspace", str(imported), str(import_csv)])
    if status != 0:
        raise SystemExit(f"import failed: {err}")
    log(f"  import vs render: {n_rows:,} rows at {size:,} protocols")
    copy = tmp / f"import-copy-{size}"
    commands = {
        "import": Command([*CLI, "import", "--workspace", str(copy), str(import_csv)], prepare=fresh_copy(root, copy)),
        "render": Command([*CLI, "render", "--workspace", str(imported), "--bootstrap", "0", "--out",
                           str(tmp / "import-out")]),
    }
    results = rounds(commands, runs)
    r = ratio(results, "import", "render")
    lines = [f"Import against render at {size:,} protocols: importing a fourth reviewer ({n_rows:,} rows) into a "
             f"fresh copy, and `render --bootstrap 0` of the result, median of {runs} rounds", "",
             "| command | time · peak memory |", "|---|---:|",
             f"| `import` ({n_rows:,} rows) | {results['import'].cell()} |",
             f"| `render --bootstrap 0` | {results['render'].cell()} |",
             f"| ratio | {'failed' if r is None else f'{r:.2f}×'} |"]
    return lines, [Target(f"`import` vs `render --bootstrap 0` at {size:,} protocols", r, 2.0)]


UNSEEN_SET = "heldout15"
"""The set of real documentation the targets are checked on: the newest one, keyed before any ranking ran on
it and first measured after the ranking was chosen (benchmarks/find_real_results.md says when). The others
were tuned on and are reported beside it."""


def find_part() -> tuple[list[str], list[Target]]:
    """Recall of ``protocoder find`` on every set of real documentation (benchmarks/find_real.py, the measure;
    targets on :data:`UNSEEN_SET`), on the unit corpus, and its query time over 1,000 sources
    (benchmarks/find_recall.py)."""
    import find_real
    import find_recall

    log("find: recall on the real documentation, on the unit corpus, query over 1,000 sources")
    real_lines: list[str] = []
    for documents_set in find_real.SETS:
        set_lines, figures = find_real.report("all", documents_set=documents_set)
        real_lines += [f"--set {documents_set}{' (the targets below)' if documents_set == UNSEEN_SET else ''}",
                       "", *set_lines, ""]
        if documents_set == UNSEEN_SET:
            unseen = figures
    lines, figures = find_recall.report("both", 1000)
    find, bm25 = "all protocoder find", "all bm25 paragraphs"
    return (["protocoder find on real documentation (benchmarks/find_real.py)", "", *real_lines,
             "protocoder find on the unit corpus (benchmarks/find_recall.py)", "", *lines],
            [Target("find: query over 1,000 sources, ms / 100 ms", figures["query ms"] / 100, 1.0),
             Target(f"find: {UNSEEN_SET}, 0.70 / cold recall@10", 0.70 / max(unseen[f"{find} cold@10"], 1e-9), 1.0),
             Target(f"find: {UNSEEN_SET}, 0.80 / warm recall@10", 0.80 / max(unseen[f"{find} warm@10"], 1e-9), 1.0),
             *(Target(f"find: {UNSEEN_SET}, plain BM25 / find, {state} recall@10",
                      unseen[f"{bm25} {state}@10"] / max(unseen[f"{find} {state}@10"], 1e-9), 1.0)
               for state in ("cold", "warm")),
             Target(f"find: {UNSEEN_SET}, non-evidence share of the top 10 / 10 %", unseen["all non-evidence"] / 0.10,
                    1.0)])


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f"; load average at the start {os.getloadavg()[0]:.1f}"
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}{load}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help="protocol counts, e.g. 10,100,1000 [10,100,1000,10000]")
    parser.add_argument("--runs", type=int, default=None, help="timed rounds, median shown [3; 1 with --quick]")
    parser.add_argument("--ratio-runs", type=int, default=None,
                        help="timed rounds of the ratio measurements [7; 3 with --quick]")
    parser.add_argument("--quick", action="store_true",
                        help="sizes 10,100, one round; ratios from 3 rounds; import vs render at 1,000")
    parser.add_argument("--no-tui", action="store_true", help="skip the TUI rows")
    parser.add_argument("--only", choices=["sizes", "ratios", "agreement", "one-core", "one-shot", "import"],
                        default=None,
                        help="run one part only (agreement, one-core, one-shot: that comparison of the ratios "
                             "alone; import: time per row and peak memory up to a million rows)")
    parser.add_argument("--seed", type=int, default=20260815)
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("10,100" if args.quick else "10,100,1000,10000")).split(",")]
    runs = args.runs or (1 if args.quick else 3)
    ratio_runs = args.ratio_runs or (3 if args.quick else 7)
    header = machine()

    results: dict[int, dict[str, Measured]] = {}
    sections: list[list[str]] = []
    targets: list[Target] = []
    with tempfile.TemporaryDirectory(prefix="protocoder-bench-") as name:
        tmp = Path(name)
        if args.only in (None, "import"):  # bench_import.py: time per row and peak memory up to a million rows
            sections.append(import_scaling(tmp / "import", [10_000] if args.quick else [10_000, 100_000, 1_000_000],
                                           args.seed))
        if args.only in (None, "sizes"):
            for size in sizes:
                results[size] = measure_size(size, runs, args.seed, tmp / f"size-{size}", args.no_tui)
        single = {"agreement": agreement_comparison, "one-core": one_core, "one-shot": one_shot}
        if args.only in single:
            lines, found = single[args.only](tmp, ratio_runs, args.seed)
            sections.append(lines)
            targets += found
        elif args.only in (None, "ratios"):
            for part in (lambda: agreement_comparison(tmp, ratio_runs, args.seed),
                         lambda: many_fields(tmp, ratio_runs, args.seed),
                         lambda: one_core(tmp, ratio_runs, args.seed),
                         lambda: one_shot(tmp, ratio_runs, args.seed),
                         lambda: import_vs_render(tmp, 1000 if args.quick else 10_000, min(ratio_runs, 3), args.seed),
                         find_part):
                lines, found = part()
                sections.append(lines)
                targets += found

    print(f"protocoder benchmark: {header}")
    print(f"python benchmarks/run.py {' '.join(sys.argv[1:])}".rstrip())
    if results:
        print(f"\n3 fields, 3 reviewers; median of {runs} round(s); time · peak RSS of the process\n")
        print("\n".join(size_table(sizes, results)))
    for lines in sections:
        print()
        print("\n".join(lines))
    if targets:
        print("\n| target | measured | limit |\n|---|---:|---|")
        print("\n".join(t.row() for t in targets))


if __name__ == "__main__":
    main()
