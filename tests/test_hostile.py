"""Hostile input: every kind of bad file, id, CSV and template is refused cleanly.

For each case: a clear error naming the file and line (or the CSV row, or the template
line), a non-zero exit, no traceback, and no file changed. Each class runs at least once
through a real ``python -m protocoder`` process, asserting on its stderr. A UTF-8 BOM and
CRLF line ends are the exception: they are accepted, and load exactly as the plain file.
LaTeX and Markdown written into any text field render escaped: tables keep their shape,
and no macro reaches the LaTeX that the escaper does not emit (the slow tier compiles it).

What ``test_validate.py``, ``test_escape.py``, ``test_exchange.py`` and ``test_cli.py``
already cover for cells (malformed YAML, tabs, duplicate keys, bad types, alias bombs,
deep nesting in a reviewer's file; hostile cell text; formula cells; bad CSV headers) is
not repeated here: this suite runs the same classes against every other file of a
workspace and adds the classes they miss.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from protocoder.render.escape import MACROS
from protocoder.storage.workspace import load_review

from conftest import copy_bundled, tree_digest
from test_bundled_review import markdown_table

FILES = {
    "sheet": "protocols/webarena/codes/casheekar.yaml",
    "protocol": "protocols/webarena/protocol.yaml",
    "settings": "protocoder.yaml",
    "rubric": "rubric/evaluation-boundary.yaml",
    "consensus": "protocols/webarena/consensus.yaml",
    "corrections": "corrections.yaml",
}


def python(*args: str | os.PathLike[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """A real ``python -m protocoder`` process."""
    return subprocess.run([sys.executable, "-m", "protocoder", *[str(a) for a in args]], capture_output=True,
                          text=True, input=stdin, timeout=120)


def refused(cli, workspace: Path, args: list[str], where: str, message: str, *, real: bool = False,
            code: int = 1) -> str:
    """Run a command that must refuse; check exit, message, no traceback, nothing written."""
    before = tree_digest(workspace)
    if real:
        done = python(*args)
        exit_code, stderr = done.returncode, done.stderr
    else:
        result = cli(*args)
        exit_code, stderr = result.exit_code, result.stderr
    assert exit_code == code, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith(where)]
    assert lines, f"no line starting {where!r} in:\n{stderr}"
    assert any(message in line for line in lines), f"{message!r} not in {lines}"
    assert tree_digest(workspace) == before, "a refused command must not write"
    return stderr


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


# --------------------------------------------------------------------------- files of every kind

CONSENSUS = """# Adjudications for webarena.
adjudications:
  - field: open_work
    code: NR
    reason: Settled in the team meeting.
    by: dana
    at: 2026-09-01T12:00:00Z
    resolved: {casheekar: NR}
    resolved_hash: sha256:x
