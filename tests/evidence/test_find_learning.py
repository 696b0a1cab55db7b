"""``protocoder find --reviewer R`` learns from the passages R quoted for the field in other protocols.

Through the real CLI on a copy of the bundled review: a passage whose words the rubric does not
use is found only once the reviewer has quoted such a passage for the same field elsewhere; only
the reviewer's own quotes count unless ``team_quotes: true``; the protocol's own quotes never
do; a reviewer name that is not a safe id is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result

from conftest import copy_bundled

OTHER = """# Other harness

## Runs

Later runs pick up the memoised verdicts from the scratch ledger of the first run.
"""

TARGET = """# Target harness

## Environment

Every attempt gets a fresh container that is deleted after grading.

## Speed

Judgements come from memoised verdicts in the scratch ledger, so a second look is cheap.

## Credits

Thanks to the maintainers.
"""

LEARNED = "memoised verdicts in the scratch ledger"


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


@pytest.fixture
def workspace(tmp_path: Path, cli) -> Path:
    root = copy_bundled(tmp_path / "review")
    (tmp_path / "other.md").write_text(OTHER, encoding="utf-8")
    (tmp_path / "target.md").write_text(TARGET, encoding="utf-8")
    ok(cli("source", "add", "webarena", tmp_path / "other.md", "--id", "other", "--workspace", root))
    ok(cli("source", "add", "swe-bench", tmp_path / "target.md", "--id", "target", "--workspace", root))
    return root


def quote(cli, root: Path, cell: str, reviewer: str, source: str, text: str) -> None:
    ok(cli("quote", "add", "--cell", cell, "--reviewer", reviewer, "--source", source, "--workspace", root, text))


def texts(cli, root: Path, *extra: str) -> list[str]:
    result = ok(cli("find", "--cell", "swe-bench/reset_retention", "--format", "json", "--limit", "50",
                    "--workspace", root, *extra))
    return [c["text"] for c in json.loads(result.stdout)]


def learned_found(cli, root: Path, *extra: str) -> bool:
    return any(LEARNED in t for t in texts(cli, root, *extra))


def test_a_reviewers_quotes_elsewhere_teach_the_query(workspace: Path, cli) -> None:
    assert not learned_found(cli, workspace)  # the rubric's words do not reach it
    assert not learned_found(cli, workspace, "--reviewer", "alice")  # alice has quoted nothing yet
    quote(cli, workspace, "webarena/reset_retention", "alice", "other",
          "Later runs pick up the memoised verdicts from the scratch ledger of the first run.")
    assert learned_found(cli, workspace, "--reviewer", "alice")
    assert not learned_found(cli, workspace)  # without --reviewer nothing is learned
    table = ok(cli("find", "--cell", "swe-bench/reset_retention", "--reviewer", "alice", "--workspace",
                   workspace)).stdout
    assert table.splitlines()[1] == "Learning from 1 quote by alice for reset_retention in other protocols"


def test_only_the_reviewers_own_quotes_unless_the_team_opts_in(workspace: Path, cli) -> None:
    quote(cli, workspace, "webarena/reset_retention", "bob", "other",
          "Later runs pick up the memoised verdicts from the scratch ledger of the first run.")
    assert not learned_found(cli, workspace, "--reviewer", "alice")  # bob's coding stays bob's
    assert learned_found(cli, workspace, "--reviewer", "bob")
    settings = workspace / "protocoder.yaml"
    settings.write_text(settings.read_text(encoding="utf-8") + "team_quotes: true\n", encoding="utf-8")
    quote(cli, workspace, "webarena/reset_retention", "carol", "other", "Later runs pick up the memoised verdicts")
    assert learned_found(cli, workspace, "--reviewer", "alice")
    table = ok(cli("find", "--cell", "swe-bench/reset_retention", "--reviewer", "alice", "--workspace",
                   workspace)).stdout
    assert table.splitlines()[1] == "Learning from 2 quotes by the team for reset_retention in other protocols"


def test_another_field_and_the_same_protocol_teach_nothing(workspace: Path, cli) -> None:
    quote(cli, workspace, "webarena/open_work", "alice", "other",
          "Later runs pick up the memoised verdicts from the scratch ledger of the first run.")
    quote(cli, workspace, "swe-bench/reset_retention", "alice", "target", "Thanks to the maintainers.")
    found = texts(cli, workspace, "--reviewer", "alice")
    assert not any(LEARNED in t for t in found)
    assert not any("Thanks to the maintainers" in t for t in found)


def test_team_quotes_must_be_true_or_false(workspace: Path, cli) -> None:
    settings = workspace / "protocoder.yaml"
    settings.write_text(settings.read_text(encoding="utf-8") + "team_quotes: sometimes\n", encoding="utf-8")
    result = cli("validate", "--workspace", workspace)
    assert result.exit_code != 0 and "team_quotes" in result.output + result.stderr


def test_a_reviewer_name_that_is_not_an_id_is_one_line(workspace: Path, cli) -> None:
    result = cli("find", "--cell", "swe-bench/reset_retention", "--reviewer", "../x", "--workspace", workspace)
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a safe id" in lines[0] and "Traceback" not in result.stderr


_QUOTES = ["Verdicts are memoised in the zorblax folder and reused on the next run.",
           "Pass --memo so that a second pass reuses memoised generations.",
           "Memoising judged samples skips what was judged.",
           "A fresh container per attempt."]


def _bundled_rubric():  # noqa: ANN202
    from protocoder.storage.findings import Findings
    from protocoder.storage.formats import parse_rubric
    from protocoder.storage.yamlio import parse_yaml

    path = Path(__file__).resolve().parents[2] / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    return parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))


def test_a_quoted_word_weighs_by_how_many_quotes_share_it() -> None:
    """A dozen quotes from other harnesses bring their own names and commands: a word of one quote weighs a
    third of a word three quotes share (rounds 2-4 left it out, which lost on the second set of documents;
    every quoted word at full weight lost on the first)."""
    from protocoder.evidence.search import QUOTES_SHARING, WEIGHT_QUOTES, field_query, quote_weights, stem

    assert QUOTES_SHARING == 3
    learned = quote_weights(_QUOTES)
    assert next(iter(learned)) == "memoised"  # memoised / memoising: one stem in three quotes, as first written
    assert learned["memoised"] == 1.0
    assert learned["reused"] == 2 / 3  # "reused" and "reuses": one stem in two quotes
    assert learned["zorblax"] == learned["container"] == 1 / 3  # one harness's own words: one quote each
    assert set(quote_weights(_QUOTES[:1]).values()) == {1.0}  # a single quote teaches all its words fully
    assert quote_weights(_QUOTES[:2])["memoised"] == 1.0 and quote_weights(_QUOTES[:2])["zorblax"] == 0.5
    rubric = _bundled_rubric()
    fld = rubric.field("reset_retention")
    weighted = field_query(rubric, fld, quotes=_QUOTES).weighted_words()
    cold = field_query(rubric, fld).weighted_words()
    assert weighted[stem("zorblax")] == WEIGHT_QUOTES / 3 < weighted[stem("memoised")] == WEIGHT_QUOTES
    assert all(weighted[word] == weight for word, weight in cold.items())  # the field's own words keep theirs
