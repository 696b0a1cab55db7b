"""The bundled review reproduces the paper's Tables 3, A.1 and A.2."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from conftest import REPO

# Table 3 of the paper: counts per field over the ten protocols.
TABLE_3 = {
    "Reset or retention": {"E": 8, "P": 2, "NR": 0, "NA": 0},
    "Open work": {"E": 0, "P": 2, "NR": 6, "NA": 2},
    "Separate evidence": {"E": 3, "P": 7, "NR": 0, "NA": 0},
}

# Table A.1 of the paper: protocol × (open work, reset or retention, separate evidence).
TABLE_A1 = {
    "WebArena": ("NR", "E", "P"),
    "WorkArena": ("NR", "E", "P"),
    "OSWorld": ("NR", "E", "P"),
    "SWE-bench": ("P", "E", "E"),
    "τ-bench": ("NA", "E", "E"),
    "ToolSandbox": ("NA", "E", "P"),
    "TheAgentCompany": ("NR", "P", "P"),
    "RE-Bench": ("NR", "P", "P"),
    "Cybench": ("NR", "E", "P"),
    "AgentCanary": ("P", "E", "E"),
}

# Table A.2 of the paper: source location and citation numbers of every cell, in order.
TABLE_A2 = [
    ("WebArena", "Open work", "NR", "Paper Sec. 3.2 and App. A.9", "[37]"),
    ("WebArena", "Reset or retention", "E", "Paper App. A.2 and ABC T.4", "[37, 38]"),
    ("WebArena", "Separate evidence", "P", "Paper App. A.2 and ABC T.4", "[37, 38]"),
    ("WorkArena", "Open work", "NR", "Paper Secs. 4.2 and 5.2", "[10]"),
    ("WorkArena", "Reset or retention", "E", "Paper Sec. 4.2", "[10]"),
    ("WorkArena", "Separate evidence", "P", "Paper Secs. 4.2 and 5.2", "[10]"),
    ("OSWorld", "Open work", "NR", "Paper Secs. 2.1–2.2", "[31]"),
    ("OSWorld", "Reset or retention", "E", "Paper Sec. 2.2.1 and App. B.5", "[31]"),
    ("OSWorld", "Separate evidence", "P", "Paper Sec. 2.2.1, App. B.5, and ABC T.4", "[31, 38]"),
    ("SWE-bench", "Open work", "P", "Paper App. A.4 and official harness documentation", "[16]"),
    ("SWE-bench", "Reset or retention", "E", "Paper App. A.4 and official harness documentation", "[16]"),
    ("SWE-bench", "Separate evidence", "E", "Paper App. A.4 and official harness documentation", "[16]"),
    ("τ-bench", "Open work", "NA", "Paper Sec. 3", "[34]"),
    ("τ-bench", "Reset or retention", "E", "ABC report, τ-bench T.4", "[38]"),
    ("τ-bench", "Separate evidence", "E", "Paper Sec. 3 and ABC T.4", "[34, 38]"),
    ("ToolSandbox", "Open work", "NA", "Paper Sec. 2 and Apps. A.1–A.2", "[21]"),
    ("ToolSandbox", "Reset or retention", "E", "Paper Apps. A.1 and B.2", "[21]"),
    ("ToolSandbox", "Separate evidence", "P", "Paper Apps. A.1 and B.2", "[21]"),
    ("TheAgentCompany", "Open work", "NR", "Paper Secs. 3–4 and 6", "[32]"),
    ("TheAgentCompany", "Reset or retention", "P", "Paper Secs. 3–4", "[32]"),
    ("TheAgentCompany", "Separate evidence", "P", "Paper Secs. 3–4", "[32]"),
    ("RE-Bench", "Open work", "NR", "Paper Secs. 3.2 and 5.2, App. A.2.1", "[30]"),
    ("RE-Bench", "Reset or retention", "P", "Paper Secs. 4 and 4.2", "[30]"),
    ("RE-Bench", "Separate evidence", "P", "Paper Secs. 4 and 4.2", "[30]"),
    ("Cybench", "Open work", "NR", "Paper Sec. 2.1 and App. D", "[35]"),
    ("Cybench", "Reset or retention", "E", "ABC report, Cybench T.4", "[38]"),
    ("Cybench", "Separate evidence", "P", "Paper App. D and ABC T.4", "[35, 38]"),
    ("AgentCanary", "Open work", "P", "Paper Sec. 5.3", "[20]"),
    ("AgentCanary", "Reset or retention", "E", "Paper Sec. 5.3", "[20]"),
    ("AgentCanary", "Separate evidence", "E", "Paper Sec. 5.3", "[20]"),
]


def markdown_table(text: str) -> list[list[str]]:
    """Parse the first GFM table in ``text`` into rows of cell texts (header first)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows: list[list[str]] = []
    current: list[str] | None = None
    for index, token in enumerate(tokens):
        if token.type == "tr_open":
            current = []
        elif token.type in ("th_open", "td_open"):
            inline = tokens[index + 1]
            assert current is not None
            current.append("".join(child.content for child in inline.children or [] if child.type in
                                   ("text", "code_inline")) if inline.type == "inline" else "")
        elif token.type == "tr_close":
            assert current is not None
            rows.append(current)
        elif token.type == "table_close":
            break
    return rows


