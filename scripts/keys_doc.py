"""Write docs/keys.md: every screen's keys, generated from the apps' bindings.

Run after changing a binding or a key description:

    python scripts/keys_doc.py

tests/tui/test_keys_doc.py fails while the page is stale.
"""

from __future__ import annotations

from pathlib import Path

from protocoder.tui.keys_doc import write_keys_doc

TARGET = Path(__file__).resolve().parent.parent / "docs" / "keys.md"


def main() -> None:
    changed = write_keys_doc(TARGET)
    print(f"{'wrote' if changed else 'unchanged:'} {TARGET.relative_to(TARGET.parent.parent)}")


if __name__ == "__main__":
    main()
