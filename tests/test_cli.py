"""The command line: help for every command, exit codes, and the new-review path of issue 7."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from protocoder.cli import main
from protocoder.storage.workspace import load_review

from conftest import tree_digest

BIBTEX = """@misc{doe2026newbench,
  author = {Doe, Jane and Roe, Rick},
  title = {{NewBench}: A benchmark with {\\tau} and 100\\% coverage},
  year = {2026},
  url = {https://example.org/newbench}
}
"""


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += all_commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("command", all_commands(main), ids=" ".join)
def test_every_command_has_help(cli, command: tuple[str, ...]) -> None:
    result = cli(*command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in result.stdout and len(result.stdout.splitlines()) > 3


def test_usage_error_exits_2(cli) -> None:
    assert cli("render", "--format", "pdf").exit_code == 2


def test_module_entry_point_and_no_traceback_on_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "ws"
    bad.mkdir()
    (bad / "protocoder.yaml").write_text("order: [unclosed\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "protocoder", "validate", "--workspace", str(bad)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("protocoder.yaml:2:1: ")
    assert "Traceback" not in result.stderr


def test_new_review_from_init_to_render_without_editing_files(tmp_path: Path, cli) -> None:
    """Issue 7's path, from the CLI: init, add benchmarks with sources and references, code, render."""
    ws = tmp_path / "review"
    assert cli("init", ws, "--title", "Three new benchmarks").exit_code == 0
    assert cli("validate", "--workspace", ws).exit_code == 0
    bib = tmp_path / "new.bib"
    bib.write_text(BIBTEX, encoding="utf-8")
    assert cli("bib", "add", "--workspace", ws, bib).exit_code == 0
    result = cli("bib", "add", "--workspace", ws, "-",
                 stdin="@misc{kim2026two, author={Kim, A.}, title={Two}, year={2026}}\n"
                       "@misc{lee2026three, author={Lee, B.}, title={Three}, year={2026}}\n")
    assert result.exit_code == 0 and "Added 2 entries" in result.stdout
    for pid, name, cite in [("newbench", "NewBench", "doe2026newbench"), ("two-bench", "Two-Bench", "kim2026two"),
                            ("tau3", "τ³-bench", "lee2026three")]:
        result = cli("protocol", "add", "--workspace", ws, "--id", pid, "--name", name, "--cite", cite,
                     "--source", f"{name} paper|https://arxiv.org/abs/2601.00001|arXiv v2|2026-11-01",
                     "--source", f"{name} repository|https://github.com/x/{pid}|commit 1a2b3c4")
        assert result.exit_code == 0, result.stderr
        assert "0/3 cells coded" in result.stdout
    listing = cli("protocol", "list", "--workspace", ws).stdout
    assert listing.splitlines()[0].startswith("newbench\tNewBench")
    cells = tmp_path / "cells.csv"
    cells.write_text("protocol,field,reviewer,code,source,basis,cites\n" + "".join(
        f"{pid},{field},ada,NR,Paper Sec. 1,Nothing is said about it.,\n"
        for pid in ("newbench", "two-bench", "tau3")
        for field in ("open_work", "reset_retention", "separate_evidence")), encoding="utf-8")
    assert cli("import", "--workspace", ws, cells).exit_code == 0
    assert cli("validate", "--workspace", ws).exit_code == 0
    assert cli("render", "--workspace", ws).exit_code == 0
    matrix = (ws / "output" / "matrix.md").read_text(encoding="utf-8")
    assert "| τ³-bench | NR | NR | NR |" in matrix
    review = load_review(ws)
    assert [p.id for p in review.protocols] == ["newbench", "two-bench", "tau3"]
    assert review.protocol("newbench").sources[1].version == "commit 1a2b3c4"


def test_bib_add_appends_without_touching_the_rest(bundled: Path, cli) -> None:
    path = bundled / "references.bib"
    before = path.read_bytes()
    entry = tmp = bundled / "one.bib"
    tmp.write_text(BIBTEX, encoding="utf-8")
    assert cli("bib", "add", "--workspace", bundled, entry).exit_code == 0
    after = path.read_bytes()
    assert after.startswith(before)
    assert after[len(before):].decode().strip() == BIBTEX.strip()
    assert "doe2026newbench" in load_review(bundled).bibliography


@pytest.mark.parametrize("text, message", [
    ("@misc{zhou2024webarena, title={Again}, year={2024}}", "citation key 'zhou2024webarena' already exists"),
    ("@misc{broken, title = {unclosed, year={2024}}\n@misc{x, title={X}, year={1}}", "cannot parse BibTeX"),
    ("@article{nofields, title={Only a title}}", "lacks required field(s): author, journal, year"),
    ("no entries here", "no BibTeX entry found"),
])
def test_bib_add_refuses_bad_entries(bundled: Path, cli, text: str, message: str) -> None:
    before = tree_digest(bundled)
    result = cli("bib", "add", "--workspace", bundled, "-", stdin=text)
    assert result.exit_code == 1
    assert message in result.stderr
    assert tree_digest(bundled) == before


@pytest.mark.parametrize("args, message", [
    (["--id", "webarena", "--name", "Again"], "already exists"),
    (["--id", "../x", "--name", "X"], "not a safe id"),
    (["--id", "Bad Id", "--name", "X"], "not a safe id"),
    (["--id", "x", "--name", "X", "--source", "T|example.org/x|v1"], "needs a scheme"),
    (["--id", "x", "--name", "X", "--cite", "nobody2099"], "'nobody2099' is not in references.bib"),
    (["--id", "x", "--name", "X", "--source", "only|two"], "expected TITLE|URL|VERSION|DATE"),
    (["--id", "x", "--name", "X", "--source", "T|https://e.org|v1|yesterday"], "is not YYYY-MM-DD"),
])
def test_protocol_add_refuses_bad_input(bundled: Path, cli, args: list[str], message: str) -> None:
    before = tree_digest(bundled)
    result = cli("protocol", "add", "--workspace", bundled, *args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree_digest(bundled) == before


def test_protocol_remove_needs_force_when_cells_are_coded(bundled: Path, cli) -> None:
    result = cli("protocol", "remove", "--workspace", bundled, "cybench")
    assert result.exit_code == 1 and "has 3 coded cells" in result.stderr
    assert (bundled / "protocols" / "cybench").is_dir()
    result = cli("protocol", "remove", "--workspace", bundled, "cybench", "--force")
    assert result.exit_code == 0
    assert not (bundled / "protocols" / "cybench").exists()
    assert "cybench" not in (bundled / "protocoder.yaml").read_text(encoding="utf-8")
    assert cli("validate", "--workspace", bundled).exit_code == 0


def test_init_refuses_a_non_empty_folder(bundled: Path, cli) -> None:
    before = tree_digest(bundled)
    result = cli("init", bundled)
    assert result.exit_code == 1 and "not empty" in result.stderr
    assert tree_digest(bundled) == before


def two_reviewers(bundled: Path, cli) -> None:
    exported = cli("export", "--workspace", bundled).stdout.replace(",casheekar,", ",alice,")
    # alice disagrees on WebArena's open work and on τ-bench's separate evidence.
    exported = exported.replace("webarena,open_work,alice,NR", "webarena,open_work,alice,P")
    exported = exported.replace("tau-bench,separate_evidence,alice,E", "tau-bench,separate_evidence,alice,P")
    (bundled / "alice.csv").write_text(exported, encoding="utf-8")
    assert cli("import", "--workspace", bundled, bundled / "alice.csv").exit_code == 0


def test_agree_on_a_workspace_with_two_reviewers(bundled: Path, cli) -> None:
    two_reviewers(bundled, cli)
    result = cli("agree", "--workspace", bundled, "--format", "json", "--bootstrap", "200", "--seed", "7")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [g["group"] for g in report["groups"]] == ["open_work", "reset_retention", "separate_evidence", "all"]
    pooled = report["groups"][-1]
    assert pooled["n_units"] == 30 and pooled["n_raters"] == 2
    assert pooled["coefficients"]["percent_agreement"]["value"] == pytest.approx(28 / 30)
    assert {d["unit"] for d in report["disagreements"]} == {"webarena/open_work", "tau-bench/separate_evidence"}
    again = json.loads(cli("agree", "--workspace", bundled, "--format", "json", "--bootstrap", "200",
                           "--seed", "7").stdout)
    assert again == report, "the bootstrap is reproducible with a seed"
    table = cli("agree", "--workspace", bundled, "--bootstrap", "0").stdout
    assert "Cohen" in table and "percent" in table.lower()


def test_render_adds_agreement_and_shows_unresolved(bundled: Path, cli) -> None:
    two_reviewers(bundled, cli)
    assert cli("render", "--workspace", bundled, "--bootstrap", "100", "--seed", "1").exit_code == 0
    out = bundled / "output"
    assert (out / "agreement.md").is_file() and (out / "agreement.tex").is_file()
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| Open work | 0 | 2 | 5 | 2 | 1 | 0 | 10 |" in summary, "unresolved, never a majority vote"
    matrix = (out / "matrix.md").read_text(encoding="utf-8")
    assert "| WebArena | unresolved | E | P |" in matrix
    assert "2 reviewers coded the cells independently" in (out / "methods.md").read_text(encoding="utf-8")


@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_every_table_of_a_two_reviewer_review_compiles(bundled: Path, cli, tmp_path: Path) -> None:
    """Agreement, corrections and the rest, as standalone LaTeX, through pdflatex."""
    two_reviewers(bundled, cli)
    assert cli("adjudicate", "--workspace", bundled, "--cell", "webarena/open_work", "--code", "NR",
               "--reason", "No source states what stays active.", "--by", "dana").exit_code == 0
    assert cli("freeze", "--workspace", bundled, "--label", "v1", "--by", "dana", "--allow-unresolved",
               "--bootstrap", "0").exit_code == 0
    assert cli("correct", "--workspace", bundled, "--cell", "cybench/open_work", "--code", "P",
               "--reason", "The harness notes were missed.", "--by", "dana").exit_code == 0
    out = tmp_path / "tex"
    result = cli("render", "--workspace", bundled, "--format", "latex", "--standalone", "--out", out,
                 "--bootstrap", "200", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in out.glob("*.tex"))
    assert names == ["agreement.tex", "corrections.tex", "ledger.tex", "matrix.tex", "summary.tex"]
    for name in names:
        for _ in range(2):  # the second pass settles longtable widths and citations
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                                  name], cwd=out, capture_output=True, timeout=180)
        log = (out / name).with_suffix(".log").read_text(encoding="latin-1")
        assert run.returncode == 0, log[-3000:]
        assert "Missing character" not in log, name
        assert "Overfull \\hbox" not in log, f"{name} is wider than the page"
        assert "There were undefined references" not in log, name
        assert not re.search(r"Citation `[^']*' on page \d+ undefined", log), name
        assert (out / name).with_suffix(".pdf").stat().st_size > 1000


