"""Issue 34: the parse of ``references.bib`` is kept in ``.protocoder/cache/bibliography.json``, keyed by
the file's SHA-256 (and the parser's files), so that a one-shot command loading the review does not load
bibtexparser; what every command reports is the same with and without the cache."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from protocoder.storage import bibliography
from protocoder.storage.cache import CACHE_DIR

BROKEN = """
@misc{dup, title = {One}, year = {2020}}
@misc{dup, title = {Two}, year = {2021}}
@article{nojournal, author = {Doe, Jane}, title = {No journal}, year = {2022}}
"""


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make any parse of BibTeX fail the test's command loudly (recording it)."""
    calls: list[str] = []

    def refuse(text: str, display: str, **_: object) -> None:
        calls.append(display)
        raise AssertionError("references.bib was parsed although the cache holds its parse")

    monkeypatch.setattr(bibliography, "parse_bibtex", refuse)
    return calls


def test_a_second_command_reads_the_parse_from_the_cache(bundled: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = cli("render", "--workspace", bundled, "--format", "all", "--bootstrap", "0", "--out", bundled / "fresh")
    assert fresh.exit_code == 0, fresh.output
    shutil.rmtree(bundled / ".protocoder" / CACHE_DIR)
    with (bundled / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write(BROKEN)
    first = cli("validate", "--workspace", bundled)
    assert "duplicate citation key 'dup'" in first.output and "lacks required field(s): journal" in first.output
    cache = bundled / ".protocoder" / CACHE_DIR / bibliography.CACHE_FILE
    assert cache.is_file()
    assert (bundled / ".protocoder" / CACHE_DIR / ".gitignore").read_text(encoding="utf-8").endswith("*\n")

    _no_parse(monkeypatch)
    again = cli("validate", "--workspace", bundled)
    assert (again.exit_code, again.output) == (first.exit_code, first.output)


def test_render_from_the_cache_prints_the_same_references(bundled: Path, cli,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache holds each entry's authors too (the reference lists are sorted by them): the tables
    rendered from it are the bytes rendered from the parse."""
    with (bundled / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write("@misc{accented, author = {Balunovi{\\'c}, Mislav and {Evaluation Group}}, title = {A}, "
                  "year = {2024}}\n")
    rendered = {}
    for run in ("parsed", "cached"):
        if run == "cached":
            assert (bundled / ".protocoder" / CACHE_DIR / bibliography.CACHE_FILE).is_file()
            _no_parse(monkeypatch)
        done = cli("render", "--workspace", bundled, "--format", "all", "--bootstrap", "0", "--out", bundled / run)
        assert done.exit_code == 0, done.output
        rendered[run] = {p.name: p.read_bytes() for p in (bundled / run).iterdir() if p.is_file()}
    assert rendered["parsed"] == rendered["cached"] and rendered["cached"]


def test_a_changed_file_or_a_foreign_cache_is_parsed_again(bundled: Path, cli,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("validate", "--workspace", bundled).exit_code == 0
    cache = bundled / ".protocoder" / CACHE_DIR / bibliography.CACHE_FILE
    kept = json.loads(cache.read_text(encoding="utf-8"))
    # the file changes: its new problem is reported (the cache's key no longer matches)
    with (bundled / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write(BROKEN)
    changed = cli("validate", "--workspace", bundled)
    assert changed.exit_code != 0 and "duplicate citation key 'dup'" in changed.output
    # a cache written for another text (say copied from another workspace) is not used
    cache.write_text(json.dumps(kept), encoding="utf-8")
    again = cli("validate", "--workspace", bundled)
    assert (again.exit_code, again.output) == (changed.exit_code, changed.output)
    # nor is anything unreadable
    cache.write_text("{not json", encoding="utf-8")
    assert cli("validate", "--workspace", bundled).output == changed.output


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_cache_behind_a_link_is_neither_read_nor_written(bundled: Path, tmp_path: Path, cli,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = bundled / ".protocoder"
    state.mkdir(exist_ok=True)
    (state / CACHE_DIR).symlink_to(elsewhere, target_is_directory=True)
    linked = cli("validate", "--workspace", bundled)
    # validate reports the link (issue 30: a link under .protocoder is named, with the way out) ...
    assert linked.exit_code == 1 and f"rm .protocoder/{CACHE_DIR}" in linked.output
    # ... and writes nothing through it
    assert list(elsewhere.iterdir()) == [], "nothing written through the link"
    # a parse placed there is not read either: the command parses the file itself
    (state / CACHE_DIR).unlink()
    assert cli("validate", "--workspace", bundled).exit_code == 0
    (state / CACHE_DIR).rename(elsewhere / "cache")
    (state / CACHE_DIR).symlink_to(elsewhere / "cache", target_is_directory=True)
    calls = _no_parse(monkeypatch)
    with pytest.raises(AssertionError, match="was parsed"):
        cli("validate", "--workspace", bundled)
    assert calls
