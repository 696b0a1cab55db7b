"""Normalised search: what PDF extraction changes must not hide a quote, and spans must be exact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocoder.evidence.locate import Haystack, normalise, sentence_around


def test_line_breaks_hyphenation_ligatures_and_typography() -> None:
    text = ("We evaluate agents on a \ufb01xed set of tasks. The o\ufb03cial harness caps each run\n"
            "at thirty minutes \u2014 a state-of-the-\nart evalu-\nation of \u201creal\u201d work\u00a0flows, "
            "pre- and post-hoc.")
    hay = Haystack(text)
    for quote, expected in [
        ("fixed set of tasks", "\ufb01xed set of tasks"),
        ("The official harness caps each run at thirty minutes", "The o\ufb03cial harness caps each run\nat thirty "
                                                                  "minutes"),
        ("thirty minutes - a state-of-the-art evaluation", "thirty minutes \u2014 a state-of-the-\nart evalu-\nation"),
        ('of "real" work flows', "of \u201creal\u201d work\u00a0flows"),
        ("pre- and post-hoc.", "pre- and post-hoc."),
    ]:
        span = hay.find(quote)
        assert span is not None, quote
        assert text[span.start:span.end] == expected


def test_words_and_case_are_never_changed() -> None:
    hay = Haystack("The harness caps each run at thirty minutes.")
    assert hay.find("the harness caps") is None
    assert hay.find("The harness caps each run at twenty minutes") is None
    # "pre- and" keeps its space: only a hyphen before a line break joins two parts of a word.
    assert normalise("pre- and") == "pre- and" and normalise("evalu-\nation") == "evaluation"


def test_t1_ligature_codes_match_letters() -> None:
    # pdfTeX with T1 fonts and no Unicode map extracts fi/ffi/fl as control codes.
    text = "a \x1cxed set; the o\x1ecial work\x1dow"
    span = Haystack(text).find("a fixed set; the official workflow")
    assert span is not None and (span.start, span.end) == (0, len(text))


def test_closest_passage_points_at_the_changed_sentence() -> None:
    text = ("Introduction. Agents act in a sandbox.\n\nEach episode ends when the agent submits a final answer or "
            "after one hundred steps. Scores are averaged over three seeds.")
    hay = Haystack(text)
    closest = hay.closest("Each episode ends when the agent submits a final answer or after fifty steps")
    assert closest is not None and closest.ratio > 0.8
    assert text[closest.start:closest.end].startswith("Each episode ends")
    assert hay.closest("zzz qqq") is None


def test_sentence_around_a_match() -> None:
    text = "First sentence here. The harness caps each run at thirty minutes. Last one!\n\nNew paragraph."
    found = Haystack(text).find("caps each run")
    assert found is not None
    span = sentence_around(text, found.start, found.end)
    assert text[span.start:span.end] == "The harness caps each run at thirty minutes."


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789", min_size=1, max_size=8)
SEPARATOR = st.sampled_from([" ", "  ", "\n", " \n ", "\t", "\u00a0", "-\n", "\u00ad"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(WORD, SEPARATOR), min_size=3, max_size=40), st.data())
def test_any_passage_is_found_at_its_exact_span(pieces: list[tuple[str, str]], data: st.DataObject) -> None:
    # However the extracted text breaks its words, a quote typed as plain words is found, and
    # its span is exactly the passage in the extracted text.
    text = "".join(word + sep for word, sep in pieces)
    first = data.draw(st.integers(0, len(pieces) - 2))
    last = data.draw(st.integers(first + 1, len(pieces) - 1))
    start = sum(len(w) + len(s) for w, s in pieces[:first])
    end = sum(len(w) + len(s) for w, s in pieces[:last]) + len(pieces[last][0])
    passage = text[start:end]
    hay = Haystack(text)
    assert hay.matches_at(passage, start, end)
    spans = hay.find_all(passage)
    assert spans, (text, passage)
    assert any((s.start, s.end) == (start, end) for s in spans) or all(
        normalise(text[s.start:s.end]) == normalise(passage) for s in spans)
    for span in spans:
        assert normalise(text[span.start:span.end]) == normalise(passage)


def test_markup_is_dropped_on_both_sides_so_literal_markup_characters_still_match() -> None:
    from protocoder.evidence.locate import Haystack, normalise

    # Text that holds markup characters as text (a PDF, a plain file) is found as written.
    haystack = Haystack("The score is 2 * 3 | 4 points; see file_name.py and x < y.")
    assert haystack.find("2 * 3 | 4 points") is not None
    assert haystack.find("file_name.py") is not None
    # Markdown and HTML as written compare equal to the rendered text.
    assert normalise("**Bold** [link](https://x.org/a_(b)) `code`") == normalise("Bold link code")
    assert normalise("- item one\n- item two") == normalise("item one\nitem two")
    assert normalise("<p>A &amp; B</p><p>C</p>") == normalise("A & B\n\nC")
    assert normalise("te<em>rm</em>s") == normalise("terms")
    assert normalise("> [!NOTE]\n> Careful.") == "Careful."
