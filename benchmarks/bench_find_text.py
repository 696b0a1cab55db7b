"""A cold ``find`` over a plain-text source at its size limit (12 MiB), against ``grep -n`` over the same file.

Setup (not timed): ``protocoder init``, a protocol, and a plain-text file of ``--mib`` MiB made of the
vendored real documentation (``tests/data/real-docs*/``, every Markdown and HTML file) written again and
again, every line of the n-th copy ending with `` (n)`` so that no passage repeats from one copy to the
next (with paragraphs marked only at their start, 2,200 passages not found at their place had 116 distinct
quotes, and a cache of answers would have hidden the cost of the search); ``source add`` of it.

Rows, each command in a fresh process (wall time, CPU time of the process and its children, peak
resident set): ``find --cell big/open_work`` cold (its index built, median of ``--runs``) and cached;
``grep -n -i -E 'reset|timeout|container'`` over the file (what a reviewer would run instead); the ratio
of the cold ``find`` to ``grep`` in the same run; and a cold ``find`` over one published README
(``real-docs/lm-eval``), the size ``find`` mostly sees.

Run: ``python benchmarks/bench_find_text.py [--mib 12] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_evidence import PY, child_usage, machine

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"
README = DATA / "real-docs" / "lm-eval" / "README.md"
GREP = ["grep", "-n", "-i", "-E", "reset|timeout|container"]


def write_text(path: Path, mib: float) -> None:
    """``mib`` MiB of the vendored real documents, copy after copy, each line ending with its copy's number."""
    documents = sorted(p for p in DATA.glob("real-docs*/**/*") if p.suffix in (".md", ".html"))
    body = "\n\n".join(p.read_text(encoding="utf-8") for p in documents)
    limit = int(mib * 1024 * 1024)
    parts: list[bytes] = []
    size = 0
    copy = 0
    while size < limit:
        parts.append(re.sub(r"(?<=\S)[ \t]*$", f" ({copy})", f"Copy {copy}\n\n{body}\n\n", flags=re.M).encode())
        size += len(parts[-1])
        copy += 1
    path.write_bytes(b"".join(parts)[:limit].decode(errors="ignore").encode())


def measured(argv: list[str], runs: int, prepare: object = None) -> tuple[float, float, int]:
    """Median wall and CPU seconds of ``runs`` runs of ``argv``, and the largest peak memory (KiB)."""
    results = []
    for _ in range(runs):
        if callable(prepare):
            prepare()
        wall, status, usage, _, err = child_usage(argv)
        if status != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {err.strip()[-500:]}")
        results.append((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss))
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            max(r[2] for r in results))


def shown(wall: float, cpu: float, rss: int) -> str:
    """``wall · CPU · peak`` as the table shows it."""
    def seconds(value: float) -> str:
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    return f"{seconds(wall)} · {seconds(cpu)} CPU · {rss / 1024:.0f} MB"


def workspace_with(root: Path, name: str, source: Path) -> list[str]:
    """A workspace whose protocol ``big`` has ``source`` pinned; the ``find`` command over it."""
    workspace = root / name
    cli = [PY, "-m", "protocoder"]
    ws = ["--workspace", str(workspace)]
    subprocess.run([*cli, "init", str(workspace)], check=True, capture_output=True)
    subprocess.run([*cli, "protocol", "add", *ws, "--id", "big", "--name", "Big"], check=True, capture_output=True)
    subprocess.run([*cli, "source", "add", *ws, "big", str(source), "--id", "big"], check=True, capture_output=True)
    return [*cli, "find", *ws, "--cell", "big/open_work"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write-text", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_text is not None:
        write_text(args.write_text, args.mib)
        return
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-find-text-") as tmp:
        root = Path(tmp)
        text = root / "big.txt"
        # Written by a child: 12 MB made here would raise this process's high-water mark, which Linux
        # carries into every child it starts (see bench_evidence.big_readme).
        subprocess.run([PY, __file__, "--write-text", str(text), f"--mib={args.mib}"], check=True)
        find = workspace_with(root, "text", text)
        index = root / "text" / ".protocoder" / "find"
        cold = measured(find, args.runs, prepare=lambda: shutil.rmtree(index, ignore_errors=True))
        cached = measured(find, args.runs)
        grep = measured([*GREP, str(text)], args.runs)
        size = text.stat().st_size
        rows.append((f"`find`, cold (index built), a {size / 1e6:.1f} MB plain-text source", shown(*cold)))
        rows.append(("`find`, cached, the same source", shown(*cached)))
        rows.append((f"`{' '.join(GREP[:4])} '{GREP[4]}'` over the same file", shown(*grep)))
        rows.append(("cold `find` / `grep -n` (wall; CPU)", f"{cold[0] / grep[0]:.0f}×; {cold[1] / grep[1]:.0f}×"))
        find = workspace_with(root, "readme", README)
        index = root / "readme" / ".protocoder" / "find"
        rows.append((f"`find`, cold, one published README ({README.stat().st_size / 1e3:.0f} KB, "
                     f"{README.relative_to(DATA)})",
                     shown(*measured(find, args.runs, prepare=lambda: shutil.rmtree(index, ignore_errors=True)))))
    print(f"\n{machine()}; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())} at the end; "
          f"median of {args.runs} runs\n")
    print("| operation | wall · CPU · peak memory |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    sys.exit(main())
