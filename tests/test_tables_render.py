"""What the tables print for any rubric (issue 13): layouts, colours, legends, methods, references."""

from __future__ import annotations

import re
from pathlib import Path

from protocoder.render.escape import inline_to_latex, latex_escape
from protocoder.render.latex_text import break_long_words
from protocoder.render.layout import TEXT_EM, choose_matrix_layout
from protocoder.render.palette import NEUTRAL, code_colors, luminance, text_on

from review_factory import multilingual_review, wide_review
from test_bundled_review import markdown_table


def two_reviewers(bundled: Path) -> None:
    for pid in ("webarena", "osworld"):
        source = bundled / "protocols" / pid / "codes" / "casheekar.yaml"
        source.with_name("dana.yaml").write_text(source.read_text(encoding="utf-8").replace("code: NR", "code: P", 1),
                                                 encoding="utf-8")


def test_agree_md_and_latex_captions_say_it_once(bundled: Path, cli) -> None:
    two_reviewers(bundled)
    md = cli("agree", "--workspace", bundled, "--format", "md", "--bootstrap", "50", "--seed", "1").stdout
    assert md.startswith("**Table: Inter-rater agreement.** Units are cells")
    assert "agreement: inter-rater agreement" not in md.lower()
    tex = cli("agree", "--workspace", bundled, "--format", "latex", "--bootstrap", "50", "--seed", "1").stdout
    assert r"\caption{Inter-rater agreement. Units are cells" in tex
    # Fields are rows, coefficients columns: one row per field and the pooled row.
    rows = markdown_table(md)
    assert rows[0][:3] == ["Field", "Cells", "Codes given"] and len(rows) == 1 + 3 + 1
    assert rows[-1][0] == "All fields"


def test_agreement_notes_are_one_legend_not_footnotes(tmp_path: Path, cli) -> None:
    review = wide_review(tmp_path / "review", n_fields=6)
    assert cli("render", "--workspace", review, "--bootstrap", "200", "--seed", "1", "--format", "latex",
               "--out", tmp_path / "out").exit_code == 0
    tex = (tmp_path / "out" / "agreement.tex").read_text(encoding="utf-8")
    assert "\\footnote" not in tex.replace("\\footnotesize", "")
    assert tex.count("bootstrap resamples") <= 1 and "Resamples in which a coefficient is undefined" in tex
    # Issue 31: a count of dropped resamples is never a bracketed number beside a value (it read as a citation).
    assert not re.search(r"\d \[\d+\]", tex)
    assert tex.count("\\textsuperscript{a}\\,") == 1, "each note is explained once"


def test_methods_keep_labels_as_written_and_list_many_fields_compactly(tmp_path: Path, cli) -> None:
    few = wide_review(tmp_path / "few", n_fields=5)
    assert cli("render", "--workspace", few, "--format", "md", "--bootstrap", "0").exit_code == 0
    methods = (few / "output" / "methods.md").read_text(encoding="utf-8")
    assert "(API and Python versions included)" in methods and "Pass (1), Fail (0) or Not applicable (NA)" in methods
    many = wide_review(tmp_path / "many", n_fields=43)
    assert cli("render", "--workspace", many, "--format", "md", "--bootstrap", "0").exit_code == 0
    methods = (many / "output" / "methods.md").read_text(encoding="utf-8")
    assert "codes 43 fields (listed with their ids in the summary table)" in methods
    assert "The documentation states" not in methods


def test_methods_mention_adjudication_release_and_corrections(tmp_path: Path, cli) -> None:
    review = multilingual_review(tmp_path / "review", cli)
    assert cli("render", "--workspace", review, "--format", "md", "--bootstrap", "0").exit_code == 0
    methods = (review / "output" / "methods.md").read_text(encoding="utf-8")
    assert "settled by recorded adjudication (1 cell)" in methods
    assert "release v1" in methods and "with 1 correction recorded since" in methods


def test_ledger_marks_are_explained(tmp_path: Path, cli) -> None:
    review = multilingual_review(tmp_path / "review", cli)
    assert cli("render", "--workspace", review, "--bootstrap", "0").exit_code == 0
    tex = (review / "output" / "ledger.tex").read_text(encoding="utf-8")
    assert "NR\\textsuperscript{a}" in tex and "\\textsuperscript{c}" in tex and "\\textsuperscript{s}" in tex
    for meaning in ("corrected after the release", "adjudicated: reviewers disagreed", "coded by one reviewer only",
                    "\\textit{unresolved}: reviewers disagree"):
        assert meaning in tex, meaning
    md = (review / "output" / "ledger.md").read_text(encoding="utf-8")
    assert "<sup>c</sup> Corrected after the release" in md


