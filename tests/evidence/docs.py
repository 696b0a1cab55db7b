"""Real documents for the evidence tests: PDFs typeset by pdflatex or written by hand, HTML, Markdown.

:func:`make_pdf` writes a small but complete PDF (Helvetica text, one page per list of
lines, an outline) without any library, so that tests and benchmarks can make documents
of any size, or broken on purpose, in milliseconds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def make_pdf(pages: Sequence[Sequence[str]], *, outline: Sequence[tuple[str, int]] = (), title: str = "",
             compress: bool = True) -> bytes:
    """A PDF with one page per list of lines and an outline of ``(title, page index)`` entries."""
    objects: list[bytes] = []  # object n is objects[n - 1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in last
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_ids = []
    for lines in pages:
        ops = [b"BT /F1 11 Tf 14 TL 72 740 Td"]
        for line in lines:
            ops.append(_pdf_string(line) + b" Tj T*")
        ops.append(b"ET")
        stream = b"\n".join(ops)
        if compress:
            data = zlib.compress(stream)
            content = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
        else:
            content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_ids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_obj, content, font)))
    kids = b" ".join(b"%d 0 R" % pid for pid in page_ids)
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    outline_ref = b""
    if outline:
        root = add(b"")
        items = [add(b"") for _ in outline]
        for index, ((name, page), item) in enumerate(zip(outline, items, strict=True)):
            links = b""
            if index > 0:
                links += b" /Prev %d 0 R" % items[index - 1]
            if index + 1 < len(items):
                links += b" /Next %d 0 R" % items[index + 1]
            objects[item - 1] = (b"<< /Title " + _pdf_string(name) + b" /Parent %d 0 R%s /Dest [%d 0 R /XYZ 0 792 0] >>"
                                 % (root, links, page_ids[page]))
        objects[root - 1] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
            items[0], items[-1], len(items))
        outline_ref = b" /Outlines %d 0 R" % root
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R%s >>" % (pages_obj, outline_ref)
    info = add(b"<< /Title " + _pdf_string(title) + b" >>") if title else None
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def paper_pages(number: int, *, lines: int = 40, seed: int = 0) -> list[list[str]]:
    """``number`` pages of distinct sentences (every line differs, so every quote is unique)."""
    words = ("agent", "task", "harness", "episode", "reviewer", "benchmark", "container", "score", "budget",
             "timeout", "reset", "state", "environment", "protocol", "grader", "seed")
    pages = []
    for page in range(number):
        text = [f"{page + 1} Section {page + 1}"]
        for line in range(lines):
            k = seed * 7919 + page * 131 + line
            chosen = " ".join(words[(k * (i + 3) + i * i) % len(words)] for i in range(9))
            text.append(f"Line {line} of page {page + 1} ({seed}): the {chosen} ends here.")
        pages.append(text)
    return pages


def latex_pdf(folder: Path, name: str, body: str, preamble: str = "") -> Path:
    """Typeset ``body`` (the inside of a document environment) with pdflatex; skip without it.

    ``preamble`` goes before ``\\begin{document}`` (packages, font setup)."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"{name}.tex"
    source.write_text("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{hyperref}\n"
                      + preamble + "\\begin{document}\n" + body + "\n\\end{document}\n", encoding="utf-8")
    for _ in range(2):  # twice: the outline (bookmarks) is written on the second run
        run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                              source.name], cwd=folder, capture_output=True, timeout=120, check=False)
        assert run.returncode == 0, run.stdout.decode(errors="replace")[-2000:]
    return folder / f"{name}.pdf"


PAPER_V1 = r"""
\title{A Benchmark for Long-Horizon Agents}
\author{A. Author}
\maketitle
\section{Introduction}
We evaluate agents on a fixed set of tasks drawn from real software projects.
The official harness caps each run at thirty minutes of wall-clock time, and a run that exceeds the
cap is scored as a failure. Containers are discarded after grading, so no state carries over
between episodes.
\newpage
\section{Evaluation Protocol}
\subsection{Stopping rule}
Each episode ends when the agent submits a final answer or after fifty steps, whichever comes first.
Scores are averaged over three seeds, and the configuration of every run is published with the results.
"""

PAPER_V2 = PAPER_V1.replace("after fifty steps, whichever comes first", "after one hundred steps")

HTML_PAGE = """<!DOCTYPE html>
<html><head><title>Harness documentation</title>
<script>document.title = "pwned"; fetch("https://example.invalid/steal");</script>
<style>body { color: red }</style></head>
<body><nav><a href="/">Home</a></nav>
<h1>Running the harness</h1>
<p>The harness starts one container per task instance and removes it once the
grader has written its report.</p>
<h2>Timeouts</h2>
<p>A run that exceeds its budget is <em>terminated</em> &amp; counted as unresolved.</p>
</body></html>
"""

MARKDOWN_DOC = """# Leaderboard rules

Submissions must report the number of attempts per task.

## Resets

Every task is reset to its initial snapshot before each attempt, so earlier attempts
leave no trace.
"""


