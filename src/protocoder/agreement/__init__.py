"""Inter-rater agreement engine: chance-corrected coefficients with bootstrap intervals.

Pure library code (numpy and pandas only): it never imports the terminal UI or the CLI.
"""

from ._compute import DEFAULT_SEED, POOLED_GROUP, compute_agreement
from ._csv import read_ratings_csv
from ._errors import AgreementInputError
from ._report import (
    COEFFICIENT_NAMES,
    EVIDENCE_NAMES,
    AgreementReport,
    Coefficient,
    ConfusionMatrix,
    Disagreement,
    GroupResult,
)

__all__ = [
    "COEFFICIENT_NAMES",
    "DEFAULT_SEED",
    "EVIDENCE_NAMES",
    "POOLED_GROUP",
    "AgreementInputError",
    "AgreementReport",
    "Coefficient",
    "ConfusionMatrix",
    "Disagreement",
    "GroupResult",
    "compute_agreement",
    "read_ratings_csv",
]
