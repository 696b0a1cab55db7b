"""A semantic signal beside BM25: static word embeddings shipped inside a wheel, never downloaded.

BM25 finds a passage only when it shares a word with the query; real documentation often says
"reuse the cached results" where the rubric says "state kept between runs". A static embedding
model maps both near each other. The model is WordLlama's ``l2_supercat`` (256 dimensions, token
embeddings taken from a large language model and trained for similarity; MIT), whose weights
(16 MB) and tokenizer ship inside the ``wordllama`` wheel: no torch, no model hub. It is loaded
from the installed package's own files with downloads disabled, so a machine without network
after ``pip install 'protocoder[semantic]'`` ranks the same as one with it.

The signal is optional: without the ``semantic`` extra (or when the package cannot be loaded),
``find`` ranks with BM25 alone, and the cache key records which was used, so an index built one
way is never read the other way. How it is weighed was chosen on the dev documents of
``benchmarks/find_real.py``.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL_ID = "wordllama-l2_supercat-256"
"""Names the model in cache keys: an index built with another model (or none) is rebuilt."""

WEIGHT_SEMANTIC = 2.0
"""The cosine similarity's weight beside BM25 normalised to the query's best passage (1.0)."""

SEMANTIC_FLOOR = 0.3
"""A passage that shares no word with the query is a candidate only when its similarity reaches this
(about the 99th percentile of passage-query similarities on the real documents)."""

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def _package_dir() -> Path | None:
    """The installed ``wordllama`` package's folder, found without importing it."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model() -> Any | None:
    """The embedding model, loaded once per process from the installed wheel; None when unavailable.

    ``disable_download=True`` and the package's own folder as the cache folder: the weights and
    the tokenizer are read from the wheel's files (``weights/``, ``tokenizers/``), and a missing
    file is an error here, never a download.
    """
    with _LOCK:
        if "model" in _STATE:
            return _STATE["model"]
        found = None
        folder = _package_dir()
        if folder is not None and (folder / "weights" / "l2_supercat_256.safetensors").is_file():
            # wordllama calls logging.basicConfig when imported: the root logger gets a handler
            # that would print every library's log lines on stderr. What it adds is taken back.
            import logging

            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            try:
                from wordllama import WordLlama

                found = WordLlama.load(config="l2_supercat", dim=256, cache_dir=folder, disable_download=True)
            except Exception:  # noqa: BLE001 - any failure to load means: rank without it
                found = None
            finally:
                for handler in list(root.handlers):
                    if handler not in handlers:
                        root.removeHandler(handler)
                root.setLevel(level)
        _STATE["model"] = found
        return found


def model_id() -> str | None:
    """:data:`MODEL_ID` when the model can be used here, else None."""
    return MODEL_ID if model() is not None else None


def embed(texts: Sequence[str]) -> Any | None:
    """Unit-length embeddings (float32, one row per text), or None without the model."""
    found = model()
    if found is None:
        return None
    import numpy as np

    if not texts:
        return np.zeros((0, 256), dtype="float32")
    vectors = np.asarray(found.embed(list(texts), norm=True), dtype="float32")
    return vectors


def query_vector(parts: Sequence[str]) -> Any | None:
    """The query's embedding: the mean of its parts' unit embeddings, made unit length again."""
    import numpy as np

    parts = [p for p in parts if p.strip()]
    if not parts:
        return None
    vectors = embed(parts)
    if vectors is None:
        return None
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None
