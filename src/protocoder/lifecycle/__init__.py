"""The review's lifecycle: from independent codes to a published, correctable record.

The flow, one module per step::

    consensus     the rule that turns reviewers' codes into one final code per cell
    adjudication  recorded decisions on disagreements (``consensus.yaml``, append-only)
    view          the final view: what every table shows, as plain data
    releases      frozen releases (``releases/<label>/``): the view a paper cites
    corrections   the hash-chained ledger of corrections to released cells
    history       reading: releases + corrections → the current view, and the checks that keep it honest
    amend         writing: corrections and withdrawals of released cells
    cell_set      one reviewer's cell set from outside the app, with its correction after a release
    cellref       a cell named as ``protocol/field``
    journal       the two-file write of an adjudication that corrects a released cell
    recheck       cells coded under an older definition, acknowledged
    gitmerge      git's merge driver for the append-only files; githistory: what git remembers
    digests       the canonical JSON hash every recorded hash is made with

Reviewers' files are raw records and are never rewritten by anything here: decisions and
corrections are appended, and the current view is computed from them.

The lifecycle's operations have one entry point, this package: :func:`freeze`,
:func:`correct`, :func:`withdraw`, :func:`adjudicate` and :func:`recheck` (``publish``, the
CLI and the apps call them from here). They are loaded when first used, so that importing a
part of the package (storage reads :mod:`consensus`) costs nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .adjudication import adjudicate
    from .amend import correct, withdraw
    from .recheck import recheck
    from .releases import freeze

_ENTRY_POINTS = {"freeze": "releases", "correct": "amend", "withdraw": "amend", "adjudicate": "adjudication",
                 "recheck": "recheck"}
__all__ = ["adjudicate", "correct", "freeze", "recheck", "withdraw"]


__getattr__ = lazy_names(__name__, globals(), _ENTRY_POINTS)
