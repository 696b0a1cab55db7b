"""Promises at the edges: import changes only what the CSV says, all or nothing (also on a
full disk), and every bad input ends in one clean line with nothing changed.

The full-disk cases mount a small tmpfs (root with CAP_SYS_ADMIN); where mounting is not
permitted they are skipped, with the reason.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocoder as protocoder_package
from protocoder.storage.workspace import load_review

from conftest import REPO, copy_bundled, tree_digest

HEADER = "protocol,field,reviewer,code,source,basis,cites\n"


def python(*args: str | os.PathLike[str], stdin: str | None = None, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "protocoder", *[str(a) for a in args]], capture_output=True,
                          text=True, input=stdin, timeout=120, **kwargs)


# --------------------------------------------------------------------------- import: only what the CSV says


def test_import_without_the_cites_column_keeps_every_citation(bundled: Path, cli) -> None:
    """The issue's case: a CSV without 'cites' deleted the citations of every imported cell."""
    review = load_review(bundled)
    before = {(c.protocol, c.field): c.cites for c in review.all_cells()}
    assert sum(len(v) for v in before.values()) > 0
    rows = [f"{c.protocol},{c.field},{c.reviewer},{c.code},Changed source,Changed basis."
            for c in review.all_cells()]
    (bundled / "in.csv").write_text("protocol,field,reviewer,code,source,basis\n" + "\n".join(rows) + "\n")
    result = cli("import", "--workspace", bundled, bundled / "in.csv")
    assert result.exit_code == 0, result.stderr
    after = load_review(bundled)
    assert {(c.protocol, c.field): c.cites for c in after.all_cells()} == before
    assert all(c.basis == "Changed basis." for c in after.all_cells())


def test_an_empty_value_in_a_present_column_clears_it(bundled: Path, cli) -> None:
    (bundled / "in.csv").write_text(HEADER + "webarena,open_work,casheekar,NR,Paper Sec. 3.2,Nothing said.,\n")
    assert cli("import", "--workspace", bundled, bundled / "in.csv").exit_code == 0
    assert load_review(bundled).cells("webarena", "open_work")["casheekar"].cites == ()


def test_only_the_code_column_changes_only_codes(bundled: Path, cli) -> None:
    cell = load_review(bundled).cells("webarena", "open_work")["casheekar"]
    (bundled / "in.csv").write_text("protocol,field,reviewer,code\nwebarena,open_work,casheekar,P\n")
    assert cli("import", "--workspace", bundled, bundled / "in.csv").exit_code == 0
    after = load_review(bundled).cells("webarena", "open_work")["casheekar"]
    assert after.code == "P" and (after.source, after.basis, after.cites) == (cell.source, cell.basis, cell.cites)


def test_a_leading_apostrophe_survives_export_and_import(bundled: Path, cli) -> None:
    """The issue's case: "'--max-steps' flag" lost its apostrophe on import."""
    text = "'--max-steps' flag caps each episode."
    (bundled / "in.csv").write_text(HEADER + f"webarena,open_work,casheekar,NR,\"{text}\",Basis.,\n")
    # Written by hand (not protocoder's escape: the cell does not hold the text without it), it is kept...
    assert cli("import", "--workspace", bundled, bundled / "in.csv").exit_code == 0
    assert load_review(bundled).cells("webarena", "open_work")["casheekar"].source == text
    # ... and what protocoder exports comes back exactly.
    from dataclasses import replace

    from protocoder.storage.store import Store

    review = load_review(bundled)
    Store(review.paths).save_cell(replace(review.cells("webarena", "open_work")["casheekar"], source=text),
                                  review.rubric)
    (bundled / "out.csv").write_text(cli("export", "--workspace", bundled).stdout)
    result = cli("import", "--workspace", bundled, bundled / "out.csv")
    assert result.exit_code == 0 and "0 cells changed" in result.stdout
    assert load_review(bundled).cells("webarena", "open_work")["casheekar"].source == text


