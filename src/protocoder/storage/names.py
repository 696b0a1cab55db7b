"""Names that must be safe: ids that are file names, links that must not leave the
workspace, and display names a reader must be able to tell apart.

A cloned review is untrusted input: its folder and file names become paths, and its
links could lead anywhere. :func:`~.workspace.load_review` asks these checks of every name
it meets; the writers (:mod:`.store`) check again before they write.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ..errors import Problem
from ..model import Protocol, is_slug
from .findings import Findings
from .paths import SETTINGS_FILE, Paths, state_link_message


def protocol_folder_problem(shown: str, folder_id: str) -> Problem | None:
    """The error for a protocol folder whose name is not a safe id, or None."""
    if is_slug(folder_id):
        return None
    return Problem(shown, 0, 0, f"folder name {folder_id!r} is not a safe protocol id "
                   "(lowercase letters, digits, single '-', '_' or '.')")


def reviewer_file_problem(shown: str, reviewer: str) -> Problem | None:
    """The error for a reviewer file whose name (``codes/<reviewer>.yaml``) is not a safe id, or None."""
    if is_slug(reviewer):
        return None
    return Problem(shown, 0, 0, f"reviewer name {reviewer!r} is not a safe id")


def outside_links(paths: Paths) -> list[Problem]:
    """Links among the workspace's own files and folders that lead outside it.

    protocols/ is checked entry by entry where it is read; these are the rest: each is
    reported here and never read or written through (the writers check again).
    """
    problems = []
    parts = [(paths.settings, SETTINGS_FILE), (paths.rubric_dir, "the rubric folder"),
             (paths.bibliography, "references.bib"), (paths.templates_dir, "the templates folder"),
             (paths.output_dir, "the output folder"), (paths.releases_dir, "the releases folder"),
             (paths.state_dir, "the .protocoder folder (locks)"), (paths.corrections, "corrections.yaml")]
    for path, what in parts:
        if os.path.lexists(path) and paths.leaves_workspace(path):
            problems.append(paths.outside_problem(path, what))
    for folder, what in [(paths.rubric_dir, "this rubric file"), (paths.templates_dir, "this template"),
                         (paths.releases_dir, "this release")]:
        if folder.is_dir() and not paths.leaves_workspace(folder):
            for current, dirs, names in os.walk(folder):
                for name in sorted(dirs + names):
                    entry = Path(current, name)
                    if entry.is_symlink() and paths.leaves_workspace(entry):
                        problems.append(paths.outside_problem(entry, what))
                if folder != paths.templates_dir:
                    break  # rubric files and release folders sit at the top; templates may nest
    return problems


def own_folder_links(paths: Paths) -> list[Problem]:
    """Links that stay inside the workspace where protocoder keeps folders of its own:
    ``.protocoder`` or any folder in it, ``output/``, ``releases/``. Every command that writes
    there refuses them; ``validate`` reports them with the same line (the links that leave the
    workspace are :func:`outside_links`')."""
    problems = []
    for folder in (paths.state_dir, paths.output_dir, paths.releases_dir):
        if folder.is_symlink() and not paths.leaves_workspace(folder):
            message = state_link_message(paths, folder) if folder == paths.state_dir else \
                paths.own_folder_refusal(folder)
            problems.append(Problem(paths.show(folder), 0, 0, message or ""))
    if paths.state_dir.is_dir() and not paths.state_dir.is_symlink():
        for current, folders, _ in os.walk(paths.state_dir):  # links are listed, never entered
            for name in sorted(folders):
                entry = Path(current, name)
                if entry.is_symlink():
                    problems.append(Problem(paths.show(entry), 0, 0, state_link_message(paths, entry)))
    return problems


def check_display_names(protocols: Iterable[Protocol], protocol_findings: dict[str, Findings]) -> None:
    """Warn about protocols whose display names a reader cannot tell apart in a table: the
    same after Unicode normalisation and case folding, or after folding look-alike letters
    (a Cyrillic е for a Latin e) with the Unicode confusables data."""
    protocols = [p for p in protocols if p.name.strip()]
    folded = [_plain_fold(protocol.name) for protocol in protocols]
    groups: dict[str, list[Protocol]] = defaultdict(list)
    for protocol, name in zip(protocols, folded, strict=True):
        groups[name].append(protocol)
    if _may_be_confusable(folded):
        groups = defaultdict(list)
        for protocol in protocols:
            groups[_skeleton(protocol.name)].append(protocol)
    for group in groups.values():
        for protocol in group[1:] if len(group) > 1 else ():
            others = ", ".join(f"{p.id!r} ({p.name})" for p in group if p is not protocol)
            protocol_findings[protocol.id].add(["name"], f"display name {protocol.name!r} looks the same as that of "
                                               f"protocol {others} in the tables; make them distinct",
                                               severity="warning")


def _plain_fold(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", " ".join(name.split())).casefold()


def _may_be_confusable(names: list[str], limit: int = 5_000_000) -> bool:
    """Whether two names could be look-alikes: of equal length, and equal wherever the one
    with non-ASCII letters has ASCII ones. Cheap, so that the confusables data (0.2 s to
    load) is only read when it may matter."""
    unusual = [name for name in names if not name.isascii()]
    if not unusual:
        return False
    by_length: dict[int, list[str]] = defaultdict(list)
    for name in names:
        by_length[len(name)].append(name)
    if sum(len(by_length[len(name)]) for name in unusual) > limit:
        return True
    # Name by name against every other of its length was quadratic (a 1,000-protocol review whose
    # names all hold a Greek letter: 11 ms a command, 100 times that at 10,000). Instead, the names of
    # a length are keyed by their letters at the ASCII places of a non-ASCII name, once per pattern of
    # such places (most names share one): a key held by another name is a pair.
    patterns: dict[tuple[int, tuple[int, ...]], list[str]] = defaultdict(list)
    for name in unusual:
        patterns[len(name), tuple(i for i, char in enumerate(name) if char.isascii())].append(name)
    for (length, places), holders in patterns.items():
        keyed: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for other in by_length[length]:
            keyed[tuple(other[i] for i in places)].add(other)
        if any(keyed[tuple(name[i] for i in places)] - {name} for name in holders):
            return True
    return False


def _skeleton(name: str) -> str:
    from confusable_homoglyphs import confusables

    folded = []
    for char in _plain_fold(name):
        if not char.isascii():
            found = confusables.is_confusable(char, preferred_aliases=["latin", "common"])
            ascii_like = [g["c"] for item in found or () for g in item["homoglyphs"] if g["c"].isascii()]
            char = ascii_like[0].casefold() if ascii_like else char
        folded.append(char)
    return "".join(folded)
