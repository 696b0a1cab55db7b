"""The second core: forked children give the same results as the serial path, or none at all.

Each check that needs a real fork is skipped (and reported as skipped) where
:func:`fork_is_useful` says no: not Linux, one usable core, or other threads running.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from protocoder import background
from protocoder.background import Pending, fork_is_useful, in_background, map_in_halves
from protocoder.publish import render_workspace
from protocoder.storage.workspace import load_review

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")

needs_fork = pytest.mark.skipif(not fork_is_useful(), reason="forking is not used here "
                                "(not Linux, one core, or threads running)")


def real_core_free(test: Callable[..., None]) -> Callable[..., None]:
    """Marks a test of :func:`core_free` itself: it sees the real function."""
    test.real_core_free = True  # type: ignore[attr-defined]
    return test


@pytest.fixture(autouse=True)
def idle_core(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks of the forked path run as on an idle machine, whatever else the machine runs."""
    if not getattr(request.function, "real_core_free", False):
        monkeypatch.setattr(background, "core_free", lambda: True)


def _loadavg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "loadavg"
    path.write_text(text)
    monkeypatch.setattr(background, "LOADAVG", str(path))


@real_core_free
def test_a_core_is_free_while_fewer_tasks_are_ready_than_usable_cores(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    _loadavg(tmp_path, monkeypatch, "0.10 0.20 0.30 1/120 4242\n")  # this process alone
    assert background.core_free()
    _loadavg(tmp_path, monkeypatch, "1.90 1.70 1.50 2/120 4242\n")  # another one on the second core
    assert not background.core_free()
    _loadavg(tmp_path, monkeypatch, "7.00 7.00 7.00 9/300 4242\n")
    assert not background.core_free()
    _loadavg(tmp_path, monkeypatch, "garbled")  # unreadable: assumed free, as before
    assert background.core_free()
    monkeypatch.setattr(background, "LOADAVG", str(tmp_path / "missing"))
    assert background.core_free()


@real_core_free
@needs_fork
def test_no_fork_while_the_other_cores_are_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _count_forks(monkeypatch)
    _loadavg(tmp_path, monkeypatch, f"2.00 2.00 2.00 {len(os.sched_getaffinity(0))}/120 4242\n")
    parent = os.getpid()
    assert map_in_halves(lambda item: os.getpid(), list(range(1000)), min_items=10) == [parent] * 1000
    with in_background(os.getpid) as pending:
        assert pending.result() == parent
    assert forks == []
    _loadavg(tmp_path, monkeypatch, "0.00 0.00 0.00 1/120 4242\n")
    assert parent not in map_in_halves(lambda item: os.getpid(), list(range(1000)), min_items=10)[500:]
    assert len(forks) == 1


@needs_fork
def test_half_the_items_are_computed_in_another_process() -> None:
    parent = os.getpid()
    results = map_in_halves(lambda item: (item * item, os.getpid()), list(range(1000)), min_items=10)
    assert [value for value, _ in results] == [i * i for i in range(1000)]
    pids = [pid for _, pid in results]
    assert pids[:500] == [parent] * 500
    assert len(set(pids[500:])) == 1 and pids[500] != parent


def test_small_inputs_stay_in_this_process() -> None:
    parent = os.getpid()
    assert map_in_halves(lambda item: os.getpid(), list(range(10)), min_items=11) == [parent] * 10


@needs_fork
def test_a_failing_child_is_replaced_by_computing_here() -> None:
    parent = os.getpid()

    def compute() -> str:
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return "computed by the parent"

    with in_background(compute) as pending:
        assert pending.result() == "computed by the parent"


@needs_fork
def test_a_killed_child_is_replaced_by_computing_here() -> None:
    parent = os.getpid()

    def compute() -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return 42

    with in_background(compute) as pending:
        assert pending.result() == 42


@needs_fork
def test_a_result_that_cannot_be_pickled_is_computed_here() -> None:
    parent = os.getpid()
    with in_background(lambda: (lambda: os.getpid())) as pending:
        made_here = pending.result()
    assert made_here() == parent


@needs_fork
def test_leaving_the_block_early_stops_the_child() -> None:
    with pytest.raises(KeyError), in_background(lambda: threading.Event().wait(60)) as pending:
        pid = pending._pid
        assert pid > 0
        raise KeyError("something failed before the result was needed")
    with pytest.raises(ProcessLookupError):  # killed and reaped: no process, not even a zombie
        os.kill(pid, 0)


@needs_fork
def test_ctrl_c_while_waiting_for_the_child_stays_an_interrupt() -> None:
    """An interrupt during the wait unwinds as itself (it once became "Bad file descriptor":
    the pipe was closed twice on the way out), and the child is stopped."""
    from protocoder._interrupt import Interrupted

    pids: list[int] = []

    def slow() -> int:
        import time

        time.sleep(30)
        return 1

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(Interrupted), in_background(slow) as pending:
            pids.append(pending._pid)
            pending.result()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert pids[0] > 0
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # stopped and reaped


def test_no_fork_while_other_threads_run() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fork_is_useful()
        pending = Pending(os.getpid)
        assert pending._pid == 0 and pending.result() == os.getpid()
    finally:
        stop.set()
        thread.join()


def test_the_environment_can_forbid_forking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(background.SERIAL_ENV, "1")
    assert not fork_is_useful()


@pytest.fixture(scope="module")
def large_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 protocols × 3 reviewers (400 files: above the fork threshold), one sheet broken."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    root = tmp_path_factory.mktemp("large") / "review"
    generate(root, protocols=100, reviewers=3, seed=11)
    sheet = sorted((root / "protocols").glob("*/codes/*.yaml"))[-1]
    sheet.write_text(sheet.read_text(encoding="utf-8") + "\n  - : [\n", encoding="utf-8")
    return root


def _serially(monkeypatch: pytest.MonkeyPatch, action: Callable[[], T]) -> T:
    with monkeypatch.context() as patch:
        patch.setenv(background.SERIAL_ENV, "1")
        return action()


def _count_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    return forks


@needs_fork
def test_loading_on_two_cores_gives_the_same_review(large_review: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _count_forks(monkeypatch)
    parallel = load_review(large_review)
    assert forks, "the large review should have been parsed on two cores"
    serial = _serially(monkeypatch, lambda: load_review(large_review))
    assert parallel.problems == serial.problems
    assert any("codes" in p.path and p.line > 0 for p in parallel.problems)  # the broken sheet, located
    assert parallel.protocols == serial.protocols
    assert parallel.sheets == serial.sheets
    assert parallel.adjudications == serial.adjudications


@needs_fork
def test_rendering_on_two_cores_gives_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "review"
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    generate(root, protocols=100, reviewers=3, seed=12)
    forks = _count_forks(monkeypatch)
    parallel = render_workspace(root, out=tmp_path / "parallel", bootstrap=50, seed=3)
    assert len(forks) == 2, "loading and agreement should each have used a second process"
    _serially(monkeypatch, lambda: render_workspace(root, out=tmp_path / "serial", bootstrap=50, seed=3))
    names = sorted(p.name for p in parallel.written)
    assert "agreement.md" in names
    for name in names:
        assert (tmp_path / "parallel" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes(), name
