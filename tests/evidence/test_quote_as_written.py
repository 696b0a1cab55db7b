"""Quote as written: passages copied from the raw files (Markdown and HTML source, with their
markup), from the rendered view (a real browser's selection), and from a PDF as a viewer
copies it, quoted through the real CLI on a workspace with the three sources pinned.

Each accepted quote must keep the reviewer's text, and its ``exact`` must be found verbatim
in the raw file at ``raw_start``–``raw_end``, saying what the reviewer quoted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocoder.evidence.extract import extract, raw_text
from protocoder.evidence.locate import Haystack, normalise
from protocoder.evidence.quotes import raw_selector
from protocoder.storage.workspace import load_review

from .docs import latex_pdf
from conftest import tree_digest

FIXTURES = Path(__file__).parent / "fixtures"
README = (FIXTURES / "README.md").read_text(encoding="utf-8")
PAGE = (FIXTURES / "page.html").read_text(encoding="utf-8")
CELL = "swe-bench/open_work"
REVIEWER = "casheekar"
CHROMIUM = os.environ.get("PROTOCODER_TEST_CHROMIUM", "/usr/bin/chromium")

PDF_PREAMBLE = "\\usepackage{lmodern}\n\\input{glyphtounicode}\\pdfgentounicode=1\n"
"""Latin Modern with a ToUnicode map, so that a viewer copies ligatures as the letters (or the ligature
characters) rather than dropping them, as viewers do with the default T1 fonts."""

PDF_BODY = r"""
\section{Evaluation workflow}
The official harness runs every task in a fresh container, and the final score is the fraction of
tasks whose tests pass. An efficient agent finishes within the budget; a run that exceeds the
budget is counted as a failure, and so is a run whose container crashes. Contamination is assessed
by comparing the release dates of the tasks with the training cut-off of each model.

