"""Compile rendered LaTeX tables and check that they fit: the check `pdflatex exited 0` does not make.

For every ``.tex`` in a folder: two passes of the engine (longtable widths and citations
settle on the second), then the log is read for overfull boxes wider than 5 pt, missing
characters and undefined citations or references. Used by tests/test_tables_fit.py, and
from the command line (CI runs the same check on the three reviews of issue 13)::

    python tests/latex_check.py FOLDER [--engine xelatex]   # check the .tex files already in FOLDER
    python tests/latex_check.py --reviews OUT               # render (a), (b), (c) into OUT and check them
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

OVERFULL_LIMIT_PT = 5.0
_OVERFULL = re.compile(r"^Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)(.*)$", re.MULTILINE)
_MISSING = re.compile(r"^Missing character: .*$", re.MULTILINE)
_UNDEFINED = re.compile(r"^(?:LaTeX|Package natbib) Warning: (?:Citation|Reference) `[^']*' on page \d+ undefined.*$"
                        r"|^LaTeX Warning: There were undefined references\.$", re.MULTILINE)


def log_problems(log: str, name: str = "") -> list[str]:
    """Problems a LaTeX log reports: overfull boxes over the limit, missing characters, undefined citations."""
    prefix = f"{name}: " if name else ""
    problems = [f"{prefix}overfull \\hbox {m.group(1)}pt too wide{m.group(2)}" for m in _OVERFULL.finditer(log)
                if float(m.group(1)) > OVERFULL_LIMIT_PT]
    problems += [prefix + m.group(0) for m in _MISSING.finditer(log)]
    problems += [prefix + m.group(0) for m in _UNDEFINED.finditer(log)]
    return problems


def compile_tex(path: Path, engine: str = "pdflatex", passes: int = 2, timeout: int = 600) -> list[str]:
    """Compile ``path`` in its folder; return its problems (a failed run is one)."""
    for _ in range(passes):
        run = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", path.name],
                             cwd=path.parent, capture_output=True, timeout=timeout)
    log_path = path.with_suffix(".log")
    log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
    if run.returncode != 0 or not path.with_suffix(".pdf").exists():
        tail = "\n".join(line for line in log.splitlines()[-40:] if line.strip())
        return [f"{path.name}: {engine} failed (exit {run.returncode}):\n{tail}"]
    return log_problems(log, path.name)


def check_folder(folder: Path, engine: str = "pdflatex") -> dict[str, list[str]]:
    """Compile every ``.tex`` in ``folder``; ``{file name: problems}``."""
    return {tex.name: compile_tex(tex, engine) for tex in sorted(folder.glob("*.tex"))}


def to_png(pdf: Path, resolution: int = 70) -> list[Path]:
    """PNG pages of a PDF (``pdftoppm``), to look at."""
    if shutil.which("pdftoppm") is None:
        return []
    subprocess.run(["pdftoppm", "-png", "-r", str(resolution), pdf.name, pdf.stem], cwd=pdf.parent, check=True,
                   capture_output=True)
    return sorted(pdf.parent.glob(f"{pdf.stem}-*.png"))


def render_reviews(out: Path) -> dict[str, tuple[Path, str]]:
    """Build and render the three reviews of the check: ``{label: (folder of .tex files, engine)}``."""
    sys.path.insert(0, str(Path(__file__).parent))
    from click.testing import CliRunner

    from protocoder.cli import main

    from conftest import REPO
    from review_factory import multilingual_review, wide_review

    def cli(*args: object):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    out.mkdir(parents=True, exist_ok=True)
    reviews = {"a-bundled": REPO, "b-wide": wide_review(out / "b-review"),
               "c-multilingual": multilingual_review(out / "c-review", cli)}
    folders = {}
    for label, workspace in reviews.items():
        engines = ("pdflatex", "xelatex") if label.startswith("c") else ("pdflatex",)
        for engine in engines:
            target = out / f"{label}-{engine}"
            result = cli("render", "--workspace", workspace, "--format", "latex", "--standalone", "--engine", engine,
                         "--out", target, "--bootstrap", "200", "--seed", "1")
            if result.exit_code != 0:
                raise SystemExit(f"render of {label} failed: {result.output}")
            folders[f"{label} ({engine})"] = (target, engine)
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--engine", default="pdflatex", choices=("pdflatex", "xelatex", "lualatex"))
    parser.add_argument("--reviews", type=Path, metavar="OUT", help="render reviews (a), (b), (c) into OUT first")
    parser.add_argument("--png", action="store_true", help="also write PNG pages next to each PDF")
    args = parser.parse_args(argv)
    if (args.folder is None) == (args.reviews is None):
        parser.error("give a FOLDER of .tex files or --reviews OUT")
    folders = render_reviews(args.reviews) if args.reviews else {str(args.folder): (args.folder, args.engine)}
    failed = 0
    for label, (folder, engine) in folders.items():
        for name, problems in check_folder(folder, engine).items():
            if args.png and (folder / name).with_suffix(".pdf").exists():
                to_png((folder / name).with_suffix(".pdf"))
            status = "FAIL" if problems else "ok"
            print(f"{status}: {label}: {name}")
            for problem in problems:
                print(f"    {problem}")
            failed += bool(problems)
    print(f"{failed} of the tables have problems" if failed else "every table fits and compiles cleanly")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
