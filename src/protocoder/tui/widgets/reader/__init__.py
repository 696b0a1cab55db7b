"""Reader: a protocol's pinned snapshot, to read and to quote the passage a code rests on.

The text is the snapshot's extracted text (what ``validate`` checks quotes against), with a
marker line before each page; a Markdown or HTML paragraph, list item, blockquote,
admonition or footnote is shown as running text, soft-wrapped to the pane (its source line
breaks shown as spaces, so offsets do not move: :class:`FlowingText`); headings, the cell's
quotes and search matches are highlighted. ``/`` searches (normalised like ``validate``: line breaks, hyphenation and
ligatures do not hide a match), ``n``/``N`` go to the next/previous match, and ``q`` (or
enter) quotes the selection, else the current match widened to its sentence, else the
sentence at the cursor. The reader does not write files itself: it hands each new quote
to ``on_quote`` (the coding screen adds it to its draft of the cell and saves it like any
other edit) and shows the cell it gets back.

The same widget is a pane of the coding screen (in its ``#aside``, class ``-pane``: text
above, search and quotes below) and the body of :class:`~..screens.reader.ReaderScreen`
(full screen: text on the left, search and quotes beside it). Escape posts
:class:`Reader.Left`: whoever holds the reader returns to the cell.

The widget is put together from its parts, one module each: :mod:`.text` (the text widget),
:mod:`.document` (showing a document: loading, the marks, moving between sources), :mod:`.search`,
:mod:`.candidates` (and the list of places to jump to), :mod:`.quoting` (into any field) and
:mod:`.coverage` (what the reviewer has had on screen).
"""

from __future__ import annotations

from textual.binding import Binding

from .candidates import ReaderCandidates
from .coverage import SAVE_EVERY, ReaderCoverage, reading_units
from .document import MATCH_LIMIT, ReaderDocument
from .quoting import ReaderQuoting
from .search import SEARCH_HITS_PER_SOURCE, ReaderSearch
from .text import FLOWING_KINDS, FLOWING_MEDIA, FlowingText, ReaderText, keeps_lines

__all__ = ["FLOWING_KINDS", "FLOWING_MEDIA", "MATCH_LIMIT", "SAVE_EVERY", "SEARCH_HITS_PER_SOURCE", "FlowingText",
           "Reader", "ReaderCandidates", "ReaderCoverage", "ReaderDocument", "ReaderQuoting", "ReaderSearch",
           "ReaderText", "keeps_lines", "reading_units"]


class Reader(ReaderQuoting, ReaderSearch, ReaderCoverage):
    """Read the protocol's snapshots and quote passages into one cell (the coding screen's current one)."""

    BINDINGS = [
        # Quoting first: the footer shows the screen's keys, then these in this order, as many as fit.
        Binding("q", "quote", "Quote", id="reader.quote",
                tooltip="Quote the selection, else the match or the sentence at the cursor, into a field you "
                        "pick after seeing the passage"),
        Binding("u", "undo_quote", "Undo quote", show=False, id="reader.undo_quote",
                tooltip="Take back the quote just saved, from whichever field it went to"),
        Binding("slash", "search", "Search", id="reader.search", tooltip="Search the text (as validate matches)"),
        Binding("n", "next_match", "Next match", id="reader.next"),
        Binding("N", "previous_match", "Prev match", id="reader.previous"),
        Binding("s", "next_source", "Next source", id="reader.source"),
        Binding("l", "pick_source", "Sources", id="reader.sources",
                tooltip="The protocol's sources in a list with a filter: enter opens one"),
        Binding("h", "outline", "Outline", id="reader.outline",
                tooltip="The headings of this source: enter jumps to one"),
        Binding("w", "widen('word')", "Widen to words", show=False, id="reader.widen_word",
                tooltip="Extend the selection to whole words"),
        Binding("full_stop", "widen('sentence')", "Widen to sentence", show=False, id="reader.widen_sentence",
                tooltip="Extend the selection to whole sentences"),
        Binding("c", "candidates", "Candidates", id="reader.candidates",
                tooltip="Candidate passages for this field across the protocol's sources (enter jumps there)"),
        Binding("enter", "quote", "Quote", show=False),
        Binding("S", "previous_source", "Prev source", show=False),
        Binding("delete", "remove_quote", "Remove quote", show=False),
        # Priority: acted on as it arrives, in order with tab (a priority binding too). Handed to
        # the text while the reader was still busy with its first snapshot, escape waited there
        # and the tab typed after it went first, into the reader's search box.
        Binding("escape", "leave", "Back to the cell", priority=True, id="reader.back"),
    ]

    KEYS = [
        ("/", "search the text (normalised as validate matches quotes)"),
        ("n / N", "next / previous match"),
        ("q / enter", "quote the selection, else the current match widened to its sentence: the passage is "
                      "shown with the protocol's fields; enter (or a field's key) quotes into that field"),
        ("u", "undo the quote just saved"),
        ("shift+arrows, mouse", "select a passage"),
        ("s / S", "next / previous pinned source"),
        ("l", "the pinned sources in a list with a filter (type to filter, enter opens one)"),
        ("/ then enter", "also lists the hits in every pinned source of the protocol, by source and heading"),
        ("h", "outline: the headings of this source (enter jumps to one)"),
        ("w / .", "extend the selection to whole words / whole sentences"),
        ("c", "candidate passages for the field (enter jumps to one, then q quotes it); "
              "off with candidates: false"),
        ("tab", "the cell's quotes: enter shows one, delete removes it (asks first)"),
        ("pgdn / pgup, arrows", "move through the text"),
        ("escape", "back to the cell"),
    ]
    """The reader's keys, for the keys table of whichever screen holds it."""

    DEFAULT_CSS = """
    Reader { height: 1fr; }
    Reader #reader-title { height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    Reader #reader-body { height: 1fr; }
    Reader #reader-text { width: 1fr; border: none; }
    Reader #reader-side { width: 38; padding: 0 1; border-left: solid $primary-background; }
    Reader .reader-heading { text-style: bold; margin-top: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    Reader #reader-quotes { height: 1fr; max-height: 20; }
    Reader #reader-candidates { height: 1fr; max-height: 20; border: none; padding: 0; }
    /* A list of places (candidates, hits, the outline) shown: the cell's quotes shrink to a few
       rows and the help goes, so that at 80×24 several places are in view at once. */
    Reader.-listing #reader-quotes { height: auto; max-height: 4; }
    Reader.-listing #reader-help { display: none; }
    Reader.-pane #reader-candidates { height: auto; max-height: 8; }
    Reader #reader-position { height: auto; color: $text-muted; }
    Reader #reader-status { height: auto; max-height: 4; }
    Reader #reader-search { margin-top: 0; }
    /* A pane beside the cell: the text on top, position, search and quotes under it. */
    Reader.-pane #reader-title { background: $boost; padding: 0; }
    Reader.-pane #reader-body { layout: vertical; }
    Reader.-pane #reader-text { height: 1fr; width: 1fr; }
    Reader.-pane #reader-side { width: 1fr; height: auto; padding: 0; border-left: none; border-top: hkey $panel; }
    Reader.-pane #reader-search { margin-top: 0; }
    Reader.-pane .reader-heading { margin-top: 0; }
    Reader.-pane #reader-quotes { height: auto; max-height: 5; border: none; padding: 0; }
    Reader.-pane #reader-help { display: none; }
    """

