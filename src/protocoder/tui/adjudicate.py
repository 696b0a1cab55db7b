"""The adjudication app; it lives in :mod:`protocoder.tui.adjudication` (split by idea), and this
name stays importable for the command line, the browser and anything written against it."""

from .adjudication import NO_TAKE, AdjudicationApp, AdjudicationScreen, QuotesModal, make_adjudication_app

__all__ = ["NO_TAKE", "AdjudicationApp", "AdjudicationScreen", "QuotesModal", "make_adjudication_app"]
