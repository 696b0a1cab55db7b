"""A cell named as ``protocol/field`` on the command line, checked against the workspace."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Rejected
from ..storage.workspace import Review


@dataclass(frozen=True)
class CellRef:
    """A cell named as ``protocol/field``."""

    protocol: str
    field: str

    @classmethod
    def parse(cls, text: str, review: Review) -> CellRef:
        """Parse and check ``protocol/field`` against the workspace."""
        protocol, sep, field_id = text.strip().partition("/")
        if not sep:
            raise Rejected(f"cell {text!r} must be written PROTOCOL/FIELD, e.g. webarena/open_work")
        if protocol not in {p.id for p in review.protocols}:
            raise Rejected(f"no protocol {protocol!r} in this workspace")
        rubric = review.require_valid()
        if field_id not in rubric.field_ids:
            raise Rejected(f"the rubric has no field {field_id!r} (fields: {', '.join(rubric.field_ids)})")
        return cls(protocol, field_id)

    def __str__(self) -> str:
        return f"{self.protocol}/{self.field}"
