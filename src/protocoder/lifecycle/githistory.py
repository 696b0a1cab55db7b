"""``validate --history``: the append-only files never shrank in any commit.

Inside a git repository, every committed version of ``corrections.yaml`` and of each
``protocols/<id>/consensus.yaml`` is compared with the version in each parent commit (and
the working file with ``HEAD``'s):

* a commit may only append: the parent's entries must be the start of the new version;
* a merge commit (or a commit that records a ledger merge entry, as a rebase through the
  merge driver does) may interleave, but must keep every entry of each parent, in order
  (ledger entries compared by content, since a merge re-chains them).

What this finds: a checkout of an older version committed (a rollback), a merge that kept
one side (``git merge -X ours``), an entry edited or deleted in some commit, a deleted file.
What it cannot find: someone with write access who rewrites the git history itself and
recomputes every hash — signed commits or signed tags are what would catch that.

Git is run as a subprocess (three or four processes in all, whatever the history's length).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, UsageError
from ..storage.findings import Findings
from ..storage.paths import Paths
from ..storage.yamlio import parse_yaml
from .corrections import MERGE, Correction, parse_corrections


def _git(args: Sequence[str], cwd: Path, input_text: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input_text.encode() if input_text
                          is not None else None, check=False)
    if done.returncode != 0:
        raise UsageError(f"git {' '.join(args[:2])} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode("utf-8", errors="replace")


def history_rewrites(paths: Paths) -> list[Problem]:
    """Every commit (and the working copy) in which a history file lost or changed entries."""
    root = paths.root
    try:
        inside = subprocess.run(["git", "rev-parse", "--show-prefix"], cwd=root, capture_output=True, text=True,
                                check=False)
    except OSError:
        raise UsageError("validate --history needs git, which is not installed") from None
    if inside.returncode != 0:
        raise UsageError(f"validate --history: {root} is not inside a git repository")
    prefix = inside.stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode != 0:
        return []  # nothing committed yet
    top = Path(_git(["rev-parse", "--show-toplevel"], root).strip())
    names = {line.strip() for line in _git(["log", "--format=", "--name-only", "HEAD", "--",
                                            f"{prefix}corrections.yaml", f"{prefix}protocols/*/consensus.yaml"],
                                           root).splitlines() if line.strip()}
    if not names:
        return []
    commits = []
    for line in _git(["rev-list", "--parents", "HEAD"], root).splitlines():
        commit, *parents = line.split()
        commits.append((commit, parents))
    names_sorted = sorted(names)
    wanted = [(commit, name) for commit, _ in commits for name in names_sorted]
    blobs = _blob_ids(top, wanted)
    problems: list[Problem] = []
    pairs: list[tuple[str, str, str, str, bool]] = []  # name, child blob, parent blob, where, is_merge
    for commit, parents in commits:
        for name in names_sorted:
            child = blobs.get((commit, name))
            for parent in parents:
                before = blobs.get((parent, name))
                if before is None or before == child:
                    continue
                if child is None:
                    problems.append(_problem(paths, top, name, f"commit {commit[:10]} deleted it (the version of "
                                             f"{parent[:10]} had entries); restore it: git checkout {parent[:10]} -- "
                                             f"{name}"))
                    continue
                pairs.append((name, child, before, f"commit {commit[:10]}", len(parents) > 1))
    contents = _blob_texts(top, {blob for _, child, before, _, _ in pairs for blob in (child, before)})
    for name, child, before, where, merge in pairs:
        message = _lost(name, contents[before], contents[child], merge)
        if message:
            problems.append(_problem(paths, top, name, f"{where} {message}"))
    # The working copy against HEAD: a checkout of an older version not yet committed.
    for name in names_sorted:
        committed = blobs.get((commits[0][0], name))
        path = top / name
        if committed is None:
            continue
        if not path.exists():
            problems.append(_problem(paths, top, name, "the file was deleted from the working copy (HEAD has "
                                     f"entries); restore it: git checkout HEAD -- {name}"))
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        message = _lost(name, contents.get(committed) or _blob_texts(top, {committed})[committed], text, False)
        if message:
            problems.append(_problem(paths, top, name, f"the working copy {message}"))
    return problems


def _problem(paths: Paths, top: Path, name: str, message: str) -> Problem:
    return Problem(paths.show(top / name), 0, 0, message)


def _blob_ids(top: Path, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    if not wanted:
        return {}
    out = _git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], top,
               "".join(f"{commit}:{name}\n" for commit, name in wanted))
    result = {}
    for (commit, name), line in zip(wanted, out.splitlines(), strict=True):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "blob":
            result[(commit, name)] = parts[0]
    return result


def _blob_texts(top: Path, blobs: set[str]) -> dict[str, str]:
    if not blobs:
        return {}
    ordered = sorted(blobs)
    done = subprocess.run(["git", "cat-file", "--batch"], cwd=top, input="".join(f"{b}\n" for b in ordered).encode(),
                          capture_output=True, check=True)
    raw, texts, offset = done.stdout, {}, 0
    for blob in ordered:
        end = raw.index(b"\n", offset)
        size = int(raw[offset:end].split()[2])
        texts[blob] = raw[end + 1:end + 1 + size].decode("utf-8", errors="replace")
        offset = end + 1 + size + 1
    return texts


def _entries(name: str, text: str) -> tuple[list[str], list[str], int, set[str]] | str:
    """(identities, contents, merge entries, entries a merge joined into others) of a version,
    or why it cannot be read."""
    try:
        data = parse_yaml(text, name) if text.strip() else None
    except InvalidInput as exc:
        return f"is malformed ({exc.problems[0].message})"
    if Path(name).name == "corrections.yaml":
        if data is None:
            return [], [], 0, set()
        entries, problems = parse_corrections(data, Findings(name, text))
        if problems:
            return f"has a broken ledger ({problems[0].message})"
        # Compared without prev (a merge re-chains) and old (a merge re-bases onto the other side).
        contents = [json.dumps({k: v for k, v in e.content().items() if k not in ("prev", "old")}, sort_keys=True)
                    for e in entries]
        joined = {item.old for e in entries for item in e.joined}
        return [e.hash for e in entries], contents, sum(1 for e in entries if e.action == MERGE), joined
    raw: Any = (data or {}).get("adjudications") if isinstance(data, dict) else None
    items = [json.dumps(item, sort_keys=True, default=str) for item in raw] if isinstance(raw, list) else []
    return items, items, 0, set()


def _lost(name: str, before_text: str, after_text: str, merge: bool) -> str | None:
    """Why ``after`` is not an append-only successor of ``before`` (None when it is)."""
    before = _entries(name, before_text)
    after = _entries(name, after_text)
    if isinstance(after, str):
        return after
    if isinstance(before, str):
        return None  # the earlier version was broken; that commit is reported on its own
    ids_before, contents_before, merged_before, _ = before
    ids_after, contents_after, merged_after, joined = after
    if ids_after[:len(ids_before)] == ids_before:
        return None
    if merge or merged_after > merged_before:
        position = 0
        for identity, content in zip(ids_before, contents_before, strict=True):
            if identity in joined:
                continue  # said again by the other branch: the merge joined the two into one
            try:
                position = contents_after.index(content, position) + 1
            except ValueError:
                return (f"dropped or changed entries of the version before it (a merge that kept one side?): "
                        f"{len(contents_before)} entries before, {len(contents_after)} after; restore the lost "
                        "entries from the parent commit")
        return None
    lost = len(ids_before) - sum(1 for i, j in zip(ids_before, ids_after, strict=False) if i == j)
    return (f"is not an extension of the version before it: {lost} of its {len(ids_before)} entries were removed, "
            "changed or reordered (a rollback, e.g. git checkout of an older version?); restore them from the "
            "parent commit")


# --------------------------------------------------------------------------- every command: nothing lost

_ENTRY_HASH = re.compile(r"^\s*-?\s*hash:\s*['\"]?(sha256:[0-9a-f]{64})", re.MULTILINE)


def ledger_in_git(paths: Paths) -> tuple[str, bool] | None:
    """Where git keeps the ledger: its name in the repository and whether git *tracks* it; None
    outside a repository (or with git missing or refusing the folder).

    Tracking is what makes git the record, not a ``.git`` somewhere above: a workspace inside a
    dotfiles repository or a monorepo that ignores it has a ``.git`` above and no history of its
    ledger. One git process when the ledger is tracked, two when it is not.
    """
    if outside_any_repository(paths.root):
        return None  # the common case of a review that is not in git, without starting git
    try:
        done = subprocess.run(["git", "ls-files", "--full-name", "--", "corrections.yaml"], cwd=paths.root,
                              capture_output=True, text=True, check=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    name = done.stdout.split("\n")[0]  # a conflicted file is listed once per stage
    if name:
        return name, True
    try:
        prefix = _git(["rev-parse", "--show-prefix"], paths.root).strip()
    except UsageError:
        return None
    return f"{prefix}corrections.yaml", False


def outside_any_repository(root: Path) -> bool:
    """True when git surely finds no repository for ``root``: neither ``GIT_DIR`` nor ``GIT_WORK_TREE``
    is set, and no folder from ``root`` (its real path, as git sees it) up to ``/`` holds a ``.git``
    (a folder, or a worktree's file) or is itself a git folder (``HEAD``, ``objects/``, ``refs/``: a
    bare repository). Anything else (a repository, or something that might be one) is left to git.
    """
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return False
    here = Path(os.path.realpath(root))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return False
        if os.path.isfile(folder / "HEAD") and os.path.isdir(folder / "objects") and os.path.isdir(folder / "refs"):
            return False
    return True


def hashes_in_commits(paths: Paths, name: str, commits: Sequence[str]) -> set[str]:
    """The entry hashes of every version of ``name`` that the given commits hold (read as text)."""
    blobs = _blob_ids(paths.root, [(commit, name) for commit in commits])
    return {anchor for text in _blob_texts(paths.root, set(blobs.values())).values()
            for anchor in _ENTRY_HASH.findall(text)}


def commits_of(paths: Paths, *args: str) -> list[str]:
    """``git rev-list ARGS`` (empty when nothing is committed yet)."""
    try:
        return _git(["rev-list", *args], paths.root).split()
    except UsageError:
        return []


def lost_in_git(paths: Paths, corrections: Sequence[Correction], name: str) -> list[Problem]:
    """Entries some committed version of ``corrections.yaml`` (``name`` in the repository) held
    that the ledger now lacks.

    The ledger only ever grows, so every entry in any commit reachable from ``HEAD`` must
    still be in the working ledger (a merge may have re-chained it: followed through the
    merge entry's record). This finds a deleted file, a checkout of an older version, a
    merge that kept one side (``-X ours``, or a delete on one branch merged cleanly) and a
    conflict resolved by hand that dropped entries, whether or not a release saw them.
    Costs two git processes; the versions are scanned for entry hashes as text and only a
    version holding lost entries is parsed. Where git does not track the ledger, the record in
    ``.protocoder/`` stands in (see :mod:`ledgerwatch`).
    """
    # Every commit, not only those touching the file: with a path, git would follow only the
    # side of a merge that agrees with the result, and never see the side that lost entries.
    commits = commits_of(paths, "HEAD")
    if not commits:
        return []
    blobs = _blob_ids(paths.root, [(commit, name) for commit in commits])
    texts = _blob_texts(paths.root, set(blobs.values()))
    present = {entry.hash for entry in corrections}
    moved = {item.old: item.new for entry in corrections for item in (*entry.rechained, *entry.joined)}

    def kept(anchor: str) -> bool:
        current, seen = anchor, set()
        while current not in present and current in moved and current not in seen:
            seen.add(current)
            current = moved[current]
        return current in present

    lost: dict[str, str] = {}  # hash -> the newest commit holding it
    for commit in commits:
        blob = blobs.get((commit, name))
        if blob is None:
            continue
        for anchor in _ENTRY_HASH.findall(texts[blob]):
            if anchor not in lost and not kept(anchor):
                lost[anchor] = commit
    if not lost:
        return []
    return [_lost_problem(paths, name, commits, blobs, texts, lost, corrections)]


def _lost_problem(paths: Paths, name: str, commits: list[str], blobs: dict[tuple[str, str], str],
                  texts: dict[str, str], lost: dict[str, str], corrections: Sequence[Correction]) -> Problem:
    """One problem naming the lost entries and the git command that brings them back."""
    shown = paths.show(paths.corrections)
    # The newest commit that holds every lost entry (else the one that holds the most).
    holding = {commit: set(_ENTRY_HASH.findall(texts[blob])) for commit in commits
               if (blob := blobs.get((commit, name))) is not None}
    best = max(holding, key=lambda commit: (len(holding[commit] & set(lost)), -commits.index(commit)))
    text = texts[blobs[(best, name)]]
    try:
        entries, _ = parse_corrections(parse_yaml(text, name), Findings(name, text))
    except InvalidInput:
        entries = []
    described = [_describe(index, entry) for index, entry in enumerate(entries)
                 if entry.hash in lost and entry.action != MERGE]
    merges_only = not described
    if merges_only:
        described = [f"{len(lost)} merge record{'s' if len(lost) != 1 else ''}"]
    count = len(described) if not merges_only else len(lost)
    what = ", ".join(described[:8]) + (f" and {len(described) - 8} more" if len(described) > 8 else "")
    # Checking that version out restores everything only if it also holds every entry there is now.
    superset = all(entry.hash in holding[best] for entry in corrections)
    if superset:
        fix = f"restore them: git checkout {best[:12]} -- {shown}"
    else:
        fix = (f"they are in commit {best[:12]} (git show {best[:12]}:{name}), which lacks entries recorded since, "
               "so record each again with protocoder correct (or, for a merge, join the branches with the merge "
               "driver: protocoder git-setup, then merge again)")
    return Problem(shown, 0, 0, f"lost {count} entr{'y' if count == 1 else 'ies'} that the git history "
                   f"holds ({what}): a deleted file, a checkout of an older version, or a merge that kept one side; "
                   f"{fix}. To publish without them anyway: --allow-lost-corrections")


def _describe(index: int, entry: Correction) -> str:
    if entry.action:
        return f"#{index + 1} {entry.action} {entry.protocol} by {entry.by}"
    return f"#{index + 1} {entry.cell} {entry.old or '-'} -> {entry.new} by {entry.by} ({entry.reason!r})"

