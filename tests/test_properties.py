"""Property-based checks: any text survives save and load, and renders escaped in both targets.

* Every text slot a reviewer writes (a cell's source and basis, a descriptive note) and
  every protocol text (name, source titles and versions) is saved through the store,
  whatever style the value it replaces had in the file (plain, quoted, literal, folded),
  and must load back unchanged, also after later saves of the same file.
* Rendered Markdown tables re-parse to the same cell text, and rendered LaTeX uses only
  the macros the escaper emits (in the slow tier: it compiles with pdflatex, without a
  "Missing character").
* The fast YAML loader gives exactly what ruamel's own safe loader gives (data or error).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from protocoder.errors import Rejected
from protocoder.lifecycle.view import build_view
from protocoder.model import Protocol, Source
from protocoder.render import render_view
from protocoder.render.escape import MACROS, inline_to_latex, inline_to_markdown, latex_escape
from protocoder.storage import fastload, files, yamlio
from protocoder.storage.findings import MAX_TEXT_LENGTH, Findings
from protocoder.storage.formats import parse_protocol
from protocoder.storage.paths import Paths
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

from conftest import copy_bundled
from test_bundled_review import markdown_table

SHEET = "protocols/webarena/codes/casheekar.yaml"
FAST = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))

# Characters that matter to YAML, Markdown or LaTeX, mixed with any other character.
SPECIAL = " \n\t\r\x85\u2028\u2029\ufeff\x00\x07\x1b\x7f#:-'\"|>&*!%@`{}[],?~=<\\_^$\u00a0τ😀"
TEXT = st.text(alphabet=st.one_of(st.sampled_from(SPECIAL), st.characters(blacklist_categories=("Cs",))),
               max_size=80)
STYLES = {
    "absent": None,
    "plain": str,
    "single-quoted": SingleQuotedScalarString,
    "double-quoted": DoubleQuotedScalarString,
    "literal": LiteralScalarString,
    "folded": FoldedScalarString,
}
OLD = "Paper Sec. 3.2, read twice"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_bundled(tmp_path_factory.mktemp("properties") / "review")


@pytest.fixture(scope="module")
def rubric(workspace: Path):
    return load_review(workspace).rubric


def set_style(root: Path, original: bytes, slot: str, style: str) -> None:
    """Restore the sheet, then give the value of ``slot`` a style (or remove it)."""
    path = root / SHEET
    path.write_bytes(original)
    if style == "file":
        return  # as the bundled file has it: plain source, folded basis, no notes
    document = yamlio.load_document(path, SHEET)
    if slot == "note":
        container, key = document.data.setdefault("notes", yamlio.new_mapping()), "run_unit"
    else:
        container, key = document.data["cells"]["open_work"], slot
    kind = STYLES[style]
    if kind is None:
        container.pop(key, None)
    else:
        value = OLD + "\nand its appendix" if kind is LiteralScalarString else OLD
        container[key] = kind(value)
    document.save()


def stored(store: Store, rubric, slot: str) -> str | None:
    """The value as the coding app reads it (the same parser as validate)."""
    sheet, _ = store.read_sheet("webarena", "casheekar", rubric)
    if slot == "note":
        return sheet.notes.get("run_unit")
    return getattr(sheet.cells["open_work"], slot)


def save_text(store: Store, rubric, slot: str, value: str) -> None:
    if slot == "note":
        store.save_note("webarena", "casheekar", "run_unit", value, rubric)
    else:
        sheet, _ = store.read_sheet("webarena", "casheekar", rubric)
        store.save_cell(replace(sheet.cells["open_work"], **{slot: value}), rubric)


def check_round_trip(root: Path, rubric, slot: str, style: str, value: str, *, full: bool = False) -> None:
    original = (root / SHEET).read_bytes()
    store = Store(Paths(root))
    try:
        set_style(root, original, slot, style)
        save_text(store, rubric, slot, value)
        expected = value if slot != "note" or value.strip() else None  # a blank note is removed
        assert stored(store, rubric, slot) == expected
        # Later saves re-read the file with the round-trip loader and must keep the value.
        store.save_note("webarena", "casheekar", "stop_rule", "A later edit.", rubric)
        sheet, _ = store.read_sheet("webarena", "casheekar", rubric)
        store.save_cell(replace(sheet.cells["open_work"], code="P"), rubric)
        assert stored(store, rubric, slot) == expected
        if full:
            review = load_review(root)
            assert not [str(p) for p in review.problems if "requires a" not in p.message]
    finally:
        (root / SHEET).write_bytes(original)


@FAST
@given(slot=st.sampled_from(["source", "basis", "note"]), style=st.sampled_from(["file", *STYLES]), value=TEXT)
def test_any_text_survives_save_and_load(workspace: Path, rubric, slot: str, style: str, value: str) -> None:
    check_round_trip(workspace, rubric, slot, style, value)


@pytest.mark.slow
@SLOW
@given(slot=st.sampled_from(["source", "basis", "note"]), style=st.sampled_from(["file", *STYLES]),
       value=st.text(max_size=400) | TEXT)
def test_any_text_survives_save_and_load_at_length(workspace: Path, rubric, slot: str, style: str,
                                                   value: str) -> None:
    check_round_trip(workspace, rubric, slot, style, value, full=True)


BROKE = ["a\x85b", "\x85", "a\u2028b", "x\u2029y", "a\r\nb", "a\rb", "\ttab", "\tx\ny", "a\x00b", "a\x1bb",
         "\x7f", "\ufeffbom", "a\x07b c", "  lead", "trail  ", "a\n ", "\n\na", "  \n  x", "a\t\nb", "a\n\n\n",
         "=", "<<", "~", "null", "yes", "1.0", "2026-01-01", "# not a comment", "- dash", "a: b", "'", '"', "|", ">"]


@pytest.mark.parametrize("slot", ["source", "basis", "note"])
def test_text_that_broke_files_survives(workspace: Path, rubric, slot: str) -> None:
    """Regression: NEL, U+2028, tabs and control characters corrupted saved files or changed the text."""
    styles = ["file", *STYLES]
    for index, value in enumerate(BROKE):  # each value in one style here, in all of them in the slow tier
        check_round_trip(workspace, rubric, slot, styles[index % len(styles)], value, full=index % 8 == 0)


@pytest.mark.slow
@pytest.mark.parametrize("slot", ["source", "basis", "note"])
def test_text_that_broke_files_survives_in_every_style(workspace: Path, rubric, slot: str) -> None:
    for value in BROKE:
        for style in ["file", *STYLES]:
            check_round_trip(workspace, rubric, slot, style, value, full=True)


@pytest.mark.parametrize("slot", ["source", "basis", "note"])
def test_store_refuses_what_the_loader_would_refuse(workspace: Path, rubric, slot: str) -> None:
    """Regression: the store wrote text over the length limit (and lone surrogates crashed it),
    leaving a file that validate refused and the coding app could no longer open."""
    store = Store(Paths(workspace))
    before = (workspace / SHEET).read_bytes()
    for value, message in [("x" * (MAX_TEXT_LENGTH + 1), "the limit is 20,000"),
                           ("a\ud800b", "not valid Unicode text")]:
        with pytest.raises(Rejected, match=message):
            save_text(store, rubric, slot, value)
        assert (workspace / SHEET).read_bytes() == before
    save_text(store, rubric, slot, "x" * MAX_TEXT_LENGTH)
    assert stored(store, rubric, slot) == "x" * MAX_TEXT_LENGTH
    (workspace / SHEET).write_bytes(before)


NAME = TEXT.filter(lambda s: s.strip() != "")


@settings(FAST, max_examples=50)
@given(name=NAME, title=NAME, version=NAME)
def test_protocol_texts_survive_update_protocol(workspace: Path, name: str, title: str, version: str) -> None:
    paths = Paths(workspace)
    store = Store(paths)
    path = paths.protocol_file("webarena")
    original = path.read_bytes()
    protocol = read_protocol(paths)
    try:
        updated = replace(protocol, name=name,
                          sources=(Source(title, "https://example.org/a", version, date(2026, 8, 1)),
                                   *protocol.sources))
        store.update_protocol(updated)
        assert read_protocol(paths) == updated
        # A later edit of something else keeps the texts.
        store.update_protocol(replace(updated, cites=("zhou2024webarena", "zhu2025establishing")))
        assert read_protocol(paths) == replace(updated, cites=("zhou2024webarena", "zhu2025establishing"))
    finally:
        path.write_bytes(original)


def read_protocol(paths: Paths) -> Protocol:
    """The protocol as validate reads it, asserting the file has no problem."""
    path = paths.protocol_file("webarena")
    text = files.read_text(path, "protocol.yaml")
    findings = Findings("protocol.yaml", text)
    protocol = parse_protocol(yamlio.parse_yaml(text, "protocol.yaml"), findings, "webarena")
    assert not findings.problems(), [str(p) for p in findings.problems()]
    assert protocol is not None
    return protocol


# --------------------------------------------------------------------------- rendering


def expected_cell(text: str) -> str:
    """What a GFM table cell shows for escaped plain text (control characters shown as [U+XXXX],
    issue 30.4; whitespace collapsed)."""
    from protocoder.errors import visible_text

    return visible_text(re.sub(r"\s+", " ", text).strip())


def macros(latex: str) -> set[str]:
    return set(re.findall(r"\\([A-Za-z]+)", latex))


def balanced(latex: str) -> bool:
    depth = 0
    for token in re.findall(r"\\.|[{}]", latex):
        depth += {"{": 1, "}": -1}.get(token, 0)
        if depth < 0:
            return False
    return depth == 0


_VIEW: list = []


def bundled_view(root: Path):
    """The bundled review's view, and the macros its rendering uses with harmless text."""
    if not _VIEW:
        view = build_view(load_review(root))
        files = render_view(view)
        _VIEW.append((view, set().union(*(macros(files[n]) for n in ("ledger.tex", "matrix.tex")))))
    return _VIEW[0]


