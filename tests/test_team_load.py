"""20 reviewers coding at once through ``protocoder serve`` on 127.0.0.1 (real websocket
sessions, real app processes): every save reaches disk and no two sessions write the same
file. Bounded: 20 sessions, 3 saves each, 300 s at most. Slow (a minute or more on two
cores): run with ``-m slow``. The latency figures are reported by benchmarks/bench_serve.py."""

from __future__ import annotations

import asyncio
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow


def test_twenty_reviewers_at_once_lose_no_save_and_write_only_their_own_files() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_serve

    result = asyncio.run(bench_serve.run_load(reviewers=20, timeout=300))
    assert result.lost == []
    assert result.foreign_writes == []
    assert len(result.latencies) == result.saves == 20 * 3
