"""Extraction in a child process bounded in time and memory.

A document that makes the extractor loop, recurse or allocate without end costs at most
that long and that much, and ends in a one-line :class:`~.limits.ExtractionError`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import BinaryIO

from .limits import ExtractionError
from .structure import Extracted

EXTRACT_SECONDS = float(os.environ.get("PROTOCODER_EXTRACT_SECONDS", "120"))
"""Wall-clock limit of one extraction (a 300-page paper takes a few seconds)."""

EXTRACT_MEMORY = int(os.environ.get("PROTOCODER_EXTRACT_MEMORY", str(2 * 1024 * 1024 * 1024)))
"""Address-space limit of the extracting child process, in bytes (2 GiB unless
``PROTOCODER_EXTRACT_MEMORY`` says otherwise)."""


def extract_bounded(data: bytes, media_type: str, *, seconds: float | None = None) -> Extracted:
    """:func:`extract` in a child process limited in time (``seconds``) and memory.

    A document that makes the extractor loop, recurse or allocate without end costs at
    most that long and that much, and ends in :class:`ExtractionError`.
    """
    limit = EXTRACT_SECONDS if seconds is None else seconds
    command = [sys.executable, "-m", "protocoder.evidence._worker", media_type, str(int(limit) + 1)]
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    try:
        result = subprocess.run(command, input=data, capture_output=True, timeout=limit, env=env,
                                check=False)
    except subprocess.TimeoutExpired:
        raise ExtractionError(f"text extraction took longer than {limit:g} s; the file is too large or "
                              "malformed") from None
    except OSError as exc:
        raise ExtractionError(f"cannot start text extraction ({exc.strerror or exc})") from None
    if result.returncode != 0 or not result.stdout:
        if result.returncode < 0 or b"MemoryError" in result.stderr:
            raise ExtractionError("text extraction ran out of the time or memory it may use; the file is too "
                                  "large or malformed")
        last = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ExtractionError(f"text extraction failed ({last[0][:200]})")
    return read_result(result.stdout)


def write_result(extracted: Extracted, stream: BinaryIO) -> None:
    """Write ``extracted`` as the child hands it to its parent: the sidecar's JSON
    (:meth:`~.structure.Extracted.to_json`), read back a slice at a time."""
    stream.write(extracted.to_json({}).encode())


def read_result(output: bytes) -> Extracted:
    """The child's output (see :func:`write_result`, or ``{"error": ...}``) as :class:`Extracted`."""
    try:
        payload = Extracted.load_json(output)
        if "error" in payload:
            raise ExtractionError(str(payload["error"]))
        return Extracted.from_dict(payload)
    except (ValueError, TypeError, AttributeError):
        raise ExtractionError("text extraction returned no usable result") from None
