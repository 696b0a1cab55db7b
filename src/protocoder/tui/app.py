"""The coding app and :func:`make_app`, the one factory the CLI and the tests both use.

The app owns the :class:`~.session.Session` (workspace, reviewer, disk view) and the
:class:`~.saving.Saver` (the write queue); screens get both from it. Flows that span
several screens (opening a protocol, adding or removing one, quitting with unsaved
edits) live here so the list, the coding screen and the command palette share them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from contextlib import suppress
from datetime import datetime
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from ..errors import InvalidInput, Problem, ProtocoderError
from ..model import Cell, Protocol
from ..storage.paths import Paths
from ..storage.workspace import reviewer_files
from .saving import Saver, SaveState
from .screens import (
    FOCUS_KEYS,
    RETRY,
    BibtexScreen,
    CodingScreen,
    ConfirmModal,
    ConflictModal,
    ErrorScreen,
    GridScreen,
    ProgressScreen,
    ProtocolFormScreen,
    ProtocolListScreen,
    ReviewerModal,
    show_keys,
)
from .screens.progress import own_progress
from .session import CellEdit, Edit, LoadFailed, Session
from .terminal_keys import read_escape_tab_as_typed
from .widgets import SaveIndicator

EXIT_WRITE_WAIT = 5.0
"""Seconds an ending app waits for a write already under way before writing what is left."""

SAVE_BEFORE_DRAW = 0.25
"""Seconds a code pick's screen update waits, at most, for its save (:meth:`CoderApp.hold_screen_for_save`)."""


