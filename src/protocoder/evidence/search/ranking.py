"""Ranking passages for a query: BM25 over their words times a factor for their kind (proximity and
heading signals are there, and off)."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import semantic
from .bm25 import as_float32, bm25_index, ids_by_weight, weighted_scores
from .candidate import Candidate, best_row, row_words, unit_words
from .passage import HEADING_SEPARATOR, Passage
from .query import Query, words

# Weights of the score's parts, chosen with the query's (see .query) on the dev documents of
# benchmarks/find_real.py (real documentation; its held-out documents were not used to choose).
# A grid over these weights moved dev recall@10 by a few key passages at most; the heading and
# proximity signals did not help there and are off, and so did a BM25 over each passage's
# neighbours (tried with 1 to 10 passages around it: dev recall@10 equal or lower).
HEADING_IN_BODY = False
"""Whether a passage's heading path counts among its words. Off (round 4): every passage of a section
then shared its heading's words, so a heading that matched the field filled the top 10 with its
section; with paragraphs as passages, dev recall@10 0.759 -> 0.768 cold and 0.762 -> 0.768 warm
(three quote sets) without them (the heading is still shown with each candidate)."""
WEIGHT_HEADING = 0.0
"""A second BM25 over the heading path alone (off, as :data:`HEADING_IN_BODY`)."""
WEIGHT_PROXIMITY = 0.0
"""Per pair of distinct query words found within :data:`PROXIMITY_WINDOW` words of each other."""
PROXIMITY_WINDOW = 6
PROXIMITY_POOL = 200
"""How many of the best-scored passages the proximity bonus looks at (it can reorder only these)."""
KIND_WEIGHTS = {"prose": 1.0, "list": 1.0, "table": 0.5, "comment": 0.5, "code": 0.5, "install": 0.1, "news": 1.0,
                "toc": 0.1, "badge": 0.1, "boilerplate": 0.1, "diagram": 0.1, "mixed": 1.0, "reference": 1.0,
                "listing": 1.0}
"""What a passage's score is multiplied by, by its kind (see ``kinds.PASSAGE_KINDS``): code and
tables rank below prose unless the query matches them clearly better; install lines, news
tables of contents, badges and citation or licence sections are rarely what a field asks for. Chosen on the dev
documents of benchmarks/find_real.py. News and changelog entries are labelled but not demoted (round 4): on the
dev documents the 0.3 factor changed nothing, and an evaluation's changelog records how it runs (its scorer, its
images, its timeouts), which is what the rubric's fields ask about. A paragraph of prose with a code block written
into it (``mixed``, round 5) weighs as prose: its sentence says what the commands are for. A file listing
(``listing``, round 11: names and what each holds, written in a code block) weighs as a reference table does: on
all eight sets of benchmarks/find_real.py its four listings held 9 key passages, which plain BM25 reached through
the block read whole and find had as diagram lines (0.1) or commented lines under the floor. Recall@10 cold / warm
+1 / +2 on the fifth set and +4 / +2 on the eighth, the other six unchanged, no set lower at 5 or 20; non-evidence
13.0 -> 10.4 % cold and 7.7 -> 6.0 warm on the eighth, 8.2 -> 8.5 and 7.3 -> 7.7 on the fifth (a listing that is
no key passage counts as code)."""
ROW_KINDS = frozenset({"table", "reference", "listing"})
"""The kinds of passage read as rows under a first line: a candidate of these kinds points at its best row."""
STEP_KINDS = frozenset({"code", "comment", "diagram"})
"""The kinds of a code block's passages, a command or a step of several (``kinds.code_groups``): a candidate of
a step points at its best command. Not ``install``: a sentence with the install commands written under it is
one passage of that kind too, and its sentence is no command."""
CODE_FLOOR = 0.2
"""A code unit, table or diagram is listed only when it scores at least this share of the best candidate.
A short README has few passages that share words with a field, and without a floor its top 10 fills
up with commands that share one word with it ("--model", "server"). Chosen on the 14 dev documents
of benchmarks/find_real.py (round 3): non-evidence in the top 10 12 % -> 9 %, recall unchanged (0.15:
10 %, 0.25: 8 % and one key passage fewer; 0.3: 6 % and two fewer)."""
FLOORED_KINDS = frozenset({"code", "comment", "install", "diagram", "table", "mixed", "boilerplate", "badge", "toc"})
"""The kinds :data:`CODE_FLOOR` applies to: what holds code or table rows. A ``mixed`` paragraph (prose with its
code block) is floored too (round 5): recall unchanged on both sets of benchmarks/find_real.py, and 2 points
fewer top-10 slots of the first set that hold code and are no key passage (13 % -> 11 % cold). Citation and
licence sections, badges and tables of contents too (round 7): their factor is install lines' 0.1, yet a short
README's BibTeX entry still filled a slot of the top 10 at 0.01 of the best (swesmith, fourth set); recall
unchanged on all four sets, non-evidence -1.1 points cold on the fourth.

