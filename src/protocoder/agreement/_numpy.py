"""numpy loaded with one BLAS thread, unless the user chose how many.

OpenBLAS starts its worker threads when numpy loads, and a worker waits for work by spinning
on a core for a while: in a one-shot ``render`` or ``agree`` that is CPU time spent on
nothing (about 50 ms of a 1,000-protocol render). The engine's products are small (a
chunk of resamples times a few statistics per unit) and give the same bits on one thread
(``tests/test_agreement_threads.py``), so the library is told, while numpy loads, to start
none; the variable is then removed again, so that programs this process starts, and other
libraries loaded later, see the environment as it was. A thread count the user set (any of
the variables OpenBLAS, MKL or OpenMP read) is left alone, as is a numpy already loaded.
"""

from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables that set BLAS's thread count when it loads: any of them set, nothing is changed."""


def load_numpy() -> None:
    """Import numpy, with one BLAS thread where nobody said otherwise."""
    if "numpy" in sys.modules or any(name in os.environ for name in THREAD_VARIABLES):
        import numpy  # noqa: F401 - loaded for the package's modules
        return
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]


load_numpy()  # on import: the package's __init__ imports this module before any module using numpy
