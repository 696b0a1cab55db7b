"""Cells in and out of the workspace as CSV or JSON, for spreadsheets and scripts.

The package's modules: :mod:`.columns` (the columns, the formula escape both ways),
:mod:`.export` (cells out as CSV or JSON), :mod:`.csvread` (a CSV streamed row by row, each
bad row named), :mod:`.importing` (rows checked against the workspace, then written).

Export writes one row per reviewer cell. Import reads the same columns, checks *every*
row before anything is written (one error per bad row, with its row number; the header
is row 1), and then writes through the store: every changed reviewer file, or none.

Import changes only what the CSV says: a column that is absent (``source``, ``basis``,
``cites``, ``quotes``) leaves that attribute of every cell as it is; an empty value in a
column that is present clears it. A ``status`` column (as ``export --view cells`` may carry)
is read and ignored. The ``assisted`` column (``yes`` or empty, as export writes it) is applied:
``yes`` marks the cell as coded with candidate passages shown, an empty value clears the mark,
and no column leaves it as it is; changing it alone keeps the cell's rubric version and time.
The ``quotes`` column holds each cell's quotes as a JSON array of quote
records, as export writes it (at least ``source`` and ``text`` per quote): a quote the cell
already holds is kept as it is; any other is checked against its source's snapshot, as
``quote add`` checks one, and a row with a quote that is not there is refused, naming the
closest passage. Text is taken exactly as written, so export then import changes nothing.

Values a spreadsheet would run as formulas (``=cmd()``, ``+1``, ``-x``, ``@f``) are
neutralised on export with a leading apostrophe, the spreadsheet's own text marker. The
escape is reversible: a value that already starts with apostrophes before a formula
character gets one more, so every text comes back exactly. Import removes that apostrophe
only from values protocoder itself exported with it: the value without it is what the cell
holds now, or the file is an export (its header is exactly ``export``'s columns) and the cell
is new. Any other leading apostrophe (``'-v' flag``, typed by hand) is kept as written.

A header may start with byte-order marks (one or more, as a file saved twice through an
editor has); any other invisible character in a column name is refused, named.
"""

from __future__ import annotations

from .columns import (
    ASSISTED_VALUES,
    CELL_COLUMNS,
    EARLIER_EXPORT_COLUMNS,
    EXPORT_COLUMNS,
    FORMULA_PREFIXES,
    IGNORED_COLUMNS,
    IMPORT_COLUMNS,
    REQUIRED_COLUMNS,
    TEXT_COLUMNS,
    neutralise,
    unescape,
    unneutralise,
)
from .csvread import IMPORT_LIMIT, read_csv_rows, stream_csv_rows
from .export import cell_rows, to_csv, to_json
from .importing import (
    MAX_REPORTED,
    CsvCheck,
    check_cells_csv,
    checked_cell_rows,
    import_cells,
    import_cells_csv,
    read_cells_csv,
    released_changes,
)

__all__ = [
    "ASSISTED_VALUES", "CELL_COLUMNS", "EARLIER_EXPORT_COLUMNS", "EXPORT_COLUMNS", "FORMULA_PREFIXES",
    "IGNORED_COLUMNS", "IMPORT_COLUMNS", "IMPORT_LIMIT", "MAX_REPORTED", "REQUIRED_COLUMNS", "TEXT_COLUMNS",
    "CsvCheck", "cell_rows", "check_cells_csv", "checked_cell_rows", "import_cells", "import_cells_csv",
    "released_changes",
    "neutralise", "read_cells_csv", "read_csv_rows", "stream_csv_rows", "to_csv", "to_json", "unescape",
    "unneutralise",
]
