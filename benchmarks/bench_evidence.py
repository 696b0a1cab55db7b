"""Evidence at scale: validate checking 1,000 quotes over 50 snapshots of 100 pages, and the
reader opening a 300-page PDF's text.

Setup (not timed): ``protocoder init``; 50 protocols, each with a 100-page PDF written by
``tests/evidence/docs.make_pdf`` (distinct sentences on every line, an outline entry per
page) pinned through ``protocoder.evidence.sources.add_source`` (text extracted into the
sidecar once, as ``source add`` does); two reviewers code every cell, and 1,000 quotes of
whole lines are spread over their cells with positions as ``quote add`` records them.

Rows, each in a fresh process, median of ``--runs`` (time) and the largest ``ru_maxrss``:

  source add             ``protocoder source add`` of one more 100-page PDF (extraction in
                         its bounded child process included)
  validate, no quotes    ``protocoder validate`` of the same workspace without its quotes
  validate, quotes       ``protocoder validate``: every snapshot hashed, every quote found
  validate, hand-written the same quotes without positions (each searched for)
  status                 ``protocoder status`` (drift from hashes; no snapshot read)
  big README             ``protocoder source add`` of a generated README of ``--readme-lines`` lines
                         (``tests/evidence/docs.big_markdown``: 25 MB for a million), with the
                         peak memory of the command and of its extraction child apart; then
                         ``find`` over it, cold (its index built) and cached (one run each)
  reader: 300 pages      the reader (``tui/widgets/reader/``, on its screen) pushed in ``run_test`` until
                         the text of a 300-page PDF is on screen; then a search for a word
                         with hundreds of matches (until highlighted) and a quote taken

Run: ``python benchmarks/bench_evidence.py [--snapshots 50] [--pages 100] [--quotes 1000]
[--reader-pages 300] [--readme-lines 1000000] [--runs 3]`` (``--readme-lines 0``: no big README).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from evidence.docs import make_pdf, paper_pages  # noqa: E402

PY = sys.executable

READER = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
from textual.app import App
from protocoder.model import Cell
from protocoder.storage.workspace import load_review
from protocoder.tui.screens.reader import ReaderScreen

workspace = Path(sys.argv[1])
review = load_review(workspace)
protocol = review.protocol("long")
taken = []

class Host(App):
    def on_mount(self):
        self.started = time.perf_counter()
        self.push_screen(ReaderScreen(review.paths, protocol, Cell("long", "open_work", "alice", None),
                                      on_quote=lambda q: (taken.append(q), Cell("long", "open_work", "alice", None,
                                                          quotes=tuple(taken)))[1]))

async def main():
    app = Host()
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        opened = time.perf_counter() - app.started
        screen = app.screen.reader
        assert screen.reading is not None, "text not loaded"
        lines = screen.text_area.document.line_count
        await pilot.press("slash", *"timeout")
        start = time.perf_counter()
        await pilot.press("enter")
        await pilot.pause()
        search = time.perf_counter() - start
        matches = len(screen.matches)
        start = time.perf_counter()
        await pilot.press("q")
        await pilot.pause()
        quote = time.perf_counter() - start
        assert taken, "no quote taken"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"open": opened, "search": search, "quote": quote, "matches": matches, "lines": lines,
                      "rss": rss}))

asyncio.run(main())
"""


# `source add` run in this child, which reports its own peak and its largest child's (the extraction).
PEAKS = r"""
import resource, runpy, sys
try:
    sys.argv = ["protocoder", *sys.argv[1:]]
    runpy.run_module("protocoder", run_name="__main__")
finally:
    print("PEAKS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
"""


def big_readme(root: Path, lines: int) -> list[tuple[str, str]]:
    """Rows for ``source add`` of a README of ``lines`` lines and ``find`` over it (cold, cached)."""
    workspace = root / "readme-review"
    ws = ["--workspace", str(workspace)]
    cli = [PY, "-m", "protocoder"]
    subprocess.run([*cli, "init", str(workspace)], check=True, capture_output=True)
    subprocess.run([*cli, "protocol", "add", *ws, "--id", "big", "--name", "Big"], check=True, capture_output=True)
    readme = root / "README.md"
    # Written by a child: 25 MB made here would raise this process's high-water mark, which Linux carries
    # into every child it starts (the find below measured 625 MB instead of 600 so).
    subprocess.run([PY, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from evidence.docs import big_markdown; "
                    "open(sys.argv[2], 'wb').write(big_markdown(int(sys.argv[3])))", str(HERE.parent / "tests"),
                    str(readme), str(lines)], check=True)
    size = readme.stat().st_size / 1e6
    elapsed, status, _, _, err = child([PY, "-c", PEAKS, "source", "add", *ws, "big", str(readme), "--id", "big"])
    if status != 0:
        raise SystemExit(f"source add failed: {err.strip()[-500:]}")
    own, extraction = (int(v) for v in next(line for line in err.splitlines() if line.startswith("PEAKS")).split()[1:])
    from protocoder.evidence.extract import MAX_MARKUP_BYTES

    rows = [(f"`source add`, a {lines:,}-line README ({size:.1f} MB; the Markdown limit is "
             f"{MAX_MARKUP_BYTES / 1e6:.1f} MB): command · extraction child",
             f"{cell(elapsed, own)} · {extraction / 1024:.0f} MB")]
    find = [*cli, "find", *ws, "--cell", "big/open_work"]
    for label in ("cold (index built)", "cached"):
        if label.startswith("cold"):
            shutil.rmtree(workspace / ".protocoder" / "find", ignore_errors=True)
        elapsed, status, rss, _, err = child(find)
        if status != 0:
            raise SystemExit(f"find failed: {err.strip()[-500:]}")
        rows.append((f"`find` over that README, {label}", cell(elapsed, rss)))
    return rows


