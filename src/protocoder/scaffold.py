"""Creating a new workspace, and small parsers for command-line values."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from .errors import Rejected
from .model import Source
from .storage.files import atomic_write_text

BUNDLED_RUBRIC = Path(__file__).parent / "data" / "evaluation-boundary.yaml"


def init_workspace(directory: Path, *, title: str = "") -> list[Path]:
    """Create a workspace with the bundled rubric, an empty bibliography and no protocols.

    Refuses a folder that already holds a workspace or any other files, so that nothing
    is ever overwritten.
    """
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise Rejected(f"{directory} exists and is not empty; choose a new folder")
    rubric_text = BUNDLED_RUBRIC.read_text(encoding="utf-8")
    settings = (
        "# A protocoder review workspace. See `protocoder --help`.\n"
        f"title: {_yaml_text(title or 'Documentation review')}\n"
        "rubric: evaluation-boundary\n"
        "# Display order of protocols in every table (others follow, sorted by id).\n"
        "order: []\n"
    )
    files = {
        "protocoder.yaml": settings,
        "rubric/evaluation-boundary.yaml": rubric_text,
        "references.bib": "",
        "protocols/.gitkeep": "",
        ".gitignore": ("# locks and caches of protocoder (no trailing slash: a link of that name is ignored too)\n"
                       ".protocoder\n"
                       "# Source snapshots (copies of reviewed documents, by SHA-256) may be large or not yours to\n"
                       "# share: uncomment to keep them out of git. Their hashes stay in protocol.yaml, and\n"
                       "# validate reports a snapshot that is not present as a note, not an error.\n"
                       "# /sources/\n"),
    }
    created = []
    for name, text in files.items():
        path = directory / name
        atomic_write_text(path, text)
        created.append(path)
    return created


def _yaml_text(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def parse_source_option(text: str, *, today: date | None = None) -> Source:
    """Parse ``TITLE|URL|VERSION|DATE`` (DATE optional, default today) into a :class:`Source`."""
    parts = [part.strip() for part in text.split("|")]
    if len(parts) not in (3, 4):
        raise Rejected(f"--source {text!r}: expected TITLE|URL|VERSION|DATE (DATE may be left out)")
    accessed = today or date.today()
    if len(parts) == 4 and parts[3]:
        try:
            accessed = date.fromisoformat(parts[3])
        except ValueError:
            raise Rejected(f"--source {text!r}: the date {parts[3]!r} is not YYYY-MM-DD") from None
    return Source(parts[0], parts[1], parts[2], accessed)
