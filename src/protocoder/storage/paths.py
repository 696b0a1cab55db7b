"""Where each part of a review workspace lives, and finding or opening one.

A workspace is a folder::

    protocoder.yaml                          title, rubric id, protocol order
    rubric/<rubric-id>.yaml                  fields, codes, guidance, decision questions
    references.bib                           the bibliography
    protocols/<id>/protocol.yaml             a protocol and its pinned sources
    protocols/<id>/codes/<reviewer>.yaml     one reviewer's cells and notes for it
    protocols/<id>/consensus.yaml            adjudications of its cells
    templates/                               optional overrides of the built-in templates
    output/                                  rendered tables
    releases/, corrections.yaml              frozen releases and the corrections ledger
    .protocoder/                             locks and caches; never committed

:class:`Paths` only computes where things are; nothing here reads a file's content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import Problem, Rejected, UsageError, display_path
from .files import link_refusal

SETTINGS_FILE = "protocoder.yaml"
PROTOCOL_FILE = "protocol.yaml"
CODES_DIR = "codes"
CONSENSUS_FILE = "consensus.yaml"


@dataclass(frozen=True)
class Paths:
    """Where each part of a workspace lives."""

    root: Path

    @property
    def settings(self) -> Path:
        return self.root / SETTINGS_FILE

    @property
    def rubric_dir(self) -> Path:
        return self.root / "rubric"

    @property
    def protocols_dir(self) -> Path:
        return self.root / "protocols"

    @property
    def bibliography(self) -> Path:
        return self.root / "references.bib"

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @property
    def output_dir(self) -> Path:
        return self.root / "output"

    @property
    def state_dir(self) -> Path:
        """Locks and caches; never committed."""
        return self.root / ".protocoder"

    def protocol_dir(self, protocol_id: str) -> Path:
        return self.protocols_dir / protocol_id

    def protocol_file(self, protocol_id: str) -> Path:
        return self.protocol_dir(protocol_id) / PROTOCOL_FILE

    def sheet_file(self, protocol_id: str, reviewer: str) -> Path:
        return self.protocol_dir(protocol_id) / CODES_DIR / f"{reviewer}.yaml"

    def consensus_file(self, protocol_id: str) -> Path:
        """Adjudications of one protocol's cells (never a reviewer's file)."""
        return self.protocol_dir(protocol_id) / CONSENSUS_FILE

    @property
    def releases_dir(self) -> Path:
        return self.root / "releases"

    @property
    def corrections(self) -> Path:
        return self.root / "corrections.yaml"

    def show(self, path: Path) -> str:
        """A path as messages show it: relative to the workspace."""
        return display_path(path, self.root)

    def leaves_workspace(self, path: Path) -> bool:
        """Whether ``path`` leads outside the workspace (through a symbolic link, or a loop of them).

        protocoder reads and writes review files only inside the workspace: a cloned review
        holding a link to ``~/.ssh`` must not make a save write there.
        """
        try:
            return not path.resolve().is_relative_to(self.root.resolve())
        except (OSError, RuntimeError):
            return True

    def state_link(self, *parts: str) -> Path | None:
        """The first of ``.protocoder`` and ``.protocoder/<parts…>`` that is a symbolic link, or None.

        protocoder sweeps and replaces files in its state folder as its own; through a link
        (even one that stays inside the workspace, say to ``protocols/x/codes``) that would
        delete or overwrite review files, so any link there is refused.
        """
        path = self.state_dir
        for part in ("", *parts):
            path = path / part if part else path
            if path.is_symlink():
                return path
        return None

    def check_state_folder(self, *parts: str) -> Path:
        """``.protocoder/<parts…>``, once sure that neither it nor a folder above it up to the
        workspace is a symbolic link (else :class:`Rejected` naming the link and the fix).

        Runs before anything is created there, so a refused command made nothing.
        """
        link = self.state_link(*parts)
        if link is not None:
            raise Rejected(state_link_message(self, link))
        return self.state_dir.joinpath(*parts)

    def own_folder_refusal(self, folder: Path) -> str | None:
        """The one line refusing ``folder`` (``output/``, ``releases/``) when it is a symbolic link:
        protocoder writes and removes files there as its own, and through a link (say into
        ``protocols/``) that would be someone else's folder. None when it is not a link."""
        if not folder.is_symlink():
            return None
        what, fix = OWN_FOLDERS[folder.name]
        return link_refusal(folder, self.show(folder), what) + (f" ({fix})" if fix else "")

    def check_own_folder(self, folder: Path) -> Path:
        """``folder`` (``output/``, ``releases/``), once sure it is not a symbolic link (else
        :class:`Rejected` with :meth:`own_folder_refusal`'s line)."""
        message = self.own_folder_refusal(folder)
        if message is not None:
            raise Rejected(message)
        return folder

    def outside_problem(self, path: Path, what: str) -> Problem:
        """The problem reported for a link that leads out of the workspace."""
        return Problem(self.show(path), 0, 0, f"{what} is a symbolic link that leads outside the workspace; "
                       "protocoder reads and writes only inside it")


OWN_FOLDERS = {"output": ("its rendered tables", "or render elsewhere with --out DIR"),
               "releases": ("its releases", "")}
"""protocoder's own folders beside ``.protocoder``: what it keeps there, and another way out than removing the link."""


def state_link_message(paths: Paths, link: Path) -> str:
    """The one line that refuses a link in ``.protocoder``: what it is, where it leads, the fix."""
    return link_refusal(link, paths.show(link))


def find_workspace(start: Path) -> Path:
    """The workspace that holds ``start``: the nearest folder, ``start`` or above, with a
    ``protocoder.yaml`` (found the way git finds its repository).

    Returns ``start`` itself when no folder above it is a workspace, so that the error a
    command then reports names the folder the user is in.
    """
    here = start.absolute()
    for folder in (here, *here.parents):
        try:
            if (folder / SETTINGS_FILE).is_file():
                return folder if folder != here else start
        except OSError:
            break
    return start


def open_workspace(root: Path) -> Paths:
    """Check that ``root`` looks like a workspace and return its paths.

    Raises :class:`UsageError` when it is not one, so a typo in ``--workspace`` gets a
    one-line answer instead of a list of missing files.
    """
    paths = Paths(root)
    if not root.is_dir():
        raise UsageError(f"workspace {root} does not exist (create one with: protocoder init {root})")
    if not paths.settings.is_file() and not paths.rubric_dir.is_dir():
        raise UsageError(f"{root} is not a protocoder workspace: it has neither {SETTINGS_FILE} nor rubric/ "
                         f"(create one with: protocoder init DIR)")
    return paths