The floor keeps such passages off the first page only (round 8): when the others fill the first
:data:`FLOOR_PLACES` places, the floored ones follow them, best first, so that a longer list (``find --limit 20``)
still shows a block's weaker lines instead of ending. All five sets of
benchmarks/find_real.py: recall@10 and non-evidence in the top 10 unchanged (the first 10 are the same);
recall@20 +9 key passages cold (+1, +2, +4, 0 and +2 on the five sets) and +4 warm (0, +1, +2, 0, +1)."""
FLOOR_PLACES = 10
"""How many first places :data:`CODE_FLOOR` keeps floored passages out of (see there)."""
LONE_WORD_KINDS = frozenset({"comment"})
"""The kinds of code unit listed after every other candidate when they share fewer than :data:`SHARED_WORDS`
distinct words with the query (as are lines of configuration, :data:`CONFIG_LINE`). See :data:`SHARED_WORDS`."""
SHARED_WORDS = 2
"""How many distinct words of the query a commented command or a line of configuration must hold to be listed
among the other candidates; with fewer it comes after all of them (it is still listed, as the last ones).

A command and its comment that share one word with a field ("run", "server", "instance") say what the command
does, rarely anything about the field: over the four sets of benchmarks/find_real.py (round 7) round 6's top 10s
held 20 such commented units that were no key passage and none that was. A line of configuration
(``"max_workers": 8,``, ``memory: 4g``, ``booktitle={…}``) names a setting: one shared word is mostly the
setting's name (not always: aider's ``test_timeouts: 1`` is a key passage for open work; it moved from 3rd to
10th). Bare commands are not deferred so: ``env.close()``, ``webarena-verified env stop-all`` and ``rm -rf
/tmp/*`` share one word with the field and are what the key cites (deferring every code line so lost 1 and 3
key passages on two sets). Round 7, all four sets: recall@10 unchanged on the first three, +3 key passages cold
and warm on the fourth (key sentences in the places of settings); non-evidence cold -0.2, 0, -0.7 and -6 points.

Round 9: such a passage also stays off the first :data:`FLOOR_PLACES` places, as a floored one does (see
:data:`FLOORED_KINDS`): in a short README the others did not fill them, so the deferred lines still took the last
places of the top 10 (pydantic-evals' ``environment='development',``, sixth set). All six sets: recall at 5, 10
and 20 unchanged, cold and warm; non-evidence in the top 10 cold 7.6 -> 7.0 % on the first set, 8.6 -> 8.2 on
the third, 9.1 -> 8.2 on the fifth and 10.9 -> 9.3 on the sixth, unchanged elsewhere and warm everywhere."""
CONFIG_LINE = re.compile(r"""\s*(?:- )?["']?[\w.-]+["']?\s*[:=][^\n]*""")
"""A line of configuration or an assignment, whole: a YAML, JSON or TOML key and its value, ``name=value``."""
BLOCK_SLOTS = 10
"""How many of the first candidates the best code block must be represented in (:meth:`PassageIndex.search`).

A code block standing alone is cut into its commands, each ranked at the code factor; plain BM25 over the raw
file's paragraphs reads the block whole, and when the block as a whole matched a field best, one of its lines
was what a reviewer cited (``docker run -d --name webarena-verified-shopping …``, one container per site; metr's
``# Run all the tests … If one of the tests modifies the task environment …``).
When the run of code units whose summed BM25 (before kind factors) is the best of all passages and runs has no
unit among the first :data:`BLOCK_SLOTS` candidates, its best unit takes the last slot there that holds code, a
table or a mixed paragraph (or a free slot); prose keeps its place. Round 6 of benchmarks/find_real.py, on all
three sets: recall@10 unchanged on the second, +1 key passage warm on the first (0.795 -> 0.804) and +1 cold
and warm on the third (0.788 -> 0.798, 0.798 -> 0.808); non-evidence +0.5 point (first) and +0.7 (third)."""
CODE_UNIT_KINDS = frozenset({"code", "comment"})
"""The kinds of code unit :data:`BLOCK_SLOTS` reads as one block when consecutive under one heading. Not install
lines and box-drawing lines (``diagram``): what they say is rarely evidence (their factor is 0.1), and a drawing's
labels summed over its lines matched every field of a short README."""


@dataclass
class PassageIndex:
    """BM25 indexes over a set of passages (one protocol's), ready to answer queries."""

    passages: list[Passage]
    body: Any
    """BM25 index of each passage's words (and its heading path's, with :data:`HEADING_IN_BODY`): a
    ``bm25s.BM25`` when built here, a :class:`.saved.SavedBM25` when read from the cache (both score through
    :func:`.bm25.word_scores`)."""
    heading: Any
    """BM25 index of each passage's heading path alone (the same two kinds)."""
    vectors: Any = None
    """Unit embeddings of the passages (numpy, one row each) for the semantic signal; None without it."""
    _tokens: dict[int, list[str]] = field(default_factory=dict)
    """Words of the passages the proximity bonus has looked at, by passage number."""
    _kind_weights: Any = None
    _runs: list[int] | None = None
    _rows: dict[int, list[tuple[int, int, tuple[str, ...]]]] = field(default_factory=dict)
    """The rows of the tables that were candidates, with their words (:func:`row_words`), by passage number."""
    _asked: tuple[Query, dict[str, float]] | None = None
    """The last query searched and its weighted words (:meth:`_weighted`)."""

    @classmethod
    def build(cls, passages: list[Passage]) -> PassageIndex:
        """Index ``passages`` (may be empty)."""
        # One passage's words at a time (a million-line source has millions of words: their lists,
        # held at once as bm25s's own tokenising holds them, cost more than the rest of the index).
        body = bm25_index((words(p.heading) if HEADING_IN_BODY else []) + words(p.text) for p in passages)
        heading_words: dict[str, list[str]] = {}
        heading = bm25_index(heading_words.setdefault(p.heading, words(p.heading.split(HEADING_SEPARATOR)[-1]))
                        if p.heading else [] for p in passages)
        vectors = semantic.embed([passage_meaning(p) for p in passages])
        if vectors is not None:
            vectors = vectors.astype("float16").astype("float32")  # as the cache stores them: same scores
        return cls(passages, body, heading, vectors)

    def tokens(self, number: int) -> list[str]:
        """The words of passage ``number`` in order (computed when first asked for)."""
        found = self._tokens.get(number)
        if found is None:
            found = self._tokens[number] = words(self.passages[number].text)
        return found

    def _weighted(self, query: Query) -> dict[str, float]:
        """``query.weighted_words()``, read once per query: scoring, the floor and each table candidate's best
        row all ask for it, and stemming a warm query's borrowed quotes costs a fourth of a search. Keyed by
        the query itself (held here, so its id is not reused); one entry, replaced whole (the coding app
        searches from one worker thread at a time, and a stale entry is only a miss)."""
        asked = self._asked
        if asked is not None and asked[0] is query:
            return asked[1]
        weighted = query.weighted_words()
        self._asked = (query, weighted)
        return weighted

    def _rarity_weighted(self, query: Query) -> dict[str, float]:
        """The query's words weighed by their weight and by how rare they are among the passages (BM25's idf, as
        Lucene computes it): what picks a table's row or a step's command (:func:`.candidate.best_row`). A word
        every passage of a README holds ("environment" in an environment library's) says little about which
        command is the one; by weight alone the best command of a step was the key passage a reviewer cites 88
        times of 101 over the twelve sets of benchmarks/find_real.py, the best row of a table 30 of 74 and the
        best line of a listing 2 of 12; weighed by rarity too, 90, 37 and 6."""
        scores = self.body.scores
        passages = int(scores["num_docs"])
        weighted = {}
        for word, weight in self._weighted(query).items():
            token = self.body.vocab_dict.get(word)
            if token is None or not word:
                continue
            holding = int(scores["indptr"][token + 1]) - int(scores["indptr"][token])
            weighted[word] = weight * math.log(1 + (passages - holding + 0.5) / (holding + 0.5))
        return weighted

    def _row_words(self, number: int) -> list[tuple[int, int, tuple[str, ...]]]:
        """:func:`row_words` of passage ``number`` (a table; computed when first asked for)."""
        found = self._rows.get(number)
        if found is None:
            found = self._rows[number] = row_words(self.passages[number].text)
        return found

    def _unit_words(self, number: int) -> list[tuple[int, int, tuple[str, ...]]]:
        """:func:`unit_words` of passage ``number`` (a command or a step of a code block; computed when first
        asked for)."""
        found = self._rows.get(number)
        if found is None:
            found = self._rows[number] = unit_words(self.passages[number].text)
        return found

    def scores(self, query: Query, *, use_heading: bool = True, use_proximity: bool = True,
               use_kinds: bool = True, use_semantic: bool = True) -> Any:
        """One score per passage (numpy array) for ``query``."""
        return self._scored(query, use_heading=use_heading, use_proximity=use_proximity, use_kinds=use_kinds,
                            use_semantic=use_semantic)[0]

    def _scored(self, query: Query, *, use_heading: bool = True, use_proximity: bool = True,
                use_kinds: bool = True, use_semantic: bool = True) -> tuple[Any, Any]:
        """:meth:`scores`, and the BM25 part of them before kind factors and meaning (both numpy arrays)."""
        import numpy as np

        weighted = self._weighted(query)
        total = np.zeros(len(self.passages), dtype="float32")
        if not self.passages or not weighted:
            return total, total.copy()
        total += weighted_scores(self.body, weighted)
        if use_heading and WEIGHT_HEADING:
            total += WEIGHT_HEADING * weighted_scores(self.heading, weighted)
        if use_proximity and WEIGHT_PROXIMITY:
            # The bonus reorders the best passages among themselves; only they are read word by
            # word (a thousand sources hold tens of thousands of passages).
            matched = np.flatnonzero(total > 0)
            if len(matched) > PROXIMITY_POOL:
                matched = matched[np.argpartition(-total[matched], PROXIMITY_POOL)[:PROXIMITY_POOL]]
            for index in matched:
                total[index] += WEIGHT_PROXIMITY * _close_pairs(self.tokens(int(index)), weighted)
        lexical = total.copy()
        if use_kinds:
            total *= self.kind_weights()
        if use_semantic and self.vectors is not None and query.semantic:
            total = self._with_meaning(total, query)
        return total, lexical

    def _with_meaning(self, lexical: Any, query: Query) -> Any:
        """BM25 (scaled so the best passage has 1) plus the weighed cosine similarity to the query's meaning.

        A passage that shares no word with the query joins only when its similarity reaches
        ``SEMANTIC_FLOOR``; code and other kinds keep their factor on the similarity too.
        """
        import numpy as np

        vector = semantic.query_vector(query.semantic)
        if vector is None or len(self.vectors) != len(self.passages):
            return lexical
        similarity = self.vectors.astype("float32") @ vector.astype("float32")
        best = float(lexical.max()) if len(lexical) else 0.0
        fused = (lexical / best if best > 0 else lexical) + semantic.WEIGHT_SEMANTIC * np.clip(
            similarity, 0.0, None) * self.kind_weights()
        fused[(lexical <= 0) & (similarity < semantic.SEMANTIC_FLOOR)] = 0.0
        return fused.astype("float32")

    def kind_weights(self) -> Any:
        """Each passage's :data:`KIND_WEIGHTS` factor (numpy array; computed when first asked for)."""
        import numpy as np

        if self._kind_weights is None:
            self._kind_weights = np.array([KIND_WEIGHTS.get(p.kind, 1.0) for p in self.passages], dtype="float32")
        return self._kind_weights

    def search(self, query: Query, limit: int = 10, **options: bool) -> list[Candidate]:
        """The ``limit`` best passages for ``query``, best first; passages with no query word are left out."""
        if limit <= 0 or not self.passages:
            return []
        # Plain Python where numpy is not loaded yet (a one-shot `find` on a cached index: importing
        # numpy would cost more than the query); numpy's vector sums where it is (the coding app, a
        # large index queried again and again). Both give the same scores to the bit.
        floor = options.get("use_kinds", True)
        scored = None if "numpy" in sys.modules else self._sparse_scored(query, **options)
        if scored is not None:
            sparse, lexical = scored
            # Ties (equal scores) keep text order, as the stable sort below does.
            matched = (number for number, score in sparse.items() if score > 0)
            ordered: Iterable[tuple[int, float]] = (
                (number, sparse[number]) for number in sorted(matched, key=lambda number: (-sparse[number], number)))
            final: Any = sparse
        else:
            import numpy as np

            scores, plain = self._scored(query, **options)
            # Ties (equal scores) keep text order: stable sort on the negated scores.
            ordered = ((int(i), float(scores[i])) for i in np.argsort(-scores, kind="stable"))
            final = scores
            lexical = dict(zip(np.flatnonzero(plain > 0).tolist(), plain[plain > 0].tolist(), strict=True))
        ranked = self._floored(ordered, max(limit, BLOCK_SLOTS) if floor else limit, floor=floor,
                               query=query if floor else None)
        if floor:
            ranked = self._with_best_block(ranked, lexical, final)[:limit]
        found = []
        rarity: dict[str, float] | None = None  # weighed once, when the first table or step needs it
        for index, score in ranked:
            if score <= 0:
                break
            p = self.passages[index]
            # A table, a file listing or a step of a code block is one passage: the candidate points at its best
            # row, line or command.
            parts = self._row_words(index) if p.kind in ROW_KINDS else self._unit_words(index) \
                if p.kind in STEP_KINDS else []
            focus = None
            if p.kind in ROW_KINDS or len(parts) > 1:
                rarity = self._rarity_weighted(query) if rarity is None else rarity
                focus = best_row(parts, rarity)
            focus_start, focus_end = (p.start + focus[0], p.start + focus[1]) if focus else (None, None)
            found.append(Candidate(p.source, p.heading, p.start, p.end, p.raw_start, p.raw_end, p.text,
                                   round(score, 4), focus_start, focus_end, p.kind == "listing",
                                   p.kind in STEP_KINDS and focus is not None))
        return found

    def _floored(self, ordered: Iterable[tuple[int, float]], limit: int, *, floor: bool = True,
                 query: Query | None = None) -> list[tuple[int, float]]:
        """The first ``limit`` positive entries of ``ordered`` (best first), with the commented commands and
        configuration lines that share fewer than :data:`SHARED_WORDS` words with ``query`` (when ``query`` is
        given) and then the code, tables and diagrams that score under :data:`CODE_FLOOR` of the best (when
        ``floor``) after all the others, and only past the first :data:`FLOOR_PLACES` places."""
        kept: list[tuple[int, float]] = []
        deferred: list[tuple[int, float]] = []
        floored: list[tuple[int, float]] = []
        asked: set[str] | None = None  # the query's words, read when the first such passage comes
        least = None
        for number, score in ordered:
            if score <= 0 or len(kept) >= limit:
                break
            if least is None:
                least = score * CODE_FLOOR if floor else 0.0
            if score < least and self.passages[number].kind in FLOORED_KINDS:
                floored.append((number, score))
                continue
            if query is not None and self._lone_kind(number):
                if asked is None:
                    asked = set(self._weighted(query))
                if len(asked.intersection(self.tokens(number))) < SHARED_WORDS:
                    deferred.append((number, score))
                    continue
            kept.append((number, score))
        # Weak code (deferred or floored) stays off the first page: it follows only once the others fill it.
        listed = kept + deferred + floored if len(kept) >= FLOOR_PLACES else kept
        return listed[:limit]

    def _lone_kind(self, number: int) -> bool:
        """Whether passage ``number`` is what :data:`SHARED_WORDS` applies to: a unit of :data:`LONE_WORD_KINDS`
        (a commented command) or a line of configuration (:data:`CONFIG_LINE`)."""
        passage = self.passages[number]
        return passage.kind in LONE_WORD_KINDS or (passage.kind == "code" and CONFIG_LINE.fullmatch(
            passage.text) is not None)

    def runs(self) -> list[int]:
        """Each passage's run number: consecutive code units (:data:`CODE_UNIT_KINDS`) of one source under one
        heading share one (a code block cut into its commands); every other passage has its own."""
        if self._runs is None:
            runs: list[int] = []
            previous = None
            for p in self.passages:
                same = (previous is not None and p.kind in CODE_UNIT_KINDS and previous.kind in CODE_UNIT_KINDS
                        and p.source == previous.source and p.heading == previous.heading)
                runs.append(runs[-1] if same else (runs[-1] + 1 if runs else 0))
                previous = p
            self._runs = runs
        return self._runs

    def _with_best_block(self, ranked: list[tuple[int, float]], lexical: dict[int, float], final: Any,
                         ) -> list[tuple[int, float]]:
        """``ranked`` with the best code block represented among its first :data:`BLOCK_SLOTS` (see there).

        ``lexical``: each matched passage's BM25 before kind factors (the block's score is its units' sum, as
        plain BM25 reads the block whole); ``final``: every passage's score as ranked (its best unit is the one
        that scores best so)."""
        if not lexical:
            return ranked
        runs = self.runs()
        sums: dict[int, float] = {}
        for number in sorted(lexical):
            sums[runs[number]] = sums.get(runs[number], 0.0) + lexical[number]
        best_run = min(sums, key=lambda run: (-sums[run], run))
        members = [number for number in sorted(lexical) if runs[number] == best_run]
        head = ranked[:BLOCK_SLOTS]
        if self.passages[members[0]].kind not in CODE_UNIT_KINDS or any(runs[n] == best_run for n, _ in head):
            return ranked
        unit = min(members, key=lambda number: (-float(final[number]), number))
        if float(final[unit]) <= 0:
            return ranked
        rest = [entry for entry in ranked[BLOCK_SLOTS:] if entry[0] != unit]
        if len(head) >= BLOCK_SLOTS:
            slots = [place for place, (number, _) in enumerate(head) if self.passages[number].kind in FLOORED_KINDS]
            if not slots:
                return ranked
            rest.insert(0, head.pop(slots[-1]))
        return [*head, (unit, float(final[unit])), *rest]

    def _sparse_scores(self, query: Query, **options: bool) -> dict[int, float] | None:
        """:meth:`scores` of the passages holding a query word (the others score 0), in plain Python:
        None when a signal it does not compute is on (the heading or proximity weights, the meaning)."""
        scored = self._sparse_scored(query, **options)
        return None if scored is None else scored[0]

    def _sparse_scored(self, query: Query, *, use_heading: bool = True, use_proximity: bool = True,
                       use_kinds: bool = True, use_semantic: bool = True,
                       ) -> tuple[dict[int, float], dict[int, float]] | None:
        """:meth:`_sparse_scores`, and the BM25 part of them before kind factors (or None, as there).

        Every step is :meth:`scores`' float32 arithmetic (a sum or product of two float32 values,
        computed in double and rounded once to float32, is float32's own), in the same order, so
        the ranking is the same to the bit; it touches only the query words' passages, and a
        one-shot ``find`` does not import numpy for it.
        """
        if (use_heading and WEIGHT_HEADING) or (use_proximity and WEIGHT_PROXIMITY) or (
                use_semantic and self.vectors is not None and query.semantic):
            return None
        weighted = self._weighted(query)
        total: dict[int, float] = {}
        body = self.body.scores
        for weight, ids in ids_by_weight(self.body, weighted).items():
            group: dict[int, float] = {}
            for token_id in ids:
                start, end = int(body["indptr"][token_id]), int(body["indptr"][token_id + 1])
                for number, value in zip(body["indices"][start:end].tolist(), body["data"][start:end].tolist(),
                                         strict=True):
                    group[number] = as_float32(group.get(number, 0.0) + value)
            factor = as_float32(weight)
            for number, value in group.items():
                total[number] = as_float32(total.get(number, 0.0) + as_float32(factor * value))
        lexical = dict(total)
        if use_kinds:
            for number, value in total.items():
                total[number] = as_float32(value * as_float32(KIND_WEIGHTS.get(self.passages[number].kind, 1.0)))
        return total, lexical


def passage_meaning(passage: Passage) -> str:
    """What the semantic signal embeds of a passage: its heading path and its text."""
    return f"{passage.heading}. {passage.text}" if passage.heading else passage.text


def _close_pairs(tokens: Sequence[str], weighted: dict[str, float]) -> float:
    """How many pairs of distinct query words occur within PROXIMITY_WINDOW words of each other."""
    positions = [(i, t) for i, t in enumerate(tokens) if t in weighted]
    pairs = set()
    for a in range(len(positions)):
        i, first = positions[a]
        for b in range(a + 1, len(positions)):
            j, second = positions[b]
            if j - i > PROXIMITY_WINDOW:
                break
            if first != second:
                pairs.add((first, second) if first < second else (second, first))
    return float(len(pairs))
