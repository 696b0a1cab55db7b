"""``PROTOCODER_SERVE_TRACE`` (``benchmarks/bench_serve.py --trace``): a served session's app process
logs each phase of a save, with the clock the benchmark reads too, so where a save's time goes
(issue 32) is measured rather than guessed. One reviewer, a real server and websocket on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from protocoder.tui.serving.trace import TRACE_ENV, install

from conftest import REPO


def test_every_phase_of_every_save_is_timed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_serve

    trace = tmp_path / "trace.log"
    monkeypatch.setenv(TRACE_ENV, str(trace))  # the server and its sessions inherit it
    result = asyncio.run(bench_serve.run_load(reviewers=1, timeout=120))
    assert result.lost == [] and len(result.latencies) == 3
    phases = dict(bench_serve.trace_phases(trace))
    for _start, end, label in bench_serve.PHASES:
        assert len(phases[label]) == 3, (label, trace.read_text())
        # The benchmark may see the file once it is renamed into place, before the save returns.
        assert all((-1 if end == "bench-disk" else 0) <= seconds < 60 for seconds in phases[label]), label
    # The phases are consecutive: together they are the latency the benchmark measured.
    total = sum(sum(phases[label]) for _s, _e, label in bench_serve.PHASES)
    assert abs(total - sum(result.latencies)) < 0.05 * 3, (total, result.latencies)


def test_nothing_is_traced_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRACE_ENV, raising=False)
    assert install("r00") is None
