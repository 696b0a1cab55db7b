"""The one way the lifecycle hashes a record: SHA-256 of its canonical JSON.

Adjudications, corrections and releases each record hashes (of the codes an adjudication
resolved, of a final cell's record, of a ledger entry, of a release's metadata) that later
runs recompute and compare. They must agree to the byte across versions, so the JSON form
is fixed here: keys sorted, no spaces, text as written (not ``\\u`` escapes).
"""

from __future__ import annotations

# Defined with the model, below the storage layer, because the adjudication record that
# storage reads checks its own hash; importable from here as before.
from ..model import canonical_hash

__all__ = ["canonical_hash"]
