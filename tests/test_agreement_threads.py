"""The agreement engine loads numpy with one BLAS thread (``agreement/_numpy.py``), and its
numbers do not depend on it.

* imported in a fresh process, the package leaves OpenBLAS with one thread and the environment
  as it was; a thread count the user set is kept;
* the engine's one BLAS product (resamples' unit counts times the statistics, in
  ``resampled_sums`` when units come in many kinds) gives the same bits on one thread as on two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("threadpoolctl")

PROBE = """
import json, os
import protocoder.agreement
from threadpoolctl import threadpool_info
blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
left = [k for k in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ]
print(json.dumps({"threads": blas, "left": left}))
"""

PRODUCT = """
import hashlib
import numpy as np
import protocoder.agreement
from protocoder.agreement._formulas import resampled_sums
stats = np.random.default_rng(3).random((3000, 7))  # every row distinct: the BLAS product, not the tally
sums = resampled_sums(stats, 300, np.random.default_rng(5))
print(hashlib.sha256(np.ascontiguousarray(sums).tobytes()).hexdigest())
"""


def _run(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                              "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**clean, **env},
                          check=True)
    return done.stdout.strip()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS uses one thread on one core anyway")
def test_agreement_loads_numpy_with_one_blas_thread_and_restores_the_environment() -> None:
    probe = json.loads(_run(PROBE))
    assert probe["threads"] and set(probe["threads"]) == {1}
    assert probe["left"] == []


def test_a_thread_count_the_user_set_is_kept() -> None:
    probe = json.loads(_run(PROBE, OPENBLAS_NUM_THREADS="2"))
    assert probe["threads"] and set(probe["threads"]) == {min(2, os.cpu_count() or 1)}
    assert probe["left"] == ["OPENBLAS_NUM_THREADS"]


def test_the_blas_product_has_the_same_bits_on_one_thread_and_on_two() -> None:
    assert _run(PRODUCT) == _run(PRODUCT, OPENBLAS_NUM_THREADS="2")
