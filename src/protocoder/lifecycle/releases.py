"""Frozen releases: the version of a review that a paper cites.

``freeze`` writes ``releases/<label>/``:

* ``release.yaml`` — label, time, who, a content hash over the rubric, protocols,
  bibliography, every reviewer's cells and the adjudications, the denominators, the cells
  left unresolved or incomplete, the head of the corrections ledger at that moment (its
  length and last hash: the anchor that makes a rolled-back ledger detectable), the hash
  of every file below, and the hash of this metadata itself;
* ``view.json`` — the final view that was rendered (the data of every table);
* ``baseline.json`` — per cell, the consensus of the reviewers' files at that moment
  (status, code, and a hash of the record). The view may differ from it (a corrected
  cell keeps its correction in the next release while the reviewers' files keep their
  codes); "changed since the release" is measured against this baseline. Releases made
  before it existed have none, and their released codes serve as the baseline;
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, Rejected
from ..model import is_slug
from ..storage.files import atomic_write_text, fsync_dir, read_capped, read_text
from ..storage.findings import Findings, Reader
from ..storage.paths import CODES_DIR, CONSENSUS_FILE, PROTOCOL_FILE, Paths
from ..storage.store import Store, now_iso
from ..storage.workspace import Review
from ..storage.yamlio import new_mapping, parse_yaml
from .digests import canonical_hash
from .view import View

RELEASE_FILE = "release.yaml"
VIEW_FILE = "view.json"
BASELINE_FILE = "baseline.json"


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
    incomplete: tuple[str, ...] = ()
    ledger: tuple[int, str] | None = None
    """The corrections ledger's head when the release was frozen: (entries, last hash)."""
    metadata_hash: str = ""

    @property
    def shown(self) -> str:
        """The release folder as messages show it."""
        return f"releases/{self.path.name}"

    def view(self) -> View:
        """The final view this release rendered (InvalidInput naming view.json when it is damaged)."""
        return View.from_dict(self._view_data)

    @cached_property
    def _view_data(self) -> dict[str, Any]:
        shown = f"{self.shown}/{VIEW_FILE}"
        data = _read_json(self.path / VIEW_FILE, shown)
        problem = view_problem(data)
        if problem:
            raise InvalidInput([Problem(shown, 0, 0, f"not the view of a release: {problem}")])
        return data

    def baseline(self) -> dict[str, dict[str, Any]] | None:
        """Per cell, the reviewers' consensus when the release was frozen; None for releases made
        before baselines were recorded (the released codes serve instead)."""
        if BASELINE_FILE not in self.files:
            return None
        return self._baseline_data

    @cached_property
    def _baseline_data(self) -> dict[str, dict[str, Any]]:
        shown = f"{self.shown}/{BASELINE_FILE}"
        data = _read_json(self.path / BASELINE_FILE, shown)
        cells = data.get("cells") if isinstance(data, dict) and set(data) == {"cells"} else None
        if not isinstance(cells, dict) or not all(
                isinstance(v, dict) and set(v) == {"status", "code", "record"} for v in cells.values()):
            raise InvalidInput([Problem(shown, 0, 0, "not the baseline of a release: expected "
                                        "{\"cells\": {cell: {status, code, record}}}")])
        return cells


def _read_json(path: Path, shown: str) -> Any:
    raw = read_capped(path, shown, 1 << 30)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidInput([Problem(shown, 0, 0, "not valid UTF-8")]) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput([Problem(shown, exc.lineno, exc.colno, f"malformed JSON: {exc.msg}")]) from None


_VIEW_KEYS = {"title": str, "rubric": dict, "protocols": list, "reviewers": list, "cells": list,
              "references": list, "cutoff": str, "agreement": (dict, type(None)), "corrections": list,
              "release": (dict, type(None)),
              # Only in releases with assisted cells (see View.assisted); older ones lack it.
              "assisted": (dict, type(None))}
_CELL_KEYS = {"protocol": str, "field": str, "status": str, "code": (str, type(None)), "source": str,
              "basis": str, "cites": list, "codes": dict}