\noindent\begin{minipage}{5cm}
Independently administered evaluations demonstrate characteristically unreproducible configurations
whenever contamination occurs.
\end{minipage}
\section{Reproducibility}
All configurations, seeds and prompts are published with the results so that the evaluation can be
repeated independently by other groups, and every figure of this paper can be regenerated from them.
"""

# (source, passage copied from the raw file as written, the section it must be placed in)
RAW_PASSAGES: list[tuple[str, str, str]] = [
    ("readme", "**agentbench-harness** runs the tasks of the *AgentBench* suite in isolated containers and\n"
               "grades each attempt with the `official` grader.", ""),
    ("readme", "See the [paper](https://arxiv.org/abs/2308.03688)\nand the [leaderboard][board] for results.", ""),
    ("readme", "> [!NOTE]\n> Every task is reset to its initial snapshot before each attempt, so earlier attempts "
               "leave no\n> trace in the environment.", ""),
    ("readme", "Runs on shared machines are not reproducible: pin the image digest with `--image sha256:...`.", ""),
    ("readme", "1. Install Docker 24 or newer.\n2. Run `pip install agentbench-harness`.", "Installation"),
    ("readme", "3. Check the setup with `agentbench doctor`; it prints the versions it found.", "Installation"),
    ("readme", "```bash\nagentbench run --suite os --model gpt-4o --seeds 3\n```", "Usage"),
    ("readme", "- `--seeds N` repeats each task N times; scores are averaged over the seeds.", "Usage"),
    ("readme", "- `--max-steps K` stops an episode after **K** actions (the default is 30).\n"
               "  - A stopped episode is scored as a failure, never as a partial success.\n"
               "  - The step budget counts tool calls, not model turns.", "Usage"),
    ("readme", "`--timeout S` caps an episode at S seconds of wall-clock time.", "Usage"),
    ("readme", "* Network access is off unless `--allow-network` is given.", "Usage"),
    ("readme", "Each task runs in a container built from `images/<task>.Dockerfile`.\n"
               "The container is discarded after grading, so no state carries over between episodes.<br>",
     "Sandbox"),
    ("readme", "Logs are kept under `runs/<date>/` for 30&nbsp;days.", "Sandbox"),
    ("readme", "Each container gets 2 CPUs and 4 GB of memory; <em>tasks that exceed them are killed</em>.",
     "Sandbox"),
    ("readme", "| OS interaction | 144 | success rate | exact match |", "Tasks"),
    ("readme", "| Suite | Tasks | Metric | Grader |\n|-------|------:|--------|--------|\n"
               "| OS interaction | 144 | success rate | exact match |", "Tasks"),
    ("readme", "| Web shopping | 251 | reward | `webshop` simulator |", "Tasks"),
    ("readme", "Scores in the table above are reproduced from the paper[^repro] and are not re-run by this package.",
     "Tasks"),
    ("readme", "The harness reports the mean success rate over all tasks and its standard error over seeds[^se].",
     "Evaluation protocol"),
    ("readme", "A run is *valid* only if every task finished or timed out; a crashed container invalidates the run\n"
               "and it is retried once.", "Evaluation protocol"),
    ("readme", "Contamination checks compare each task's prompt with the model's training cut-off date as\n"
               "published by its provider", "Evaluation protocol"),
    ("readme", "## Changelog\n\n### [1.2.0] - 2024-01-15\n\n- Added the `--allow-network` flag; network access is "
               "now off by default.", "Changelog"),
    ("readme", "- Fixed a grader bug that counted timeouts as successes.", "Changelog"),
    ("readme", "- Seeds are now recorded in `results.json` beside each score.", "Changelog"),
    ("readme", "[^repro]: Numbers from Table 3 of the AgentBench paper, version 2 (October 2023).", "License"),
    ("readme", "[^se]: The standard error is computed with the seeds as the unit of resampling.", "License"),
    ("page", "The harness starts one container per task instance and removes it once the\n"
             "grader has written its report.", ""),
    ("page", 'Tasks are drawn from <a href="https://webarena.dev">WebArena</a>\n&amp; its <strong>verified</strong> '
             "subset.", ""),
    ("page", "An episode ends when the agent issues <code>stop</code>, after 30 actions, or after\n"
             "10&nbsp;minutes, whichever comes first.", "Episode limits"),
    ("page", "<li>Actions are counted after parsing; a malformed action counts as one.</li>", "Episode limits"),
    ("page", "The browser is reset to the task&#39;s start URL before each attempt.", "Episode limits"),
    ("page", "<tr><td>Shopping</td><td>187</td><td>string match</td></tr>", "Scoring"),
    ("page", "A task counts as solved only if <em>all</em> of its evaluators pass &mdash; partial credit is never "
             "given.", "Scoring"),
    ("page", "Reported numbers use three seeds &lt;0, 1, 2&gt; and the median run.", "Scoring"),
    ("page", "<p>Results obtained with a different <em>viewport size</em> are not comparable.</p>",
     "Episode limits"),
]


def run(*args: object, stdin: str | None = None) -> Result:
    from protocoder.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


@pytest.fixture(scope="module")
def workspace_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled review with the README, the HTML page and (with pdflatex) a paper pinned."""
    from conftest import copy_bundled

    root = copy_bundled(tmp_path_factory.mktemp("quote") / "review")
    ok(run("source", "add", "swe-bench", FIXTURES / "README.md", "--id", "readme", "--workspace", root))
    ok(run("source", "add", "swe-bench", FIXTURES / "page.html", "--id", "page", "--workspace", root))
    if shutil.which("pdflatex"):
        pdf = latex_pdf(tmp_path_factory.mktemp("paper"), "paper", PDF_BODY, PDF_PREAMBLE)
        ok(run("source", "add", "swe-bench", pdf, "--id", "paper", "--workspace", root))
    return root


@pytest.fixture
def workspace(workspace_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(workspace_once, tmp_path / "review"))


def raw_of(workspace: Path, source_id: str) -> str:
    review = load_review(workspace)
    source = next(s for s in review.protocol("swe-bench").sources if s.id == source_id)
    path = next((workspace / "sources").glob(f"{source.sha256}.*[!n]"))  # the snapshot, not its .text.json
    text = raw_text(path.read_bytes(), source.media_type)
    assert text is not None
    return text


def stored_quotes(workspace: Path) -> list[Any]:
    review = load_review(workspace)
    assert not review.errors, review.errors
    cell = review.cells("swe-bench", "open_work")[REVIEWER]
    return list(cell.quotes)


def quote(workspace: Path, source: str, text: str, *extra: str) -> Result:
    return run("quote", "add", "--cell", CELL, "--reviewer", REVIEWER, "--source", source, *extra, "--workspace",
               workspace, "-", stdin=text)


