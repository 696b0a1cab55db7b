"""Generate src/protocoder/render/compiled/: the built-in templates' Python code.

Run after changing a built-in template or an environment's settings:

    python scripts/compile_templates.py

Writes one module per template and removes the modules of templates that changed or went.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from protocoder.render.environments import compiled_sources

TARGET = Path(__file__).resolve().parent.parent / "src" / "protocoder" / "render" / "compiled"


def main() -> None:
    modules = compiled_sources()
    for stale in sorted(TARGET.glob("t_*.py")):
        if stale.name not in modules:
            stale.unlink()
            print(f"removed {stale.name}")
    for name, source in modules.items():
        path = TARGET / name
        if not path.is_file() or path.read_text(encoding="utf-8") != source:
            path.write_text(source, encoding="utf-8")
            print(f"wrote {name} ({source.splitlines()[0][2:].split(',')[0]})")
    init = TARGET / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(re.sub(r'^JINJA2_VERSION = ".*"$', f'JINJA2_VERSION = "{jinja2.__version__}"', text, flags=re.M),
                    encoding="utf-8")
    print(f"{len(modules)} templates compiled by Jinja2 {jinja2.__version__} into {TARGET}")


if __name__ == "__main__":
    main()
