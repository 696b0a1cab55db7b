"""A bm25s index read back from the files ``bm25s.BM25.save`` wrote, without bm25s or numpy (moved out of
:mod:`.ranking` in round 7)."""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BM25_METHOD = "lucene"
"""bm25s's default variant; like every variant but BM25L and BM25+, it gives a passage without the
query's words nothing, which :func:`.bm25.word_scores` relies on."""


@dataclass(frozen=True)
class SavedBM25:
    """A bm25s index read back from the files ``bm25s.BM25.save`` wrote, without bm25s or numpy.

    A cached index is only queried, never rebuilt, so loading it needs neither bm25s nor the
    scipy it imports nor numpy (most of a one-shot ``protocoder find``'s start-up): its arrays
    are read into :class:`array.array` (:func:`read_npy`). It offers what the ranking reads of a
    bm25s index: ``vocab_dict`` and ``scores``.
    """

    vocab_dict: dict[str, int]
    scores: dict[str, Any]

    @classmethod
    def load(cls, folder: Path) -> SavedBM25 | None:
        """The index saved in ``folder``, or None when it is not one this code can score as bm25s
        would (another method or dtype, arrays that do not fit together): the caller rebuilds it."""
        import json

        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        arrays = [read_npy(folder / f"{name}.csc.index.npy") for name in ("data", "indices", "indptr")]
        if any(a is None for a in arrays):
            return None
        data, indices, indptr = arrays  # type: ignore[misc]
        num_docs = params.get("num_docs")
        if (params.get("method") != BM25_METHOD or params.get("dtype") != "float32" or data.typecode != "f"
                or not isinstance(num_docs, int) or not isinstance(vocab, dict) or not len(indptr)
                or len(data) != len(indices) or indptr[-1] != len(data)
                or (len(indices) and not 0 <= min(indices) <= max(indices) < num_docs)
                # bm25s adds the empty token to the vocabulary after the matrix: it may have no column
                # (a query never holds it, see .bm25.ids_by_weight).
                or not all(isinstance(i, int) and 0 <= i < len(indptr) - 1 for t, i in vocab.items() if t)):
            return None
        return cls(vocab, {"data": data, "indices": indices, "indptr": indptr, "num_docs": num_docs})


_NPY_TYPES = {"<f4": "f", "<i4": "i", "<i8": "q"}
"""The dtypes bm25s saves (float32 scores, int32 or int64 positions) and their ``array`` type codes."""


def read_npy(path: Path) -> array | None:
    """A one-dimensional ``.npy`` file of :data:`_NPY_TYPES` read into an :class:`array.array`, or None.

    The format is numpy's documented one (magic, version, a header dict, the raw little-endian
    data); reading it here spares a query numpy's import.
    """
    import ast

    raw = path.read_bytes()
    if raw[:6] != b"\x93NUMPY" or sys.byteorder != "little":
        return None
    size = 2 if raw[6] == 1 else 4
    length = int.from_bytes(raw[8:8 + size], "little")
    try:
        header = ast.literal_eval(raw[8 + size:8 + size + length].decode("latin-1"))
    except (ValueError, SyntaxError):
        return None
    code = _NPY_TYPES.get(header.get("descr")) if isinstance(header, dict) else None
    shape = header.get("shape") if code else None
    if code is None or header.get("fortran_order") or not isinstance(shape, tuple) or len(shape) != 1:
        return None
    values = array(code)
    body = raw[8 + size + length:]
    if len(body) != shape[0] * values.itemsize:
        return None
    values.frombytes(body)
    return values