"""
CORRECTIONS = "head: {entries: 0, hash: ''}\nentries: []\n"


def original(workspace: Path, kind: str) -> str:
    path = workspace / FILES[kind]
    if kind == "consensus":
        return CONSENSUS
    if kind == "corrections":
        return CORRECTIONS
    return path.read_text(encoding="utf-8")


# Each corruption: (what it does to the text, expected message, expected line or None).
def _insert_at_line_3(text: str, insert: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:2]) + insert + "".join(lines[2:])


CORRUPTIONS: dict[str, tuple[Callable[[str], bytes], str, int | None]] = {
    "malformed": (lambda t: (t + "broken: [unclosed\n").encode(), "while parsing a flow sequence", None),
    "tab": (lambda t: _insert_at_line_3(t, "\tindented: with a tab\n").encode(), "", 3),
    "duplicate key": (lambda t: (t + t.split("\n")[[i for i, line in enumerate(t.split("\n"))
                                                     if line and line[0].isalpha()][0]] + "\n").encode(),
                      "found duplicate key", None),
    "wrong type": (lambda t: b"- just\n- a list\n", "expected", 1),
    "alias bomb": (lambda t: ("a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))).encode(),
                   "anchors and aliases", None),
    "deep nesting": (lambda t: ("x: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "nesting deeper than", None),
    "10 MB string": (lambda t: ('x: "' + "a" * 10_000_000 + '"\n').encode(), "the limit is 2,097,152", None),
    "non-UTF-8 byte": (lambda t: _insert_at_line_3(t, "# caf\udce9\n").encode("utf-8", "surrogateescape"),
                       "not valid UTF-8 (byte 0xe9)", 3),
    "NUL byte": (lambda t: _insert_at_line_3(t, "# a\x00b\n").encode(), "is not allowed in YAML", 3),
    "escape character": (lambda t: _insert_at_line_3(t, "# \x1b[31mred\n").encode(), "is not allowed in YAML", 3),
    "binary garbage": (lambda t: bytes(range(256)) * 4, "", None),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("kind", list(FILES))
def test_every_file_refuses_every_corruption(bundled: Path, cli, kind: str, corruption: str) -> None:
    path = bundled / FILES[kind]
    corrupt, message, line = CORRUPTIONS[corruption]
    payload = corrupt(original(bundled, kind))
    if corruption == "tab" and kind in ("consensus", "corrections"):
        payload = {"consensus": b"adjudications:\n  - field: x\n\tcode: NR\n",
                   "corrections": b"head: {}\nentries:\n\t- x\n"}[kind]
    path.write_bytes(payload)
    where = f"{FILES[kind]}:{line}:" if line else f"{FILES[kind]}:"
    refused(cli, bundled, ["validate", "--workspace", bundled], where, message)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_each_corruption_through_a_real_process(bundled: Path, corruption: str) -> None:
    """The same, once per class, through ``python -m protocoder`` (validate; some also render)."""
    kind = list(FILES)[list(CORRUPTIONS).index(corruption) % len(FILES)]
    corrupt, message, line = CORRUPTIONS[corruption]
    (bundled / FILES[kind]).write_bytes(corrupt(original(bundled, kind)))
    where = f"{FILES[kind]}:{line}:" if line else f"{FILES[kind]}:"
    for command in ("validate", "render") if corruption in ("malformed", "alias bomb", "NUL byte") else ("validate",):
        refused(None, bundled, [command, "--workspace", bundled], where, message, real=True)


@pytest.mark.parametrize("path, key", [
    ("protocols/webarena/codes/casheekar.yaml", "source"),
    ("protocols/webarena/protocol.yaml", "name"),
    ("protocoder.yaml", "title"),
], ids=["sheet", "protocol", "settings"])
def test_a_text_over_the_limit_is_refused_where_it_is(bundled: Path, cli, path: str, key: str) -> None:
    text = f"{key}: " + "x" * 20_001
    file = bundled / path
    source = file.read_text(encoding="utf-8")
    lines = source.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:"))
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = indent + text
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused(cli, bundled, ["validate", "--workspace", bundled], f"{path}:{index + 1}:",
            "is 20,001 characters long; the limit is 20,000")


@pytest.mark.parametrize("target", ["references.bib", "corrections.yaml", "rubric/evaluation-boundary.yaml"])
@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "directory"])
def test_a_file_that_is_not_a_regular_file_is_refused_without_hanging(bundled: Path, cli, target: str,
                                                                      special: str) -> None:
    """Regression: a link to /dev/zero (or a named pipe) made every command read forever."""
    path = bundled / target
    path.unlink(missing_ok=True)
    if special == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif special == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    real = special == "fifo" and target == "references.bib"
    refused(cli, bundled, ["validate", "--workspace", bundled], f"{target}:", "", real=real)


def test_misplaced_folders_and_files_are_reported(bundled: Path, cli) -> None:
    """Regression: a 'codes' file, or a consensus.yaml directory, was silently ignored."""
    shutil.rmtree(bundled / "protocols/cybench/codes")
    (bundled / "protocols/cybench/codes").write_text("E, P, NR\n", encoding="utf-8")
    (bundled / "protocols/webarena/consensus.yaml").mkdir()
    stderr = refused(cli, bundled, ["validate", "--workspace", bundled], "protocols/cybench/codes:",
                     "must be a folder of reviewer files")
    assert "protocols/webarena/consensus.yaml: " in stderr


# --------------------------------------------------------------------------- BOM and CRLF: accepted


def as_windows(text: str, bom: bool, crlf: bool) -> bytes:
    payload = text.replace("\n", "\r\n") if crlf else text
    return ("\ufeff" if bom else "").encode() + payload.encode("utf-8")


def review_content(workspace: Path) -> tuple:
    review = load_review(workspace)
    bibliography = {key: entry.fields for key, entry in review.bibliography.entries.items()}
    return (review.settings, review.rubric, review.protocols, tuple(sorted(review.all_cells(), key=repr)),
            tuple(s.notes for s in review.sheets), bibliography, review.adjudications,
            tuple(str(p) for p in review.problems))


@pytest.mark.parametrize("bom, crlf", [(True, False), (False, True), (True, True)], ids=["BOM", "CRLF", "both"])
def test_bom_and_crlf_load_exactly_as_the_plain_files(bundled: Path, cli, bom: bool, crlf: bool) -> None:
    (bundled / FILES["consensus"]).write_text(CONSENSUS.replace("sha256:x", "sha256:" + "0" * 64), encoding="utf-8")
    plain = review_content(bundled)
    for path in [*bundled.glob("protocols/*/codes/*.yaml"), *bundled.glob("protocols/*/*.yaml"),
                 bundled / "protocoder.yaml", bundled / "rubric/evaluation-boundary.yaml", bundled / "references.bib"]:
        path.write_bytes(as_windows(path.read_text(encoding="utf-8"), bom, crlf))
    assert review_content(bundled) == plain
    if bom and crlf:
        done = python("validate", "--workspace", bundled)
        assert "Traceback" not in done.stderr
        assert [line for line in done.stderr.splitlines() if "resolved_hash" not in line][:-1] == []


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("args, where, message, code", [
    # (--reviewer and --by names that are not safe ids are refused: tests/tui/test_identity.py)
    (["protocol", "remove", "../../x"], "protocoder: error:", "no protocol '../../x'", 1),
    (["adjudicate", "--cell", "../../x/open_work", "--code", "NR", "--reason", "r", "--by", "dana"],
     "protocoder: error:", "no protocol '..'", 1),
    (["correct", "--cell", "../x/open_work", "--code", "P", "--reason", "r", "--by", "dana"],
     "protocoder: error:", "no protocol '..'", 1),
    (["freeze", "--label", "../x", "--by", "dana"], "protocoder: error:", "is not a safe id", 1),
    (["render", "--release", "../../x"], "protocoder: error:", "no release labelled '../../x'", 1),
    (["agree", "--field", "../x"], "protocoder: error:", "the rubric has no field '../x'", 2),
])
def test_unsafe_ids_on_the_command_line(bundled: Path, cli, args: list[str], where: str, message: str,
                                        code: int) -> None:
    refused(cli, bundled, [*args, "--workspace", bundled], where, message, code=code)


def test_writing_to_a_pipe_or_an_unwritable_place_is_refused(bundled: Path, tmp_path: Path) -> None:
    """Regression: export --out over a device or pipe replaced it (as root, /dev/null itself),
    and a write the system refused ended in a traceback."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    refused(None, bundled, ["export", "--workspace", bundled, "--out", fifo], f"{fifo}:", "not a regular file",
            real=True)
    assert fifo.is_fifo()
    refused(None, bundled, ["render", "--workspace", bundled, "--out", "/proc/protocoder-out"],
            "protocoder: error: /proc/protocoder-out:", "No such file or directory", real=True)


