"""Issue 31 in the browser: the adjudication app's reading view (f3, f2), the evidence choice (f4)
and the team's progress (f9) reach the served app through Chromium's key handling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_serve import chromium, open_tab, serve, sign_in  # noqa: F401  (fixtures used by name)


def test_reading_evidence_and_progress_keys_in_chromium(serve: Callable[..., Any], chromium: Any,  # noqa: F811
                                                        bundled: Path, cli: Callable[..., Any]) -> None:
    exported = cli("export", "--workspace", bundled).stdout.replace(",casheekar,", ",alice,")
    (bundled / "alice.csv").write_text(exported.replace("webarena,open_work,alice,NR", "webarena,open_work,alice,P"),
                                       encoding="utf-8")
    assert cli("import", "--workspace", bundled, bundled / "alice.csv").exit_code == 0
    served = serve("--app", "adjudicate")
    tab = open_tab(chromium, served.url)
    sign_in(tab, "Carol", "carol", question="Who is adjudicating?")
    tab.wait_for_text("Adjudication · 1 unresolved cell")
    tab.page.wait_for_timeout(500)
    tab.press("F3")
    tab.wait_for_text("f2 next · pgup/pgdn scroll · f3 back")
    tab.wait_for_text("alice: P")
    tab.press("F2")
    tab.wait_for_text("casheekar: NR")
    tab.press("F3")  # back to the decision (escape too, once it is not read as alt with the next key)
    tab.page.wait_for_timeout(500)
    tab.press("2")
    tab.wait_for_text("Evidence: alice's (who chose P)")
    tab.press("F4")
    tab.press("F4")
    tab.wait_for_text("Evidence: casheekar's")
    tab.press("F9")
    tab.wait_for_text("Team progress")