def test_import_accepts_and_ignores_a_status_column(bundled: Path, cli) -> None:
    (bundled / "in.csv").write_text("protocol,field,reviewer,code,status,source,basis\n"
                                    "webarena,open_work,alice,NR,agreed,Sec. 1,Nothing said.\n")
    result = cli("import", "--workspace", bundled, bundled / "in.csv")
    assert result.exit_code == 0, result.stderr
    assert load_review(bundled).cells("webarena", "open_work")["alice"].code == "NR"


def test_import_decides_under_the_lock_from_the_file_as_it_is_then(bundled: Path) -> None:
    """A cell changed after the CSV was checked is merged with, not overwritten from the old read."""
    from dataclasses import replace

    from protocoder.exchange import import_cells, read_cells_csv
    from protocoder.storage.store import Store

    (bundled / "in.csv").write_text("protocol,field,reviewer,code\nwebarena,open_work,casheekar,P\n")
    review = load_review(bundled)
    updates = read_cells_csv(bundled / "in.csv", review)
    cell = review.cells("webarena", "open_work")["casheekar"]
    Store(review.paths).save_cell(replace(cell, basis="Edited in the app meanwhile."), review.rubric)
    import_cells(review, updates)
    after = load_review(bundled).cells("webarena", "open_work")["casheekar"]
    assert after.code == "P" and after.basis == "Edited in the app meanwhile."


def test_an_interrupted_commit_is_completed_by_the_next_reader(bundled: Path) -> None:
    """The journal: a change killed between its renames is finished whole, never left half."""
    from protocoder.storage.commit import JOURNAL, pending
    from protocoder.storage.store import Store

    store = Store(load_review(bundled).paths)
    targets = [bundled / "protocols" / p / "codes" / "casheekar.yaml" for p in ("webarena", "osworld", "cybench")]
    with store.locked():
        transaction = store.transaction()
        for index, target in enumerate(targets):
            transaction.write(target, f"# version {index}\ncells: {{}}\n".encode())
        # Commit, but apply only the first rename, as a process killed there would.
        import protocoder.storage.commit as commit

        original = commit._apply
        calls = []

        def first_only(root, record):
            calls.append(1)
            first = {"replace": record["replace"][:1], "remove": []}
            original(root, first)
            raise KeyboardInterrupt  # stands for the kill

        commit._apply = first_only
        try:
            with pytest.raises(KeyboardInterrupt):
                transaction.commit()
        finally:
            commit._apply = original
    assert pending(bundled / ".protocoder")
    assert (bundled / ".protocoder" / JOURNAL).exists()
    review = load_review(bundled)  # a reader completes it
    assert not pending(bundled / ".protocoder")
    for index, target in enumerate(targets):
        assert target.read_text() == f"# version {index}\ncells: {{}}\n"
    assert not list(bundled.rglob(".*.tmp"))
    assert review.sheet("cybench", "casheekar") is not None


# --------------------------------------------------------------------------- protocol add / remove


def test_protocol_add_and_remove_with_a_malformed_settings_file_change_nothing(bundled: Path, cli) -> None:
    settings = bundled / "protocoder.yaml"
    settings.write_text(settings.read_text() + "order: [unclosed\n")
    before = tree_digest(bundled)
    for args in (["protocol", "add", "--id", "zeta", "--name", "Zeta"],
                 ["protocol", "remove", "webarena", "--force"]):
        result = cli(*args, "--workspace", bundled)
        assert result.exit_code == 1, result.stderr
        assert "protocoder.yaml:" in result.stderr and "Traceback" not in result.stderr
        assert tree_digest(bundled) == before, args
    assert (bundled / "protocols" / "webarena").is_dir() and not (bundled / "protocols" / "zeta").exists()


def test_protocol_add_into_a_folder_without_protocol_yaml(bundled: Path, cli) -> None:
    (bundled / "protocols" / "zeta").mkdir()
    result = cli("protocol", "add", "--workspace", bundled, "--id", "zeta", "--name", "Zeta")
    assert result.exit_code == 0, result.stderr
    again = cli("protocol", "add", "--workspace", bundled, "--id", "zeta", "--name", "Zeta")
    assert again.exit_code == 1 and "already exists (protocols/zeta/protocol.yaml)" in again.stderr