def test_unsafe_ids_through_a_real_process(bundled: Path) -> None:
    refused(None, bundled, ["protocol", "remove", "../../x", "--workspace", bundled], "protocoder: error:",
            "no protocol '../../x'", real=True)


def test_a_symlinked_protocol_folder_is_not_removed(bundled: Path) -> None:
    """Regression: ``protocol remove`` of a linked folder ended in an OSError traceback."""
    (bundled / "protocols/evil").symlink_to(bundled / "protocols/webarena", target_is_directory=True)
    refused(None, bundled, ["protocol", "remove", "evil", "--force", "--workspace", bundled], "protocoder: error:",
            "protocols/evil is a symbolic link", real=True)


@pytest.fixture
def released(bundled: Path, cli) -> Path:
    assert cli("freeze", "--workspace", bundled, "--label", "v1", "--by", "dana", "--bootstrap", "0").exit_code == 0
    return bundled


@pytest.mark.parametrize("edit, where, message", [
    (("label: v1", "label: ../../../escaped"), "releases/v1/release.yaml:2:", "does not match the release's folder"),
    (("tables/summary.md:", "tables/../../../x.md:"), "releases/v1/release.yaml:", "is not a file a release holds"),
])
def test_an_edited_release_cannot_send_files_elsewhere(released: Path, cli, tmp_path: Path, edit: tuple[str, str],
                                                       where: str, message: str) -> None:
    """Regression: a release.yaml label of '../../../x' made render --release write outside output/."""
    path = released / "releases/v1/release.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    before = {str(p) for p in released.parent.rglob("*")}
    refused(None, released, ["render", "--release", "v1", "--workspace", released], where, message, real=True)
    refused(cli, released, ["validate", "--workspace", released], where, message)
    assert {str(p) for p in released.parent.rglob("*")} == before