def test_passages_copied_from_the_raw_files_are_accepted_and_found_there(workspace: Path) -> None:
    assert len(RAW_PASSAGES) >= 30
    raws = {"readme": raw_of(workspace, "readme"), "page": raw_of(workspace, "page")}
    for source, passage, _ in RAW_PASSAGES:
        assert passage in raws[source], passage  # the evaluation itself: copied as written
        result = quote(workspace, source, passage)
        assert result.exit_code == 0, (passage, result.stderr)
    quotes = stored_quotes(workspace)
    before = {q.text: q for q in quotes if q.source in raws}
    assert len(before) == len(RAW_PASSAGES)
    review = load_review(workspace)
    for source, passage, section in RAW_PASSAGES:
        stored = before[passage]
        raw = raws[source]
        assert stored.text == passage  # the text exactly as the reviewer gave it
        assert stored.raw_start is not None and stored.raw_end is not None
        assert raw[stored.raw_start:stored.raw_end] == stored.exact  # grep -F finds it, at that place
        # Copied from the file, the passage is the file's own text, at the one place it is written.
        assert stored.exact == passage
        assert stored.raw_start == raw.index(passage)
        assert raw[stored.raw_start - len(stored.prefix):stored.raw_start] == stored.prefix
        assert raw[stored.raw_end:stored.raw_end + len(stored.suffix)] == stored.suffix
        assert 0 < len(stored.prefix) <= 32 and 0 < len(stored.suffix) <= 32
        assert stored.section == section, passage
        # The extracted (rendered) text at start–end says the same.
        source_record = next(s for s in review.protocol("swe-bench").sources if s.id == source)
        sidecar = json.loads(next((workspace / "sources").glob(f"{source_record.sha256}.text.json")).read_text())
        assert normalise(sidecar["text"][stored.start:stored.end]) == normalise(passage)
    ok(run("validate", "--workspace", workspace))


def test_export_carries_the_raw_position_and_selector(workspace: Path) -> None:
    passage = "- Fixed a grader bug that counted timeouts as successes."
    ok(quote(workspace, "readme", passage))
    records = json.loads(ok(run("export", "--format", "json", "--workspace", workspace)).stdout)
    row = next(r for r in records if r["protocol"] == "swe-bench" and r["field"] == "open_work"
               and r["reviewer"] == REVIEWER)
    exported = next(q for q in row["quotes"] if q["text"] == passage)
    raw = raw_of(workspace, "readme")
    assert raw[exported["raw_start"]:exported["raw_end"]] == exported["exact"] == passage
    assert exported["section"] == "Changelog" and exported["start"] < exported["end"]
    assert {"prefix", "suffix"} <= set(exported)
    csv_text = ok(run("export", "--workspace", workspace)).stdout
    assert '""exact"": ""- Fixed a grader bug' in csv_text


def test_old_quotes_without_the_new_keys_still_validate(workspace: Path) -> None:
    sheet = workspace / "protocols/swe-bench/codes" / f"{REVIEWER}.yaml"
    text = sheet.read_text(encoding="utf-8")
    assert "quotes:" not in text.split("open_work:")[1].split("\n  reset_retention:")[0]
    text = text.replace("  open_work:\n", "  open_work:\n    quotes:\n      - source: readme\n"
                        "        text: Fixed a grader bug that counted timeouts as successes.\n", 1)
    sheet.write_text(text, encoding="utf-8")
    result = ok(run("validate", "--workspace", workspace))
    assert "error" not in result.output.lower()


# --------------------------------------------------------------------------- suggestions


def test_a_quote_not_found_gets_one_line_with_the_closest_passage_whole(workspace: Path) -> None:
    before = tree_digest(workspace)
    typed = "success. The step budget counts tool calls and not the model turns"
    result = quote(workspace, "readme", typed)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1, result.stderr
    line = result.stderr
    assert f"{CELL} ({REVIEWER})" in line and "sources/" in line and ".md" in line
    assert " … " not in line
    suggestion = re.search(r'alike: "(.*)"; to quote that passage, add --accept-closest', line)
    assert suggestion, line
    # The next list item whole, not the end of the previous one ("... partial success.").
    assert suggestion.group(1) == "The step budget counts tool calls, not model turns."
    assert tree_digest(workspace) == before
    # Pasted back, it is accepted.
    ok(quote(workspace, "readme", suggestion.group(1)))


def test_accept_closest_quotes_the_suggestion_in_one_step(workspace: Path) -> None:
    typed = "A stopped episode counts as a failure and never as partial success"
    result = ok(quote(workspace, "readme", typed, "--accept-closest"))
    assert "closest passage is quoted" in result.stdout
    [stored] = [q for q in stored_quotes(workspace) if q.source == "readme"]
    assert stored.text == "A stopped episode is scored as a failure, never as a partial success."
    raw = raw_of(workspace, "readme")
    assert raw[stored.raw_start:stored.raw_end] == stored.exact == stored.text
    # Nothing alike: refused even so, nothing written.
    before = tree_digest(workspace)
    result = quote(workspace, "readme", "zebra quantum xylophone", "--accept-closest")
    assert result.exit_code == 1 and "no passage of it is alike" in result.stderr
    assert tree_digest(workspace) == before