def test_summary_matches_table_3(bundled: Path, cli) -> None:
    result = cli("render", "--workspace", bundled, "--format", "md")
    assert result.exit_code == 0, result.stderr
    rows = markdown_table((bundled / "output" / "summary.md").read_text(encoding="utf-8"))
    header, body = rows[0], rows[1:]
    assert header[:5] == ["Field", "E", "P", "NR", "NA"]
    assert header[-3:] == ["Unresolved", "Not coded", "Protocols"]
    assert len(body) == 3
    for row in body:
        counts = dict(zip(header[1:5], row[1:5], strict=True))
        expected = TABLE_3[row[0]]
        for code, count in expected.items():
            # A code the field does not allow is shown as a dash where the paper prints 0.
            assert counts[code] == str(count) or (count == 0 and counts[code] == "—"), (row[0], code)
        assert row[-3:] == ["0", "0", "10"], "nothing unresolved, nothing uncoded, ten protocols"


def test_matrix_matches_table_a1(bundled: Path, cli) -> None:
    assert cli("render", "--workspace", bundled, "--format", "md").exit_code == 0
    rows = markdown_table((bundled / "output" / "matrix.md").read_text(encoding="utf-8"))
    assert rows[0] == ["Protocol", "Open work", "Reset or retention", "Separate evidence"]
    assert {row[0]: tuple(row[1:]) for row in rows[1:]} == TABLE_A1
    assert [row[0] for row in rows[1:]] == list(TABLE_A1), "the paper's protocol order"


def test_ledger_has_paper_sources_and_citation_numbers(bundled: Path, cli) -> None:
    assert cli("render", "--workspace", bundled, "--format", "md").exit_code == 0
    rows = markdown_table((bundled / "output" / "ledger.md").read_text(encoding="utf-8"))
    assert rows[0] == ["Protocol", "Field", "Code", "Source location", "Basis"]
    assert len(rows) - 1 == len(TABLE_A2)
    for row, (protocol, field, code, source, cites) in zip(rows[1:], TABLE_A2, strict=True):
        assert row[:4] == [protocol, field, code, source]
        assert row[4].endswith(" " + cites), (protocol, field, row[4][-20:])


def test_latex_ledger_cites_keys(bundled: Path, cli) -> None:
    assert cli("render", "--workspace", bundled, "--format", "latex").exit_code == 0
    ledger = (bundled / "output" / "ledger.tex").read_text(encoding="utf-8")
    assert r"\cite{zhou2024webarena,zhu2025establishing}" in ledger
    assert r"\begin{longtable}" in ledger and r"\endhead" in ledger and "Continued on next page" in ledger
    assert r"\ensuremath{\tau}-bench" in ledger


def test_validate_bundled_review_is_clean(cli) -> None:
    result = cli("validate", "--workspace", REPO)
    assert result.exit_code == 0, result.stderr
    assert "10 protocols, 1 reviewer, 30 coded cells" in result.stdout


def test_committed_outputs_match_a_fresh_render(tmp_path: Path, cli) -> None:
    """Golden files: output/ holds exactly what `protocoder render` produces now."""
    result = cli("render", "--workspace", REPO, "--out", tmp_path)
    assert result.exit_code == 0, result.stderr
    fresh = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in (REPO / "output").iterdir())
    assert fresh == committed
    for name in fresh:
        assert (tmp_path / name).read_bytes() == (REPO / "output" / name).read_bytes(), name


def test_bundled_rubric_is_the_one_init_installs() -> None:
    from protocoder.scaffold import BUNDLED_RUBRIC

    assert (REPO / "rubric" / "evaluation-boundary.yaml").read_bytes() == BUNDLED_RUBRIC.read_bytes()
