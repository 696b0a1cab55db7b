"""A team coding at once through ``protocoder serve``: 20 reviewers, each in a real websocket
session on 127.0.0.1, sign in with their own link, open the same protocol, and then code three
of its cells, each time all at the same moment (see :class:`Together`).

Measured, per save: the time from the key that picks a code (sent on the websocket) until
the reviewer's file on disk holds that code (the app saves at once; the files are looked at
every 5 ms, see :class:`DiskWatch`). Checked: every save reached disk, each in its own
reviewer's file, and no other file of the workspace changed (no two sessions wrote the same
file). ``--trace FILE`` also times each phase of each save inside the app processes.

The workspace is a temporary copy of the bundled review; the server and its 20 app
processes run on this machine only (loopback), for a bounded count of saves and a bounded
time (``--timeout``). Also reported: the resident memory of each session's app process (its
RSS, read from /proc once every session shows the app). Run:
``python benchmarks/bench_serve.py [--reviewers 1,5,20] [--json]``.
``tests/test_team_load.py`` runs it (marked slow).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKSPACE_PARTS = ("protocoder.yaml", "rubric", "protocols", "references.bib")
PROTOCOL = "webarena"
ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")
PAGE_DOWN = "\x1b[6~"
QUIET = 0.5
"""Seconds no session may have drawn anything before the reviewers press a key together."""


class Drawn:
    """What a session's app drew since the last :meth:`clear`, without escape sequences; frames are
    cleaned as they come (once each), so the client's own CPU, which shares the cores with the
    server, stays small."""

    def __init__(self, together: Together) -> None:
        self.text = ""
        self._tail = ""
        self._together = together

    def add(self, frame: str) -> None:
        self._together.last_frame = time.monotonic()
        pending = self._tail + frame
        cut = pending.rfind("\x1b")  # a frame may end inside an escape sequence: keep that for the next
        if cut != -1 and cut >= len(pending) - 32:
            pending, self._tail = pending[:cut], pending[cut:]
        else:
            self._tail = ""
        self.text = (self.text + ANSI.sub("", pending))[-50_000:]

    def clear(self) -> None:
        self.text = ""


class Together:
    """Every reviewer presses each of their keys at the same moment: a step (a round's key, or
    the end of a round's saves) is passed once every session has arrived at it and none has
    drawn anything for :data:`QUIET` seconds, so no key is measured against another session
    still opening its protocol or paging to its next field, and each step's CPU can be read
    apart (``passed`` is called with the step's name as it is passed)."""

    def __init__(self, reviewers: int, passed: Callable[[tuple[str, int]], None]) -> None:
        self.reviewers = reviewers
        self.last_frame = time.monotonic()
        """When any session last drew (set by :class:`Drawn`)."""
        self._passed = passed
        self._arrived: dict[tuple[str, int], int] = {}
        self._go: dict[tuple[str, int], asyncio.Event] = {}

    async def wait(self, step: tuple[str, int]) -> None:
        """Wait until every reviewer has arrived at ``step`` and the sessions are quiet."""
        self._arrived[step] = self._arrived.get(step, 0) + 1
        go = self._go.setdefault(step, asyncio.Event())
        if self._arrived[step] == self.reviewers:
            deadline = time.monotonic() + 30
            while time.monotonic() - self.last_frame < QUIET and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            self._passed(step)
            go.set()
        await go.wait()


@dataclass
class LoadResult:
    """What one run measured and checked."""

    reviewers: int
    saves: int
    latencies: list[float] = field(default_factory=list)
    """Seconds from the key to the code on disk, one per save."""
    page_downs: list[float] = field(default_factory=list)
    """Seconds from a page-down to the next field on the reviewer's screen (not part of a save)."""
    sessions_ready: float = 0.0
    """Seconds until every session showed its protocol's first field and had drawn nothing for
    :data:`QUIET` s (sign-ins, app starts, protocols opened)."""
    cpu_server: float = 0.0
    """CPU seconds the server process used while the saves ran (relaying; not the start-up)."""
    cpu_apps: float = 0.0
    """CPU seconds the sessions' app processes used meanwhile."""
    cpu_keys: float = 0.0
    """CPU seconds the app processes used from each round's key until every session was quiet again
    (the keys, their saves and the frames that show them)."""
    cpu_page_downs: float = 0.0
    """CPU seconds the app processes used for the page-downs between the rounds."""
    cpu_client: float = 0.0
    """CPU seconds this benchmark's own client used meanwhile (it shares the cores)."""
    session_rss_mb: list[float] = field(default_factory=list)
    """Resident memory of each session's app process (MB), once every session shows the app."""
    wall: float = 0.0
    lost: list[str] = field(default_factory=list)
    """Saves that never reached disk."""
    foreign_writes: list[str] = field(default_factory=list)
    """Files that changed although no session should have written them."""

    def summary(self) -> dict[str, float]:
        """Median, 95th percentile and worst save latency, in milliseconds."""
        ordered = sorted(self.latencies)
        if not ordered:
            return {}
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        memory = {"rss_mb_per_session": statistics.mean(self.session_rss_mb)} if self.session_rss_mb else {}
        return {"median_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * p95, "max_ms": 1000 * ordered[-1],
                **memory}


def tree_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) used so far by ``pid`` and by its child processes (Linux /proc)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    own = children = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        seconds = (int(fields[11]) + int(fields[12])) / tick
        if stat.parent.name == str(pid):
            own += seconds
        elif fields[1] == str(pid):  # fields[1]: the parent's pid
            children += seconds
    return own, children


def children_rss_mb(pid: int) -> list[float]:
    """Resident memory (MB) of every process whose parent is ``pid`` (Linux /proc; empty elsewhere)."""
    sizes = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            sizes.append(int(fields.get("VmRSS", "0 kB").split()[0]) / 1024)
    return sizes


def make_workspace(root: Path, reviewers: int) -> dict[str, str]:
    """A copy of the bundled review with ``reviewers`` team members; their sign-in tokens by name."""
    from protocoder.team.members import Member, write_member
    from protocoder.team.secrets import issue_signin

    root.mkdir(parents=True)
    for name in WORKSPACE_PARTS:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, root / name)
    (root / ".protocoder").mkdir()
    tokens = {}
    for index in range(reviewers):
        name = f"r{index:02d}"
        write_member(root, Member(name, "reviewer"), name)
        tokens[name] = issue_signin(root, name)
    return tokens


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".protocoder" not in p.parts}