def child(argv: list[str]) -> tuple[float, int, int, str, str]:
    """Run ``argv``; (wall seconds, exit status, ru_maxrss KiB, stdout, stderr)."""
    elapsed, status, usage, out, err = child_usage(argv)
    return elapsed, status, usage.ru_maxrss, out, err


def child_usage(argv: list[str]) -> tuple[float, int, Any, str, str]:
    """Run ``argv``; (wall seconds, exit status, its resource usage (``os.wait4``), stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return (elapsed, os.waitstatus_to_exitcode(status), usage, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"))


def timed(argv: list[str], runs: int, *, ok: tuple[int, ...] = (0,), prepare: object = None) -> tuple[float, int]:
    results = []
    for _ in range(runs):
        if callable(prepare):
            prepare()
        elapsed, status, rss, _, err = child(argv)
        if status not in ok:
            raise SystemExit(f"{' '.join(argv)} failed ({status}): {err.strip()[-500:]}")
        results.append((elapsed, rss))
    return statistics.median(t for t, _ in results), max(m for _, m in results)


def cell(seconds: float, rss_kib: int) -> str:
    shown = f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"
    return f"{shown} · {rss_kib / 1024:.0f} MB"


def machine() -> str:
    """The cores, processor, Python and system the figures come from."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}")


