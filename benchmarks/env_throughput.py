#!/usr/bin/env python
"""Environment throughput: AEC env vs PettingZoo's hanabi_v5, the native VecEnv, and
MaskablePPO training speed. See lbs_pz/bench/env_throughput.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the source tree's lbs_pz

from lbs_pz.bench.env_throughput import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
