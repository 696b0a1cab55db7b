"""The one exception type the agreement engine raises for bad input."""

from __future__ import annotations

from pathlib import Path


class AgreementInputError(ValueError):
    """Ratings that cannot be analysed: a bad file, a missing column, an undeclared code.

    ``path`` and ``row`` are set when the problem comes from a CSV file (header = row 1);
    ``unit`` and ``rater`` when it can be pinned to one rating.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        row: int | None = None,
        unit: str | None = None,
        rater: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.row = row
        self.unit = unit
        self.rater = rater
