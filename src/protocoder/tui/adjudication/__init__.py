"""The adjudication app, by idea:

    quotes   the dialog with every reviewer's quotes of a cell, whole
    comment  the dialog that adds a comment to the shown cell
    screen   the unresolved cells, the reviewers' cells, and the decision with its reason
    app      the app around the screen (keys, palette) and its factory
"""

from .app import AdjudicationApp, make_adjudication_app
from .quotes import QuotesModal
from .screen import NO_TAKE, AdjudicationScreen

__all__ = ["NO_TAKE", "AdjudicationApp", "AdjudicationScreen", "QuotesModal", "make_adjudication_app"]