def start_server(root: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    with log.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "protocoder", "serve", "--workspace", str(root),
                                    "--port", "0"], stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        raise RuntimeError(f"protocoder serve did not start: {line!r} {log.read_text()}")
    return process, int(match.group(1))


def code_on_disk(path: Path, field_id: str) -> str | None:
    """The code of ``field_id`` in a reviewer's file, read as plain text (no YAML parse: cheap to poll)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(rf"^  {re.escape(field_id)}:\n(?:    .*\n)*?    code: (\S+)", text, re.MULTILINE)
    return match.group(1) if match else None


POLL = 0.005
"""Seconds between two looks at the watched files (a stat each; a file is read only when it changed)."""


class DiskWatch:
    """When a code reaches a reviewer's file: one task stats every watched file each :data:`POLL`
    seconds (a save replaces the file, so its inode, size or time changes) and reads only a file
    that changed. Twenty reviewers cost one cheap loop rather than twenty readers, so it can look
    often: the time a save is seen is at most 5 ms late (20 ms before, with each reviewer reading
    its own file every 20 ms, which cost more)."""

    def __init__(self) -> None:
        self._watched: dict[Path, tuple[str, str, asyncio.Future[float]]] = {}
        self._seen: dict[Path, tuple[int, int, int]] = {}

    def expect(self, path: Path, field_id: str, code: str) -> asyncio.Future[float]:
        """A future that gets the moment ``field_id`` holds ``code`` in ``path``."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._watched[path] = (field_id, code, future)
        self._seen.pop(path, None)  # read it at the next look whatever its state
        return future

    async def run(self) -> None:
        """Look at the watched files until cancelled."""
        while True:
            for path, (field_id, code, future) in list(self._watched.items()):
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                state = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
                if self._seen.get(path) == state:
                    continue
                self._seen[path] = state
                if code_on_disk(path, field_id) == code:
                    if not future.done():
                        future.set_result(time.monotonic())
                    del self._watched[path]
            await asyncio.sleep(POLL)