@settings(FAST, max_examples=60)
@given(source=TEXT, basis=TEXT, name=NAME)
def test_any_text_renders_escaped_in_both_targets(workspace: Path, source: str, basis: str, name: str) -> None:
    view, template_macros = bundled_view(workspace)
    cells = [dict(c) for c in view.cells]
    cells[0] = {**cells[0], "source": source, "basis": basis, "status": "single-coded", "code": "NR"}
    protocols = [dict(p) for p in view.protocols]
    protocols[0] = {**protocols[0], "name": name}
    files = render_view(replace(view, cells=cells, protocols=protocols))

    ledger = markdown_table(files["ledger.md"])
    assert len(ledger) == 1 + len(cells) and all(len(row) == 5 for row in ledger), "the table keeps its shape"
    assert ledger[1][0] == expected_cell(name)
    assert ledger[1][3] == expected_cell(source)
    matrix = markdown_table(files["matrix.md"])
    assert matrix[1][0] == expected_cell(name) and len(matrix) == 1 + len(protocols)
    assert "\n" not in inline_to_markdown(basis)

    for text in (files["ledger.tex"], files["matrix.tex"]):
        assert macros(text) <= MACROS | template_macros, macros(text) - MACROS - template_macros
    for text in (inline_to_latex(basis), latex_escape(source), latex_escape(name)):
        assert macros(text) <= MACROS and balanced(text) and "\n" not in text
        assert "%" not in text.replace(r"\%", ""), "a bare % would comment out the rest of the row"