def build(root: Path, snapshots: int, pages: int, quotes: int) -> Path:
    """A workspace with ``snapshots`` pinned PDFs and ``quotes`` quotes (setup, not timed)."""
    from protocoder.evidence.quotes import locate_quote
    from protocoder.evidence.snapshots import Snapshots
    from protocoder.evidence.sources import add_source
    from protocoder.model import Protocol, Quote
    from protocoder.scaffold import init_workspace
    from protocoder.storage.store import CellUpdate, Store
    from protocoder.storage.workspace import load_review

    workspace = root / "review"
    init_workspace(workspace, title="Evidence benchmark")
    store = Store(load_review(workspace).paths)
    for index in range(snapshots):
        store.add_protocol(Protocol(f"p{index:03d}", f"Protocol {index}"))
    started = time.perf_counter()
    for index in range(snapshots):
        pdf = root / f"paper-{index}.pdf"
        pdf.write_bytes(make_pdf(paper_pages(pages, seed=index),
                                 outline=[(f"Section {page + 1}", page) for page in range(pages)]))
        add_source(load_review(workspace), f"p{index:03d}", pdf, source_id="paper", title=f"Paper {index}")
    print(f"  {snapshots} snapshots of {pages} pages pinned in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    review = load_review(workspace)
    rubric = review.require_valid()
    snapshot_cache = Snapshots(review.paths)
    per_protocol = quotes // snapshots
    cells = []
    for index, protocol in enumerate(review.protocols):
        source = protocol.sources[0]
        text = snapshot_cache.text(source.sha256, source.media_type).text
        lines = [line for line in text.splitlines() if line.startswith("Line ")]
        slots = [(reviewer, field) for reviewer in ("alice", "bob") for field in rubric.field_ids]
        chosen: dict[tuple[str, str], list[Quote]] = {slot: [] for slot in slots}
        for number in range(per_protocol + (1 if index < quotes % snapshots else 0)):
            line = lines[(number * 37 + index) % len(lines)]
            quote = locate_quote(Quote("paper", line), source, snapshot_cache)
            assert quote is not None
            chosen[slots[number % len(slots)]].append(quote)
        for (reviewer, field), found in chosen.items():
            cells.append(CellUpdate(protocol.id, field, reviewer, {"code": "E", "source": "Sec. 1",
                                                                   "basis": "The paper says so.",
                                                                   "quotes": tuple(found)}))
    store.write_cells(cells, rubric, stamp="2026-08-01T00:00:00Z")
    return workspace


def rewrite_quotes(workspace: Path, how: str) -> None:
    """Strip positions (``hand``) or remove every quote (``none``) in every reviewer file."""
    from protocoder.storage.store import CellUpdate, Store
    from protocoder.storage.workspace import load_review

    review = load_review(workspace)
    cells = []
    for cell in review.all_cells():
        quotes = () if how == "none" else tuple(replace(q, page="", section="", start=None, end=None, snapshot="")
                                                for q in cell.quotes)
        cells.append(CellUpdate(cell.protocol, cell.field, cell.reviewer, {"quotes": quotes}))
    Store(review.paths).write_cells(cells, review.require_valid())


def setup(root: Path, snapshots: int, pages: int, quotes: int, reader_pages: int) -> None:
    """Everything the timed rows need: the quoted workspace, one more PDF, and a long pinned PDF."""
    from protocoder.evidence.sources import add_source
    from protocoder.model import Protocol
    from protocoder.storage.store import Store
    from protocoder.storage.workspace import load_review

    workspace = build(root, snapshots, pages, quotes)
    (root / "extra.pdf").write_bytes(make_pdf(paper_pages(pages, seed=999)))
    Store(load_review(workspace).paths).add_protocol(Protocol("long", "A long paper"))
    long_pdf = root / "long.pdf"
    long_pdf.write_bytes(make_pdf(paper_pages(reader_pages, seed=7),
                                  outline=[(f"Section {p + 1}", p) for p in range(reader_pages)]))
    started = time.perf_counter()
    add_source(load_review(workspace), "long", long_pdf, source_id="long")
    print(f"  {reader_pages}-page PDF pinned in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=50)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--quotes", type=int, default=1000)
    parser.add_argument("--reader-pages", type=int, default=300)
    parser.add_argument("--readme-lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--setup", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rewrite", nargs=2, metavar=("HOW", "WORKSPACE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.setup is not None:
        setup(args.setup, args.snapshots, args.pages, args.quotes, args.reader_pages)
        return
    if args.rewrite is not None:
        rewrite_quotes(Path(args.rewrite[1]), args.rewrite[0])
        return
    cli = [PY, "-m", "protocoder"]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        root = Path(tmp)
        # Setup runs in a child: a large parent would count in every child's peak memory
        # (Linux carries the high-water mark of a fork across exec).
        sizes = [f"--snapshots={args.snapshots}", f"--pages={args.pages}", f"--quotes={args.quotes}",
                 f"--reader-pages={args.reader_pages}"]
        if subprocess.run([PY, __file__, "--setup", str(root), *sizes], check=False).returncode != 0:
            raise SystemExit("setup failed")
        workspace = root / "review"
        ws = ["--workspace", str(workspace)]
        out = child([*cli, "validate", *ws])[3]
        print(f"  {out.strip()}", file=sys.stderr)
        extra = root / "extra.pdf"

        def unpin() -> None:
            child([*cli, "source", "remove", "p000", "extra", *ws])

        rows.append((f"`source add`, one {args.pages}-page PDF",
                     cell(*timed([*cli, "source", "add", "p000", str(extra), "--id", "extra", *ws], args.runs,
                                 prepare=unpin))))
        unpin()
        rows.append((f"`validate`, {args.quotes:,} quotes over {args.snapshots} snapshots of {args.pages} pages",
                     cell(*timed([*cli, "validate", *ws], args.runs))))
        rows.append(("`status` (drift from hashes)", cell(*timed([*cli, "status", *ws], args.runs))))
        subprocess.run([PY, __file__, "--rewrite", "hand", str(workspace)], check=True)
        rows.append(("`validate`, the same quotes hand-written (no positions)",
                     cell(*timed([*cli, "validate", *ws], args.runs))))
        subprocess.run([PY, __file__, "--rewrite", "none", str(workspace)], check=True)
        rows.append(("`validate`, the same workspace without quotes",
                     cell(*timed([*cli, "validate", *ws], args.runs))))
        reader = []
        for _ in range(args.runs):
            _, status, rss, out, err = child([PY, "-c", READER, str(workspace)])
            if status != 0:
                raise SystemExit(f"reader failed: {err.strip()[-2000:]}")
            reader.append({**json.loads(out.strip().splitlines()[-1]), "child_rss": rss})
        median = {key: statistics.median(r[key] for r in reader) for key in ("open", "search", "quote")}
        rss = max(r["child_rss"] for r in reader)
        first = reader[0]
        rows.append((f"reader: open a {args.reader_pages}-page PDF's text ({first['lines']:,} lines)",
                     cell(median["open"], rss)))
        rows.append((f"reader: search a word ({first['matches']} matches, all highlighted)",
                     f"{median['search'] * 1000:.0f} ms"))
        rows.append(("reader: quote the match's sentence", f"{median['quote'] * 1000:.0f} ms"))
        if args.readme_lines:
            rows += big_readme(root, args.readme_lines)
    print(f"\n{machine()}; median of {args.runs} runs\n")
    print("| operation | time · peak memory |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
