"""Folders that protocoder writes rendered files into, and where ``--out`` may point.

protocoder deletes or overwrites only files it made. Each output folder holds a manifest,
``.protocoder-outputs.json``, listing the files the last render wrote there with their
SHA-256 (and, optionally, facts a caller records with them: ``meta``). A render

* overwrites a file only if the manifest lists it with its current content, or if the file
  already holds exactly what the render would write (nothing is lost: this is how an
  ``output/`` committed without a manifest, or merged by git, is adopted);
* refuses, naming every such file and ``--force``, when any other file is in the way;
* deletes a stale table (one it wrote before and does not write now) only while it still
  holds what was written; a stale table it did not write, or that was edited, is left and
  reported.

The manifest is written before the files (listing old and new contents as protocoder's)
and again after them, so a render killed at any moment leaves a folder the next render
recognises as its own. Writers of one folder are serialised by a lock on the folder itself.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, LockedError, Problem, Rejected, UsageError, visible_text
from .files import atomic_write_bytes, read_capped

MANIFEST = ".protocoder-outputs.json"
PROTECTED = ("protocols", "releases", "rubric", "templates", ".protocoder")
"""Workspace folders no ``--out`` may point into."""
WORKSPACE_FILES = ("protocoder.yaml", "references.bib", "corrections.yaml")


@dataclass
class OutputResult:
    """What :func:`write_output_folder` did."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def read_manifest(out_dir: Path) -> dict[str, Any] | None:
    """The manifest of an output folder (``{"files": {name: [sha256, ...]}, "meta": {...}}``),
    or None when there is none or it cannot be read."""
    path = out_dir / MANIFEST
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = json.loads(read_capped(path, str(path), 16 << 20))
    except (ValueError, InvalidInput):  # an unreadable manifest is no manifest
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None
    files: dict[str, list[str]] = {}
    for name, digests in data["files"].items():
        if isinstance(digests, str):
            digests = [digests]
        if isinstance(name, str) and isinstance(digests, list) and all(isinstance(d, str) for d in digests):
            files[name] = digests
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    return {"files": files, "meta": meta}