# --------------------------------------------------------------------------- CSV


HEADER = "protocol,field,reviewer,code,source,basis,cites\n"


@pytest.mark.parametrize("payload, where, message", [
    (HEADER.encode() + "webarena,open_work,alice,NR,Sé,B,\n".encode() + "webarena,reset_retention,alice,E,S\xe9,B,\n"
     .encode("latin-1"), "row 3:", "not valid UTF-8 (byte 0xe9)"),
    ((HEADER + "webarena,open_work,alice,NR,S,B,\n").encode("utf-16"), "row 1:", "not valid UTF-8"),
    ((HEADER + "webarena,open_work,alice,NR,S,B,\n").encode("cp1252") + b"webarena,open_work,bob,NR,\x93q\x94,B,\n",
     "row 3:", "not valid UTF-8 (byte 0x93)"),
    (HEADER.encode() + b"webarena,open_work,alice,NR,S," + b"x" * 200_000 + b",\n", "row 2:", "field larger than"),
    (HEADER.encode() + b'webarena,open_work,alice,NR,"unclosed,B,\n', "row 2:",
     "a quoted value opened in this row is never closed"),  # was "6 values for 7 columns" (issue 30.8)
    (HEADER.encode() + b"=cmd(),open_work,alice,NR,S,B,\n", "row 2:", "protocol id '=cmd()' is not a safe id"),
    (HEADER.encode() + b"webarena,@SUM(A1),alice,NR,S,B,\n", "row 2:", "unknown field '@SUM(A1)'"),
    (HEADER.encode() + b"webarena,open_work,+cmd,NR,S,B,\n", "row 2:", "reviewer name '+cmd' is not a safe id"),
    (HEADER.encode() + b"webarena,open_work,alice,=1+1,S,B,\n", "row 2:", "unknown code '=1+1'"),
    (HEADER.encode() + b"../../x,open_work,../x,NR,S,B,\n", "row 2:", "protocol id '../../x' is not a safe id"),
    (HEADER.encode() + b"webarena,open_work,alice,NR,S,B,-2+3;=cmd()\n", "row 2:", "citation key '-2+3' is not in"),
    (bytes(range(256)) * 8, "row ", "not valid UTF-8"),
], ids=["latin-1 row", "UTF-16", "cp1252 quotes", "field over the csv limit", "unclosed quote", "formula protocol",
        "formula field", "formula reviewer", "formula code", "path ids", "formula cites", "binary"])
def test_hostile_csv_is_refused_by_row(bundled: Path, cli, tmp_path: Path, payload: bytes, where: str,
                                       message: str) -> None:
    path = tmp_path / "cells.csv"
    path.write_bytes(payload)
    refused(cli, bundled, ["import", "--workspace", bundled, path], f"{path}: {where}", message)


