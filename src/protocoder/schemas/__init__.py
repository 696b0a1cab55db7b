"""JSON Schemas of protocoder's hand-edited YAML files, for editors with a YAML language server.

Each schema says which keys a file may hold and what their values look like; it is a help
while typing, not the judge: ``protocoder validate`` still checks what a schema cannot (that
a field's codes exist in the rubric, that a quote's text is in its snapshot, ...).
``protocoder schema NAME`` prints one.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SCHEMAS = {
    "protocoder": "protocoder.yaml, the workspace's settings",
    "rubric": "a rubric (rubric/<id>.yaml)",
    "protocol": "a protocol's metadata and sources (protocols/<id>/protocol.yaml)",
    "codes": "one reviewer's cells for one protocol (protocols/<id>/codes/<reviewer>.yaml)",
    "team": "team.yaml, the members of a team's review",
}
"""Schema names, with the file each one describes."""


def schema_text(name: str) -> str:
    """The JSON text of schema ``name`` (KeyError when there is no such schema)."""
    if name not in SCHEMAS:
        raise KeyError(name)
    return resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """Schema ``name`` as a JSON object (KeyError when there is no such schema)."""
    return json.loads(schema_text(name))