def view_problem(data: Any) -> str | None:
    """What makes ``data`` unusable as a release's view (None when it is usable)."""
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    extra = sorted(set(data) - set(_VIEW_KEYS))
    if extra:
        return f"unexpected key {extra[0]!r}"
    for key, kind in _VIEW_KEYS.items():
        if key not in data:
            if key in ("title", "rubric", "protocols", "reviewers", "cells", "references"):
                return f"missing key {key!r}"
        elif not isinstance(data[key], kind):
            return f"{key!r} has the wrong type"
    rubric = data["rubric"]
    if not isinstance(rubric.get("fields"), list) or not isinstance(rubric.get("codes"), list):
        return "the rubric needs 'fields' and 'codes' lists"
    if not all(isinstance(f, dict) and {"id", "label", "codes"} <= set(f) for f in rubric["fields"]):
        return "each rubric field needs id, label and codes"
    if not all(isinstance(p, dict) and {"id", "name"} <= set(p) for p in data["protocols"]):
        return "each protocol needs an id and a name"
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict):
            return f"cell {index + 1} is not an object"
        for key, kind in _CELL_KEYS.items():
            if not isinstance(cell.get(key), kind):
                return f"cell {index + 1} has no valid {key!r}"
    return None


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
    """Every release of the workspace, oldest first (folders without a release.yaml are not
    releases: :func:`release_folder_problems` reports them)."""
    folder = paths.releases_dir
    if not folder.is_dir() or paths.leaves_workspace(folder):
        return []  # a link out of the workspace is reported by load_review, never read through
    releases = [read_release(path) for path in sorted(folder.iterdir())
                if path.is_dir() and not path.name.startswith(".") and (path / RELEASE_FILE).is_file()
                and not (path.is_symlink() and paths.leaves_workspace(path))]
    return sorted(releases, key=lambda r: (r.created, r.label))


def release_folder_problems(paths: Paths) -> list[Problem]:
    """Folders under releases/ that hold no release.yaml: a release whose metadata was deleted."""
    folder = paths.releases_dir
    if not folder.is_dir():
        return []
    return [Problem(f"releases/{path.name}", 0, 0, f"release folder without its {RELEASE_FILE}: the release's "
                    "metadata was deleted; restore it from version control (git checkout -- "
                    f"releases/{path.name}/{RELEASE_FILE})")
            for path in sorted(folder.iterdir())
            if path.is_dir() and not path.name.startswith(".") and not (path / RELEASE_FILE).exists()]


def latest_release(paths: Paths) -> Release | None:
    """The newest release, or None."""
    releases = list_releases(paths)
    return releases[-1] if releases else None


METADATA_KEYS = ("label", "created", "by", "content_hash", "denominators", "unresolved", "incomplete", "ledger",
                 "files", "metadata_hash")


def metadata_digest(data: Any) -> str:
    """The hash a release records of its own metadata: every key but ``metadata_hash``, as parsed."""
    plain = {key: value for key, value in data.items() if key != "metadata_hash"}
    return canonical_hash(plain)


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
                    optional=("unresolved", "incomplete", "ledger", "metadata_hash"), what="a release mapping") or {}
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
    ledger = None
    if "ledger" in top:
        raw = top["ledger"]
        if (isinstance(raw, dict) and set(raw) == {"entries", "hash"} and isinstance(raw["entries"], int)
                and not isinstance(raw["entries"], bool) and isinstance(raw["hash"], str)):
            ledger = (raw["entries"], raw["hash"])
        else:
            r.add(["ledger"], "expected the ledger head as {entries: N, hash: ...}")
    metadata_hash = r.text(top, "metadata_hash", [])
    if metadata_hash and metadata_hash != metadata_digest(top):
        r.add(["metadata_hash"], "release.yaml was modified after the release was frozen (its metadata no longer "
                                 "matches its recorded hash); restore it from version control")
    return Release(label, r.moment(top, "created", []), r.text(top, "by", []),
                   r.text(top, "content_hash", []), dict(denominators), r.text_list(top, "unresolved", []),
                   {str(k): str(v) for k, v in files.items()}, folder, tuple(findings.problems()),
                   r.text_list(top, "incomplete", []), ledger, metadata_hash)


_RELEASE_FILE_NAME = re.compile(r"^(?:(?:tables|standalone)/[a-z]+\.(?:md|tex)|view\.json|baseline\.json)$")


def release_problems(release: Release) -> list[Problem]:
    """Metadata problems, any stored file that no longer matches its recorded hash, and a view
    that cannot be read or does not match the metadata's denominators."""
    problems = list(release.problems)
    intact = True
    for name, digest in sorted(release.files.items()):
        if not _RELEASE_FILE_NAME.match(name):
            continue  # reported by read_release; never read outside the release
        path = release.path / name
        shown = f"{release.shown}/{name}"
        if not path.is_file():
            problems.append(Problem(shown, 0, 0, "file of a release is missing"))
            intact = False
        elif "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(Problem(shown, 0, 0, "file of a release was modified after the release was frozen"))
            intact = False
    if not intact or release.problems:
        return problems
    try:
        view = release.view()
        release.baseline()
    except InvalidInput as exc:
        return problems + list(exc.problems)
    counts = denominators(view)
    recorded = {key: release.denominators.get(key) for key in counts if key in release.denominators}
    if recorded != {key: counts[key] for key in recorded}:
        problems.append(Problem(f"{release.shown}/{VIEW_FILE}", 0, 0, "the view does not match the denominators "
                                f"its release.yaml records ({recorded} recorded, {dict(counts)} in the view)"))
    return problems


