"""Issue 31.2: discussion on a cell. Comments open once a cell is ready for adjudication (never before:
blinding), each person's in their own file; they show in export --view final, and in the ledger only
with render --comments."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from conftest import tree_digest


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_no_comment_before_every_reviewer_has_coded(bundled: Path, cli) -> None:
    before = tree_digest(bundled)
    refused = cli("comment", "--workspace", bundled, "webarena/open_work", "I think NR.", "--by", "alice")
    assert refused.exit_code == 1
    assert "webarena/open_work is not ready for adjudication yet" in refused.stderr
    assert "protocoder status" in refused.stderr and "Traceback" not in refused.stderr
    assert tree_digest(bundled) == before


def test_comments_in_own_files_export_and_ledger(two: Path, cli, tmp_path: Path) -> None:
    ok(cli("comment", "--workspace", two, "webarena/open_work", "Sec. 3.2 covers stop actions only.", "--by",
           "alice"))
    ok(cli("comment", "--workspace", two, "webarena/open_work", "Then NR stands?", "--by", "carol"))
    assert (two / "protocols/webarena/comments/alice.yaml").is_file()
    assert "Then NR stands?" in (two / "protocols/webarena/comments/carol.yaml").read_text(encoding="utf-8")
    assert "carol" not in (two / "protocols/webarena/comments/alice.yaml").read_text(encoding="utf-8")
    rows = {f"{r['protocol']}/{r['field']}": r for r in csv.DictReader(io.StringIO(
        ok(cli("export", "--workspace", two, "--view", "final"))))}
    assert rows["webarena/open_work"]["comments"] == ("alice: Sec. 3.2 covers stop actions only. | "
                                                     "carol: Then NR stands?")
    ok(cli("render", "--workspace", two, "--out", tmp_path / "plain", "--format", "md", "--bootstrap", "0"))
    assert "Discussion" not in (tmp_path / "plain/ledger.md").read_text(encoding="utf-8")
    ok(cli("render", "--workspace", two, "--out", tmp_path / "with", "--format", "md", "--bootstrap", "0",
           "--comments"))
    ledger = (tmp_path / "with/ledger.md").read_text(encoding="utf-8")
    assert "Discussion: alice: Sec. 3.2 covers stop actions only.; carol: Then NR stands?" in ledger
    assert cli("validate", "--workspace", two).exit_code == 0


def test_a_damaged_comments_file_is_named(two: Path, cli) -> None:
    ok(cli("comment", "--workspace", two, "webarena/open_work", "ok", "--by", "alice"))
    (two / "protocols/webarena/comments/alice.yaml").write_text("comments:\n  - field: open_work\n", encoding="utf-8")
    result = cli("export", "--workspace", two, "--view", "final")
    assert result.exit_code != 0 and "protocols/webarena/comments/alice.yaml:" in result.stderr
    assert "missing required key 'at'" in result.stderr and "Traceback" not in result.stderr
