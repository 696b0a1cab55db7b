"""Every write to a workspace goes through :class:`Store`.

The coding app, the CLI and the import all call these methods; none of them touches
YAML or file paths. Writes are atomic (see :mod:`.files`) and comment-preserving (see
:mod:`.yamlio`; the mappings written, and the checks before writing, are in
:mod:`.mappings`), are serialised by a workspace lock so that two processes cannot interleave, and can be made
conditional on the file being unchanged since it was read (compare-and-swap with a
fingerprint), which is how the coding app avoids overwriting edits made elsewhere.
"""

from __future__ import annotations

from .protocol_writes import ProtocolWrites, coded_cell_count
from .record_writes import RecordWrites
from .sheet_writes import CellUpdate, SheetWrites, WriteResult
from .writer import ANY, SheetConflict, now_iso

__all__ = ["ANY", "CellUpdate", "SheetConflict", "Store", "WriteResult", "coded_cell_count", "now_iso"]


class Store(SheetWrites, ProtocolWrites, RecordWrites):
    """Writes to one workspace: reviewers' files (:class:`~.sheet_writes.SheetWrites`), protocols
    (:class:`~.protocol_writes.ProtocolWrites`), adjudications, the bibliography and snapshots
    (:class:`~.record_writes.RecordWrites`), all under the one lock of :class:`~.writer.Writer`."""
