"""The semantic signal of ``protocoder find`` (the ``semantic`` extra: WordLlama's static embeddings).

These tests run where the extra is installed (``pip install 'protocoder[semantic]'``) and are
skipped elsewhere, where ``find`` ranks with BM25 alone (the first test checks that). They load
the model with every way to the network cut (``requests`` refuses, ``HF_HUB_OFFLINE``), find a
passage by its meaning when it shares no word with the query, and check that the cache records
the model and verifies its vectors.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import Result

from protocoder.evidence.search import semantic
from protocoder.evidence.search.passages import Passage
from protocoder.evidence.search.query import Query
from protocoder.evidence.search.ranking import PassageIndex

from conftest import copy_bundled

HAVE_MODEL = semantic._package_dir() is not None


def test_without_the_extra_find_ranks_with_bm25_alone() -> None:
    if HAVE_MODEL:
        pytest.skip("the semantic extra is installed here")
    assert semantic.model() is None and semantic.model_id() is None
    index = PassageIndex.build([Passage("s", "", 0, 5, "reset the container")])
    assert index.vectors is None


needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="the semantic extra (wordllama) is not installed")


@pytest.fixture
def fresh_model(monkeypatch: pytest.MonkeyPatch):
    """The model loaded anew, with the network refused: any download attempt fails the test."""
    import requests

    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError(f"tried to reach the network: {args} {kwargs}")

    monkeypatch.setattr(requests, "get", refuse)
    monkeypatch.setattr(requests.Session, "request", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(semantic, "_STATE", {})
    yield semantic.model()
    monkeypatch.setattr(semantic, "_STATE", {})


@needs_model
def test_the_model_loads_from_the_wheel_with_no_network(fresh_model) -> None:
    assert fresh_model is not None and semantic.model_id() == semantic.MODEL_ID
    vectors = semantic.embed(["reuse the cached results from the first run", "state kept between runs"])
    assert vectors.shape == (2, 256)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-3


@needs_model
def test_loading_leaves_the_root_logger_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    monkeypatch.setattr(semantic, "_STATE", {})
    semantic.model()
    assert (list(root.handlers), root.level) == before


@needs_model
def test_a_passage_is_found_by_its_meaning(fresh_model) -> None:
    texts = ["Thanks to our sponsors and to everyone who filed an issue.",
             "Install the package with pip and set your API key.",
             "Later runs reuse the cached results from the first run instead of starting over.",
             "The leaderboard is updated every week."]
    passages = [Passage("s", "", i * 100, i * 100 + len(t), t) for i, t in enumerate(texts)]
    index = PassageIndex.build(passages)
    query = Query(((1.0, "state retained between trials"),),
                  ("What state is kept between runs on purpose", "persist retain carry over"))
    assert index.search(query, 4, use_semantic=False) == []  # no shared word: BM25 alone finds nothing
    found = index.search(query, 4)
    assert found and found[0].text.startswith("Later runs reuse the cached results")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


@needs_model
def test_the_cache_records_the_model_and_verifies_its_vectors(tmp_path: Path, cli, fresh_model) -> None:
    root = copy_bundled(tmp_path / "review")
    readme = tmp_path / "README.md"
    readme.write_text("# H\n\n## Runs\n\nLater runs reuse the cached results from the first run.\n\n"
                      "## Other\n\nEvery attempt starts in a fresh container.\n", encoding="utf-8")
    ok(cli("source", "add", "webarena", readme, "--id", "readme", "--workspace", root))
    first = ok(cli("find", "--cell", "webarena/reset_retention", "--format", "json", "--workspace", root)).stdout
    (index,) = (root / ".protocoder" / "find" / "webarena").iterdir()
    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["key"][-1] == semantic.MODEL_ID and "semantic.npy" in manifest["files"]
    # Vectors changed on disk do not verify: the index is rebuilt, the answer is the same.
    vectors = index / "semantic.npy"
    data = bytearray(vectors.read_bytes())
    data[-8:] = b"\x00" * 8
    vectors.write_bytes(bytes(data))
    again = ok(cli("find", "--cell", "webarena/reset_retention", "--format", "json", "--workspace", root)).stdout
    assert json.loads(again) == json.loads(first)
