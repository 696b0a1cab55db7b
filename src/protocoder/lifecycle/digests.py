"""The one way the lifecycle hashes a record: SHA-256 of its canonical JSON.

Adjudications, corrections and releases each record hashes (of the codes an adjudication
resolved, of a final cell's record, of a ledger entry, of a release's metadata) that later
runs recompute and compare. They must agree to the byte across versions, so the JSON form
is fixed here: keys sorted, no spaces, text as written (not ``\\u`` escapes).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_hash(value: Any) -> str:
    """``sha256:`` and the hex digest of ``value`` as canonical JSON (values JSON cannot hold, such as
    dates, as their text)."""
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()
