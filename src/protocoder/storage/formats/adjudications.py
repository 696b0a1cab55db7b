"""A protocol's adjudications (``protocols/<id>/consensus.yaml``), oldest first."""

from __future__ import annotations

from typing import Any

from ...model import (
    Adjudication,
    Rubric,
    codes_hash,
)
from ..findings import Findings, Reader, describe

ADJUDICATION_KEYS = ("field", "code", "reason", "by", "at", "resolved", "resolved_hash", "taken_from",
                     "evidence", "source", "basis", "cites")
OWN_EVIDENCE = "own"
"""``evidence: own`` in consensus.yaml: the decision rests on the adjudicator's own basis (a list names
the reviewers whose evidence it keeps)."""


def parse_consensus(data: Any, findings: Findings, protocol_id: str, rubric: Rubric | None) -> list[Adjudication]:
    """Parse ``protocols/<id>/consensus.yaml``: the adjudications of that protocol, oldest first."""
    r = Reader(findings)
    if data is None:
        return []
    top = r.mapping(data, [], optional=("adjudications",), what="a mapping with 'adjudications'")
    if top is None:
        return []
    raw = top.get("adjudications") or []
    if not isinstance(raw, list):
        r.add(["adjudications"], f"expected a list of adjudications, found {describe(raw)}")
        return []
    result = []
    for index, item in enumerate(raw):
        path = ["adjudications", index]
        entry = r.mapping(item, path, required=("field", "code", "reason", "by", "at", "resolved", "resolved_hash"),
                          optional=ADJUDICATION_KEYS[7:], what="an adjudication mapping")
        if entry is None:
            continue
        field_id = r.text(entry, "field", path, required=True)
        code = r.text(entry, "code", path, required=True)
        if rubric is not None and field_id:
            try:
                fld = rubric.field(field_id)
            except KeyError:
                r.add([*path, "field"], f"unknown field {field_id!r}")
                continue
            if code and code not in fld.codes:
                r.add([*path, "code"], f"code {code!r} is not allowed for field {field_id!r}")
        reason = r.text(entry, "reason", path, required=True)
        resolved_raw = entry.get("resolved")
        resolved: dict[str, str] = {}
        if r.mapping(resolved_raw, [*path, "resolved"], what="a mapping of reviewer to code") is not None:
            resolved = {str(k): str(v) for k, v in resolved_raw.items()}
        stored_hash = r.text(entry, "resolved_hash", path, required=True)
        if stored_hash and resolved and stored_hash != codes_hash(resolved):
            r.add([*path, "resolved_hash"], "resolved_hash does not match the resolved codes (was the entry edited?)")
        kept: tuple[str, ...] | None = None
        if "evidence" in entry:
            raw_kept = entry.get("evidence")
            if raw_kept == OWN_EVIDENCE:
                kept = ()
            elif isinstance(raw_kept, list) and raw_kept:
                kept = r.text_list(entry, "evidence", path)
            else:
                r.add([*path, "evidence"], f"expected 'own' or a list of the reviewers whose evidence the decision "
                                           f"keeps, found {describe(raw_kept)}")
        result.append(Adjudication(protocol_id, field_id, code, reason, r.text(entry, "by", path, required=True),
                                   r.moment(entry, "at", path), resolved, stored_hash,
                                   r.text(entry, "source", path), r.text(entry, "basis", path),
                                   r.text_list(entry, "cites", path), r.text(entry, "taken_from", path), index,
                                   kept))
    return result
