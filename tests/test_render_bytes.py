"""The rendered tables of a seeded generated review and of the bundled review keep their bytes
(issue 34: render was made faster, and must print exactly what it printed).

``tests/data/render-digests.json`` holds the SHA-256 of every file rendered; a change of the output
on purpose (a template, an escaper) updates it with ``PROTOCODER_UPDATE_DIGESTS=1 pytest
tests/test_render_bytes.py``, and the diff of that file shows which outputs changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from generate import generate  # noqa: E402

DIGESTS = Path(__file__).parent / "data" / "render-digests.json"


def _digests(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


RENDERS = {
    "all": ["--format", "all"],
    "xelatex-standalone": ["--format", "latex", "--standalone", "--engine", "xelatex"],
    "quotes-comments": ["--format", "all", "--quotes", "--comments"],
}


@pytest.mark.parametrize("review", ["generated", "bundled"])
def test_rendered_tables_keep_their_bytes(review: str, bundled: Path, tmp_path: Path, cli) -> None:
    if review == "generated":
        workspace = tmp_path / "generated"
        generate(workspace, protocols=60, seed=20260815)
    else:
        workspace = bundled
    found: dict[str, dict[str, str]] = {}
    for name, options in RENDERS.items():
        out = tmp_path / f"out-{name}"
        done = cli("render", "--workspace", workspace, *options, "--bootstrap", "200", "--seed", "1", "--out", out)
        assert done.exit_code == 0, done.output
        found[name] = _digests(out)
    kept = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}
    if os.environ.get("PROTOCODER_UPDATE_DIGESTS") == "1":
        kept[review] = found
        DIGESTS.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert review in kept, "no digests yet: run with PROTOCODER_UPDATE_DIGESTS=1"
    changed = sorted(f"{name}/{file}" for name in found.keys() | kept[review].keys()
                     for file in found.get(name, {}).keys() | kept[review].get(name, {}).keys()
                     if found.get(name, {}).get(file) != kept[review].get(name, {}).get(file))
    assert not changed, f"rendered output changed: {changed} (on purpose? PROTOCODER_UPDATE_DIGESTS=1)"
