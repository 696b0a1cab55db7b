"""REFI-QDA export through the real CLI: a review with a typeset PDF, an HTML page and a
Markdown file pinned and quoted by two reviewers, exported as a project (.qdpx) and a
codebook (.qdc), and checked against the published REFI-QDA Project.xsd (tests/data/refi-qda)."""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from evidence.docs import latex_pdf
from lxml import etree

from protocoder.cli import main
from protocoder.interop.refiqda import CODEBOOK_NS, PROJECT_NS, guid
from protocoder.storage.workspace import load_review

from conftest import copy_bundled, tree_digest

XSD = Path(__file__).parent / "data" / "refi-qda" / "Project.xsd"
NS = {"q": PROJECT_NS}

PAPER = r"""
\title{Resetting Agent Environments}
\author{B. Author}
\maketitle
\section{Harness}
Every episode runs in a fresh virtual machine restored from a named snapshot.
\newpage
\section{Grading}
The grader waits for all background jobs to exit before it reads the final state.
"""

MARKDOWN = """# Leaderboard rules

> [!NOTE]
> Submissions are checked by hand before they are listed.

Runs are **independent**: *no* state is shared, see [the FAQ](https://example.org/faq) and
the `reset.sh` script.[^1]

- Setup
  - The task container is rebuilt from its image for every attempt.
  - Caches are cleared.

| Phase | Action |
|-------|--------|
| start | a clean checkout |

```bash
./reset.sh --all
```

![diagram](reset.png) and <b>inline HTML</b> too.

[^1]: The script ships with the harness.
"""

HTML = """<!DOCTYPE html>
<html><head><title>Harness</title><style>p { color: red }</style></head>
<body><h1>Running tasks</h1>
<ul><li>One container per task instance is started and removed once the grader has written its report.</li></ul>
<table><tr><td>Timeout</td><td>30 minutes</td></tr></table>
<p>Résumé: runs that exceed their budget are <em>terminated</em> &amp; counted as failed — “unresolved”.</p>
</body></html>
"""

QUOTES = [  # (reviewer, field, source id, quoted text)
    ("ada", "open_work", "paper", "The grader waits for all background jobs to exit before it reads the final state."),
    ("ben", "open_work", "harness", "runs that exceed their budget are terminated & counted as failed"),
    ("ada", "reset_retention", "rules", "The task container is rebuilt from its image for every attempt."),
    ("ben", "reset_retention", "paper",
     "Every episode runs in a fresh virtual machine restored from a named snapshot."),
    ("ben", "separate_evidence", "rules", "no state is shared"),
]


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def quoted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled review with three documents pinned for swe-bench and two reviewers' quotes."""
    scratch = tmp_path_factory.mktemp("docs")
    pdf = latex_pdf(scratch / "paper", "paper", PAPER)
    (scratch / "rules.md").write_text(MARKDOWN, encoding="utf-8")
    (scratch / "harness.html").write_text(HTML, encoding="utf-8")
    root = copy_bundled(tmp_path_factory.mktemp("quoted") / "review")
    ok(run("source", "add", "swe-bench", pdf, "--id", "paper", "--url", "https://example.org/paper.pdf",
           "--version", "v1", "--accessed", "2026-08-01", "--workspace", root))
    ok(run("source", "add", "swe-bench", scratch / "rules.md", "--id", "rules", "--workspace", root))
    ok(run("source", "add", "swe-bench", scratch / "harness.html", "--id", "harness", "--workspace", root))
    sheet = root / "protocols/swe-bench/codes/casheekar.yaml"
    for reviewer in ("ada", "ben"):
        shutil.copy2(sheet, sheet.with_name(f"{reviewer}.yaml"))
    for reviewer, field, source, text in QUOTES:
        ok(run("quote", "add", "--cell", f"swe-bench/{field}", "--reviewer", reviewer, "--source", source, text,
               "--workspace", root))
    return root


@pytest.fixture
def quoted(quoted_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(quoted_once, tmp_path / "review"))


def schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def export(root: Path, fmt: str, out: Path) -> Result:
    return ok(run("export", "--workspace", root, "--format", fmt, "--out", out))