async def one_reviewer(port: int, root: Path, name: str, token: str, plan: list[tuple[str, str, str, str]],
                       together: Together, watch: DiskWatch, result: LoadResult) -> None:
    import aiohttp

    from protocoder.tui.serving.trace import TRACE_ENV, Tracer

    tracer = Tracer(os.environ[TRACE_ENV], name) if os.environ.get(TRACE_ENV) else None

    def trace(event: str) -> None:
        if tracer is not None:
            tracer.event(event)

    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signed = await http.post(base + "/signin", data={"token": token}, headers={"Origin": base},
                                 allow_redirects=False)
        if signed.status != 303:
            raise RuntimeError(f"{name} could not sign in: {signed.status}")
        websocket = await http.ws_connect(f"ws://127.0.0.1:{port}/ws?width=120&height=40", origin=base)
        drawn = Drawn(together)

        async def read() -> None:
            async for message in websocket:
                if message.type == aiohttp.WSMsgType.BINARY:
                    drawn.add(message.data.decode("utf-8", "replace"))

        reader = asyncio.create_task(read())

        async def shown(text: str, timeout: float = 120) -> None:
            deadline = time.monotonic() + timeout
            while text not in drawn.text:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}: {text!r} never appeared")
                await asyncio.sleep(0.05)

        await shown("WebArena")
        # Opening the protocol (about 270 ms of CPU: the whole coding screen is built) is done
        # before the measured part, as reviewers open protocols at different moments; what is
        # measured is coding, every reviewer pressing keys at the same moment.
        await websocket.send_json(["stdin", "\r"])
        await shown(plan[0][1])
        sheet = root / "protocols" / PROTOCOL / "codes" / f"{name}.yaml"
        for index, (field_id, question, key, code) in enumerate(plan):
            if index:  # the next field: only what is drawn after the key counts as showing it
                drawn.clear()
                trace("bench-pagedown")
                paged = time.monotonic()
                await websocket.send_json(["stdin", PAGE_DOWN])
                await shown(question)
                result.page_downs.append(time.monotonic() - paged)
                trace("bench-shown")
            await together.wait(("key", index))  # all 20 press this key at the same moment
            saved = watch.expect(sheet, field_id, code)
            trace("bench-sent")
            sent = time.monotonic()
            await websocket.send_json(["stdin", key])
            try:
                on_disk = await asyncio.wait_for(saved, 60)
            except TimeoutError:
                result.lost.append(f"{name}/{field_id}")
            else:
                trace("bench-disk")
                result.latencies.append(on_disk - sent)
            await together.wait(("saved", index))  # every save of this round done and drawn
        await websocket.close()
        await reader


async def run_load(reviewers: int = 20, timeout: float = 300) -> LoadResult:
    """Run the load once in a temporary workspace; return what was measured and checked."""
    from protocoder.storage.workspace import load_review

    with tempfile.TemporaryDirectory(prefix="bench-serve-") as scratch:
        root = Path(scratch) / "review"
        tokens = make_workspace(root, reviewers)
        rubric = load_review(root).require_valid()
        plan = []
        for index, fld in enumerate(rubric.fields):
            digit = 1 + index % len(fld.codes)
            plan.append((fld.id, fld.question.split()[0] + " " + fld.question.split()[1], str(digit),
                         fld.codes[digit - 1]))
        before = digests(root)
        process, port = start_server(root, Path(scratch) / "serve.err")
        result = LoadResult(reviewers, reviewers * len(plan))
        cpu_start: list[float] = []
        begin = time.monotonic()

        apps_cpu: dict[tuple[str, int], float] = {}

        def passed(step: tuple[str, int]) -> None:
            if step == ("key", 0):
                result.sessions_ready = time.monotonic() - begin
                result.session_rss_mb = children_rss_mb(process.pid)
                cpu_start.extend((*tree_cpu(process.pid), time.process_time()))
            apps_cpu[step] = tree_cpu(process.pid)[1]

        together = Together(reviewers, passed)
        try:
            watch = DiskWatch()
            watching = asyncio.create_task(watch.run())
            tasks = [asyncio.create_task(one_reviewer(port, root, name, token, plan, together, watch, result))
                     for name, token in tokens.items()]
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), timeout)
            finally:
                watching.cancel()
            server, apps = tree_cpu(process.pid)
            result.cpu_server, result.cpu_apps = server - cpu_start[0], apps - cpu_start[1]
            result.cpu_client = time.process_time() - cpu_start[2]
            rounds = range(len(plan))
            result.cpu_keys = sum(apps_cpu[("saved", i)] - apps_cpu[("key", i)] for i in rounds)
            result.cpu_page_downs = sum(apps_cpu[("key", i)] - apps_cpu[("saved", i - 1)] for i in rounds if i)
        finally:
            process.send_signal(2)
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        result.wall = time.monotonic() - begin
        after = digests(root)
        expected = {f"protocols/{PROTOCOL}/codes/{name}.yaml" for name in tokens}
        changed = {path for path in after if before.get(path) != after[path]}
        result.foreign_writes = sorted(changed - expected)
        for name in tokens:
            sheet = root / "protocols" / PROTOCOL / "codes" / f"{name}.yaml"
            for field_id, _question, _key, code in plan:
                if code_on_disk(sheet, field_id) != code and f"{name}/{field_id}" not in result.lost:
                    result.lost.append(f"{name}/{field_id} (after the sessions closed)")
        return result


PHASES = (("bench-sent", "key-in", "relay: websocket → server → app's stdin"),
          ("key-in", "key-app", "queued in the app (its loop busy)"),
          ("key-app", "queued", "handling the key until the edit is queued"),
          ("queued", "saver", "until the write queue takes it"),
          ("saver", "write-start", "until the saving thread starts"),
          ("write-start", "lock-wait", "save, before the lock"),
          ("lock-wait", "lock-got", "waiting for the workspace lock"),
          ("lock-got", "lock-free", "holding the lock (read, write, fsync)"),
          ("lock-free", "write-end", "save, after the lock"),
          ("write-end", "bench-disk", "seen on disk by the benchmark (looks every 5 ms; below 0: seen once renamed "
                                      "into place, before the save had flushed the folder and returned)"))


