"""Frozen releases: the version of a review that a paper cites.

``freeze`` writes ``releases/<label>/``:

* ``release.yaml`` — label, time, who, a content hash over the rubric, protocols,
  bibliography, every reviewer's cells and the adjudications, the denominators, the cells
  left unresolved, and the hash of every rendered file;
* ``view.json`` — the final view that was rendered (the data of every table);
* ``tables/`` and ``standalone/`` — the rendered Markdown and LaTeX, as published.

A release is never modified. ``render --release`` copies its tables back out after
checking them against the recorded hashes, so they are byte for byte what was released,
whatever changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import is_slug
from ..render import render_view
from ..storage.formats import Findings, Reader
from ..storage.store import Store, now_iso
from ..storage.workspace import CODES_DIR, CONSENSUS_FILE, PROTOCOL_FILE, Paths, Review
from ..storage.yamlio import _fsync_dir, atomic_write_text, new_mapping, parse_yaml, read_capped, read_text
from .view import View

RELEASE_FILE = "release.yaml"
VIEW_FILE = "view.json"


@dataclass(frozen=True)
class Release:
    """A recorded release, as read from ``releases/<label>/release.yaml``."""

    label: str
    created: str
    by: str
    content_hash: str
    denominators: dict[str, int]
    unresolved: tuple[str, ...]
    files: dict[str, str]
    path: Path
    problems: tuple[Problem, ...] = field(default=())

    def view(self) -> View:
        """The final view this release rendered."""
        path = self.path / VIEW_FILE
        raw = read_capped(path, f"releases/{self.path.name}/{VIEW_FILE}", 1 << 30)
        return View.from_dict(json.loads(raw.decode("utf-8")))


def content_hash(paths: Paths, rubric_file: Path | None) -> str:
    """SHA-256 over every file that determines the review's content, in a fixed order."""
    files = [paths.settings, paths.bibliography]
    if rubric_file is not None:
        files.append(rubric_file)
    if paths.protocols_dir.is_dir():
        for folder in sorted(paths.protocols_dir.iterdir()):
            if not folder.is_dir() or folder.name.startswith("."):
                continue
            files += [folder / PROTOCOL_FILE, folder / CONSENSUS_FILE]
            files += sorted((folder / CODES_DIR).glob("*.yaml")) if (folder / CODES_DIR).is_dir() else []
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(f"{paths.show(path)}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return "sha256:" + digest.hexdigest()


def rubric_path(review: Review) -> Path | None:
    """The rubric file the workspace uses."""
    rubric = review.rubric
    return review.paths.rubric_dir / f"{rubric.id}.yaml" if rubric is not None else None


def list_releases(paths: Paths) -> list[Release]:
    """Every release of the workspace, oldest first."""
    folder = paths.releases_dir
    if not folder.is_dir() or paths.leaves_workspace(folder):
        return []  # a link out of the workspace is reported by load_review, never read through
    releases = [read_release(path) for path in sorted(folder.iterdir())
                if path.is_dir() and not path.name.startswith(".") and (path / RELEASE_FILE).is_file()
                and not (path.is_symlink() and paths.leaves_workspace(path))]
    return sorted(releases, key=lambda r: (r.created, r.label))


def latest_release(paths: Paths) -> Release | None:
    """The newest release, or None."""
    releases = list_releases(paths)
    return releases[-1] if releases else None


def read_release(folder: Path) -> Release:
    """Read one release's metadata (problems are kept on the object, not raised)."""
    path = folder / RELEASE_FILE
    display = f"releases/{folder.name}/{RELEASE_FILE}"
    try:
        text = read_text(path, display)
        data = parse_yaml(text, display)
    except InvalidInput as exc:
        return Release(folder.name, "", "", "", {}, (), {}, folder, tuple(exc.problems))
    findings = Findings(display, text)
    r = Reader(findings)
    top = r.mapping(data, [], required=("label", "created", "by", "content_hash", "denominators", "files"),
                    optional=("unresolved",), what="a release mapping") or {}
    files = top.get("files") if isinstance(top.get("files"), dict) else {}
    denominators = top.get("denominators") if isinstance(top.get("denominators"), dict) else {}
    label = r.text(top, "label", [])
    # The label names the output folder of render --release and the files name paths to
    # read and write: a hand-edited release.yaml must not point them outside the release.
    if label and label != folder.name:
        r.add(["label"], f"label {label!r} does not match the release's folder name {folder.name!r}")
    for name in files:
        if not _RELEASE_FILE_NAME.match(str(name)):
            r.add(["files", name], f"{name!r} is not a file a release holds", at="key")
    return Release(label, r.moment(top, "created", []), r.text(top, "by", []),
                   r.text(top, "content_hash", []), dict(denominators), r.text_list(top, "unresolved", []),
                   {str(k): str(v) for k, v in files.items()}, folder, tuple(findings.problems()))


_RELEASE_FILE_NAME = re.compile(r"^(?:(?:tables|standalone)/[a-z]+\.(?:md|tex)|view\.json)$")


def release_problems(release: Release) -> list[Problem]:
    """Metadata problems, and any stored file that no longer matches its recorded hash."""
    problems = list(release.problems)
    for name, digest in sorted(release.files.items()):
        if not _RELEASE_FILE_NAME.match(name):
            continue  # reported by read_release; never read outside the release
        path = release.path / name
        shown = f"releases/{release.path.name}/{name}"
        if not path.is_file():
            problems.append(Problem(shown, 0, 0, "file of a release is missing"))
        elif "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(Problem(shown, 0, 0, "file of a release was modified after the release was frozen"))
    return problems


def denominators(view: View) -> dict[str, int]:
    """Counts a release records: protocols, fields, cells, coded, unresolved, not coded."""
    cells = view.cells
    return {"protocols": len(view.protocols), "fields": len(view.rubric["fields"]), "cells": len(cells),
            "coded": sum(1 for c in cells if c["code"] is not None),
            "unresolved": sum(1 for c in cells if c["status"] == "unresolved"),
            "not_coded": sum(1 for c in cells if c["status"] == "not coded")}


def freeze(review: Review, view: View, label: str, *, by: str, allow_unresolved: bool = False,
           template_dirs: list[Path] | None = None) -> Release:
    """Record ``view`` as release ``label``; refuse while cells are unresolved unless allowed."""
    if not is_slug(label):
        raise Rejected(f"release label {label!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
    paths = review.paths
    target = paths.releases_dir / label
    if target.exists():
        raise Rejected(f"a release labelled {label!r} already exists; labels are unique")
    counts = denominators(view)
    unresolved = [f"{c['protocol']}/{c['field']}" for c in view.cells if c["status"] == "unresolved"]
    if unresolved and not allow_unresolved:
        raise Rejected(f"{len(unresolved)} cell{'s are' if len(unresolved) != 1 else ' is'} unresolved "
                       f"({', '.join(unresolved[:5])}{', ...' if len(unresolved) > 5 else ''}): adjudicate them, "
                       "or freeze with --allow-unresolved to record them as unresolved")
    view.release = {"label": label}
    dirs = template_dirs if template_dirs is not None else [paths.templates_dir]
    rendered = {f"tables/{name}": text for name, text in render_view(view, template_dirs=dirs).items()}
    rendered |= {f"standalone/{name}": text for name, text in
                 render_view(view, formats=("latex",), standalone=True, template_dirs=dirs).items()}
    rendered[VIEW_FILE] = json.dumps(view.to_dict(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    metadata = new_mapping([
        ("label", label), ("created", now_iso()), ("by", by),
        ("content_hash", content_hash(paths, rubric_path(review))),
        ("denominators", new_mapping(list(counts.items()))), ("unresolved", unresolved),
        ("files", new_mapping([(name, "sha256:" + hashlib.sha256(text.encode()).hexdigest())
                               for name, text in sorted(rendered.items())])),
    ])
    from ..storage.yamlio import Document

    if paths.leaves_workspace(paths.releases_dir):
        raise InvalidInput([paths.outside_problem(paths.releases_dir, "the releases folder")])
    with Store(paths).locked():
        if target.exists():
            raise Rejected(f"a release labelled {label!r} already exists; labels are unique")
        paths.releases_dir.mkdir(parents=True, exist_ok=True)
        _remove_stale_staging(paths.releases_dir)
        # Build the release in a hidden folder and rename it into place: a crash leaves
        # either no release or a complete one.
        staging = Path(tempfile.mkdtemp(prefix=f".{label}.", dir=paths.releases_dir))
        try:
            for name, text in rendered.items():
                atomic_write_text(staging / name, text)
            document = Document(staging / RELEASE_FILE, metadata)
            document.data.yaml_set_start_comment(f"Release {label} of this review. Never edit a release.")
            document.save()
            os.chmod(staging, 0o755)
            os.rename(staging, target)
            _fsync_dir(paths.releases_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return read_release(target)


_STAGING = re.compile(r"^\.[a-z0-9._-]+\.[a-z0-9_]{8}$")


def _remove_stale_staging(folder: Path) -> None:
    """Remove staging folders of freezes that were killed (call under the workspace lock:
    no other freeze can be building one)."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink() and _STAGING.match(entry.name):
            shutil.rmtree(entry, ignore_errors=True)


def release_tables(release: Release, *, formats: tuple[str, ...], standalone: bool) -> dict[str, bytes]:
    """The stored tables of a release, checked against their recorded hashes."""
    problems = release_problems(release)
    if problems:
        raise InvalidInput(problems)
    wanted = {".md"} if "md" in formats else set()
    files: dict[str, bytes] = {}
    for name in sorted(release.files):
        folder, _, base = name.partition("/")
        if folder == "tables" and base.endswith(".md") and ".md" in wanted:
            files[base] = (release.path / name).read_bytes()
        if "latex" in formats and base.endswith(".tex") and folder == ("standalone" if standalone else "tables"):
            files[base] = (release.path / name).read_bytes()
    return files


def find_release(paths: Paths, label: str) -> Release:
    """The release with this label (Rejected if none)."""
    for release in list_releases(paths):
        if release.label == label or release.path.name == label:
            return release
    known = ", ".join(r.label for r in list_releases(paths)) or "none yet"
    raise Rejected(f"no release labelled {label!r} (releases: {known})")


def describe_release(release: Release) -> dict[str, Any]:
    """Metadata of a release for status output."""
    return {"label": release.label, "created": release.created, "by": release.by,
            "content_hash": release.content_hash, **release.denominators}