def denominators(view: View) -> dict[str, int]:
    """Counts a release records: protocols, fields, cells, coded, unresolved, incomplete, not coded."""
    cells = view.cells
    return {"protocols": len(view.protocols), "fields": len(view.rubric["fields"]), "cells": len(cells),
            "coded": sum(1 for c in cells if c["code"] is not None),
            "unresolved": sum(1 for c in cells if c["status"] == "unresolved"),
            "incomplete": sum(1 for c in cells if c["status"] == "incomplete"),
            "not_coded": sum(1 for c in cells if c["status"] == "not coded")}


def _cells_with(view: View, status: str) -> list[str]:
    return [f"{c['protocol']}/{c['field']}" for c in view.cells if c["status"] == status]


def _listed(cells: list[str]) -> str:
    return ", ".join(cells[:5]) + (", ..." if len(cells) > 5 else "")


ReleaseTables = Callable[[View], Mapping[str, str]]
"""Renders the view being frozen into the files a release keeps beside its metadata: name
under the release folder (``tables/summary.md``, ``standalone/matrix.tex``) → text.

The caller renders (publish passes the renderer): the renderer sits above the lifecycle,
so the lifecycle never imports it."""


def freeze(review: Review, view: View, label: str, *, by: str, tables: ReleaseTables,
           allow_unresolved: bool = False, allow_incomplete: bool = False,
           baseline: dict[str, dict[str, Any]] | None = None) -> Release:
    """Record ``view`` as release ``label``; refuse while cells are unresolved or incomplete unless allowed.

    ``tables`` renders the view, once it carries the release's label, into the release's
    tables (see :data:`ReleaseTables`); it is called only when nothing refuses the freeze.
    ``baseline`` is the reviewers' consensus per cell at this moment (see the module
    docstring). Call under the workspace lock when the view was read under it, so the
    content hash is that of the state the tables show. Returns the release as written.
    """
    from .corrections import load_corrections

    if not is_slug(label):
        raise Rejected(f"release label {label!r} is not a safe id (lowercase letters, digits, '-', '_', '.')")
    paths = review.paths
    target = paths.releases_dir / label
    if target.exists():
        raise Rejected(f"a release labelled {label!r} already exists; labels are unique")
    counts = denominators(view)
    unresolved = _cells_with(view, "unresolved")
    if unresolved and not allow_unresolved:
        raise Rejected(f"{len(unresolved)} cell{'s are' if len(unresolved) != 1 else ' is'} unresolved "
                       f"({_listed(unresolved)}): adjudicate them (protocoder adjudicate), "
                       "or freeze with --allow-unresolved to record them as unresolved")
    incomplete = _cells_with(view, "incomplete")
    if incomplete and not allow_incomplete:
        them = "them" if len(incomplete) != 1 else "it"
        raise Rejected(f"{len(incomplete)} cell{'s are' if len(incomplete) != 1 else ' is'} incomplete "
                       f"({_listed(incomplete)}): coded without what the rubric requires (protocoder validate "
                       f"lists what is missing); complete {them}, or freeze with --allow-incomplete to record "
                       f"{them} as incomplete")
    view.release = {"label": label}
    rendered = dict(tables(view))
    rendered[VIEW_FILE] = json.dumps(view.to_dict(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if baseline is not None:
        rendered[BASELINE_FILE] = json.dumps({"cells": baseline}, ensure_ascii=False, indent=0,
                                             sort_keys=True) + "\n"
    from ..storage.yamlio import Document

    if paths.leaves_workspace(paths.releases_dir):
        raise InvalidInput([paths.outside_problem(paths.releases_dir, "the releases folder")])
    paths.check_own_folder(paths.releases_dir)  # a link into protocols/ is not its folder
    with Store(paths).locked():
        if target.exists():
            raise Rejected(f"a release labelled {label!r} already exists; labels are unique")
        ledger, ledger_problems = load_corrections(paths)
        if ledger_problems:
            raise InvalidInput(ledger_problems)
        metadata = new_mapping([
            ("label", label), ("created", now_iso()), ("by", by),
            ("content_hash", content_hash(paths, rubric_path(review))),
            ("denominators", new_mapping(list(counts.items()))), ("unresolved", unresolved),
            ("incomplete", incomplete),
            ("ledger", new_mapping([("entries", len(ledger)), ("hash", ledger[-1].hash if ledger else "")])),
            ("files", new_mapping([(name, "sha256:" + hashlib.sha256(text.encode()).hexdigest())
                                   for name, text in sorted(rendered.items())])),
        ])
        # The metadata's own hash, computed over what a reader will parse back.
        metadata["metadata_hash"] = metadata_digest(parse_yaml(Document(target, metadata).dumps(), RELEASE_FILE))
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
            fsync_dir(paths.releases_dir)
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