def trace_phases(path: Path) -> list[tuple[str, list[float]]]:
    """From a ``--trace`` file: each phase of every save (the events of :mod:`protocoder.tui.serving.trace`
    and the benchmark's own), in seconds, in the order a save goes through them."""
    events: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        stamp, session, name, *_ = line.split(" ")
        events.setdefault(session, []).append((float(stamp), name))
    drawn = "after the save: its first frame (what the reviewer sees; not part of the measure)"
    found: dict[str, list[float]] = {label: [] for _, _, label in PHASES} | {drawn: []}
    for timeline in events.values():
        timeline.sort()
        for index, (stamp, name) in enumerate(timeline):
            if name != "bench-sent":
                continue
            at, previous = {"bench-sent": stamp}, stamp
            for later, event in timeline[index + 1:]:
                if event == "bench-sent":
                    break
                at.setdefault(event, later)
                if event == "frame" and "write-end" in at and "drawn" not in at:
                    at["drawn"] = later
                    found[drawn].append(later - at["write-end"])
            for start, end, label in PHASES:
                if start in at and end in at:
                    found[label].append(at[end] - at[start])
                    previous = max(previous, at[end])
    collections = [float(line.rsplit("/", 1)[1]) for line in path.read_text().splitlines() if " gc " in line]
    found[f"garbage collections over 1 ms in all sessions, the whole run ({len(collections)})"] = \
        [ms / 1000 for ms in collections]
    return list(found.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", default="1,5,20",
                        help="reviewers at once, one run per count, e.g. 1,20 (1 gives the unloaded baseline)")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", action="store_true", help="Print the results as JSON lines (for tests).")
    parser.add_argument("--trace", type=Path, help="Log each phase of each save (in the app processes) to this file "
                        "and print where the time went.")
    args = parser.parse_args()

    for count in (int(n) for n in args.reviewers.split(",")):
        if args.trace:
            args.trace.unlink(missing_ok=True)
            os.environ["PROTOCODER_SERVE_TRACE"] = str(args.trace.resolve())  # the server's sessions inherit it
        result = asyncio.run(run_load(count, args.timeout))
        if args.json:
            print(json.dumps({**asdict(result), **result.summary()}))
            continue
        summary = result.summary()
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{result.reviewers} reviewer(s) at once through protocoder serve on 127.0.0.1, {result.saves} saves "
              f"({os.cpu_count()} cores, load average {load:.1f} after the run)")
        print(f"  all sessions signed in and showing the app after {result.sessions_ready:.1f} s")
        print(f"  save latency (key to file on disk): "
              f"median {summary.get('median_ms', 0):.0f} ms, p95 {summary.get('p95_ms', 0):.0f} ms, "
              f"max {summary.get('max_ms', 0):.0f} ms")
        if result.page_downs:
            print(f"  page-down to the next field on screen (between the saves, not measured with them): "
                  f"median {1000 * statistics.median(result.page_downs):.0f} ms, "
                  f"max {1000 * max(result.page_downs):.0f} ms")
        print(f"  CPU while the saves ran: {result.cpu_apps:.1f} s app processes "
              f"({1000 * result.cpu_apps / max(result.saves, 1):.0f} ms a save, with the page-downs between), "
              f"{result.cpu_server:.1f} s server, {result.cpu_client:.1f} s this client")
        pages = result.saves - result.reviewers
        print(f"  app CPU per key (the key, its save, the frame that shows it): "
              f"{1000 * result.cpu_keys / max(result.saves, 1):.0f} ms; "
              f"per page-down: {1000 * result.cpu_page_downs / max(pages, 1):.0f} ms")
        if result.session_rss_mb:
            print(f"  memory: {statistics.mean(result.session_rss_mb):.0f} MB resident per session's app process "
                  f"({len(result.session_rss_mb)} processes, {sum(result.session_rss_mb):.0f} MB in all)")
        print(f"  saves lost: {len(result.lost)}; files written by a session not theirs: "
              f"{len(result.foreign_writes)}; wall {result.wall:.1f} s")
        if args.trace:
            print("  where a save's time went (median / p95 / max ms over the saves):")
            for label, times in trace_phases(args.trace):
                if times:
                    ordered = sorted(times)
                    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
                    print(f"    {1000 * statistics.median(ordered):6.0f} {1000 * p95:6.0f} {1000 * ordered[-1]:6.0f}"
                          f"  {label}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    main()