def test_protocol_remove_refuses_coded_cells_and_force_removes_them(bundled: Path, cli) -> None:
    result = cli("protocol", "remove", "--workspace", bundled, "webarena")
    assert result.exit_code == 1 and "add --force" in result.stderr
    assert cli("protocol", "remove", "--workspace", bundled, "webarena", "--force").exit_code == 0
    assert not (bundled / "protocols" / "webarena").exists()
    assert "webarena" not in (bundled / "protocoder.yaml").read_text()
    assert not [p for p in (bundled / "protocols").iterdir() if p.name.startswith(".")]
    assert cli("validate", "--workspace", bundled).exit_code == 0


# --------------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path: Path):
    """A tmpfs of 1 MiB mounted at a fresh folder (skipped where mounting is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill (needs root with CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(disk: Path, leave: int) -> None:
    """Fill the disk until only about ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    free = stats.f_bavail * stats.f_frsize
    if free > leave:
        with open(disk / "filler", "wb") as handle:
            handle.write(b"\0" * (free - leave))


def test_import_on_a_full_disk_changes_nothing_and_names_the_file(small_disk: Path, cli) -> None:
    root = copy_bundled(small_disk / "review")
    review = load_review(root)
    from protocoder.exchange import CELL_COLUMNS, to_csv

    rows = [{"protocol": c.protocol, "field": c.field, "reviewer": "dave", "code": c.code, "source": c.source,
             "basis": "Long basis. " * 300, "cites": list(c.cites)} for c in review.all_cells()]
    csv_path = small_disk / "in.csv"
    csv_path.write_text(to_csv(rows, CELL_COLUMNS))
    before = tree_digest(root)
    fill(small_disk, 40_000)  # room for a few of the ten new files, not all
    result = cli("import", "--workspace", root, csv_path)
    assert result.exit_code == 1
    assert "No space left on device; nothing was changed" in result.stderr and "dave.yaml" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(root) == before
    assert not list(root.rglob(".*.tmp")) and not list(root.rglob("dave.yaml"))
    (small_disk / "filler").unlink()
    assert cli("import", "--workspace", root, csv_path).exit_code == 0
    assert len(list(root.rglob("dave.yaml"))) == 10


def test_protocol_add_on_a_full_disk_leaves_no_empty_folder(small_disk: Path, cli) -> None:
    root = copy_bundled(small_disk / "review")
    before = tree_digest(root)
    fill(small_disk, 0)
    result = cli("protocol", "add", "--workspace", root, "--id", "zeta", "--name", "Zeta " * 200)
    assert result.exit_code == 1 and "nothing was changed" in result.stderr, result.stderr
    assert not (root / "protocols" / "zeta").exists()
    assert tree_digest(root) == before
    (small_disk / "filler").unlink()
    retry = cli("protocol", "add", "--workspace", root, "--id", "zeta", "--name", "Zeta")
    assert retry.exit_code == 0, retry.stderr


# --------------------------------------------------------------------------- tracebacks that became one line


@pytest.mark.parametrize("command", [["agree"], ["render"], ["freeze", "--label", "v1", "--by", "x"]])
def test_a_negative_seed_is_a_usage_error(bundled: Path, cli, command: list[str]) -> None:
    before = tree_digest(bundled)
    result = cli(*command, "--workspace", bundled, "--seed", "-1")
    assert result.exit_code == 2 and "-1" in result.stderr and "Traceback" not in result.stderr
    assert tree_digest(bundled) == before


