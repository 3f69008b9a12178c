#!/usr/bin/env python
"""Rule-bot figures: self-play strength of every bot (2-5 players, 6- and 7-card hands)
and rollout speed of the strongest bot on one core. See lbs_pz/bench/bots.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the source tree's lbs_pz

from lbs_pz.bench.bots import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
