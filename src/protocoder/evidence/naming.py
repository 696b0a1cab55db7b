"""A new source's default id: short, as a citation key is, because a reviewer types it.

``protocoder quote add P/F --source ID``, ``find``'s location column and every rendered quote carry the
id, so a slug of a whole title (``teambench-evaluating-structured-llm-teamwork-via``, 48 characters) cut
the location column and had to be typed in full. Reference managers name an entry by a short key for
the same reason; here the key is the document's own name where its title gives one.
"""

from __future__ import annotations

import re

from ..model import slugify

SHORT_ID_LENGTH = 32
"""At most this many characters of the title's words, cut between its words as written (``Long-Horizon``
stays whole; a longer first word is kept whole, up to :data:`..model.MAX_ID_LENGTH`)."""

_SUBTITLE = re.compile(r"\s*:\s+|\s+[—–-]\s+")
"""What separates a name from its subtitle: ``WorkArena: A Benchmark …``, ``Core Runner — Design``."""
_SHORT_NAME = re.compile(r"\(\s*([^\s()]{2,20})\s*\)\s*$")
"""A one-word name in brackets at the end: ``Berkeley Function Calling Leaderboard (BFCL)``."""
_EDGE_WORDS = frozenset(["a", "an", "the", "of", "for", "in", "on", "to", "and", "with", "via", "by", "at", "from"])
"""Words an id neither starts nor ends with (``the-minimal-ai…``, ``…-lifecycle-in``)."""


def short_id(title: str) -> str:
    """A short slug for a source titled ``title`` ("" when it has no letter or digit).

    The name before a subtitle (``WorkArena: A Benchmark for …`` → ``workarena``); else a one-word
    short name in brackets at the end, when it starts as the title does (``Behaviour Suite for
    Reinforcement Learning (bsuite)`` → ``bsuite``; ``Installation (Linux)`` keeps its words); else the
    title's first words, up to :data:`SHORT_ID_LENGTH` characters, without a leading article or a
    trailing preposition (``The Continuous-Improvement Stack for Agents`` → ``continuous-improvement-stack``).
    """
    name = title.strip()
    bracketed = _SHORT_NAME.search(name)
    if bracketed:
        short = slugify(bracketed.group(1))
        if short and short[0] == slugify(name)[:1]:
            return short
    head = _SUBTITLE.split(name, maxsplit=1)[0]
    words = [word for word in map(slugify, (head if slugify(head) else name).split()) if word]
    while len(words) > 1 and words[0] in _EDGE_WORDS:
        words.pop(0)
    kept: list[str] = []
    for word in words:
        if kept and len("-".join([*kept, word])) > SHORT_ID_LENGTH:
            break
        kept.append(word)
    while len(kept) > 1 and kept[-1] in _EDGE_WORDS:
        kept.pop()
    return "-".join(kept)