def test_bib_add_refuses_devices_and_pipes_without_hanging(bundled: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = tree_digest(bundled)
    for source in ("/dev/zero", fifo):
        done = python("bib", "add", "--workspace", bundled, source)
        assert done.returncode == 1 and "not a regular file" in done.stderr and "Traceback" not in done.stderr
    endless = python("bib", "add", "--workspace", bundled, "-", stdin="x" * 3_000_000)
    assert endless.returncode == 1 and "the limit is" in endless.stderr
    assert tree_digest(bundled) == before


@pytest.mark.parametrize(("text", "line", "message"), [
    ("cells: !!omap\n- open_work: {code: NR}\n", 1, "explicit YAML tag !!omap is not allowed"),
    ("!!omap\n- cells: {}\n", 1, "explicit YAML tag !!omap is not allowed"),
    ("cells:\n  open_work: &a\n    code: NR\n  reset_retention: *a\n", 2, "anchors and aliases"),
    ("cells:\n  open_work:\n    code: NR\n    coded_at: 2026-02-30\n", 4, "'2026-02-30' is not a valid date"),
    ("cells:\n  open_work:\n    code: NR\n    coded_at: 2026-08-15T25:00:00\n", 4, "hour must be in 0..23"),
    ("cells:\n  open_work:\n    code: " + "9" * 5000 + "\n", 3, "a number of 5,000 digits is too long"),
])
@pytest.mark.parametrize("command", ["validate", "render", "status", "export", "agree"])
def test_unusual_yaml_is_reported_at_its_line(bundled: Path, cli, text: str, line: int, message: str,
                                              command: str) -> None:
    (bundled / "protocols/webarena/codes/bob.yaml").write_text(text)
    before = tree_digest(bundled)
    result = cli(command, "--workspace", bundled)
    assert result.exit_code == 1
    assert f"protocols/webarena/codes/bob.yaml:{line}:" in result.stderr and message in result.stderr
    assert "order names" not in result.stderr and "Traceback" not in result.stderr
    assert tree_digest(bundled) == before


def test_an_invalid_date_in_a_protocol_brings_no_bogus_errors(bundled: Path, cli) -> None:
    path = bundled / "protocols/webarena/protocol.yaml"
    path.write_text(path.read_text().replace("accessed: 2026-08-15", "accessed: 2026-02-30", 1))
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].startswith("protocols/webarena/protocol.yaml:")
    assert "order names" not in result.stderr and "1 error" in result.stderr


def test_a_float_id_gets_one_located_line_not_a_library_warning(bundled: Path) -> None:
    path = bundled / "protocols/webarena/protocol.yaml"
    path.write_text(path.read_text().replace("id: webarena", "id: 1e3"))
    done = python("validate", "--workspace", bundled)
    assert done.returncode == 1
    assert "protocols/webarena/protocol.yaml:" in done.stderr and "site-packages" not in done.stderr
    assert "Warning" not in done.stderr


def test_look_alike_display_names_are_warned_about(bundled: Path, cli) -> None:
    path = bundled / "protocols/webarena/protocol.yaml"
    path.write_text(path.read_text().replace("name: WebArena", "name: WorkAr\u0435na"))  # Cyrillic е
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 0, "a warning: validate prints it and exits 0"
    assert "warning: display name" in result.stderr and "looks the same" in result.stderr
    assert cli("validate", "--workspace", bundled, "--strict").exit_code == 1
    assert cli("validate", "--workspace", REPO).exit_code == 0, "τ-bench and the rest are not look-alikes"


def _pairwise_may_be_confusable(names: list[str]) -> bool:
    """The definition, pair by pair: two distinct names of one length, equal wherever the one with
    non-ASCII letters has ASCII ones."""
    return any(other != name and len(other) == len(name)
               and all(a == b for a, b in zip(name, other, strict=True) if a.isascii())
               for name in names if not name.isascii() for other in names)


@given(st.lists(st.text(alphabet="abτаé1 ", max_size=4), max_size=9))
@settings(max_examples=2000, deadline=None)
def test_the_look_alike_filter_is_the_pairwise_definition(names: list[str]) -> None:
    from protocoder.storage.names import _may_be_confusable

    assert _may_be_confusable(names) == _pairwise_may_be_confusable(names)


def test_many_non_ascii_display_names_are_checked_in_linear_time() -> None:
    """Issue 34: every name against every other of its length was quadratic (3,000 names holding a Greek
    letter: seconds of every command); keyed by their ASCII places, milliseconds."""
    from protocoder.storage.names import _may_be_confusable

    names = [f"τ-bench {i}" for i in range(3000)]
    started = time.process_time()
    assert _may_be_confusable(names) is False
    assert _may_be_confusable([*names, "t-bench 1"]) is True  # a Latin t where the others have τ
    assert time.process_time() - started < 1.0


