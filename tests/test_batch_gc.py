"""The batch commands run without the cyclic garbage collector and end their process without
tearing the interpreter down (see ``cli.common.batch`` and ``cli.run``). The first is only sound
while what they drop is freed by reference counting: these tests run each of them on a
generated review and count the cyclic garbage left behind. The second must lose no output."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from protocoder.storage.yamlio import load_yaml

from conftest import REPO

PROTOCOLS = 60
# Each YAML file parsed with its loader left in a reference cycle leaves about 16 objects
# (the loader, its marks and scalar nodes): ~4,000 for this review. What a command may leave
# instead is a few hundred (compiled templates, the click context).
LIMIT = 1000


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 protocols × 3 fields × 3 reviewers (241 YAML files)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    root = tmp_path_factory.mktemp("batch") / "review"
    generate(root, protocols=PROTOCOLS, reviewers=3, seed=21)
    return root


@pytest.fixture
def garbage_counted() -> Iterator[Callable[[], int]]:
    """Collect everything first; afterwards, the number of unreachable objects a collection finds."""
    gc.collect()
    yield lambda: gc.collect()


def _csv_of_new_reviewer(review: Path, target: Path) -> Path:
    lines = ["protocol,field,reviewer,code,source,basis,cites"]
    for folder in sorted((review / "protocols").iterdir())[:20]:
        for field_id in ("open_work", "reset_retention", "separate_evidence"):
            lines.append(f"{folder.name},{field_id},dora,E,Paper Sec. 2,A sentence that says so.,")
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("command", [
    ["validate"], ["render", "--format", "all", "--bootstrap", "50", "--seed", "1"], ["agree", "--bootstrap", "50"],
    ["export", "--view", "final"], ["status"], ["freeze", "--label", "v1", "--allow-unresolved", "--by", "x"],
    ["import"],
], ids=lambda command: command[0])
def test_a_batch_command_turns_the_collector_off_and_leaves_no_cyclic_garbage(
        command: list[str], review: Path, tmp_path: Path, cli: Callable[..., Any],
        garbage_counted: Callable[[], int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOCODER_SERIAL", "1")  # everything in this process, where it is counted
    workspace = review
    if command[0] in ("freeze", "import"):  # they write: a copy of their own
        import shutil

        workspace = shutil.copytree(review, tmp_path / "copy")
    args = [*command, "--workspace", workspace]
    if command[0] == "render":
        args += ["--out", tmp_path / "out"]
    if command[0] == "import":
        args.append(_csv_of_new_reviewer(workspace, tmp_path / "dora.csv"))
    result = cli(*args)
    assert result.exit_code in (0, 1), result.output  # 1: validate and status report the generated warnings
    assert not gc.isenabled()
    found = garbage_counted()
    assert found < LIMIT, f"{command[0]} left {found} objects in reference cycles"


def test_the_yaml_loader_leaves_no_cycle(review: Path, garbage_counted: Callable[[], int]) -> None:
    gc.disable()
    files = sorted(review.rglob("*.yaml"))
    for path in files:
        load_yaml(path, path.name)
    assert garbage_counted() < len(files)


def test_the_coding_app_keeps_the_collector(review: Path, cli: Callable[..., Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # ``code`` starts an app that runs for hours: it must not turn the collector off. Its app is
    # replaced by one that records the collector's state and returns at once.
    seen: list[bool] = []

    class App:
        def run(self) -> None:
            seen.append(gc.isenabled())

    import protocoder.tui.app as app_module

    monkeypatch.setattr(app_module, "make_app", lambda *args, **kwargs: App())
    cli("code", "--workspace", review, "--reviewer", "alice")
    assert seen == [True]


class _Ended(Exception):
    """Raised by the stand-in for os._exit."""


def _run_console_script(monkeypatch: pytest.MonkeyPatch, *args: str | Path) -> list[int]:
    """``cli.run`` in this process, as the console script calls it; the statuses given to os._exit."""
    from protocoder import cli
    from protocoder.cli import common

    statuses: list[int] = []

    def fake_exit(status: int) -> None:
        statuses.append(status)
        raise _Ended

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(common, "batch_ran", False)
    monkeypatch.setattr(sys, "argv", ["protocoder", *map(str, args)])
    with pytest.raises((_Ended, SystemExit)):
        cli.run()
    return statuses


def test_the_console_script_ends_a_batch_command_at_once(review: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROTOCODER_SERIAL", "1")
    assert _run_console_script(monkeypatch, "export", "--workspace", review, "--view", "final") == [0]
    assert len(capsys.readouterr().out.splitlines()) > PROTOCOLS * 3  # flushed before the end
    broken = review.parent / "broken"
    import shutil

    shutil.copytree(review, broken)
    (broken / "protocols" / "bench-00000" / "protocol.yaml").write_text("id: [\n")
    assert _run_console_script(monkeypatch, "validate", "--workspace", broken) == [1]
    assert "protocol.yaml:2:1:" in capsys.readouterr().err


def test_other_commands_end_as_python_does(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run_console_script(monkeypatch, "--version") == []


def test_a_batch_commands_output_reaches_a_pipe_whole(review: Path) -> None:
    # The real console script, its standard output a pipe: nothing is lost by ending at once.
    protocoder = Path(sys.executable).with_name("protocoder")
    env = {**os.environ, "PROTOCODER_SERIAL": "1"}
    done = subprocess.run([str(protocoder), "export", "--workspace", str(review)], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert len(rows) == 1 + PROTOCOLS * 3 * 3 and rows[-1].startswith(f"bench-{PROTOCOLS - 1:05d},")
