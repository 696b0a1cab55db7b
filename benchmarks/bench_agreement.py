"""Speed of the agreement engine against a lean ``krippendorff.alpha`` process.

Generates (seeded) 10,000 units x 5 raters with 5% of ratings missing, writes a long CSV
to a temporary directory and times, as separate processes (median of ``--runs``):

  (a) reading the CSV with the ``csv`` module into a numpy matrix and computing
      ``krippendorff.alpha`` (nominal) alone;
  (b) ``python -m protocoder agree --ratings FILE --bootstrap 0``;
  (c) the same with ``--bootstrap 1000``;
  (d) the DataFrame API (``read_ratings_csv``, ``compute_agreement``, ``to_dict``, JSON), in
      a fresh process and in-process, bootstrap 0 and 1000.

Targets (issue 15): (b) at most 1.0x (a), (c) at most 1.5x (a). ``benchmarks/run.py``
measures the same ratios with the runs interleaved. Run:
``python benchmarks/bench_agreement.py [--runs 5] [--units 10000]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from peers import KRIPPENDORFF  # benchmarks/ is on sys.path when this script runs

CODES = np.array(["E", "P", "NR", "NA"])
TARGETS = {"b": 1.0, "c": 1.5}

# The same lean process as benchmarks/run.py measures.
BASELINE = KRIPPENDORFF

API = """
import json, sys
from protocoder.agreement import compute_agreement, read_ratings_csv
ratings = read_ratings_csv(sys.argv[1])
report = compute_agreement(ratings, bootstrap=int(sys.argv[2]))
sys.stdout.write(json.dumps(report.to_dict(), allow_nan=False))
"""


def generate(path: Path, n_units: int, n_raters: int, missing: float, seed: int) -> int:
    """Write a long ratings CSV with realistic skew and agreement; return its row count."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(CODES), size=n_units, p=[0.5, 0.2, 0.2, 0.1])
    noise = rng.choice(len(CODES), size=(n_units, n_raters))
    mat = np.where(rng.random((n_units, n_raters)) < 0.7, truth[:, None], noise)
    units, raters = np.nonzero(rng.random((n_units, n_raters)) >= missing)
    frame = pd.DataFrame(
        {
            "unit": [f"bench{u // 100:03d}/field{u % 100:02d}" for u in units],
            "rater": [f"rater{r + 1}" for r in raters],
            "code": CODES[mat[units, raters]],
        }
    )
    frame.to_csv(path, index=False)
    return len(frame)


def time_process(argv: list[str], runs: int) -> tuple[float | None, str]:
    """Median wall time of ``runs`` runs, or None and the error if the command fails."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            return None, lines[-1] if lines else f"exit status {done.returncode}"
        times.append(elapsed)
    return statistics.median(times), ""


def time_call(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--missing", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=20260815)
    args = parser.parse_args()

    from protocoder.agreement import compute_agreement, read_ratings_csv

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "ratings.csv"
        n_rows = generate(csv, args.units, args.raters, args.missing, args.seed)
        print(
            f"{args.units} units x {args.raters} raters, {args.missing:.0%} missing: "
            f"{n_rows} ratings; median of {args.runs} runs\n"
        )

        def in_process(n_boot: int) -> Callable[[], object]:
            def run() -> object:
                report = compute_agreement(read_ratings_csv(csv), bootstrap=n_boot)
                return json.dumps(report.to_dict(), allow_nan=False)

            return run

        cli = [py, "-m", "protocoder", "agree", "--ratings", str(csv)]
        rows: list[tuple[str, float | None, str, str]] = []
        base, err = time_process([py, "-c", BASELINE, str(csv)], args.runs)
        if base is None:
            sys.exit(f"baseline failed: {err}")
        rows.append(("(a) csv module + krippendorff.alpha, process", base, "a", ""))
        for key, n_boot in (("b", 0), ("c", 1000)):
            t, err = time_process([*cli, "--bootstrap", str(n_boot)], args.runs)
            rows.append((f"({key}) protocoder agree --bootstrap {n_boot}", t, key, err))
        for key, n_boot in (("b", 0), ("c", 1000)):
            t, err = time_process([py, "-c", API, str(csv), str(n_boot)], args.runs)
            rows.append((f"(d) API in a process, bootstrap {n_boot}", t, key, err))
        for n_boot in (0, 1000):
            t = time_call(in_process(n_boot), args.runs)
            rows.append((f"(d) API in-process, bootstrap {n_boot}", t, "", ""))

    print(f"{'case':<45} {'seconds':>8} {'x (a)':>7} {'target':>7}  verdict")
    print(f"{'-' * 45} {'-' * 8} {'-' * 7} {'-' * 7}  -------")
    for label, t, key, err in rows:
        if t is None:
            print(f"{label:<45} {'not available yet':>24}  ({err})")
            continue
        target = TARGETS.get(key)
        ratio = t / base
        in_process_row = "in-process" in label
        shown_ratio = "" if in_process_row else f"{ratio:.2f}"
        shown_target = f"{target:.0f}x" if target and not in_process_row else ""
        verdict = ""
        if target and not in_process_row:
            verdict = "ok" if ratio <= target else "MISSED"
        print(f"{label:<45} {t:8.3f} {shown_ratio:>7} {shown_target:>7}  {verdict}")


if __name__ == "__main__":
    main()
