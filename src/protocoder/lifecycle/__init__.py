"""The review's lifecycle: from independent codes to a published, correctable record.

The flow, one module per step::

    consensus     the rule that turns reviewers' codes into one final code per cell
    adjudication  recorded decisions on disagreements (``consensus.yaml``, append-only)
    view          the final view: what every table shows, as plain data
    releases      frozen releases (``releases/<label>/``): the view a paper cites
    corrections   the hash-chained ledger of corrections to released cells
    history       releases + corrections → the current view, and the checks that keep it honest
    digests       the canonical JSON hash every recorded hash is made with

Reviewers' files are raw records and are never rewritten by anything here: decisions and
corrections are appended, and the current view is computed from them.
"""

from __future__ import annotations
