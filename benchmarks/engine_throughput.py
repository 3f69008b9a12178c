#!/usr/bin/env python
"""Engine throughput of lbs_pz against the Hanabi Learning Environment (HLE), one core.

Prints a markdown table (figure | lbs_pz | HLE | ratio | target | pass/fail) of:
  1. batched random-legal self-play in C (moves/s) vs HLE's C++ core (a driver,
     benchmarks/hle_random_play.cc, compiled against HLE 0.0.4's sources; these are
     fetched with `pip download` into ~/.cache/lbs_pz/hle-0.0.4 on first use);
  2. the single-state Python loop legal_mask + encode + apply (steps/s) vs HLE's
     rl_env.HanabiEnv.step, over the same number of games;
  3. HanabiState.clone() (clones/s) vs HLE's state.copy();
  4. HanabiBatch.encode of mid-game states (vectors/s) vs HLE's ObservationEncoder.encode.
Progress goes to stderr. The measurements live in lbs_pz/bench/engine_throughput.py.

Usage:  python benchmarks/engine_throughput.py [--quick] [--games N] [--json PATH]
"""

import os

# One thread for OpenMP/BLAS: must be set before numpy is first imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the source tree's lbs_pz

from lbs_pz.bench.engine_throughput import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