@pytest.mark.slow
@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(TEXT | st.text(max_size=200), min_size=30, max_size=30), names=st.lists(NAME, min_size=10,
                                                                                               max_size=10))
def test_any_text_compiles_with_pdflatex(workspace: Path, tmp_path_factory, texts: list[str],
                                         names: list[str]) -> None:
    view, _ = bundled_view(workspace)
    cells = [{**dict(c), "source": texts[i], "basis": texts[-1 - i]} for i, c in enumerate(view.cells)]
    protocols = [{**dict(p), "name": names[i % len(names)]} for i, p in enumerate(view.protocols)]
    files = render_view(replace(view, cells=cells, protocols=protocols), formats=("latex",), standalone=True)
    out = tmp_path_factory.mktemp("tex")
    for name in ("ledger.tex", "matrix.tex"):
        (out / name).write_text(files[name], encoding="utf-8")
        for _ in range(2):
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name], cwd=out,
                                 capture_output=True, timeout=180)
        log = (out / name.replace(".tex", ".log")).read_text(encoding="latin-1")
        assert run.returncode == 0, log[-3000:]
        assert "Missing character" not in log


# --------------------------------------------------------------------------- the fast YAML loader


def outcome(load, text: str):
    try:
        data = load(text)
    except Exception as exc:  # noqa: BLE001 - the comparison is of any outcome
        return ("error", type(exc).__name__, str(exc))
    return ("data", repr(data))


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.dates(), TEXT)
DATA = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.one_of(TEXT, st.integers()), inner, max_size=4), max_leaves=20)
YAML_BITS = ["a: 1\n", "a: 1\n", "- x\n", "  - y\n", "&a ", "*a", "<<: ", "!!str ", "!!binary ", "? ", "{", "}",
             "[", "]", ", ", "'", '"', "|\n", ">-\n", "\t", "#", "%YAML 1.1\n---\n", "2026-01-01", "0o17", ".nan",
             "~", "null", "yes", "=", "\x85", "\u2028", "\ufeff"]


@FAST
@given(data=DATA)
def test_fast_loader_matches_ruamel_on_dumped_data(data) -> None:
    document = yamlio.Document(Path("unused"), data)
    text = document.dumps()
    assert outcome(lambda t: fastload.safe_load(t)[0], text) == outcome(fastload._safe_yaml().load, text)


@FAST
@given(parts=st.lists(st.sampled_from(YAML_BITS) | TEXT, max_size=12))
def test_fast_loader_matches_ruamel_on_arbitrary_text(parts: list[str]) -> None:
    text = "".join(parts)
    assert outcome(lambda t: fastload.safe_load(t)[0], text) == outcome(fastload._safe_yaml().load, text)


# --------------------------------------------------------------------------- import: exact round trips and fast writes