def test_hostile_csv_through_a_real_process(bundled: Path, tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    path.write_bytes(HEADER.encode() + "webarena,open_work,alice,NR,Sé,B,\n".encode()
                     + "webarena,reset_retention,alice,E,S\xe9,B,\n".encode("latin-1"))
    refused(None, bundled, ["import", "--workspace", bundled, path], f"{path}: row 3:", "not valid UTF-8", real=True)


def test_formula_text_is_kept_as_text_and_neutralised_on_export(bundled: Path, cli, tmp_path: Path) -> None:
    """Formula-looking text in text columns is data, not a formula: stored as written,
    exported with a leading apostrophe (so a spreadsheet shows it), and re-imported unchanged."""
    text = {"source": "=HYPERLINK(\"http://evil.example\",\"x\")", "basis": "@SUM(1+1)*cmd|' /C calc'!A0 \x00 end"}
    path = tmp_path / "cells.csv"
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer).writerows([HEADER.strip().split(","),
                                  ["webarena", "open_work", "alice", "NR", text["source"], text["basis"], ""]])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    assert cli("import", "--workspace", bundled, path).exit_code == 0
    cell = load_review(bundled).cells("webarena", "open_work")["alice"]
    assert (cell.source, cell.basis) == (text["source"], text["basis"])
    exported = cli("export", "--workspace", bundled).stdout
    assert "'=HYPERLINK" in exported and "'@SUM(1+1)" in exported
    # A control character is exported as text (issue 30.4), so the NUL comes back as "[U+0000]".
    assert "\x00" not in exported and "calc'!A0 [U+0000] end" in exported
    (tmp_path / "again.csv").write_text(exported, encoding="utf-8")
    result = cli("import", "--workspace", bundled, tmp_path / "again.csv")
    assert result.exit_code == 0 and "1 cells changed" in result.stdout
    cell = load_review(bundled).cells("webarena", "open_work")["alice"]
    assert (cell.source, cell.basis) == (text["source"], text["basis"].replace("\x00", "[U+0000]"))
    (tmp_path / "third.csv").write_text(cli("export", "--workspace", bundled).stdout, encoding="utf-8")
    before = tree_digest(bundled)
    result = cli("import", "--workspace", bundled, tmp_path / "third.csv")
    assert result.exit_code == 0 and "0 cells changed" in result.stdout
    assert tree_digest(bundled) == before


# --------------------------------------------------------------------------- templates


TEMPLATES = {
    "syntax error": ("line one\n{% if %}\n", 2, "template syntax error"),
    "raises": ("one\ntwo\n{{ 1 // 0 }}\n", 3, "ZeroDivisionError"),
    "undefined name": ("{{ title }}\n{{ no_such_name }}\n", 2, "'no_such_name' is undefined"),
    "unknown filter": ("{{ title | shout }}\n", 1, "No filter named 'shout'"),
    "code execution": ("{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}\n", 1, "SecurityError"),
    "huge output": ("{% for i in range(10**9) %}x{% endfor %}\n", 1, "Range too big"),
    "infinite recursion": ("{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}\n", 1, "RecursionError"),
    "not UTF-8": (b"fine\n\xff\xfe{{ title }}\n", 2, "template is not valid UTF-8"),
}


@pytest.mark.parametrize("case", list(TEMPLATES))
def test_a_workspace_template_that_fails_names_its_file_and_line(bundled: Path, cli, case: str) -> None:
    body, line, message = TEMPLATES[case]
    template = bundled / "templates" / "summary.md.j2"
    template.parent.mkdir()
    template.write_bytes(body if isinstance(body, bytes) else body.encode())
    real = case in ("syntax error", "raises", "code execution")
    refused(cli, bundled, ["render", "--workspace", bundled, "--format", "md"], f"{template}:{line}:", message,
            real=real)
    assert not (bundled / "output").exists() and not (bundled / "PWNED").exists()


