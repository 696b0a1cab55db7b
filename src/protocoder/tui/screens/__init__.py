"""Screens of the coding app, one per module."""

from .bibtex import BibtexScreen
from .coding import CodingScreen
from .confirm import ConfirmModal
from .conflict import ConflictModal
from .error import RETRY, ErrorScreen
from .grid import GridScreen
from .guided import GuidedModal
from .keys import FOCUS_KEYS, FRONT_KEYS, KeysModal, show_keys
from .progress import ProgressScreen
from .protocol_form import ProtocolFormScreen
from .protocol_list import ProtocolListScreen
from .reason import ReasonModal
from .reviewer import ReviewerModal
from .source import SourceModal

__all__ = [
    "FOCUS_KEYS",
    "FRONT_KEYS",
    "RETRY",
    "BibtexScreen",
    "CodingScreen",
    "ConfirmModal",
    "ConflictModal",
    "ErrorScreen",
    "GridScreen",
    "GuidedModal",
    "KeysModal",
    "ProgressScreen",
    "ProtocolFormScreen",
    "ProtocolListScreen",
    "ReasonModal",
    "ReviewerModal",
    "SourceModal",
    "show_keys",
]