def test_suggestions_start_and_end_at_word_and_sentence_boundaries(workspace: Path) -> None:
    for typed in ("ontainer is discarded after grading so no state carries ove",
                  "the harness report the mean success rates over all task",
                  "Install Docker 23 or newer and run pip install",
                  "| Database (SQL) | 300 | success rate | result set equality"):
        result = quote(workspace, "readme", typed)
        assert result.exit_code == 1, typed
        suggestion = re.search(r'alike: "(.*)"; to quote', result.stderr)
        assert suggestion, result.stderr
        text = suggestion.group(1)
        assert text[0].isupper() or text[0] in "-`", text  # a sentence, item or row starts there
        assert text[-1] in ".:)" or text.endswith("equality"), text
        ok(quote(workspace, "readme", text))


def test_a_changed_source_and_an_unknown_field_are_one_line_and_write_nothing(workspace: Path) -> None:
    review = load_review(workspace)
    source = next(s for s in review.protocol("swe-bench").sources if s.id == "readme")
    snapshot = next((workspace / "sources").glob(f"{source.sha256}.md"))
    snapshot.write_text(README.replace("the default is 30", "the default is 40"), encoding="utf-8")
    before = tree_digest(workspace)
    result = quote(workspace, "readme", "Install Docker 24 or newer.")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert f"{CELL} ({REVIEWER})" in result.stderr and snapshot.name in result.stderr
    assert "protocoder source update swe-bench readme FILE" in result.stderr
    result = run("quote", "add", "--cell", "swe-bench/no_such_field", "--reviewer", REVIEWER, "--source", "page",
                 "--workspace", workspace, "Scoring")
    assert result.exit_code != 0 and result.stderr.count("\n") == 1 and "no_such_field" in result.stderr
    assert tree_digest(workspace) == before


# --------------------------------------------------------------------------- the PDF, as a viewer copies it


def test_pdf_passages_copied_by_a_viewer_are_accepted(workspace: Path) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("poppler's pdftotext is not installed (it gives the text as a viewer copies it)")
    pdfs = list((workspace / "sources").glob("*.pdf"))
    if not pdfs:
        pytest.skip("pdflatex is not installed")
    copied = subprocess.run(["pdftotext", "-layout", str(pdfs[0]), "-"], capture_output=True, text=True,
                            check=True).stdout
    # Four sentences as the viewer gives them: line breaks, hyphenation and ligatures as they fall.
    sentences = [m.group() for m in re.finditer(r"(?s)(?:An e\S*cient|All con|Contamination|Independently)[^.]*\.",
                                               copied)]
    assert len(sentences) == 4, copied
    assert any(re.search(r"\w-\n", sentence) for sentence in sentences), copied  # words hyphenated at line ends
    for sentence in sentences:
        ok(quote(workspace, "paper", sentence))
    sidecar_text = json.loads(_pdf_sidecar(workspace).read_text(encoding="utf-8"))["text"]
    for stored in (q for q in stored_quotes(workspace) if q.source == "paper"):
        assert stored.raw_start is None and stored.raw_end is None  # a PDF has no raw text
        assert stored.exact == sidecar_text[stored.start:stored.end] and stored.exact in sidecar_text
        assert stored.page == "1"


def _pdf_sidecar(workspace: Path) -> Path:
    review = load_review(workspace)
    source = next(s for s in review.protocol("swe-bench").sources if s.id == "paper")
    return workspace / "sources" / f"{source.sha256}.text.json"


# --------------------------------------------------------------------------- the rendered view, in a browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; or set PROTOCODER_TEST_CHROMIUM)")
    api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    with api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            yield launched
        finally:
            launched.close()


_SELECT = """(selector) => {
  const out = [];
  for (const element of document.querySelectorAll(selector)) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    out.push(selection.toString());
  }
  return out;
}"""


