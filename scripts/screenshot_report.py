"""Render a review's report.html and photograph it with headless Chromium (Debian's ``chromium``).

    python scripts/screenshot_report.py                        # the bundled review -> report.png
    python scripts/screenshot_report.py --workspace DIR --out shot.png --window 1280,2400
    python scripts/screenshot_report.py --out docs/matrix.png --window 760,560   # the README's picture
    python scripts/screenshot_report.py --pdf report.pdf        # print it (the @media print layout)

The browser runs with no network access of its own (no background networking, a fresh
profile) on a file:// URL: the report needs nothing else to show.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def chromium(html: Path, *, screenshot: Path | None = None, pdf: Path | None = None,
             window: str = "1280,2000", timeout: int = 120) -> None:
    """Photograph (``screenshot``) or print (``pdf``) ``html`` in headless Chromium."""
    executable = find_chromium()
    if executable is None:
        raise SystemExit("chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="protocoder-chromium-") as profile:
        command = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                   "--hide-scrollbars", f"--window-size={window}"]
        if screenshot is not None:
            command.append(f"--screenshot={screenshot.resolve()}")
        if pdf is not None:
            command += [f"--print-to-pdf={pdf.resolve()}", "--no-pdf-header-footer"]
        command.append(html.resolve().as_uri())
        subprocess.run(command, check=True, capture_output=True, timeout=timeout)


def render_report(workspace: Path, out_dir: Path) -> Path:
    """``protocoder render --format html`` into ``out_dir``; the report's path."""
    subprocess.run([sys.executable, "-m", "protocoder", "render", "--workspace", str(workspace), "--format", "html",
                    "--out", str(out_dir), "--seed", "1"], check=True, capture_output=True)
    return out_dir / "report.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path, default=REPO)
    parser.add_argument("--out", type=Path, default=Path("report.png"), help="PNG to write")
    parser.add_argument("--window", default="1280,2000", help="browser window WIDTH,HEIGHT in pixels")
    parser.add_argument("--pdf", type=Path, default=None, help="also print the report to this PDF")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="protocoder-report-") as folder:
        html = render_report(args.workspace, Path(folder))
        chromium(html, screenshot=args.out, window=args.window)
        if args.pdf is not None:
            chromium(html, pdf=args.pdf)
    print(f"wrote {args.out}" + (f" and {args.pdf}" if args.pdf else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
