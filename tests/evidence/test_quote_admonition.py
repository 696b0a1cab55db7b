"""A quote copied from a MkDocs file with its admonition header line (``!!! note``, ``!!! note "Title"``,
``??? tip``) is found, as the rendered view shows the admonition: its title, then its text.

The real document is agentdojo's ``docs/concepts/functions_runtime.md`` (tests/data/real-docs-heldout),
quoted through the real CLI on a copy of the bundled review.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocoder.evidence.extract import extract
from protocoder.evidence.locate import Haystack
from protocoder.storage.workspace import load_review

from conftest import copy_bundled

REAL = Path(__file__).resolve().parents[1] / "data" / "real-docs-heldout" / "agentdojo" / "docs" / "concepts"


def _add_source(cli, root: Path, doc: Path) -> str:  # noqa: ANN001
    result = cli("source", "add", "swe-bench", doc, "--workspace", root)
    assert result.exit_code == 0, result.output
    return load_review(root).protocol("swe-bench").sources[-1].id


def test_a_raw_copied_mkdocs_admonition_with_its_header_line_is_quoted(tmp_path: Path, cli) -> None:  # noqa: ANN001
    root = copy_bundled(tmp_path / "review")
    raw = (REAL / "functions_runtime.md").read_text(encoding="utf-8")
    start = raw.index("!!! note\n")
    copied = raw[start:raw.index("\n\n", start)]  # the header line and the admonition's text, as in the file
    assert copied.startswith("!!! note\n    When using tools as part of a suite")
    source = _add_source(cli, root, REAL / "functions_runtime.md")
    result = cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source", source,
                 "--workspace", root, "-", stdin=copied)
    assert result.exit_code == 0, result.output + result.stderr
    quote = load_review(root).cells("swe-bench", "open_work")["casheekar"].quotes[-1]
    assert quote.text == copied.strip()
    assert quote.exact == raw[quote.raw_start:quote.raw_end]
    assert "When using tools as part of a suite" in quote.exact
    assert quote.section == "Stateless functions"
    checked = cli("validate", "--workspace", root)
    assert checked.exit_code == 0, checked.output + checked.stderr


@pytest.mark.parametrize(("header", "shown"), [
    ('!!! note "Reset policy"', "Reset policy"),
    ("!!! warning", "Warning"),
    ("??? tip", "Tip"),
    ("???+ note \"Caches\"", "Caches"),
    ('!!! note ""', ""),
])
def test_every_header_form_compares_as_the_title_it_shows(header: str, shown: str) -> None:
    text = f"# Runner\n\n{header}\n    Every task is reset before each attempt.\n\nAfter.\n"
    extracted = extract(text.encode(), "text/markdown")
    assert "!!!" not in extracted.text and "???" not in extracted.text
    found = Haystack(extracted.text).find(f"{header}\n    Every task is reset before each attempt.")
    assert found is not None
    assert extracted.text[found.start:found.end].endswith("Every task is reset before each attempt.")
    if shown:
        assert extracted.text[found.start:found.end].startswith(shown)


def test_a_header_in_running_text_is_not_markup() -> None:
    """Only a line that is an admonition header changes: ``!!!`` inside a sentence stays text."""
    haystack = Haystack("It failed!!! note that nothing ran.")
    assert haystack.find("It failed!!! note that nothing ran.") is not None
    assert haystack.find("It failed Note that nothing ran.") is None