def write_output_folder(out_dir: Path, files: Mapping[str, str | bytes], *, force: bool = False,
                        meta: Mapping[str, Any] | None = None, stale_names: Iterable[str] = (),
                        show: Any = str) -> OutputResult:
    """Write ``files`` (name → content) into ``out_dir``, touching only protocoder's own files.

    ``stale_names`` are names an earlier render may have written that this one does not:
    each is deleted if the manifest says protocoder wrote it and it is unchanged. With
    ``force``, files in the way are overwritten (and become protocoder's). Raises
    :class:`Rejected` (nothing written) when a file in the way is not protocoder's.
    """
    # Text outputs (Markdown, HTML, LaTeX, CSV, JSON) carry what reviewers typed as text: a control
    # character becomes [U+XXXX] here, so `cat output/ledger.md` never runs a terminal's codes.
    payloads = {name: visible_text(text).encode("utf-8") if isinstance(text, str) else text
                for name, text in files.items()}
    for name in payloads:
        if "/" in name or name in ("", ".", "..", MANIFEST) or name.startswith("."):
            raise ValueError(f"not an output file name: {name!r}")
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise Rejected(f"{show(out_dir)} is not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    result = OutputResult()
    with _folder_lock(out_dir):
        for name in (*payloads, MANIFEST):
            for leftover in out_dir.glob(f".{glob.escape(name)}.*.tmp"):
                with contextlib.suppress(OSError):
                    leftover.unlink()  # a killed render's temporary (we hold the folder's lock)
        manifest = read_manifest(out_dir)
        if manifest is None and (out_dir / MANIFEST).exists():
            result.warnings.append(Problem(show(out_dir / MANIFEST), 0, 0, "unreadable manifest of protocoder's "
                                           "output files; it is written anew", "warning"))
        known = manifest["files"] if manifest else {}
        new_digests = {name: _digest(payload) for name, payload in payloads.items()}
        in_the_way = []
        current: dict[str, str | None] = {}
        for name, digest in new_digests.items():
            current[name] = now = _current_digest(out_dir / name)
            if now is not None and now != digest and now not in known.get(name, ()):
                in_the_way.append(name)
        if in_the_way and not force:
            names = ", ".join(show(out_dir / name) for name in in_the_way)
            raise Rejected(f"{names}: protocoder did not write {'this file' if len(in_the_way) == 1 else 'these files'}"
                           " (or it was edited since) and will not overwrite it; move it away, or render with "
                           "--force to overwrite it")
        produced_exts = {Path(name).suffix for name in payloads}
        stale = []
        for name in sorted(set(stale_names) | set(known)):
            if name in payloads or Path(name).suffix not in produced_exts or "/" in name or name.startswith("."):
                continue
            path = out_dir / name
            now = _current_digest(path)
            if now is None:
                continue
            if now in known.get(name, ()):
                stale.append(name)
            else:
                result.warnings.append(Problem(show(path), 0, 0, "left in place: this render does not write it, and "
                                               "protocoder did not write it (or it was edited since)", "warning"))
        # Before the files: old and new contents both count as protocoder's, whenever a kill lands.
        pending = {name: list(digests) for name, digests in known.items()}
        for name, digest in new_digests.items():
            ours_now = current[name] is not None and current[name] in known.get(name, ())
            pending[name] = sorted({digest, current[name]} if ours_now else {digest})
        _write_manifest(out_dir, pending, meta if meta is not None else (manifest or {}).get("meta", {}))
        for name, payload in payloads.items():
            path = out_dir / name
            if path.is_symlink():
                _replace_link(path, payload)
            elif current[name] != new_digests[name]:
                atomic_write_bytes(path, payload)
            result.written.append(path)
        for name in stale:
            with contextlib.suppress(FileNotFoundError):
                (out_dir / name).unlink()
            result.removed.append(out_dir / name)
        final = {name: [digest] for name, digest in new_digests.items()}
        final |= {name: digests for name, digests in known.items()
                  if name not in payloads and name not in stale and Path(name).suffix not in produced_exts}
        _write_manifest(out_dir, final, meta if meta is not None else (manifest or {}).get("meta", {}))
    return result


def check_out_path(root: Path, out: Path, *, what: str = "--out") -> None:
    """Refuse an ``--out`` that points into a workspace folder protocoder keeps (protocols/,
    releases/, rubric/, templates/, .protocoder/) or onto one of its files."""
    try:
        target = out.resolve()
        base = root.resolve()
    except (OSError, RuntimeError) as exc:
        raise UsageError(f"{what} {out}: {exc}") from None
    if not target.is_relative_to(base):
        return
    relative = target.relative_to(base).parts
    if relative and (relative[0] in PROTECTED or (len(relative) == 1 and relative[0] in WORKSPACE_FILES)):
        raise UsageError(f"{what} {out} points into the workspace's {relative[0]}"
                         f"{'/' if relative[0] in PROTECTED else ''}, which only protocoder's own commands write; "
                         "choose another place (output/ or a folder outside the workspace)")


def _write_manifest(out_dir: Path, files: Mapping[str, list[str]], meta: Mapping[str, Any]) -> None:
    data = {"about": "Files protocoder wrote here, with their SHA-256; it overwrites or deletes no other file.",
            "files": {name: digests[0] if len(digests) == 1 else digests for name, digests in sorted(files.items())},
            "meta": dict(meta)}
    atomic_write_bytes(out_dir / MANIFEST, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
                                            + "\n").encode("utf-8"))


def _digest(payload: bytes) -> str:
    return "sha256:" + hashlib.sha256(payload).hexdigest()


def _current_digest(path: Path) -> str | None:
    if path.is_symlink():
        return "link"  # never protocoder's: it writes regular files
    if not path.exists():
        return None
    if not path.is_file():
        return "not a file"
    try:
        return _digest(path.read_bytes())
    except OSError:
        return "unreadable"


def _replace_link(path: Path, payload: bytes) -> None:
    # A link in the way (overwritten with --force) is replaced, never written through.
    path.unlink()
    atomic_write_bytes(path, payload)


@contextlib.contextmanager
def _folder_lock(folder: Path, timeout: float = 10.0) -> Iterator[None]:
    """An advisory lock on the folder itself (no lock file among the user's files)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        yield
        return
    import time

    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise LockedError(f"another protocoder process is writing to {folder}; try again when it "
                                      "has finished") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def workspace_template_loader(folder: Path) -> Any:
    """A Jinja2 loader for a workspace's ``templates/`` folder that never reads through a
    link leading outside the workspace (the folder's parent): such a template, or one that
    ``{% include %}`` names, is treated as absent, so an outside file cannot be copied into
    the tables. ``validate`` reports the link."""
    import jinja2

    root = folder.parent

    class _InsideLoader(jinja2.FileSystemLoader):
        def get_source(self, environment: Any, template: str) -> Any:
            # Checked before anything is opened: the file is not even read through such a link.
            candidate = Path(folder, *jinja2.loaders.split_template_path(template))
            try:
                inside = not os.path.lexists(candidate) or candidate.resolve().is_relative_to(root.resolve())
            except (OSError, RuntimeError):
                inside = False
            if not inside:
                raise jinja2.TemplateNotFound(template)
            return super().get_source(environment, template)

    return _InsideLoader(str(folder))