def test_the_project_validates_against_the_published_schema(quoted: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.qdpx"
    result = export(quoted, "qdpx", out)
    assert result.stderr.strip() == f"Exported the REFI-QDA project to {out}"
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        project = etree.fromstring(archive.read("project.qde"))
        texts = {name: archive.read(name).decode("utf-8") for name in names if name.startswith("sources/")}
    validator = schema()
    assert validator.validate(project), validator.error_log
    assert names[0] == "project.qde" and len(texts) == 3  # the three pinned snapshots that are quoted


def test_each_quote_is_a_selection_of_the_shipped_text_coded_by_its_reviewer(quoted: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.qdpx"
    export(quoted, "qdpx", out)
    with zipfile.ZipFile(out) as archive:
        project = etree.fromstring(archive.read("project.qde"))
        shipped = {name: archive.read(name).decode("utf-8") for name in archive.namelist()}
    users = {u.get("guid"): u.get("name") for u in project.iterfind("q:Users/q:User", NS)}
    assert sorted(users.values()) == ["ada", "ben", "casheekar"]
    codes = {c.get("guid"): c for c in project.iterfind(".//q:CodeBook//q:Code", NS)}
    review = load_review(quoted)
    found = []
    for source in project.iterfind("q:Sources/q:TextSource", NS):
        text = shipped["sources/" + source.get("plainTextPath").removeprefix("internal://")]
        for selection in source.iterfind("q:PlainTextSelection", NS):
            start, end = int(selection.get("startPosition")), int(selection.get("endPosition"))
            reviewer = users[selection.get("creatingUser")]
            (coding,) = selection.iterfind("q:Coding", NS)
            assert users[coding.get("creatingUser")] == reviewer
            code = codes[coding.find("q:CodeRef", NS).get("targetGUID")]
            field_code = code.getparent()
            assert code.get("isCodable") == "true" and field_code.get("isCodable") == "false"
            found.append((reviewer, field_code.get("name"), text[start:end], code.get("name")))
    expected = []
    for reviewer, field, _source, text in QUOTES:
        cell = review.cells("swe-bench", field)[reviewer]
        rubric_code = review.rubric.code(cell.code)
        expected.append((reviewer, review.rubric.field(field).label, text,
                         f"{rubric_code.label} ({rubric_code.id})"))
    # The selection's positions, read in the text that ships, give back the quote exactly
    # (the HTML quote crosses an entity and an <em>; the PDF's crosses nothing typeset away).
    assert sorted(found) == sorted(expected)
    # Protocols are cases; the quoted protocol's case refers to its sources and selections.
    cases = {c.get("name"): c for c in project.iterfind("q:Cases/q:Case", NS)}
    assert len(cases) == 10
    swe = cases[review.protocol("swe-bench").name]
    assert len(swe.findall("q:SourceRef", NS)) == 3 and len(swe.findall("q:SelectionRef", NS)) == len(QUOTES)


def test_every_coded_cell_is_a_note_coded_by_its_reviewer(quoted: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.qdpx"
    export(quoted, "qdpx", out)
    project = etree.fromstring(zipfile.ZipFile(out).read("project.qde"))
    notes = project.findall("q:Notes/q:Note", NS)
    review = load_review(quoted)
    coded = [cell for sheet in review.sheets for cell in sheet.cells.values() if cell.code is not None]
    assert len(notes) == len(coded) == 30 + 3 + 3
    by_guid = {n.get("guid"): n for n in notes}
    cell = review.cells("webarena", "open_work")["casheekar"]
    note = by_guid[guid("note", "webarena", "open_work", "casheekar")]
    assert note.get("creatingUser") == guid("user", "casheekar")
    content = note.findtext("q:PlainTextContent", namespaces=NS)
    assert content.startswith("Code: NR\nSource: Paper Sec. 3.2 and App. A.9\nBasis: ")
    assert cell.basis.strip() in content
    assert note.find("q:Coding/q:CodeRef", NS).get("targetGUID") == guid("code", "evaluation-boundary", "open_work",
                                                                           "NR")


def test_exporting_twice_gives_the_same_bytes(quoted: Path, tmp_path: Path) -> None:
    export(quoted, "qdpx", tmp_path / "a.qdpx")
    export(quoted, "qdpx", tmp_path / "b.qdpx")
    assert (tmp_path / "a.qdpx").read_bytes() == (tmp_path / "b.qdpx").read_bytes()


def test_the_codebook_nests_codes_under_fields_and_matches_the_schema(quoted: Path, tmp_path: Path) -> None:
    out = tmp_path / "rubric.qdc"
    export(quoted, "qdc", out)
    codebook = etree.parse(str(out)).getroot()
    assert codebook.tag == f"{{{CODEBOOK_NS}}}CodeBook"
    fields = codebook.findall(f"{{{CODEBOOK_NS}}}Codes/{{{CODEBOOK_NS}}}Code")
    review = load_review(quoted)
    assert [f.get("name") for f in fields] == [f.label for f in review.rubric.fields]
    assert [c.get("name") for c in fields[0].findall(f"{{{CODEBOOK_NS}}}Code")] == [
        "Explicit (E)", "Partial (P)", "Not reported (NR)", "Not applicable (NA)"]
    # No clean copy of the codebook schema (Codebook.xsd) was found to ship; its CodeBook
    # has the same Codes/Code shape as the project schema's, so the codebook is checked
    # against Project.xsd's CodeBookType under the project namespace.
    text = out.read_text(encoding="utf-8").replace(CODEBOOK_NS, PROJECT_NS)
    moved = etree.fromstring(text.encode())
    wrapper = etree.Element(f"{{{PROJECT_NS}}}Project", name="codebook check")
    wrapper.append(moved)
    for attribute in list(moved.attrib):
        del moved.attrib[attribute]  # origin belongs to Codebook.xsd's root, not the project's CodeBook
    validator = schema()
    assert validator.validate(wrapper), validator.error_log


def test_a_quote_whose_snapshot_is_missing_is_left_out_and_said(quoted: Path, tmp_path: Path) -> None:
    # validate notes such quotes and passes: the export does not refuse them (a dead end), it ships
    # what it has and says which quotes had no text to point into; the workspace is untouched.
    for snapshot in (quoted / "sources").glob("*.md"):
        snapshot.unlink()
    for sidecar in (quoted / "sources").glob("*.text.json"):
        sidecar.unlink()
    assert run("validate", "--workspace", quoted).exit_code == 0
    before = tree_digest(quoted)
    out = tmp_path / "review.qdpx"
    result = run("export", "--workspace", quoted, "--format", "qdpx", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert re.search(r"\(\d+ quotes? left out: (its snapshot is|their snapshots are) not present here", result.stderr)
    with zipfile.ZipFile(out) as archive:
        project = etree.fromstring(archive.read("project.qde"))
    shipped = [el.get("name") for el in project.iterfind(".//q:TextSource", NS)]
    assert shipped and not any("Leaderboard" in (name or "") for name in shipped)
    assert tree_digest(quoted) == before


def test_qdpx_needs_an_out_file(bundled: Path, cli: Callable[..., Any]) -> None:
    result = cli("export", "--workspace", bundled, "--format", "qdpx")
    assert result.exit_code == 2
    assert result.stderr.strip() == "protocoder: error: --format qdpx writes a file: give it with --out FILE"


def test_the_shipped_schema_is_the_published_one() -> None:
    import hashlib

    # Project.xsd of QDA-XML 1.0 (REFI, 18 March 2019, MIT licence in its header), byte for byte.
    assert hashlib.sha256(XSD.read_bytes()).hexdigest() == (
        "a2cc1ffb4ab1c07c51d6c78e69f2c9968458a9f0ad3b317ddde27f1e86f15a15")
    assert "This specification is licensed under the MIT license." in XSD.read_text(encoding="utf-8")


def test_the_bundled_review_without_snapshots_exports_valid_xml(bundled: Path, tmp_path: Path) -> None:
    sheet = bundled / "protocols/webarena/codes/casheekar.yaml"
    # A basis with a character XML cannot carry (typed as a YAML escape) and markup characters.
    text = sheet.read_text(encoding="utf-8")
    basis = '    basis: "bell \\a <b>&</b> \\u00e9"\n'
    text = re.sub(r"    basis: >-\n(?:      .*\n)+", lambda _: basis, text, count=1)
    sheet.write_text(text, encoding="utf-8")
    out = tmp_path / "bundled.qdpx"
    result = run("export", "--workspace", bundled, "--format", "qdpx", "--out", out)
    assert result.exit_code == 0, result.stderr
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["project.qde"]
        project = etree.fromstring(archive.read("project.qde"))
    validator = schema()
    assert validator.validate(project), validator.error_log
    assert project.find("q:Sources", NS) is None and len(project.findall("q:Notes/q:Note", NS)) == 30
    note = project.find(f"q:Notes/q:Note[@guid='{guid('note', 'webarena', 'open_work', 'casheekar')}']", NS)
    assert "Basis: bell \ufffd <b>&</b> é" in note.findtext("q:PlainTextContent", namespaces=NS)
