"""The find cache deletes only what it made and goes through no link (issue 30, items 1, 5 and 7).

Real symbolic links planted where a clone could bring them: ``.protocoder/find`` to a protocol's
``codes`` folder, ``.protocoder`` itself to a tracked folder, the protocol's cache folder to a
folder outside the workspace. ``find`` refuses each in one line naming the link and the command
that removes it, before creating anything, and every reviewer file stays as it was. Stale
indexes are cleaned up file by file from their manifests; a folder find did not make stays.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import Result

from protocoder.errors import Rejected
from protocoder.storage.paths import Paths
from protocoder.storage.state import check_state_folder, remove_made, state_folder

from conftest import copy_bundled, tree_digest

README = """# Harness

## Environment

Every attempt starts in a fresh container that is deleted after grading; the package cache is kept.
"""


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def refused(result: Result) -> str:
    assert result.exit_code != 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture
def workspace(tmp_path: Path, cli) -> Path:
    root = copy_bundled(tmp_path / "review")
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    ok(cli("source", "add", "webarena", tmp_path / "README.md", "--id", "readme", "--workspace", root))
    return root


def everything(root: Path) -> dict[str, str]:
    """Every file of the workspace but the state folder, with its hash."""
    return tree_digest(root)


def test_a_cache_folder_linked_to_a_protocols_codes_deletes_nothing(workspace: Path, cli) -> None:
    codes = workspace / "protocols" / "webarena" / "codes"
    assert any(codes.iterdir())
    # A first find fills the cache; then the cache folder is replaced by a link to the codes.
    ok(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    state = workspace / ".protocoder"
    for child in (state / "find").iterdir():
        for index in child.iterdir():
            remove_made(index, [p.relative_to(index).as_posix() for p in index.rglob("*") if p.is_file()])
        child.rmdir()
    (state / "find").rmdir()
    (state / "find").symlink_to(Path("..") / "protocols" / "webarena" / "codes", target_is_directory=True)
    before = everything(workspace)
    listing = sorted(p.name for p in codes.iterdir())
    line = refused(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    assert line.startswith("protocoder: error: .protocoder/find is a symbolic link")
    assert "(rm .protocoder/find)" in line
    assert everything(workspace) == before and sorted(p.name for p in codes.iterdir()) == listing


def test_a_protocol_cache_folder_linked_to_the_protocols_folder_keeps_its_codes(workspace: Path, cli) -> None:
    # Before: the stale-index sweep removed every folder beside the new index, here codes/.
    (workspace / ".protocoder" / "find").mkdir(parents=True, exist_ok=True)
    (workspace / ".protocoder" / "find" / "webarena").symlink_to(Path("..") / ".." / "protocols" / "webarena",
                                                                 target_is_directory=True)
    before = everything(workspace)
    line = refused(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    assert ".protocoder/find/webarena is a symbolic link" in line and "(rm .protocoder/find/webarena)" in line
    assert everything(workspace) == before
    assert sorted(p.name for p in (workspace / "protocols" / "webarena").iterdir()) == ["codes", "protocol.yaml"]


def test_a_state_folder_linked_to_a_tracked_folder_deletes_nothing(workspace: Path, cli) -> None:
    state = workspace / ".protocoder"
    if state.exists():
        import shutil

        shutil.rmtree(state)
    state.symlink_to(Path("protocols") / "webarena", target_is_directory=True)
    before = everything(workspace)
    listing = sorted(p.name for p in (workspace / "protocols" / "webarena").iterdir())
    line = refused(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    assert ".protocoder is a symbolic link" in line and "rm .protocoder" in line
    assert everything(workspace) == before
    assert sorted(p.name for p in (workspace / "protocols" / "webarena").iterdir()) == listing


def test_a_protocol_cache_folder_linked_outside_gets_nothing_created_there(workspace: Path, cli,
                                                                          tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".protocoder" / "find").mkdir(parents=True, exist_ok=True)
    (workspace / ".protocoder" / "find" / "webarena").symlink_to(outside, target_is_directory=True)
    line = refused(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    assert ".protocoder/find/webarena is a symbolic link" in line
    assert list(outside.iterdir()) == []


def test_stale_indexes_go_file_by_file_and_strangers_stay(workspace: Path, cli, tmp_path: Path) -> None:
    ok(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    folder = workspace / ".protocoder" / "find" / "webarena"
    (old,) = folder.iterdir()
    # Files find did not write: a note inside its old index, a folder of someone's own beside it.
    (old / "my-notes.txt").write_text("mine", encoding="utf-8")
    (folder / "keep").mkdir()
    (folder / "keep" / "data.txt").write_text("mine too", encoding="utf-8")
    (tmp_path / "README.md").write_text(README + "\nA second version.\n", encoding="utf-8")
    ok(cli("source", "update", "webarena", "readme", tmp_path / "README.md", "--workspace", workspace))
    ok(cli("find", "--cell", "webarena/open_work", "--workspace", workspace))
    names = sorted(p.name for p in folder.iterdir())
    assert "keep" in names and (folder / "keep" / "data.txt").read_text(encoding="utf-8") == "mine too"
    # The old index lost every file find wrote, and kept the one it did not.
    assert sorted(p.name for p in old.iterdir()) == ["my-notes.txt"]
    assert len([n for n in names if n not in ("keep", old.name)]) == 1


def test_state_folder_checks_every_step_before_creating(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "protocols" / "p" / "codes").mkdir(parents=True)
    paths = Paths(root)
    made = state_folder(paths, "find", "p")
    assert made == root / ".protocoder" / "find" / "p" and made.is_dir()
    (root / ".protocoder" / "other").symlink_to(root / "protocols" / "p" / "codes", target_is_directory=True)
    with pytest.raises(Rejected, match=r"^\.protocoder/other is a symbolic link .*\(rm \.protocoder/other\)"):
        state_folder(paths, "other", "deeper")
    assert not (root / "protocols" / "p" / "codes" / "deeper").exists()
    (root / ".protocoder" / "file").write_text("x", encoding="utf-8")
    with pytest.raises(Rejected, match="is a file where protocoder keeps a folder"):
        check_state_folder(paths, "file")
    with pytest.raises(ValueError):
        check_state_folder(paths, "..")


def test_remove_made_deletes_only_what_is_listed_and_follows_no_link(tmp_path: Path) -> None:
    victim = tmp_path / "codes"
    victim.mkdir()
    (victim / "data.npy").write_text("reviewer's", encoding="utf-8")
    index = tmp_path / "index"
    (index / "body").mkdir(parents=True)
    (index / "body" / "data.npy").write_text("ours", encoding="utf-8")
    (index / "passages.json").write_text("ours", encoding="utf-8")
    (index / "stranger.txt").write_text("not ours", encoding="utf-8")
    os.symlink(victim, index / "heading")
    assert not remove_made(index, ["body/data.npy", "passages.json", "heading/data.npy", "../codes/data.npy"])
    assert (victim / "data.npy").read_text(encoding="utf-8") == "reviewer's"
    assert sorted(p.name for p in index.iterdir()) == ["heading", "stranger.txt"]
    assert (index / "heading").is_symlink()
    # A folder that is itself a link is left alone.
    link = tmp_path / "linked"
    link.symlink_to(victim, target_is_directory=True)
    assert not remove_made(link, ["data.npy"])
    assert (victim / "data.npy").exists()


def test_a_workspace_where_the_cache_cannot_be_made_is_searched_without_it(workspace: Path, cli,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.rmtree(workspace / ".protocoder", ignore_errors=True)
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        if ".protocoder" in self.parts:
            raise PermissionError(13, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    result = ok(cli("find", "--cell", "webarena/reset_retention", "--workspace", workspace))
    assert "fresh container" in result.stdout
    assert not (workspace / ".protocoder").exists()
