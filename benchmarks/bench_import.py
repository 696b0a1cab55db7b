"""Import at scale: time per row and peak memory of ``protocoder import`` as the CSV grows.

For each size, a checklist workspace of ``ceil(rows / 200)`` protocols (200 items, no cells
coded yet, so that the review's own size does not hide the import's) is generated, and a CSV
of a reviewer coding every cell (export order, a basis of a few hundred characters per row)
is imported by a real ``python -m protocoder
import`` process; its wall time and peak RSS (``wait4``) are reported. Import streams the
CSV twice (check every row, then write each reviewer file as its last row is read), so time
should grow with the rows and memory should not grow with them beyond the review itself.

Run: ``python benchmarks/bench_import.py [--rows 10000,100000,1000000] [--per-reviewer 30]`` (30: a million
rows by 33,334 reviewers, thirty cells each); ``run.py`` runs it
with ``--only import`` (and at its smallest size with ``--quick``).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import basis_text, generate  # noqa: E402

FIELDS = 200
"""Items of the checklist: enough that a million rows need only 5,000 protocols (whose bibliography stays
under the 2 MB file limit)."""
MEMORY_LIMIT_MB = 500


def write_csv(workspace: Path, target: Path, rows: int | None, seed: int, per_reviewer: int = 0) -> int:
    """A new reviewer, dave, coding the first ``rows`` cells of the workspace (all with None), in export order;
    with ``per_reviewer``, a new reviewer every ``per_reviewer`` rows instead (r000000, r000001, …)."""
    from protocoder.storage.workspace import load_review

    review = load_review(workspace)
    rubric = review.require_valid()
    rng = random.Random(seed)
    written = 0
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["protocol", "field", "reviewer", "code", "source", "basis", "cites"])
        for index, protocol in enumerate(review.protocols):
            for fld in rubric.fields:
                if written == rows:
                    return written
                reviewer = f"r{written // per_reviewer:06d}" if per_reviewer else "dave"
                writer.writerow([protocol.id, fld.id, reviewer, rng.choice(fld.codes),
                                 f"Paper Sec. {rng.randint(1, 9)}", basis_text(rng, index), ";".join(protocol.cites)])
                written += 1
    return written


def measure(rows: int, tmp: Path, seed: int, per_reviewer: int = 0) -> tuple[int, float, float, str, float]:
    """(rows imported, seconds, peak RSS in MB, error, CPU seconds) for one size (CPU: user and system time of
    the import process, which a loaded machine does not inflate as it does the wall time)."""
    tmp.mkdir(parents=True, exist_ok=True)
    workspace = tmp / f"review-{rows}"
    generate(workspace, protocols=math.ceil(rows / FIELDS), fields=FIELDS, reviewers=0, seed=seed, checklist=True)
    target = tmp / f"import-{rows}.csv"
    count = write_csv(workspace, target, rows, seed, per_reviewer)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "protocoder", "import", "--workspace", str(workspace),
                                str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    error = "" if os.waitstatus_to_exitcode(status) == 0 else (process.stderr.read() if process.stderr else b"").decode(
        errors="replace")[-500:]
    return count, seconds, usage.ru_maxrss / 1024, error, usage.ru_utime + usage.ru_stime


def import_scaling(tmp: Path, sizes: list[int], seed: int, echo: bool = False, per_reviewer: int = 0) -> list[str]:
    """The table of rows, time, time per row and peak memory (``echo``: printed as it is measured)."""
    who = f"a reviewer every {per_reviewer} rows" if per_reviewer else "one reviewer"
    lines = [f"Import scaling ({FIELDS}-item checklist, nothing coded on file, {who} imported)", "",
             "| rows | time | CPU time | µs per row (CPU) | peak RSS | under 500 MB |",
             "|---:|---:|---:|---:|---:|---|"]
    for size in sizes:
        count, seconds, rss, error, cpu = measure(size, tmp, seed, per_reviewer)
        if error:
            lines.append(f"| {count:,} | failed: {error.strip().splitlines()[-1]} | | | | |")
            continue
        lines.append(f"| {count:,} | {seconds:.1f} s | {cpu:.1f} s | {cpu / count * 1e6:.0f} | {rss:.0f} MB | "
                     f"{'yes' if rss < MEMORY_LIMIT_MB else '**no**'} |")
        if echo:
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,100000,1000000", help="CSV sizes in rows")
    parser.add_argument("--seed", type=int, default=20260815)
    parser.add_argument("--per-reviewer", type=int, default=0,
                        help="a new reviewer every N rows (30: a million rows by 33,334 reviewers); 0: one reviewer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="protocoder-import-") as name:
        print("\n".join(import_scaling(Path(name), [int(s) for s in args.rows.split(",")], args.seed, echo=True,
                                        per_reviewer=args.per_reviewer)))


if __name__ == "__main__":
    main()