def test_an_image_in_a_basis_is_a_link_in_both_targets() -> None:
    from markdown_it import MarkdownIt

    from protocoder.render.escape import inline_to_latex, inline_to_markdown

    text = "Logged ![screenshot](https://tracker.example/x.png) and ![](https://a.example/y.png)."
    html = MarkdownIt("commonmark").renderInline(str(inline_to_markdown(text)))
    assert "<img" not in html and html.count("<a href=") == 2
    assert '!<a href="https://tracker.example/x.png">screenshot</a>' in html
    latex = str(inline_to_latex(text))
    assert r"!\href{https://tracker.example/x.png}{screenshot}" in latex
    assert r"\href{https://a.example/y.png}{https://a.example/y.png}" in latex


def test_the_coding_app_opens_and_reports_a_tagged_file(bundled: Path) -> None:
    """The coding app hung on "Reading the workspace…" with !!omap in a reviewer's file."""
    import asyncio

    from protocoder.tui.app import make_app

    (bundled / "protocols/webarena/codes/ada.yaml").write_text("cells: !!omap\n- open_work: {code: NR}\n")

    async def run() -> tuple[bool, str, list[str]]:
        app = make_app(bundled, "ada")
        async with app.run_test() as pilot:
            await asyncio.wait_for(app.workers.wait_for_complete(), 30)
            await pilot.pause()
            loading = app.screen.query_one("#list-loading").display
            note = str(app.screen.query_one("#list-problems").render())
            return loading, note, [str(p) for p in app.session.review.problems]

    loading, note, problems = asyncio.run(run())
    assert not loading, "the list replaced the loading placeholder"
    assert "1 error(s)" in note
    assert any(p.startswith("protocols/webarena/codes/ada.yaml:1:") and "!!omap" in p for p in problems)


# --------------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_while_a_command_runs_exits_130_with_one_line(two: Path) -> None:
    """Interrupts at random moments of a real render: status 130, one line, no temporaries left."""
    rng = random.Random(20260901)
    protocoder = Path(sys.executable).with_name("protocoder")
    out = two / "out"
    # Two reviewers and many resamples: a render long enough to be interrupted in the middle,
    # at moments drawn within the time an uninterrupted one takes on this machine.
    command = [str(protocoder), "render", "--workspace", str(two), "--out", str(out), "--bootstrap", "100000"]
    started = time.monotonic()
    subprocess.run(command, capture_output=True, check=True)
    duration = time.monotonic() - started
    shutil.rmtree(out)
    outcomes = []
    for _ in range(6):
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.25, max(0.3, 0.8 * duration)))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        outcomes.append(process.returncode)
        if process.returncode == 130:
            assert err == "protocoder: interrupted\n", err
        elif process.returncode == -signal.SIGINT:
            # Python's own shutdown restores the default handler: the command had finished.
            assert err == "", err
        else:
            assert process.returncode == 0, err  # finished before the interrupt
        assert not list(two.rglob(".*.tmp"))
        shutil.rmtree(out, ignore_errors=True)
    assert 130 in outcomes, f"no interrupt landed while the render ran ({duration:.2f} s uninterrupted)"


def test_ctrl_c_during_start_up_is_one_line(bundled: Path) -> None:
    """From protocoder's first line on (Python's own start-up before it cannot be reached)."""
    protocoder = Path(sys.executable).with_name("protocoder")
    rng = random.Random(7)
    from_protocoder = 0
    for _ in range(12):
        process = subprocess.Popen([str(protocoder), "validate", "--workspace", str(bundled)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.0, 0.3))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        if "Traceback" in err:
            # Only Python's start-up and the script wrapper's first lines precede protocoder's handler:
            # no frame of the traceback may be in protocoder's own code.
            package = str(Path(protocoder_package.__file__).parent)
            frames = [line.split('"')[1] for line in err.splitlines() if line.strip().startswith('File "')]
            assert not any(frame.startswith(package) for frame in frames), err
        elif process.returncode == 130:
            from_protocoder += 1
            assert err == "protocoder: interrupted\n", err
        else:
            assert process.returncode in (0, -signal.SIGINT), (process.returncode, err)
    assert from_protocoder, "no interrupt landed in protocoder's start-up or command"
