"""ProtocolListScreen: every protocol with this reviewer's progress; typing filters."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ..session import BROKEN, DONE, IN_PROGRESS, Progress, Session
from ..widgets import AppFooter, OverallProgress, SaveIndicator
from ..widgets.text_inputs import SELECT_ALL
from .keys import FRONT_KEYS

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it

STATUS_MARK = {DONE: "✓", IN_PROGRESS: "…", BROKEN: "✗"}
STATUS_COLOUR = {DONE: "success", IN_PROGRESS: "warning", BROKEN: "error"}


class FilterInput(Input):
    """The list's filter: takes every printable key but ``?``, which opens the key list.

    Textual drops a binding, even a priority one, for a key the focused input would
    type; declining ``?`` here is what lets the screen's ``?`` binding run.
    """

    BINDINGS = [SELECT_ALL]

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character != "?" and super().check_consume_key(key, character)


class ProtocolListScreen(Screen[None]):
    """The first screen: protocols, their progress, and the actions that change protocols.

    The filter input keeps the focus, so typing filters at once; the arrow keys move
    through the table and enter opens the highlighted protocol.
    """

    BINDINGS = [
        *FRONT_KEYS,
        Binding("enter", "open_protocol", "Open", id="list.open", tooltip="Code the highlighted protocol"),
        Binding("f3", "add_protocol", "Add", id="list.add", tooltip="Add a protocol with its sources"),
        # Priority: the filter input binds ctrl+e (end) and ctrl+d (delete right) itself.
        Binding("ctrl+e", "edit_protocol", "Edit", priority=True, id="list.edit",
                tooltip="Edit the highlighted protocol's name, citations and sources"),
        Binding("ctrl+d", "remove_protocol", "Remove", priority=True, id="list.remove",
                tooltip="Remove the highlighted protocol (asks first)"),
        Binding("ctrl+r", "add_reference", "Reference", id="list.reference",
                tooltip="Paste a BibTeX entry into references.bib"),
        # Ids and names of protocols never need "?", so it can open the keys from the filter.
        Binding("question_mark", "app.show_keys", "Keys", show=False, priority=True, id="list.keys",
                tooltip=FRONT_KEYS[1].tooltip),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="list.clear_filter"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    KEYS_TITLE = "protocol list"
    EXTRA_KEYS = [("type", "filter protocols by name or id"), ("↑ ↓ pgup pgdn", "move through the list")]
    """Keys that are not bindings, for the keys table."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = False
        """True once the workspace is loaded and the table filled."""
        self._opened: str | None = None
        self._stale: set[str] = set()
        """Protocols saved while this screen was under another: refreshed when it is back on top."""
        """The protocol opened from this list, until the list shows again."""

    @property
    def session(self) -> Session:
        return cast("CoderApp", self.app).session

    def compose(self) -> ComposeResult:
        app = cast("CoderApp", self.app)
        with Horizontal(classes="top-bar"):
            yield Static(self._title_text(), id="list-title", markup=False)
            yield Static(self._reviewer_text(), id="list-reviewer", classes="reviewer-name", markup=False)
            yield SaveIndicator(app.saver, id="list-save-indicator", classes="save-indicator")
        yield FilterInput(id="list-filter", placeholder="type to filter protocols · ? lists the keys")
        table: DataTable[str | Text] = DataTable(id="protocol-table", cursor_type="row", zebra_stripes=True)
        table.add_column("Protocol", key="name", width=30)
        table.add_column("Id", key="id", width=18)
        table.add_column("Coded", key="coded", width=6)
        table.add_column("Status", key="status", width=13)
        # A plain placeholder, not the animated loading indicator: nothing moves on screen
        # (tmux, screenshots) and the list replaces it as soon as the worker is done.
        table.display = False
        yield Static("Reading the workspace…", id="list-loading")
        yield table
        yield OverallProgress(id="overall")
        yield Static("", id="list-problems")
        yield AppFooter()

    def _title_text(self) -> str:
        session = cast("CoderApp", self.app).session
        return session.review.settings.title if session.review and session.review.settings.title else "protocoder"

    def _reviewer_text(self) -> str:
        # Beside the save state, never cut: the reviewer must always see whose file is being written.
        session = cast("CoderApp", self.app).session
        return session.reviewer + (" (read-only)" if session.read_only else "")

    def on_mount(self) -> None:
        self.query_one("#list-filter", Input).focus()
        # The status colours come from the theme: refill when it changes.
        self.watch(self.app, "theme", lambda _: self._fill() if self.loaded else None, init=False)

    # ------------------------------------------------------------------ attributes down

    def populate(self) -> None:
        """Fill the table once the workspace is loaded (called by the app)."""
        self.loaded = True
        self.query_one("#list-title", Static).update(self._title_text())
        # Start where the reviewer left off: the first protocol that is not done.
        session = self.session
        resume = next((p.id for p in session.protocols if session.progress(p.id).status != DONE), None)
        self._fill(select=resume)
        self.query_one("#list-loading", Static).display = False
        self.table.display = True
        problems = self.session.workspace_problems
        errors = sum(1 for p in problems if p.severity == "error")
        note = self.query_one("#list-problems", Static)
        if problems:
            note.update(f"{len(problems)} problem(s), {errors} error(s), in the workspace: "
                        "ctrl+p › Workspace problems")
        note.display = bool(problems)
        self.refresh_bindings()

    def refresh_protocol(self, protocol_id: str) -> None:
        """Show a protocol's new progress (after a save); under another screen, once it is back on top
        (each save of a served session redrew this hidden list, issue 32)."""
        if not self.loaded:
            return
        if not self.is_current:
            self._stale.add(protocol_id)
            return
        table = self.table
        if protocol_id in table.rows:
            progress = self.session.progress(protocol_id)
            table.update_cell(protocol_id, "coded", f"{progress.coded}/{progress.total}")
            table.update_cell(protocol_id, "status", self._status(progress))
        self._update_overall()

    def reload(self, select: str | None = None) -> None:
        """Rebuild the table (after protocols were added, edited or removed)."""
        self._fill(select)

    # ------------------------------------------------------------------ filling

    @property
    def table(self) -> DataTable[str | Text]:
        return self.query_one("#protocol-table", DataTable)

    @property
    def selected_id(self) -> str | None:
        """Id of the highlighted protocol, if any."""
        table = self.table
        if not self.loaded or table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def _status(self, progress: Progress, variables: dict[str, str] | None = None) -> Text:
        mark = STATUS_MARK.get(progress.status, "·")
        colour = STATUS_COLOUR.get(progress.status)
        # Computing the theme's variables is slow (~1 ms): callers filling many rows pass them in.
        variables = variables if variables is not None else self.app.get_css_variables()
        style = variables.get(colour, "") if colour else ""
        return Text(f"{mark} {progress.status}", style=style)

    def _fill(self, select: str | None = None) -> None:
        table = self.table
        keep = select or self.selected_id
        needle = self.query_one("#list-filter", Input).value.strip().casefold()
        table.clear()
        session = self.session
        variables = self.app.get_css_variables()
        for protocol in session.protocols:
            if needle and needle not in protocol.name.casefold() and needle not in protocol.id:
                continue
            progress = session.progress(protocol.id)
            table.add_row(protocol.name, protocol.id, f"{progress.coded}/{progress.total}",
                          self._status(progress, variables), key=protocol.id)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)
        self._update_overall()
        self.refresh_bindings()

    def _update_overall(self) -> None:
        coded, total, done = self.session.totals()
        count = len(self.session.protocols)
        self.query_one("#overall", OverallProgress).show(coded, total, done, count)

    # ------------------------------------------------------------------ events and actions

    @on(Input.Changed, "#list-filter")
    def filter_protocols(self) -> None:
        if self.loaded:
            self._fill()

    @on(Input.Submitted, "#list-filter")
    def open_from_filter(self) -> None:
        self.action_open_protocol()

    @on(DataTable.RowSelected, "#protocol-table")
    def open_from_table(self, event: DataTable.RowSelected) -> None:
        self._opened = str(event.row_key.value)
        cast("CoderApp", self.app).open_protocol(self._opened)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open_protocol", "move"):
            return self.selected_id is not None
        if action in ("edit_protocol", "remove_protocol"):
            return self.selected_id is not None and not self.session.read_only
        if action in ("add_protocol", "add_reference"):
            return self.loaded and not self.session.read_only
        return True

    def action_move(self, delta: int) -> None:
        table = self.table
        if table.row_count:
            row = min(max(table.cursor_row + delta, 0), table.row_count - 1)
            table.move_cursor(row=row, animate=False)

    def action_clear_filter(self) -> None:
        self.query_one("#list-filter", Input).value = ""

    def on_screen_resume(self) -> None:
        """Back from coding a protocol: the filter that found it is cleared (the next search
        starts empty, never "cyb" + "gaia"), and the protocol just coded stays highlighted."""
        stale, self._stale = self._stale, set()
        for protocol_id in sorted(stale):
            self.refresh_protocol(protocol_id)
        last, self._opened = self._opened, None
        if last is None:
            return
        box = self.query_one("#list-filter", Input)
        if box.value:
            with self.prevent(Input.Changed):
                box.value = ""
            self._fill(last)

    def action_open_protocol(self) -> None:
        protocol_id = self.selected_id
        if protocol_id is not None:
            self._opened = protocol_id
            cast("CoderApp", self.app).open_protocol(protocol_id)

    def action_add_protocol(self) -> None:
        cast("CoderApp", self.app).add_protocol()

    def action_edit_protocol(self) -> None:
        if self.selected_id is not None:
            cast("CoderApp", self.app).edit_protocol(self.selected_id)

    def action_remove_protocol(self) -> None:
        if self.selected_id is not None:
            cast("CoderApp", self.app).remove_protocol(self.selected_id)

    def action_add_reference(self) -> None:
        cast("CoderApp", self.app).add_reference()
