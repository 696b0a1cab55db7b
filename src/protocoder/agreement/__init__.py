"""Inter-rater agreement engine: chance-corrected coefficients with bootstrap intervals.

Pure library code: numpy, and pandas only for the DataFrame API (imported when a DataFrame
is used, so reading a CSV and computing from columns never load it). It never imports the
terminal UI or the CLI.
"""

from . import _numpy  # noqa: F401 - first: it loads numpy with one BLAS thread (see there)
from ._compute import DEFAULT_SEED, POOLED_GROUP, agreement_of_columns, compute_agreement
from ._csv import RatingsTable, read_ratings_csv, read_ratings_table
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
    "RatingsTable",
    "agreement_of_columns",
    "compute_agreement",
    "read_ratings_csv",
    "read_ratings_table",
]