def test_agree_on_a_ratings_csv_with_bad_rows(tmp_path: Path, cli) -> None:
    path = tmp_path / "r.csv"
    path.write_text("unit,rater,code\nu1,a,X\nu1,b,Y\nu1,a,Y\n", encoding="utf-8")
    result = cli("agree", "--ratings", path, "--categories", "X,Y")
    assert result.exit_code == 1 and "rows 2 and 4" in result.stderr and "Traceback" not in result.stderr
    result = cli("agree", "--ratings", path, "--categories", "X")
    assert result.exit_code == 1 and "row 3" in result.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_agree_refuses_an_endless_ratings_file(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from protocoder.agreement import _csv

    monkeypatch.setattr(_csv, "MAX_RATINGS_BYTES", 4096)
    result = cli("agree", "--ratings", "/dev/zero")
    assert result.exit_code == 1
    assert "/dev/zero: the ratings file is larger than 4,096 bytes" in result.stderr
    assert "Traceback" not in result.stderr


def test_agree_on_a_ratings_csv_with_groups(tmp_path: Path, cli) -> None:
    path = tmp_path / "r.csv"
    path.write_text("unit,rater,code,group\n" + "".join(
        f"u{i},{r},{'A' if (i + (r == 'b' and i % 4 == 0)) % 2 else 'B'},{'g1' if i < 10 else 'g2'}\n"
        for i in range(20) for r in "ab"), encoding="utf-8")
    result = cli("agree", "--ratings", path, "--format", "json", "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    groups = [g["group"] for g in json.loads(result.stdout)["groups"]]
    assert groups == ["g1", "g2", "all"]
    assert cli("agree", "--ratings", path, "--format", "md", "--bootstrap", "0").stdout.startswith("**Table")


def test_commands_find_the_workspace_from_any_folder_inside_it(bundled: Path, tmp_path: Path) -> None:
    """Like git, a command run in a sub-folder of a workspace works on that workspace."""
    inside = bundled / "protocols" / "webarena" / "codes"
    env = {k: v for k, v in os.environ.items() if k != "PROTOCODER_WORKSPACE"}

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "protocoder", *args], cwd=cwd, env=env,
                              capture_output=True, text=True)

    validated = run("validate", cwd=inside)
    assert validated.returncode == 0, validated.stderr
    assert "10 protocols" in validated.stdout
    rendered = run("render", "--format", "md", cwd=inside)
    assert rendered.returncode == 0, rendered.stderr
    assert (bundled / "output" / "summary.md").is_file()
    assert not (inside / "output").exists()
    assert "10 protocols" in run("status", cwd=bundled / "rubric").stdout
    # Outside any workspace: the error names the folder the user is in and the fix.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    refused = run("validate", cwd=outside)
    assert refused.returncode == 2
    assert "is not a protocoder workspace" in refused.stderr and "protocoder init" in refused.stderr
    assert "Traceback" not in refused.stderr
