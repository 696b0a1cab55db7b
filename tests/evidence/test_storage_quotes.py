"""Quotes and pinned sources in the YAML files: readable, hand-editable, checked at their line."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from protocoder.model import Cell, Quote, Source, SourceVersion
from protocoder.storage.store import Store
from protocoder.storage.workspace import load_review

SHA = "3f2a9c01d2e4" + "0" * 52


def test_quotes_round_trip_and_keep_hand_comments(bundled: Path) -> None:
    review = load_review(bundled)
    rubric = review.require_valid()
    store = Store(review.paths)
    cell = review.cells("webarena", "open_work")["casheekar"]
    quotes = (Quote("paper", "Each run ends after 50 steps.", "14", "3.2 Stopping", 120, 149, SHA[:12]),
              Quote("docs", "Multi-line\ntext: with a colon # and a hash", "iv"))
    store.save_cell(replace(cell, quotes=quotes), rubric)
    path = bundled / "protocols/webarena/codes/casheekar.yaml"
    text = path.read_text(encoding="utf-8")
    assert "    quotes:\n      - source: paper\n        text: Each run ends after 50 steps.\n        page: 14\n" in text
    assert "        span: [120, 149]\n        snapshot: 3f2a9c01d2e4\n" in text
    assert "page: iv" in text
    back = load_review(bundled).cells("webarena", "open_work")["casheekar"]
    assert back.quotes == quotes and back.code == cell.code and back.basis == cell.basis
    # A comment written by hand beside a quote survives saving another quote.
    path.write_text(text.replace("        page: iv\n", "        page: iv  # the preface\n"), encoding="utf-8")
    more = (*quotes, Quote("paper", "Scores average three seeds."))
    store.save_cell(replace(back, quotes=more), rubric)
    assert "page: iv  # the preface" in path.read_text(encoding="utf-8")
    assert load_review(bundled).cells("webarena", "open_work")["casheekar"].quotes == more
    # Removing every quote removes the key.
    store.save_cell(replace(back, quotes=()), rubric)
    assert "quotes:" not in path.read_text(encoding="utf-8")


def test_bad_quotes_are_reported_at_their_line(bundled: Path, cli) -> None:
    path = bundled / "protocols/webarena/codes/casheekar.yaml"
    text = path.read_text(encoding="utf-8")
    bad = ("    quotes:\n"
           "      - source: paper\n"
           "        span: [20, 10]\n"
           "        snapshot: xyz\n"
           "      - just text\n")
    path.write_text(text.replace("  open_work:\n", "  open_work:\n" + bad, 1), encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if "casheekar.yaml" in line]
    start = text.splitlines().index("  open_work:") + 1
    shown = "protocols/webarena/codes/casheekar.yaml"
    assert any(line.startswith(f"{shown}:{start + 2}:") and "missing required key 'text'" in line
               for line in lines), lines
    assert any(f":{start + 3}:" in line and "span must be [start, end]" in line for line in lines)
    assert any(f":{start + 4}:" in line and "snapshot must be the start" in line for line in lines)
    assert any(f":{start + 5}:" in line and "expected a quote mapping" in line for line in lines)


def test_pinned_sources_round_trip_and_old_sources_stay_valid(bundled: Path) -> None:
    review = load_review(bundled)
    protocol = review.protocol("webarena")
    pinned = Source("A paper", "", "v2", date(2026, 8, 2), "paper", "b" * 64, "application/pdf",
                    (SourceVersion("v1", date(2026, 8, 1), "a" * 64, "application/pdf"),))
    Store(review.paths).update_protocol(replace(protocol, sources=(*protocol.sources, pinned)))
    text = (bundled / "protocols/webarena/protocol.yaml").read_text(encoding="utf-8")
    assert "  - id: paper\n    title: A paper\n    version: v2\n" in text  # no URL needed for a snapshot
    again = load_review(bundled)
    assert not again.errors
    assert again.protocol("webarena").sources[-1] == pinned
    assert again.protocol("webarena").sources[:-1] == protocol.sources


def test_bad_pinned_sources_are_reported(bundled: Path, cli) -> None:
    path = bundled / "protocols/webarena/protocol.yaml"
    path.write_text(path.read_text(encoding="utf-8") + (
        "  - title: No id\n    version: v1\n    accessed: 2026-08-01\n    sha256: " + "c" * 64 + "\n"
        "    media_type: application/pdf\n"
        "  - id: short\n    title: Short hash\n    version: v1\n    accessed: 2026-08-01\n    sha256: abc\n"
        "    media_type: text/rtf\n"), encoding="utf-8")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    assert "a source with a snapshot (sha256) needs an 'id'" in result.stderr
    assert "sha256 must be the 64 hexadecimal digits of a SHA-256" in result.stderr
    assert "unknown media type 'text/rtf'" in result.stderr


def test_a_quote_naming_an_unknown_source_is_an_error(bundled: Path, cli) -> None:
    review = load_review(bundled)
    cell: Cell = review.cells("webarena", "open_work")["casheekar"]
    Store(review.paths).save_cell(replace(cell, quotes=(Quote("nowhere", "Some text."),)), review.require_valid())
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    assert "quote names source 'nowhere', which protocol 'webarena' does not pin" in result.stderr