@pytest.mark.parametrize("include", ["../../../../etc/passwd", "/etc/passwd"])
def test_a_template_cannot_include_files_outside_the_template_folders(bundled: Path, cli, include: str) -> None:
    template = bundled / "templates" / "matrix.md.j2"
    template.parent.mkdir()
    template.write_text(f"{{% include '{include}' %}}\n", encoding="utf-8")
    refused(cli, bundled, ["render", "--workspace", bundled, "--format", "md"], "matrix.md.j2:",
            f"template not found: {include}")


# --------------------------------------------------------------------------- injection in every text field

PAYLOAD = r"\input{/etc/passwd}\immediate\write18{id} | `x|y` <b>*em*</b> $\alpha$ & 100% #1 _ ~ ^ [2cm] --"
BIB_PAYLOAD = r"\input{/etc/passwd} \write18{id} 100\% \& $x$ \# {\relax}"


def hostile_everywhere(root: Path, cli) -> None:
    """Put LaTeX and Markdown in every text a table or the methods paragraph prints."""
    def edit(relative: str, old: str, new: str) -> None:
        path = root / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    quoted = '"' + PAYLOAD.replace("\\", "\\\\") + '"'
    edit("protocoder.yaml", "title: Evaluation-boundary documentation of ten agent-evaluation protocols",
         f"title: {quoted}")
    edit("protocols/webarena/protocol.yaml", "name: WebArena", f"name: {quoted}")
    edit("rubric/evaluation-boundary.yaml", "title: Evaluation-boundary documentation", f"title: {quoted}")
    edit("rubric/evaluation-boundary.yaml", "label: Explicit", f"label: {quoted}")
    edit("rubric/evaluation-boundary.yaml", "label: Open work", f"label: {quoted}")
    edit("references.bib", "{{WebArena}: A realistic web environment", "{" + BIB_PAYLOAD)
    edit("protocols/webarena/codes/casheekar.yaml", "source: Paper Sec. 3.2 and App. A.9", f"source: {quoted}")
    edit("protocols/osworld/codes/casheekar.yaml", "code: NR", "code: P")  # released cell changed below
    assert cli("freeze", "--workspace", root, "--label", "v1", "--by", "dana", "--bootstrap", "0").exit_code == 0
    result = cli("correct", "--workspace", root, "--cell", "cybench/open_work", "--code", "P", "--reason", PAYLOAD,
                 "--by", "dana")
    assert result.exit_code == 0, result.stderr


@pytest.fixture(scope="module")
def clean_macros(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every macro the bundled review's rendering uses (templates, standalone documents)."""
    from click.testing import CliRunner

    from protocoder.cli import main

    root = copy_bundled(tmp_path_factory.mktemp("clean") / "review")
    out = root / "tex"
    CliRunner().invoke(main, ["freeze", "--workspace", str(root), "--label", "v1", "--by", "dana",
                              "--bootstrap", "0"], catch_exceptions=False)
    CliRunner().invoke(main, ["correct", "--workspace", str(root), "--cell", "cybench/open_work", "--code", "P",
                              "--reason", "r", "--by", "dana"], catch_exceptions=False)
    CliRunner().invoke(main, ["render", "--workspace", str(root), "--format", "latex", "--standalone", "--out",
                              str(out)], catch_exceptions=False)
    return set().union(*(set(re.findall(r"\\([A-Za-z]+)", p.read_text(encoding="utf-8"))) for p in out.glob("*.tex")))


def test_latex_and_markdown_in_every_text_field_render_escaped(bundled: Path, cli, tmp_path: Path,
                                                               clean_macros: set[str]) -> None:
    hostile_everywhere(bundled, cli)
    out = tmp_path / "out"
    for args in (["--format", "md"], ["--format", "latex", "--standalone"]):
        result = python("render", "--workspace", bundled, "--out", out, *args)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
    shown = " ".join(PAYLOAD.split())
    for name in ("summary.md", "matrix.md", "ledger.md", "corrections.md"):
        text = (out / name).read_text(encoding="utf-8")
        rows = markdown_table(text)
        assert len({len(row) for row in rows}) == 1, f"{name}: a row lost its shape"
        assert any(shown in cell for row in rows for cell in row) or shown in text.replace("\\", ""), name
    assert PAYLOAD.split(" |")[0] not in (out / "methods.md").read_text(encoding="utf-8")
    for tex in out.glob("*.tex"):
        text = tex.read_text(encoding="utf-8")
        assert set(re.findall(r"\\([A-Za-z]+)", text)) <= MACROS | clean_macros, tex.name
        for command in ("input", "write", "immediate", "relax"):
            assert f"\\{command}" not in text.replace("\\textbackslash{}", ""), (tex.name, command)


@pytest.mark.slow
@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_hostile_text_in_every_field_compiles(bundled: Path, cli, tmp_path: Path) -> None:
    hostile_everywhere(bundled, cli)
    out = tmp_path / "tex"
    assert cli("render", "--workspace", bundled, "--format", "latex", "--standalone", "--out", out).exit_code == 0
    for tex in sorted(out.glob("*.tex")):
        for _ in range(2):
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                                  tex.name], cwd=out, capture_output=True, timeout=180)
        log = (out / tex.with_suffix(".log").name).read_text(encoding="latin-1")
        assert run.returncode == 0, log[-3000:]
        assert "Missing character" not in log


