"""Writes stay in bounds: render's manifest, --out limits, and links that leave the workspace.

protocoder deletes or overwrites only files it made (``storage/outputs.py``); ``--out`` never
points into the folders protocoder keeps; every workspace path (output/, releases/,
.protocoder/, templates/, rubric/, references.bib, corrections.yaml) that is a link leading
outside the workspace is reported by ``validate`` and never read or written through.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from protocoder.storage.outputs import MANIFEST, read_manifest

from conftest import REPO, tree_digest


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_render_out_leaves_a_users_own_files_alone(bundled: Path, cli, tmp_path: Path) -> None:
    """The issue's case: render --out ~/paper deleted the user's corrections.tex and agreement.md."""
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "corrections.tex").write_text("my own corrections\n")
    (paper / "agreement.md").write_text("my own notes\n")
    result = cli("render", "--workspace", bundled, "--out", paper)
    assert result.exit_code == 0, result.stderr
    assert (paper / "corrections.tex").read_text() == "my own corrections\n"
    assert (paper / "agreement.md").read_text() == "my own notes\n"
    assert "agreement.md: warning: left in place" in result.stderr
    assert set(read_manifest(paper)["files"]) == {"summary.md", "matrix.md", "ledger.md", "methods.md",
                                                   "summary.tex", "matrix.tex", "ledger.tex", "report.html"}


def test_render_refuses_to_overwrite_a_file_it_did_not_write(bundled: Path, cli, tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "summary.md").write_text("my summary\n")
    before = files_in(paper)
    result = cli("render", "--workspace", bundled, "--out", paper)
    assert result.exit_code == 1
    assert "summary.md: protocoder did not write this file" in result.stderr and "--force" in result.stderr
    assert "Traceback" not in result.stderr
    assert files_in(paper) == before, "nothing written"
    # The command the message names works.
    forced = cli("render", "--workspace", bundled, "--out", paper, "--force")
    assert forced.exit_code == 0, forced.stderr
    assert (paper / "summary.md").read_text() != "my summary\n"
    # ... and the file is protocoder's from then on: a plain render overwrites it.
    assert cli("render", "--workspace", bundled, "--out", paper).exit_code == 0


def test_a_file_edited_after_render_is_not_overwritten(bundled: Path, cli) -> None:
    assert cli("render", "--workspace", bundled).exit_code == 0
    ledger = bundled / "output" / "ledger.md"
    ledger.write_text(ledger.read_text() + "\nmy note\n")
    result = cli("render", "--workspace", bundled)
    assert result.exit_code == 1 and "output/ledger.md" in result.stderr
    assert ledger.read_text().endswith("my note\n")


def test_stale_tables_are_removed_only_while_unchanged(bundled: Path, cli, tmp_path: Path) -> None:
    exported = cli("export", "--workspace", bundled).stdout.replace(",casheekar,", ",alice,")
    (tmp_path / "alice.csv").write_text(exported)
    assert cli("import", "--workspace", bundled, tmp_path / "alice.csv").exit_code == 0
    assert cli("render", "--workspace", bundled, "--bootstrap", "0").exit_code == 0
    out = bundled / "output"
    assert (out / "agreement.md").exists() and (out / "agreement.tex").exists()
    (out / "agreement.tex").write_text("edited by hand\n")
    shutil.rmtree(bundled / "protocols" / "webarena" / "codes")
    for folder in (bundled / "protocols").iterdir():
        (folder / "codes" / "alice.yaml").unlink(missing_ok=True)
    result = cli("render", "--workspace", bundled, "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    assert not (out / "agreement.md").exists(), "protocoder's own stale table is removed"
    assert (out / "agreement.tex").read_text() == "edited by hand\n", "an edited one is left"
    assert "agreement.tex: warning: left in place" in result.stderr


def test_committed_output_without_a_manifest_is_adopted(bundled: Path, cli) -> None:
    """The bundled review's output/ as committed before manifests: identical files are protocoder's."""
    out = bundled / "output"
    shutil.copytree(REPO / "output", out)
    (out / MANIFEST).unlink()
    result = cli("render", "--workspace", bundled)
    assert result.exit_code == 0, result.stderr
    assert read_manifest(out) is not None
    assert files_in(out) == files_in(REPO / "output")


def test_killed_render_temporaries_are_removed(bundled: Path, cli) -> None:
    out = bundled / "output"
    out.mkdir()
    for leftover in (".summary.md.x1y2z3.tmp", f".{MANIFEST}.abcdef.tmp"):
        (out / leftover).write_text("half")
    (out / ".notes.tmp").write_text("not protocoder's")
    assert cli("render", "--workspace", bundled).exit_code == 0
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == [".notes.tmp"]


@pytest.mark.parametrize("target", ["releases/v1/tables", "protocols/webarena", "rubric", "templates",
                                    ".protocoder", "protocols"])
def test_render_out_may_not_point_into_workspace_folders(bundled: Path, cli, target: str) -> None:
    (bundled / "releases" / "v1" / "tables").mkdir(parents=True)
    before = tree_digest(bundled)
    result = cli("render", "--workspace", bundled, "--out", bundled / target)
    assert result.exit_code == 2, result.stderr
    assert "only protocoder's own commands write" in result.stderr
    assert tree_digest(bundled) == before


@pytest.mark.parametrize("target", ["protocols/webarena/codes/casheekar.yaml", "protocoder.yaml",
                                    "references.bib", "rubric/evaluation-boundary.yaml", "corrections.yaml"])
def test_export_out_may_not_overwrite_a_workspace_file(bundled: Path, cli, target: str) -> None:
    before = tree_digest(bundled)
    result = cli("export", "--workspace", bundled, "--out", bundled / target)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert tree_digest(bundled) == before


def test_export_out_through_a_link_into_protocols_is_refused(bundled: Path, cli) -> None:
    (bundled / "shortcut").symlink_to(bundled / "protocols" / "webarena" / "codes")
    before = tree_digest(bundled / "protocols")
    result = cli("export", "--workspace", bundled, "--out", bundled / "shortcut" / "casheekar.yaml")
    assert result.exit_code == 2
    assert tree_digest(bundled / "protocols") == before


# --------------------------------------------------------------------------- links leaving the workspace


def link_outside(bundled: Path, name: str, outside: Path, *, keep: bool = True) -> Path:
    """Replace workspace path ``name`` by a link to ``outside`` (holding a copy of it when it existed)."""
    path = bundled / name
    if keep and path.exists():
        if path.is_dir():
            shutil.copytree(path, outside)
            shutil.rmtree(path)
        else:
            outside.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, outside)
            path.unlink()
    elif not outside.exists():
        outside.mkdir(parents=True)
    path.symlink_to(outside)
    return outside


@pytest.mark.parametrize("name", ["output", "releases", ".protocoder", "templates", "rubric", "references.bib",
                                  "corrections.yaml"])
def test_links_leaving_the_workspace_are_reported_and_not_used(bundled: Path, cli, tmp_path: Path,
                                                               name: str) -> None:
    outside = tmp_path / "elsewhere" / name
    if name == "corrections.yaml":
        outside.parent.mkdir(parents=True)
        outside.write_text("entries: []\n")
    link_outside(bundled, name, outside)
    outside_before = tree_digest(tmp_path / "elsewhere")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    assert f"{name}: " in result.stderr and "leads outside the workspace" in result.stderr
    for command in (["render"], ["protocol", "add", "--id", "zeta", "--name", "Zeta"],
                    ["freeze", "--label", "v1", "--by", "x", "--bootstrap", "0"]):
        done = cli(*command, "--workspace", bundled)
        assert "Traceback" not in done.stderr
    assert tree_digest(tmp_path / "elsewhere") == outside_before, "nothing outside was written or deleted"
    if name == ".protocoder":
        assert not (outside / "write.lock").exists()


def test_a_link_inside_templates_cannot_copy_an_outside_file(bundled: Path, cli, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    templates = bundled / "templates"
    templates.mkdir()
    (templates / "leak.md.j2").symlink_to(secret)
    (templates / "summary.md.j2").write_text("{% include 'leak.md.j2' %}\n")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1 and "templates/leak.md.j2" in result.stderr
    cli("render", "--workspace", bundled, "--out", tmp_path / "out")
    for path in (tmp_path / "out").glob("*") if (tmp_path / "out").exists() else []:
        assert "TOP SECRET" not in path.read_text()
    # Even without validate's refusal, the loader treats such a template as absent.
    from jinja2 import Environment, TemplateNotFound

    from protocoder.storage.outputs import workspace_template_loader

    env = Environment(loader=workspace_template_loader(templates))
    with pytest.raises(TemplateNotFound):
        env.get_template("leak.md.j2")


def test_manifest_records_meta_for_later_checks(tmp_path: Path) -> None:
    from protocoder.storage.outputs import write_output_folder

    write_output_folder(tmp_path, {"a.md": "x\n"}, meta={"ledger": {"head": "sha256:0", "length": 0}})
    data = json.loads((tmp_path / MANIFEST).read_text())
    assert data["meta"] == {"ledger": {"head": "sha256:0", "length": 0}}
    assert read_manifest(tmp_path)["files"] == {"a.md": ["sha256:" + hashlib.sha256(b"x\n").hexdigest()]}
