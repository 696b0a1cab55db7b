"""Issue 11.6: proof across sequences — a Hypothesis state machine over the real CLI and store.

The rules are the operations of a review team: code a cell fully or partially (as the app
saves it), clear it, add and remove protocols, adjudicate, freeze, correct a code or only the
evidence (or adopt the reviewers' record), withdraw a protocol, change the rubric version and
recheck, re-import an export. After every step:

* no operation has lost or changed a reviewer's record (the model of what reviewers saved
  equals what is on disk);
* a refused command exited 1 with one-line messages, no traceback, and changed no file;
* ``validate`` finds no error and ``render`` succeeds (warnings name the command to run);
* every release frozen in the sequence re-renders byte for byte at its end;
* ``agree`` gives exactly what it gives on a copy holding only the reviewers' files (no
  adjudications, corrections or releases): agreement reads only the independent codes.

A short run is part of the default suite; ``pytest -m slow`` runs long sequences.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from protocoder.cli import main
from protocoder.model import Cell
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

from conftest import tree_digest

PROTOCOLS = ("alpha", "beta", "gamma")
FIELDS = {"open_work": ("E", "P", "NR", "NA"), "reset_retention": ("E", "P", "NR"),
          "separate_evidence": ("E", "P", "NR")}
REVIEWERS = ("ada", "bo")

protocols = st.sampled_from(PROTOCOLS)
fields = st.sampled_from(sorted(FIELDS))
reviewers = st.sampled_from(REVIEWERS)
codes = st.sampled_from(("E", "P", "NR", "NA"))
words = st.sampled_from(("Sec. 2", "App. A", "the README", "Table 3", "", "x"))

# A refusal is expected for these reasons; anything else refused is a failure.
EXPECTED_REFUSALS = (
    "nothing has been released yet", "was not part of release", "nothing to correct", "is unresolved in the",
    "is incomplete in the", "nobody has coded", "has no code in the current view", "needs basis", "needs source",
    "already withdrawn", "is not in release", "protocoder withdraw", "(the rubric requires it)",
    "was withdrawn from release",
)


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


class ReviewLifecycle(RuleBasedStateMachine):
    """A small review (up to three protocols, three fields, two reviewers) through every operation."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="lifecycle-states-"))
        self.root = self.tmp / "review"
        assert run("init", self.root).exit_code == 0
        self.protocols: list[str] = []
        self.records: dict[tuple[str, str, str], tuple[str | None, str, str]] = {}
        self.releases: dict[str, dict[str, bytes]] = {}
        self.version = (1, 0)
        for protocol in PROTOCOLS[:2]:
            self._add(protocol)
        # Start from a coded review (bo disagrees once) so that every operation has material.
        review = load_review(self.root)
        for protocol in PROTOCOLS[:2]:
            for field_id in FIELDS:
                for reviewer in REVIEWERS:
                    code = "P" if (protocol, field_id, reviewer) == ("alpha", "open_work", "bo") else "NR"
                    Store(review.paths).save_cell(Cell(protocol, field_id, reviewer, code, "Sec. 1", "Said so.", (),
                                                       review.rubric.version), review.rubric)
                    self.records[(protocol, field_id, reviewer)] = (code, "Sec. 1", "Said so.")

    def teardown(self) -> None:
        try:
            self.every_release_renders_byte_for_byte()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # ------------------------------------------------------------------ helpers

    def cli(self, *args: str | Path, refusals: tuple[str, ...] = EXPECTED_REFUSALS) -> bool:
        """Run a command; True if it succeeded. A refusal must be expected, clean and change nothing."""
        before = tree_digest(self.root)
        result = run(*args, "--workspace", self.root)
        assert "Traceback" not in result.stderr, result.stderr
        event(f"{args[0]} {'ran' if result.exit_code == 0 else 'was refused'}")
        if result.exit_code == 0:
            return True
        assert result.exit_code == 1, (args, result.output)
        assert any(reason in result.stderr for reason in refusals), (args, result.stderr)
        assert tree_digest(self.root) == before, f"{args} was refused but changed files"
        return False

    def _add(self, protocol: str) -> None:
        assert self.cli("protocol", "add", "--id", protocol, "--name", protocol.title(),
                        "--source", f"{protocol} paper|https://example.org/{protocol}|v1|2026-01-01")
        self.protocols.append(protocol)

    # ------------------------------------------------------------------ reviewers' work

    @precondition(lambda self: self.protocols)
    @rule(data=st.data(), field_id=fields, reviewer=reviewers, code=codes, source=words, basis=words)
    def code_cell(self, data, field_id: str, reviewer: str, code: str, source: str, basis: str) -> None:
        """Save a cell as the coding app does: fully, or half done (a code without evidence)."""
        protocol = data.draw(st.sampled_from(self.protocols))
        code = code if code in FIELDS[field_id] else "NR"
        review = load_review(self.root)
        Store(review.paths).save_cell(Cell(protocol, field_id, reviewer, code, source, basis, (),
                                           review.rubric.version), review.rubric)
        self.records[(protocol, field_id, reviewer)] = (code, source, basis)

    @precondition(lambda self: self.records)
    @rule(data=st.data())
    def clear_cell(self, data) -> None:
        protocol, field_id, reviewer = data.draw(st.sampled_from(sorted(self.records)))
        Store(load_review(self.root).paths).delete_cell(protocol, reviewer, field_id)
        del self.records[(protocol, field_id, reviewer)]

    @precondition(lambda self: len(self.protocols) < len(PROTOCOLS))
    @rule()
    def add_protocol(self) -> None:
        self._add(next(p for p in PROTOCOLS if p not in self.protocols))

    @precondition(lambda self: len(self.protocols) > 1)
    @rule(data=st.data())
    def remove_protocol(self, data) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        if self.cli("protocol", "remove", protocol, "--force"):
            self.protocols.remove(protocol)
            self.records = {k: v for k, v in self.records.items() if k[0] != protocol}

    @rule()
    def reimport_export(self) -> None:
        exported = run("export", "--workspace", self.root)
        assert exported.exit_code == 0, exported.stderr
        path = self.tmp / "cells.csv"
        path.write_text(exported.stdout, encoding="utf-8")
        # Import refuses rows coded without what the rubric requires (issue 12's importer
        # decides that); anything it accepts must leave every record as it was.
        self.cli("import", path, refusals=("requires:",))

    @rule()
    def change_the_rubric(self) -> None:
        self.version = (self.version[0], self.version[1] + 1)
        path = self.root / "rubric/evaluation-boundary.yaml"
        text = path.read_text(encoding="utf-8")
        old = text[text.index('version: "'):text.index('"', text.index('version: "') + 10) + 1]
        text = text.replace(old, f'version: "{self.version[0]}.{self.version[1]}"', 1)
        start = text.index("  - id: open_work")
        revised = text.index('revised: "', start)
        end = text.index('"', revised + 10) + 1
        path.write_text(text[:revised] + f'revised: "{self.version[0]}.{self.version[1]}"' + text[end:],
                        encoding="utf-8")

    @rule(field_id=fields)
    def recheck(self, field_id: str) -> None:
        assert self.cli("recheck", "--field", field_id)

    # ------------------------------------------------------------------ the lifecycle

    @precondition(lambda self: self.protocols)
    @rule(data=st.data(), field_id=fields, code=codes)
    def adjudicate(self, data, field_id: str, code: str) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        code = code if code in FIELDS[field_id] else "NR"
        self.cli("adjudicate", "--cell", f"{protocol}/{field_id}", "--code", code, "--reason", "decided", "--by",
                 "carol")

    @rule()
    def freeze(self) -> None:
        label = f"v{len(self.releases) + 1}"
        assert self.cli("freeze", "--label", label, "--allow-unresolved", "--allow-incomplete", "--bootstrap", "0",
                        "--by", "carol")
        out = self.tmp / f"frozen-{label}"
        assert run("render", "--workspace", self.root, "--release", label, "--out", out).exit_code == 0
        self.releases[label] = {p.name: p.read_bytes() for p in out.iterdir()}

    @precondition(lambda self: self.protocols)
    @rule(data=st.data(), field_id=fields, code=codes)
    def correct_code(self, data, field_id: str, code: str) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        code = code if code in FIELDS[field_id] else "NR"
        self.cli("correct", "--cell", f"{protocol}/{field_id}", "--code", code, "--reason", "wrong", "--by", "carol")

    @precondition(lambda self: self.protocols)
    @rule(data=st.data(), field_id=fields, basis=words)
    def correct_evidence(self, data, field_id: str, basis: str) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        self.cli("correct", "--cell", f"{protocol}/{field_id}", "--basis", basis or "B", "--reason", "typo",
                 "--by", "carol")

    @precondition(lambda self: self.protocols)
    @rule(data=st.data(), field_id=fields)
    def correct_to_the_reviewers_record(self, data, field_id: str) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        self.cli("correct", "--cell", f"{protocol}/{field_id}", "--reason", "as the files say", "--by", "carol")

    @precondition(lambda self: self.protocols)
    @rule(data=st.data())
    def withdraw(self, data) -> None:
        protocol = data.draw(st.sampled_from(self.protocols))
        self.cli("withdraw", protocol, "--reason", "retracted", "--by", "carol")

    # ------------------------------------------------------------------ invariants

    @invariant()
    def no_reviewer_record_is_lost(self) -> None:
        review = load_review(self.root)
        on_disk = {(c.protocol, c.field, c.reviewer): (c.code, c.source, c.basis) for c in review.all_cells()}
        assert on_disk == self.records

    @invariant()
    def validate_finds_no_error_and_render_succeeds(self) -> None:
        validate = run("validate", "--workspace", self.root)
        assert validate.exit_code == 0, validate.stderr
        render = run("render", "--workspace", self.root, "--format", "md", "--bootstrap", "0",
                     "--out", self.tmp / "out")
        assert render.exit_code == 0, render.stderr
        assert run("status", "--workspace", self.root).exit_code == 0

    def every_release_renders_byte_for_byte(self) -> None:
        """Checked at the end of every sequence (teardown): after any later sequence."""
        for label, files in self.releases.items():
            out = self.tmp / f"again-{label}"
            shutil.rmtree(out, ignore_errors=True)
            assert run("render", "--workspace", self.root, "--release", label, "--out", out).exit_code == 0
            assert {p.name: p.read_bytes() for p in out.iterdir()} == files, label

    @invariant()
    def agreement_reads_only_the_independent_codes(self) -> None:
        if len({reviewer for _, _, reviewer in self.records}) < 2:
            return
        shadow = self.tmp / "shadow"
        shutil.rmtree(shadow, ignore_errors=True)
        shadow.mkdir()
        for name in ("protocoder.yaml", "rubric", "references.bib"):
            source = self.root / name
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, shadow / name)
        for protocol in self.protocols:
            folder = self.root / "protocols" / protocol
            (shadow / "protocols" / protocol).mkdir(parents=True)
            shutil.copy2(folder / "protocol.yaml", shadow / "protocols" / protocol / "protocol.yaml")
            if (folder / "codes").is_dir():
                shutil.copytree(folder / "codes", shadow / "protocols" / protocol / "codes")
        here = run("agree", "--workspace", self.root, "--format", "json", "--bootstrap", "0")
        there = run("agree", "--workspace", shadow, "--format", "json", "--bootstrap", "0")
        assert here.exit_code == there.exit_code == 0, here.stderr + there.stderr
        assert here.stdout == there.stdout


QUICK = settings(max_examples=4, stateful_step_count=12, deadline=None,
                 suppress_health_check=list(HealthCheck))
# Long sequences are reported as found: shrinking one takes longer than finding it.
LONG = settings(max_examples=30, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.reuse, Phase.generate])


def test_the_lifecycle_has_no_dead_ends() -> None:
    ReviewLifecycle.TestCase.settings = QUICK
    ReviewLifecycle.TestCase().runTest()


@pytest.mark.slow
def test_the_lifecycle_has_no_dead_ends_over_long_sequences() -> None:
    ReviewLifecycle.TestCase.settings = LONG
    ReviewLifecycle.TestCase().runTest()
