"""`find`'s ranking on real documentation: what a reviewer sees in the top 10 of a short README.

Real documents from tests/data/real-docs (the dev set of benchmarks/find_real.py), unmodified.
"""

from __future__ import annotations

from pathlib import Path

from protocoder.evidence.extract import extract
from protocoder.evidence.search import PassageIndex, field_query, source_passages
from protocoder.evidence.search.ranking import CODE_FLOOR
from protocoder.storage.findings import Findings
from protocoder.storage.formats import parse_rubric
from protocoder.storage.yamlio import parse_yaml

REPO = Path(__file__).resolve().parents[2]
REAL_DOCS = REPO / "tests" / "data" / "real-docs"
SINGULARITY = "harbor/harbor/environments/singularity/README.md"
BOX = "│─┌┐└┘├┤┬┴┼"


def _rubric():  # noqa: ANN202
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    return parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))


def _index(name: str) -> PassageIndex:
    return PassageIndex.build(source_passages("readme", extract((REAL_DOCS / name).read_bytes(), "text/markdown")))


def test_a_box_drawing_is_a_diagram_not_code() -> None:
    index = _index(SINGULARITY)
    drawn = [p for p in index.passages if sum(p.text.count(c) for c in BOX) >= 2]
    assert drawn and {p.kind for p in drawn} == {"diagram"}


def test_the_top_ten_of_a_short_readme_is_not_filled_with_diagram_lines_and_weak_code() -> None:
    """The singularity README's architecture drawing (`│  - exec()  │  /exec  │`) held five of the ten
    open_work candidates; the passages that say what happens to the processes now rank without them."""
    index = _index(SINGULARITY)
    rubric = _rubric()
    for fld in rubric.fields:
        found = index.search(field_query(rubric, fld), 10)
        assert found
        assert not [c.text for c in found if sum(c.text.count(ch) for ch in BOX) >= 2], fld.id
        kinds = {(p.start, p.end): p.kind for p in index.passages}
        weak = [c.text for c in found if kinds[(c.start, c.end)] in ("code", "comment", "install", "table")
                and c.score < CODE_FLOOR * found[0].score]
        assert weak == [], fld.id
    texts = [c.text for c in index.search(field_query(rubric, rubric.field("open_work")), 10)]
    assert any("kills the container at 95% of the configured limit" in t for t in texts)


def test_a_strong_code_match_is_still_listed() -> None:
    """The floor is relative: a command that matches the field well stays (evalplus: `docker run --rm`)."""
    index = _index("evalplus/README.md")
    rubric = _rubric()
    found = index.search(field_query(rubric, rubric.field("reset_retention")), 10)
    kinds = {(p.start, p.end): p.kind for p in index.passages}
    assert any(kinds[(c.start, c.end)] in ("code", "comment") and "--rm" in c.text for c in found)