def test_passages_copied_from_the_rendered_view_are_accepted(workspace: Path, browser: Any) -> None:
    """What a reader selects and copies in a browser: the HTML page as served, and the README as
    a Markdown renderer turns it into HTML (GitHub's view of it)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    rendered_readme = MarkdownIt("commonmark").enable("table").use(footnote_plugin).render(README)
    page = browser.new_page()
    copies: list[tuple[str, str]] = []
    page.set_content(PAGE)
    for selector in ("main > p", "li", "tbody tr", "blockquote"):
        copies.extend(("page", text) for text in page.evaluate(_SELECT, selector))
    page.set_content(rendered_readme)
    for selector in ("body > p", "li", "tbody tr", "blockquote p", "pre"):
        copies.extend(("readme", text) for text in page.evaluate(_SELECT, selector))
    copies = [(source, text) for source, text in copies if len(text.split()) >= 3]
    assert len(copies) >= 25
    raws = {"readme": raw_of(workspace, "readme"), "page": raw_of(workspace, "page")}
    for source, text in copies:
        result = quote(workspace, source, text)
        assert result.exit_code == 0, (text, result.stderr)
    for stored in stored_quotes(workspace):
        raw = raws[stored.source]
        assert raw[stored.raw_start:stored.raw_end] == stored.exact
        assert normalise(stored.exact) == normalise(stored.text), stored


# --------------------------------------------------------------------------- any span of the raw Markdown

_README_EXTRACTED = extract(README.encode(), "text/markdown")
_README_HAYSTACK = Haystack(_README_EXTRACTED.text)
_BODY_END = README.index("[board]:")  # link reference definitions are not text
_WORDS = [m.span() for m in re.finditer(r"\S+", README[:_BODY_END])]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_WORDS) - 1), st.integers(1, 40))
def test_any_span_of_whole_words_of_the_raw_markdown_is_anchored_back(first: int, count: int) -> None:
    last = min(len(_WORDS) - 1, first + count - 1)
    passage = README[_WORDS[first][0]:_WORDS[last][1]]
    if not re.search(r"\w", normalise(passage)):
        return  # markup only ("|", "##"): nothing to quote
    span = _README_HAYSTACK.find(passage)
    assert span is not None, passage
    raw_start, raw_end, exact, _, _ = raw_selector(_README_EXTRACTED, README, "text/markdown", passage, span.start,
                                                   span.end)
    assert raw_start is not None and raw_end is not None
    assert README[raw_start:raw_end] == exact
    assert normalise(exact) == normalise(passage), (passage, exact)


# --------------------------------------------------------------------------- records on disk


def sheet_of(workspace: Path) -> Path:
    return workspace / "protocols/swe-bench/codes" / f"{REVIEWER}.yaml"


def test_an_exact_that_is_not_in_the_raw_file_is_an_error_at_its_key(workspace: Path) -> None:
    ok(quote(workspace, "readme", "- Fixed a grader bug that counted timeouts as successes."))
    sheet = sheet_of(workspace)
    text = sheet.read_text(encoding="utf-8")
    assert "exact: '- Fixed a grader bug" in text
    sheet.write_text(text.replace("exact: '- Fixed a grader bug", "exact: '- Fixed a grading bug"), encoding="utf-8")
    result = run("validate", "--workspace", workspace)
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if "exact" in line)
    assert line.startswith(f"protocols/swe-bench/codes/{REVIEWER}.yaml:") and "not in the snapshot" in line


def test_raw_offsets_of_the_wrong_shape_are_refused(workspace: Path) -> None:
    ok(quote(workspace, "readme", "- Fixed a grader bug that counted timeouts as successes."))
    sheet = sheet_of(workspace)
    text = sheet.read_text(encoding="utf-8")
    start = re.search(r"raw_start: (\d+)", text)
    assert start
    sheet.write_text(text.replace(start.group(), "raw_start: -4"), encoding="utf-8")
    result = run("validate", "--workspace", workspace)
    assert result.exit_code == 1 and "raw_start and raw_end must both be character offsets" in result.output


def test_source_update_moves_quotes_with_their_raw_position(workspace: Path, tmp_path: Path) -> None:
    passage = "| Web shopping | 251 | reward | `webshop` simulator |"
    ok(quote(workspace, "readme", passage))
    revised = tmp_path / "README.md"
    revised.write_text(README.replace("## Installation", "## Requirements\n\nA Linux host.\n\n## Installation"),
                       encoding="utf-8")
    result = ok(run("source", "update", "swe-bench", "readme", revised, "--workspace", workspace))
    assert "moved to it" in result.stdout
    [stored] = [q for q in stored_quotes(workspace) if q.source == "readme"]
    raw = raw_of(workspace, "readme")
    assert raw == revised.read_text(encoding="utf-8")
    assert raw[stored.raw_start:stored.raw_end] == stored.exact == passage
    assert stored.raw_start == raw.index(passage)