def test_markdown_ledger_ends_with_its_references(bundled: Path, cli) -> None:
    assert cli("render", "--workspace", bundled, "--format", "md").exit_code == 0
    ledger = (bundled / "output" / "ledger.md").read_text(encoding="utf-8")
    table, _, references = ledger.partition("**References**")
    assert "37\\. Shuyan Zhou, Frank F. Xu" in references
    assert ("*International Conference on Learning Representations*, 2024. <https://arxiv.org/abs/2307.13854>"
            in references)
    cited = {n for row in markdown_table(table)[1:] for n in row[4].rsplit("[", 1)[1].strip("]").split(", ")}
    listed = {line.split("\\.")[0] for line in references.strip().splitlines() if "\\." in line}
    assert cited == listed == {"10", "16", "20", "21", "30", "31", "32", "34", "35", "37", "38"}


def test_long_tokens_break_and_link_targets_do_not() -> None:
    url = "https://huggingface.co/spaces/gaia-benchmark/leaderboard/discussions/1234567890"
    broken = break_long_words(latex_escape(f"see {url} now"))
    assert broken.count("\\hspace{0pt}") >= 5 and broken.replace("\\hspace{0pt}", "") == latex_escape(f"see {url} now")
    linked = break_long_words(inline_to_latex(f"[{url}]({url})"))
    assert linked.startswith("\\href{" + url + "}{") and "\\hspace{0pt}" in linked.split("}{", 1)[1]
    assert break_long_words(latex_escape("short words only")) == "short words only"


def test_matrix_layout_rule() -> None:
    names = ["WebArena", "TheAgentCompany", "τ-bench"]
    few = [("Open work", "open_work"), ("Reset or retention", "reset_retention")]
    assert choose_matrix_layout(protocols=names, headers=few, cell_em=1.5).name == "columns"
    many = [("", f"o.a.{i}") for i in range(43)]
    chosen = choose_matrix_layout(protocols=names * 3, headers=many, cell_em=1.5)
    assert chosen.name == "transposed" and chosen.width_em <= TEXT_EM
    huge = choose_matrix_layout(protocols=[f"Benchmark number {i}" for i in range(40)], headers=many, cell_em=1.5)
    assert huge.name == "groups" and sorted(i for g in huge.groups for i in g) == list(range(43))
    assert huge.width_em <= TEXT_EM
    assert choose_matrix_layout(protocols=names, headers=few, cell_em=1.5, requested="rotated").rotate


def test_palette_is_ordinal_neutral_and_readable() -> None:
    codes = [{"id": "E"}, {"id": "P"}, {"id": "NR"}, {"id": "NA", "role": "not-applicable"},
             {"id": "X", "color": "#aa0000"}, {"id": "Y"}]
    colors = code_colors(codes, ["NR", "P", "E"])
    ramp = [luminance(colors[c]["fill"]) for c in ("NR", "P", "E")]
    assert ramp == sorted(ramp, reverse=True), "light (lowest) to dark (highest)"
    assert colors["NA"]["fill"] == NEUTRAL and colors["X"]["fill"] == "#AA0000"
    assert colors["Y"]["source"] == "nominal" and colors["E"]["text"] == "#FFFFFF"
    assert text_on("#FFFFFF") == "#000000"


def test_render_matrix_layout_option(bundled: Path, cli, tmp_path: Path) -> None:
    assert cli("render", "--workspace", bundled, "--matrix-layout", "transposed", "--out", tmp_path).exit_code == 0
    rows = markdown_table((tmp_path / "matrix.md").read_text(encoding="utf-8"))
    assert rows[0][:3] == ["Field", "WebArena", "WorkArena"] and rows[1][0] == "Open work (open_work)"
    assert "\\rotatebox{90}{TheAgentCompany}" in (tmp_path / "matrix.tex").read_text(encoding="utf-8")
    result = cli("render", "--workspace", bundled, "--release", "v1", "--engine", "xelatex")
    assert result.exit_code == 2 and "--release writes the tables exactly as they were released" in result.stderr
