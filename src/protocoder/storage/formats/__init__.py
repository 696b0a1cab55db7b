"""Turn the plain data of each workspace file into model objects, collecting problems.

One parser per kind of file, one module each: the rubric (:mod:`.rubric`),
``protocoder.yaml`` (:mod:`.settings`), a protocol and its sources (:mod:`.protocols`), a
reviewer's sheet (:mod:`.sheets`), a protocol's adjudications (:mod:`.adjudications`). Each
checks that file's own structure (keys, types, allowed values) with a
:class:`~protocoder.storage.findings.Reader`, which records problems by key path in
:class:`~protocoder.storage.findings.Findings`. Checks that need several files (citation
keys, codes for unknown protocols) live in :mod:`protocoder.storage.workspace`.
"""

from __future__ import annotations

from .adjudications import ADJUDICATION_KEYS, parse_consensus
from .protocols import SOURCE_KEYS, openable_url, parse_protocol, url_problem
from .rubric import parse_rubric
from .settings import Settings, parse_settings
from .sheets import CELL_KEYS, QUOTE_KEYS, parse_sheet

__all__ = [
    "ADJUDICATION_KEYS",
    "CELL_KEYS",
    "QUOTE_KEYS",
    "SOURCE_KEYS",
    "Settings",
    "parse_consensus",
    "parse_protocol",
    "parse_rubric",
    "parse_settings",
    "parse_sheet",
    "openable_url",
    "url_problem",
]