# --------------------------------------------------------------------------- links that leave the workspace


def _outside_copy(tmp_path: Path, source: Path) -> Path:
    elsewhere = tmp_path / "elsewhere" / source.name
    shutil.copytree(source, elsewhere)
    return elsewhere


def _digest(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _save(workspace: Path, protocol: str, reviewer: str) -> None:
    from protocoder.model import Cell
    from protocoder.storage.store import Store

    review = load_review(workspace, reviewer=reviewer)
    assert review.rubric is not None
    cell = Cell(protocol, "open_work", reviewer, "NR", source="Paper", basis="Nothing is said.")
    Store(review.paths).save_cell(cell, review.rubric)


@pytest.mark.parametrize("link", ["protocols/evil", "protocols/webarena/codes"])
def test_a_folder_linked_outside_is_neither_read_nor_written(bundled: Path, tmp_path: Path, cli, link: str) -> None:
    """A cloned review must not make protocoder read or write outside it through a link."""
    elsewhere = _outside_copy(tmp_path, bundled / ("protocols/webarena" if link == "protocols/evil" else link))
    target = bundled / link
    if target.exists():
        shutil.rmtree(target)
    target.symlink_to(elsewhere, target_is_directory=True)
    before = _digest(elsewhere)

    refused(cli, bundled, ["validate", "--workspace", bundled], f"{link}:", "leads outside the workspace")
    protocol = link.split("/")[1]
    from protocoder.errors import Rejected

    with pytest.raises(Rejected, match="outside the workspace"):
        _save(bundled, protocol, "mallory")
    assert _digest(elsewhere) == before
    assert not (elsewhere / "codes" / "mallory.yaml").exists() and not (elsewhere / "mallory.yaml").exists()


def test_a_reviewer_file_linked_outside_is_reported_and_never_written_through(bundled: Path, tmp_path: Path,
                                                                              cli) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_bytes((bundled / FILES["sheet"]).read_bytes())
    link = bundled / "protocols/webarena/codes/mallory.yaml"
    link.symlink_to(outside)
    refused(cli, bundled, ["validate", "--workspace", bundled], "protocols/webarena/codes/mallory.yaml:",
            "leads outside the workspace")
    before = outside.read_bytes()
    _save(bundled, "webarena", "mallory")  # the link is replaced by the reviewer's own file
    assert outside.read_bytes() == before
    assert not link.is_symlink() and "Nothing is said." in link.read_text(encoding="utf-8")


def test_links_inside_the_workspace_still_work(bundled: Path, cli) -> None:
    shutil.move(bundled / "protocols/webarena/codes", bundled / "shared-codes")
    (bundled / "protocols/webarena/codes").symlink_to(bundled / "shared-codes", target_is_directory=True)
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 0, result.output
    assert load_review(bundled).sheet("webarena", "casheekar") is not None