class CoderApp(App[None]):
    """Walks one reviewer through the rubric, protocol by protocol, writing every change at once."""

    CSS_PATH = "app.tcss"
    TITLE = "protocoder"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("f1", "show_keys", "Keys", id="app.keys"),
        Binding("f8", "show_grid", "My cells", show=False, id="app.grid",
                tooltip="My cells as a grid (protocol × field), enter opens one"),
        Binding("f9", "show_progress", "Progress", show=False, id="app.progress",
                tooltip="My progress: cells coded, complete, drafts"),
        *FOCUS_KEYS,
    ]
    REVIEWER_PROMPT: type[ReviewerModal] = ReviewerModal
    SESSION: type[Session] = Session
    """The session class (a served team member's narrows the protocols to their assignment)."""
    """The name prompt (``protocoder serve`` shows one without command-line advice)."""

    def __init__(self, workspace: Path, reviewer: str | None, *, origin: str | None = None, given_as: str = "",
                 clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        self.workspace = workspace
        self.reviewer = reviewer
        self.origin = origin
        """Where ``reviewer`` came from (``--reviewer``, …): a name not yet in the workspace is then
        confirmed first. None: the caller vouches for the name."""
        self.given_as = given_as
        self._clock = clock or datetime.now
        self.session: Session
        """Set once the reviewer is known (see :meth:`start`)."""
        self.saver: Saver
        self.list_screen: ProtocolListScreen
        self._screen_hold: Timer | None = None

    @property
    def _background_screens(self) -> list[Screen]:
        # Textual counts the screen under the current one as visible even when the current one
        # is opaque, so each save (which updates the protocol list underneath) repainted the whole
        # coding screen: half the CPU of a key (issue 32, measured in benchmarks/bench_serve.py).
        # Transparent screens (the dialogs) still show what is under them.
        if self.screen_stack and self.screen.styles.background.a == 1:
            return []
        return super()._background_screens

    # ------------------------------------------------------------------ start-up

    def on_mount(self) -> None:
        reviewer = self.reviewer
        if reviewer is not None and self.origin is None:
            self.start(reviewer)
            return
        try:
            existing = reviewer_files(Paths(self.workspace))
        except OSError:
            existing = {}
        if reviewer is not None and reviewer in existing:
            self.start(reviewer)
            return
        # Nobody said who is coding, or the name is new here: ask, offering who is here already.
        self.push_screen(self.REVIEWER_PROMPT(existing, proposed=reviewer, origin=self.origin or "",
                                              given_as=self.given_as), self.start)

    def start(self, reviewer: str | None) -> None:
        """Open the workspace for ``reviewer``, take the session lock and load in a thread."""
        if reviewer is None:
            self.exit()
            return
        self.reviewer = reviewer
        try:
            self.session = self.SESSION(self.workspace, reviewer, clock=self._clock)
        except ProtocoderError as exc:
            self.push_screen(ErrorScreen("The workspace cannot be opened",
                                         [Problem(str(self.workspace), 0, 0, str(exc))], fatal=True,
                                         advice="Check --workspace and start again. ctrl+q quits."))
            return
        if not self.session.hold_lock():
            self.notify(f"Another protocoder session is coding as {reviewer} in this workspace: "
                        "this one is read-only.", title="Read-only", severity="warning", timeout=10)
        self.saver = Saver(self.session, resolve=self._resolve_conflict, failed=self._save_failed,
                           changed=self._save_changed, reloaded=self._sheet_reloaded)
        self.list_screen = ProtocolListScreen()
        self.push_screen(self.list_screen)
        self.load_workspace()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_workspace(self) -> None:
        """Read the workspace off the UI thread: the list appears as soon as it is ready."""
        try:
            self.session.load()
        except LoadFailed as exc:
            self.call_from_thread(self._load_failed, exc.problems)
            return
        except ProtocoderError as exc:
            self.call_from_thread(self._load_failed, [Problem(str(self.workspace), 0, 0, str(exc))])
            return
        self.call_from_thread(self.list_screen.populate)

    def _load_failed(self, problems: list[Problem]) -> None:
        def retry(result: str | None) -> None:
            if result == RETRY:
                self.load_workspace()

        self.push_screen(ErrorScreen("The workspace cannot be coded", problems, fatal=True,
                                     advice="Fix these files in an editor, then press r to retry. "
                                            "ctrl+q quits."), retry)

    # ------------------------------------------------------------------ protocols

    @property
    def coding_screen(self) -> CodingScreen | None:
        """The coding screen, when one is open."""
        return next((s for s in self.screen_stack if isinstance(s, CodingScreen)), None)

    def open_protocol(self, protocol_id: str, *, field_id: str | None = None) -> None:
        """Read a protocol's sheet from disk and show it; a malformed file opens the error screen.

        The coding screen starts at ``field_id``, else at the first field not coded.
        """
        session = self.session
        try:
            sheet = session.read_sheet(protocol_id)
        except InvalidInput as exc:
            self.list_screen.refresh_protocol(protocol_id)
            path = session.paths.show(session.paths.sheet_file(protocol_id, session.reviewer))

            def retry(result: str | None) -> None:
                if result == RETRY:
                    self.open_protocol(protocol_id, field_id=field_id)

            self.push_screen(ErrorScreen(f"Cannot open {path}", exc.problems), retry)
            return
        coding = self.coding_screen
        if coding is None:
            self.push_screen(CodingScreen(protocol_id, sheet, field_id=field_id))
        else:
            coding.show_protocol(protocol_id, sheet, field_id=field_id)
        if self.saver.pending_for(protocol_id):
            self.kick_saver()

    def add_protocol(self) -> None:
        """Open the form for a new protocol; it appears in the list once written."""
        def added(protocol: Protocol | None) -> None:
            if protocol is not None:
                self.list_screen.action_clear_filter()
                self.list_screen.reload(select=protocol.id)
                paths = self.session.paths
                self.notify(f"Added {protocol.name} ({paths.show(paths.protocol_file(protocol.id))})")

        self.push_screen(ProtocolFormScreen(None), added)

    def edit_protocol(self, protocol_id: str) -> None:
        """Open the form on an existing protocol's name, citations and sources."""
        def edited(protocol: Protocol | None) -> None:
            if protocol is not None:
                self.list_screen.reload(select=protocol.id)
                coding = self.coding_screen
                if coding is not None and coding.protocol_id == protocol.id:
                    coding.refresh_protocol()
                self.notify(f"Saved {protocol.name}")

        self.push_screen(ProtocolFormScreen(self.session.protocol(protocol_id)), edited)

    @work(exclusive=True, group="remove", exit_on_error=False)
    async def remove_protocol(self, protocol_id: str) -> None:
        """Remove a protocol after confirmation, and a second one naming the coded cells lost."""
        session = self.session
        protocol = session.protocol(protocol_id)
        if (refusal := session.removal_refusal(protocol_id)) is not None:
            self.notify(refusal, title=f"{protocol.name} is not removed", severity="error", timeout=15)
            return
        folder = session.paths.show(session.paths.protocol_dir(protocol_id))
        if not await self.push_screen_wait(ConfirmModal(
                f"Remove {protocol.name}?", f"This deletes {folder}/ with its sources and every reviewer's "
                "file in it.", yes="Remove", danger=True)):
            return
        count = session.coded_cells(protocol_id)
        if count and not await self.push_screen_wait(ConfirmModal(
                f"{count} coded cell(s) would be deleted",
                f"Reviewers have coded {count} cell(s) for {protocol.name}. Removing the protocol deletes "
                "them too. Remove it anyway?", yes=f"Delete {count} cell(s)", danger=True)):
            return
        try:
            session.remove_protocol(protocol_id)
        except ProtocoderError as exc:
            self.notify(str(exc), title="Not removed", severity="error")
            return
        for key in [key for key, edit in self.saver.pending.items() if edit.protocol == protocol_id]:
            del self.saver.pending[key]
        self.list_screen.reload()
        self.notify(f"Removed {protocol.name}")

    def add_reference(self) -> None:
        """Open the form where a BibTeX entry is pasted and appended to references.bib."""
        def added(keys: list[str] | None) -> None:
            if keys:
                self.notify(f"Added to references.bib: {', '.join(keys)}")

        self.push_screen(BibtexScreen(), added)

    def show_problems(self) -> None:
        """List every problem found when the workspace was loaded."""
        problems = self.session.workspace_problems
        self.push_screen(ErrorScreen(f"{len(problems)} problem(s) in the workspace", problems,
                                     advice="protocoder validate reports the same list. escape goes back."))

    # ------------------------------------------------------------------ saving

    def queue_edit(self, edit: Edit) -> None:
        """Queue one edit for writing and make sure the write queue runs (on the way out: see on_unmount)."""
        self.saver.put(edit)
        if self.is_running:
            self.kick_saver()

    def kick_saver(self) -> None:
        """Start writing queued edits, unless that is under way already."""
        if self.saver.claim():
            self.run_worker(self.saver.run(), group="saver", exit_on_error=False)
        self._save_changed(None)

    def hold_screen_for_save(self) -> None:
        """Draw nothing until the write queue is idle (at most :data:`SAVE_BEFORE_DRAW` s): a code pick is
        written first, then drawn once, already "saved". Drawing meanwhile took the CPU the save needed
        (issue 32: twenty served sessions on two cores). A conflict or a failure is shown at once."""
        if self._screen_hold is not None or not self.is_running:
            return
        # What App.batch_update() does, held across a timer rather than a with-block (Textual is pinned
        # to the release this was tested against; tests/tui/test_key_cost.py counts the frames).
        self._begin_batch()
        self._screen_hold = self.set_timer(SAVE_BEFORE_DRAW, self._release_screen, name="save-before-draw")

    def draw_unless_saving(self) -> None:
        """End :meth:`hold_screen_for_save` now when nothing is being written (a pick that saved nothing)."""
        if self._screen_hold is not None and not self.saver.running:
            self._release_screen()

    def _release_screen(self) -> None:
        hold, self._screen_hold = self._screen_hold, None
        if hold is None:
            return
        hold.stop()
        self._end_batch()
        self._tick_indicators()  # what the save indicators did not show while held
        if self.screen_stack:  # (none while the app ends)
            self.screen.check_idle()  # its update timer paused while held: what changed is drawn now

    def _save_changed(self, edit: Edit | None) -> None:
        saver = self.saver
        while self.session.messages:
            self.notify(self.session.messages.pop(0), timeout=8)
        if self._screen_hold is None:
            self._tick_indicators()
        elif not saver.running or saver.state in (SaveState.CONFLICT, SaveState.FAILED):
            self._release_screen()
        # else held: the indicators show the outcome once (each change of colour re-applies styles)
        if edit is not None and saver.state is SaveState.SAVED and hasattr(self, "list_screen"):
            self.list_screen.refresh_protocol(edit.protocol)  # once a save is written, not as it starts

    def _tick_indicators(self) -> None:
        for screen in self.screen_stack:
            for indicator in screen.query(SaveIndicator):
                indicator.tick += 1

    def _sheet_reloaded(self, protocol_id: str) -> None:
        coding = self.coding_screen
        if coding is not None:
            coding.adopt_disk(protocol_id)
        self._save_changed(None)
        self.list_screen.refresh_protocol(protocol_id)

    async def _resolve_conflict(self, edit: Edit, theirs: Cell | str | None) -> str:
        session = self.session
        where = session.paths.show(session.paths.sheet_file(edit.protocol, session.reviewer))
        if isinstance(edit, CellEdit) and session.rubric is not None:
            what = f"{session.protocol(edit.protocol).name} · {session.rubric.field(edit.cell.field).label}"
        else:
            what = f"the note “{edit.prompt}” of {session.protocol(edit.protocol).name}"
        return await self.push_screen_wait(ConflictModal(where, what, edit, theirs))

    async def _save_failed(self, edit: Edit, exc: Exception) -> None:
        session = self.session
        if isinstance(exc, InvalidInput):
            session.broken[edit.protocol] = list(exc.problems)
            self.list_screen.refresh_protocol(edit.protocol)
            path = session.paths.show(session.paths.sheet_file(edit.protocol, session.reviewer))
            result = await self.push_screen_wait(ErrorScreen(
                f"Cannot save to {path}", exc.problems,
                advice="The file was not changed, and your edit is kept (not written). Fix the file in an "
                       "editor, then press r to retry; escape goes back to the list."))
            if result == RETRY:
                self.call_later(self.kick_saver)
                return
            coding = self.coding_screen
            if coding is not None and coding.protocol_id == edit.protocol and self.screen is coding:
                coding.dismiss(None)
        else:
            self.notify(f"{exc}\nYour edit is kept; ctrl+s retries.", title="Not saved", severity="error",
                        timeout=10)

    # ------------------------------------------------------------------ keys, palette, quitting

    def action_show_grid(self) -> None:
        """The reviewer's own cells as a grid; enter opens the chosen cell for coding."""
        if not hasattr(self, "list_screen") or not self.list_screen.loaded or isinstance(self.screen, GridScreen):
            return

        def chosen(cell: tuple[str, str] | None) -> None:
            if cell is not None:
                self.open_protocol(cell[0], field_id=cell[1])

        self.push_screen(GridScreen(), chosen)

    def action_show_progress(self) -> None:
        """The reviewer's own progress (counted from their sheets only)."""
        if not hasattr(self, "list_screen") or not self.list_screen.loaded or isinstance(self.screen, ProgressScreen):
            return
        session = self.session
        assert session.rubric is not None
        sheets = [session.sheet(protocol.id) for protocol in session.protocols]
        self.push_screen(ProgressScreen(f"My progress · {session.reviewer}",
                                        own_progress(session.reviewer, session.rubric, sheets,
                                                     len(session.protocols))))

    def action_show_keys(self) -> None:
        """Show every key of the current screen (its bindings, then the app's)."""
        self.push_screen(show_keys(self.screen, self.BINDINGS, self.get_key_display))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" (its help panel) would sit beside ours under the same name.
        yield from (command for command in super().get_system_commands(screen) if command.title != "Keys")
        yield SystemCommand("Keys", "Show every key of this screen", self.action_show_keys)
        if not hasattr(self, "list_screen") or not self.list_screen.loaded:
            return
        writable = not self.session.read_only
        yield SystemCommand("Workspace problems", "List the problems found when loading the workspace",
                            self.show_problems)
        yield SystemCommand("My progress", "Cells coded, complete and drafts: your own (f9)",
                            self.action_show_progress)
        yield SystemCommand("My cells (grid)", "Your codes as a protocol × field grid, with incomplete and "
                            "assisted marks (f8); enter opens a cell", self.action_show_grid)
        if writable:
            yield SystemCommand("Add protocol", "Create a protocol with its pinned sources", self.add_protocol)
            yield SystemCommand("Add reference (BibTeX)", "Paste a BibTeX entry into references.bib",
                                self.add_reference)
        if isinstance(screen, ProtocolFormScreen):
            yield SystemCommand("Add source", "Add a source to this protocol", screen.action_add_source)
        if isinstance(screen, ProtocolListScreen) and screen.selected_id and writable:
            selected = screen.selected_id
            yield SystemCommand("Edit protocol", "Edit the highlighted protocol's name, citations and sources",
                                lambda: self.edit_protocol(selected))
            yield SystemCommand("Remove protocol", "Delete the highlighted protocol (asks first)",
                                lambda: self.remove_protocol(selected))
        if isinstance(screen, CodingScreen):
            yield SystemCommand("Next protocol", "Code the next protocol", screen.action_next_protocol)
            yield SystemCommand("Previous protocol", "Code the previous protocol", screen.action_previous_protocol)
            yield SystemCommand("Descriptive notes", "Switch between the coding and notes tabs",
                                screen.action_toggle_notes)
            yield SystemCommand("Open source in browser", "Open the highlighted source's URL (or copy it)",
                                screen.action_open_source)
            yield SystemCommand("Show source URL", "The highlighted source's whole URL, to read or copy",
                                screen.action_show_source)
            yield SystemCommand("Rubric guide", "Show or hide the field's definition, guidance and codes",
                                screen.action_toggle_aside)
            yield SystemCommand("Read & quote", "Read the pinned snapshots and quote a passage into this cell",
                                screen.action_read_sources)
            if writable:
                yield SystemCommand("Guided coding", "Answer the rubric's questions to find the code",
                                    screen.action_guided)
                yield SystemCommand("Clear code", "Remove this field's code (the text stays as a draft)",
                                    screen.action_clear_code)
                yield SystemCommand("Save now", "Write every pending edit (and retry failed ones)",
                                    screen.action_save_now)
                yield SystemCommand("Edit this protocol", "Edit its name, citations and sources",
                                    lambda: self.edit_protocol(screen.protocol_id))
                yield SystemCommand("Comment on this cell", "Add your remark to the cell's discussion (once it is "
                                    "ready for adjudication; protocoder comment)",
                                    lambda: self.comment_on(f"{screen.protocol_id}/{screen.field.id}"))

    def comment_on(self, key: str) -> None:
        """Ask for a comment on cell ``key`` and record it in the reviewer's own comments file; refused,
        with the reason, before every reviewer has coded the cell (comments never tell one reviewer
        what another chose)."""
        from ..errors import ProtocoderError
        from ..lifecycle.comments import add_comment
        from .adjudication.comment import CommentModal

        def typed(text: str | None) -> None:
            if text is None:
                return
            try:
                add_comment(self.session.paths, key, text, by=self.session.reviewer)
            except ProtocoderError as exc:
                self.notify(f"Not added: {exc}", severity="warning", timeout=8)
                return
            self.notify(f"{key}: comment added to the discussion")

        self.push_screen(CommentModal(key), typed)

    async def on_unmount(self) -> None:
        # However the app ends (quit, an error, a test's pilot leaving, a browser tab closing,
        # a server stopping), what the closing screens queued is written before the lock goes
        # back. Not by a worker: one started now may never run before the process ends, and
        # the text typed in the last half second (before the debounce) was lost that way.
        if hasattr(self, "saver"):
            if self.saver.running:  # a write under way when the app was told to end
                with suppress(TimeoutError):
                    await asyncio.wait_for(self.saver.wait_idle(), timeout=EXIT_WRITE_WAIT)
            self.saver.write_now()
        if hasattr(self, "session"):
            self.session.release_lock()

    async def action_quit(self) -> None:
        """Quit once every edit is written (asks when some cannot be)."""
        self.quit_when_saved()

    @work(exclusive=True, group="quit", exit_on_error=False)
    async def quit_when_saved(self) -> None:
        """Flush the screens, wait for the write queue, then exit."""
        if hasattr(self, "saver"):
            coding = self.coding_screen
            if coding is not None:
                coding.flush_edits()
            self.kick_saver()
            await self.saver.wait_idle()
            if self.saver.pending:
                count = len(self.saver.pending)
                if not await self.push_screen_wait(ConfirmModal(
                        "Quit without saving?", f"{count} edit(s) could not be written ({self.saver.error}). "
                        "Quit anyway and lose them?", yes="Quit", no="Stay", danger=True)):
                    return
            self.session.release_lock()
        self.exit()


def make_app(workspace: Path, reviewer: str | None, *, origin: str | None = None, given_as: str = "") -> CoderApp:
    """Build the coding app for a workspace.

    With ``reviewer`` None it asks who is coding first. With ``origin`` (where the name came
    from: ``--reviewer``, ``$PROTOCODER_REVIEWER``, git's user.name), a reviewer the
    workspace has no file for yet is confirmed first, with the closest existing one offered.
    """
    return CoderApp(workspace, reviewer, origin=origin, given_as=given_as)


read_escape_tab_as_typed()
