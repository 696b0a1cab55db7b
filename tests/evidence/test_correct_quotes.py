"""Issue 22: ``correct`` can carry quotes (``--quote SOURCE:TEXT``), checked against the snapshot."""

from __future__ import annotations

from pathlib import Path

from protocoder.lifecycle.corrections import load_corrections
from protocoder.storage.paths import Paths

from .test_workflow import MD_QUOTE, documents, ok, pinned, pinned_once, typeset  # noqa: F401  (fixtures)
from conftest import tree_digest


def test_a_correction_carries_checked_quotes(pinned: Path, cli) -> None:  # noqa: F811
    ok(cli("freeze", "--workspace", pinned, "--label", "v1", "--bootstrap", "0", "--by", "lead"))
    args = ["correct", "--workspace", pinned, "--cell", "swe-bench/reset_retention", "--code", "E", "--reason",
            "the rules say so", "--by", "lead", "--source", "rules, Sec. 1", "--basis", "Reset before each attempt."]
    before = tree_digest(pinned)
    wrong = cli(*args, "--quote", "rules:" + MD_QUOTE.replace("initial", "first"))
    assert wrong.exit_code == 1 and "quote not found in source 'rules'" in wrong.stderr
    assert "closest passage" in wrong.stderr and "Traceback" not in wrong.output
    assert tree_digest(pinned) == before, "nothing written"
    assert "SOURCE:TEXT" in cli(*args, "--quote", "no colon here").stderr

    ok(cli(*args, "--quote", f"rules:{MD_QUOTE}"))
    entries, problems = load_corrections(Paths(pinned))
    assert not problems
    quote = entries[-1].quotes[0]
    assert (quote.source, quote.text) == ("rules", MD_QUOTE) and quote.start is not None and quote.snapshot
    assert "no problems" in ok(cli("validate", "--workspace", pinned)).stdout
    ok(cli("render", "--workspace", pinned, "--format", "md", "--quotes", "--bootstrap", "0"))
    assert MD_QUOTE in (pinned / "output/ledger.md").read_text()
    # A correction of the quotes alone (same code, source and basis) is a correction too.
    again = cli(*args)
    assert again.exit_code == 0, again.output