CODES = st.sampled_from(["NR", "P", "E", "NA", "1", "true", "null", "1.0", "~", "-x"])
KEYS = st.lists(st.sampled_from(["zhou2024webarena", "a-b", "x_1", "1.0", "true", "k:v", "#k", "no"]),
                max_size=3, unique=True)


def new_sheet_data(cells: list[tuple[str, str | None, str, str, list[str]]]):
    from protocoder.model import Cell
    from protocoder.storage.mappings import write_cell

    data = yamlio.new_mapping()
    mapping = data.setdefault("cells", yamlio.new_mapping())
    for field_id, code, source, basis, cites in cells:
        entry = mapping.setdefault(field_id, yamlio.new_mapping())
        write_cell(entry, Cell("p", field_id, "r", code, source, basis, tuple(cites), "1.0" if code else "",
                               "2026-09-01T12:00:00Z" if code else ""))
    return data


@FAST
@given(cells=st.lists(st.tuples(st.sampled_from(["open_work", "reset_retention", "f-1", "1.0", "yes"]),
                                st.one_of(st.none(), CODES), TEXT, TEXT, KEYS),
                      max_size=4, unique_by=lambda c: c[0]))
def test_new_files_written_fast_are_what_the_round_trip_writer_writes(cells) -> None:
    from protocoder.storage.emit import fast_dump

    fast = fast_dump(new_sheet_data(cells), "Cells coded by r for p.")
    slow_data = new_sheet_data(cells)
    slow_data.yaml_set_start_comment("Cells coded by r for p.")
    slow = yamlio.Document(Path("x.yaml"), slow_data).dumps()
    if fast is not None:
        assert fast == slow
        assert yamlio.parse_yaml(fast, "x.yaml") == yamlio.parse_yaml(slow, "x.yaml")


def test_fast_writer_takes_the_common_cells() -> None:
    """A typical imported cell (Markdown basis, a colon, an apostrophe-free quote) goes the fast way."""
    from protocoder.storage.emit import fast_dump

    data = new_sheet_data([("open_work", "NR", "Paper Sec. 3.2: harness", "Work *in flight* is `ignored`; see "
                            "[docs](https://example.org/a#b) -- 1.0 # not a comment", ["zhou2024webarena"]),
                           ("reset_retention", None, "", "", [])])
    assert fast_dump(data, "Cells coded by r for p.") is not None


@FAST
@given(source=TEXT, basis=TEXT)
def test_any_text_round_trips_through_export_and_import(workspace: Path, source: str, basis: str) -> None:
    """export → import changes nothing, whatever the text (formula-looking, apostrophes); control
    characters come back as the [U+XXXX] text export shows them as."""
    from click.testing import CliRunner

    from protocoder.cli import main
    from protocoder.errors import InvalidInput, visible_text
    from protocoder.exchange import import_cells, read_cells_csv

    original = (workspace / SHEET).read_bytes()
    try:
        review = load_review(workspace)
        cell = review.cells("webarena", "open_work")["casheekar"]
        # A coded cell needs a source and a basis; blank texts are kept by a draft.
        code = cell.code if source.strip() and basis.strip() else None
        try:
            Store(review.paths).save_cell(replace(cell, code=code, source=source, basis=basis), review.rubric)
        except (Rejected, InvalidInput):
            return  # text the store refuses never reaches a file (test_store_refuses_what_the_loader_would_refuse)
        result = CliRunner().invoke(main, ["export", "--workspace", str(workspace)], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        (workspace / "cells.csv").write_text(result.stdout, encoding="utf-8", newline="")
        before = (workspace / SHEET).read_bytes()
        review = load_review(workspace)
        written = import_cells(review, read_cells_csv(workspace / "cells.csv", review))
        stored_cell = load_review(workspace).cells("webarena", "open_work")["casheekar"]
        shown = (visible_text(source), visible_text(basis))
        if shown != (source, basis):  # control characters are exported as [U+XXXX] text (issue 30.4)
            assert (stored_cell.source, stored_cell.basis) == shown
            return
        assert written.cells == 0 and written.files == []
        assert (workspace / SHEET).read_bytes() == before
        assert (stored_cell.source, stored_cell.basis) == (source, basis)
    finally:
        (workspace / SHEET).write_bytes(original)


@SLOW
@given(value=st.one_of(TEXT, st.text(alphabet=st.sampled_from(" -?:#,[]{}.&*!|>'\"%@`ab"), max_size=6)))
def test_plain_style_shortcut_agrees_with_ruamels_analysis(value: str) -> None:
    from protocoder.storage.emit import _EMITTER, plain_styles

    styles = plain_styles(value)
    if styles is not None:
        analysis = _EMITTER.analyze_scalar(value)
        assert not analysis.multiline and analysis.allow_single_quoted
        assert styles == (analysis.allow_block_plain, analysis.allow_flow_plain)
