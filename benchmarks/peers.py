"""The peer processes the benchmarks measure protocoder against, in one place.

Each is a small Python program run as ``python -c PROGRAM ARGS``: what a user would write
without protocoder to get the same figure (or the floor every process pays). ``run.py``
and ``bench_agreement.py`` both import them from here, so that neither imports the other.
"""

from __future__ import annotations

# A lean process computing nominal alpha: what a user would write with the krippendorff package.
KRIPPENDORFF = """
import csv, sys
import numpy as np
import krippendorff
with open(sys.argv[1], newline="", encoding="utf-8") as handle:
    rows = list(csv.reader(handle))[1:]
units, raters, codes = {}, {}, {}
for unit, rater, code in rows:
    units.setdefault(unit, len(units)); raters.setdefault(rater, len(raters)); codes.setdefault(code, len(codes))
matrix = np.full((len(raters), len(units)), np.nan)
for unit, rater, code in rows:
    matrix[raters[rater], units[unit]] = codes[code]
print(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
"""

# Python irrCAC (pandas): the coefficients agree prints that irrCAC has.
IRRCAC = """
import sys
import pandas as pd
from irrCAC.raw import CAC
ratings = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
cac = CAC(ratings.pivot(index="unit", columns="rater", values="code"))
for coefficient in (cac.fleiss, cac.gwet, cac.krippendorff, cac.bp):
    print(coefficient()["est"]["coefficient_value"])
"""

# The floor for loading a workspace: parse every YAML file, nothing else.
YAML_FLOOR = """
import sys
from pathlib import Path
import yaml
root = Path(sys.argv[1])
for path in sorted(root.rglob("*.yaml")):
    if "output" not in path.parts and ".protocoder" not in path.parts:
        with path.open("rb") as handle:
            yaml.load(handle, Loader=yaml.CSafeLoader)
"""

# The floor of any Python command: the interpreter starting and stopping, nothing imported.
BARE = "pass"