_README_SECTION = """\
## {n}. Running task {n}

The harness runs **agents** on [task {n}](https://example.org/tasks/{n}) with `--limit {n}`; see the
[leaderboard][board] and the _notes_ below for what changed in release {n}.
Each run writes its results to `results/{n}.json` after a timeout of {n} seconds.

- Install the package: `pip install bench-{n}`
- Set `API_KEY_{n}` in your environment
  - a nested item for task {n}
  - another nested item, with a [link](https://example.org/{n})
- Run the agent with the default budget

1. Start the container for task {n}
2. Reset the environment state

   The second step takes about {n} ms.
3. Score the episode

```bash
pip install bench-{n}
bench run --task {n} --seed 42

bench score results/{n}.json
```

> [!NOTE]
> Results of task {n} vary by a few percent between seeds.

| model | score | cost |
|---|---:|---:|
| agent-{n} | {n}.5 | ${n} |
| baseline | 0.{n} | $0 |

<details>
<summary>Details of task {n}</summary>

The grader of task {n} compares the final state with the expected one.

</details>

    indented code of task {n}
    second line

Task {n} is described in the paper[^{n}]; its grader is deterministic.

[^{n}]: The paper of task {n}, section {n}.

---

"""


def big_markdown(lines: int) -> bytes:
    """A README-like Markdown source of about ``lines`` lines (headings, paragraphs with links and
    code, nested lists, fenced and indented code, an admonition, a table, an HTML block, a footnote,
    a reference link defined at the end): about 25 bytes a line, so a million lines is about 25 MB.
    Every section differs by its number, so every passage is unique."""
    per_section = _README_SECTION.count("\n")
    parts = ["# A very long benchmark README\n\nEverything about the tasks below.\n\n"]
    parts += [_README_SECTION.format(n=n) for n in range(max(1, lines // per_section))]
    parts.append("[board]: https://example.org/leaderboard \"Leaderboard\"\n")
    return "".join(parts).encode()


def big_readme_workspace(tmp_path: Path, lines: int) -> tuple[Path, Path]:
    """A new workspace with a protocol ``big``, and a README of ``lines`` lines (:func:`big_markdown`)
    beside it, not yet pinned: (the workspace, the README)."""
    folder = tmp_path / f"w{lines}"
    cli = [sys.executable, "-m", "protocoder"]
    subprocess.run([*cli, "init", str(folder)], check=True, capture_output=True)
    subprocess.run([*cli, "protocol", "add", "-w", str(folder), "--id", "big", "--name", "Big"], check=True,
                   capture_output=True)
    source = tmp_path / f"big{lines}.md"
    source.write_bytes(big_markdown(lines))
    return folder, source


# A protocoder command in a child that reports its own peak and its children's (the extraction child).
# Its own is VmHWM, the high-water mark of its memory since it started: ru_maxrss would not do, as Linux
# carries the high-water mark of the process that started it (here pytest, which may have grown far larger
# in a long run) across exec. Reported also when the command ends with os._exit.
_PEAK_PROBE = """
import os, resource, runpy, sys
def report():
    with open("/proc/self/status") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    os.write(2, ("PEAKS %d %d\\n" % (own, child)).encode())
exit_now = os._exit
def _exit(code):
    report()
    exit_now(code)
os._exit = _exit
sys.argv = ["protocoder", *sys.argv[1:]]
try:
    runpy.run_module("protocoder", run_name="__main__")
finally:
    report()
"""


def command_peaks(*args: str) -> tuple[float, float]:
    """Run ``protocoder ARGS`` (it must succeed) and return (its own, its children's) peak memory in MB."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux) to read a process's own peak memory")
    done = subprocess.run([sys.executable, "-c", _PEAK_PROBE, *args], capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stderr
    own, child = next(line for line in done.stderr.splitlines() if line.startswith("PEAKS ")).split()[1:]
    return int(own) / 1024, int(child) / 1024


def cli_workspace(tmp_path: Path, protocol_id: str, name: str, source: Path | None = None,
                  source_id: str | None = None) -> tuple[Path, Callable[..., subprocess.CompletedProcess]]:
    """A new workspace made at the command line, as a user makes one: ``init``, ``protocol add`` and, when
    ``source`` is given, ``source add`` of it (with ``--id`` when ``source_id`` is given). Returns the workspace
    and a function that runs ``protocoder ARGS`` in a child process (text output; ``check`` as in
    ``subprocess.run``, on by default)."""

    def run(*args: object, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "protocoder", *map(str, args)], capture_output=True, text=True,
                              check=check)

    workspace = tmp_path / "w"
    run("init", workspace)
    run("protocol", "add", "-w", workspace, "--id", protocol_id, "--name", name)
    if source is not None:
        run("source", "add", "-w", workspace, protocol_id, source, *(("--id", source_id) if source_id else ()))
    return workspace, run
