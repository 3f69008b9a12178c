#!/usr/bin/env python
"""Search figures in the shape of the LBS paper's Table 2: blueprint, SPARTA and LBS-k on
the same 2-player deals, one searching seat, through `lbs-pz compare`.

    python benchmarks/search.py --games 500 --rollouts 512 --json results/search.json

Other variants: `--hand-size 6`, or `--hand-size 7 --max-information-tokens 4` (the
paper's 7-card setting). See `lbs-pz compare --help` for every option.
"""

import sys


from lbs_pz.cli import main

DEFAULTS = ["--methods", "blueprint,sparta,lbs-1,lbs-2,lbs-4,lbs-8,lbs-16,lbs-32,lbs-inf",
            "--games", "500", "--plot", "search_score_vs_time.png"]

if __name__ == "__main__":
    user = sys.argv[1:]
    given = {arg for arg in user if arg.startswith("--")}
    extra = []
    for i in range(0, len(DEFAULTS), 2):
        if DEFAULTS[i] not in given:
            extra += DEFAULTS[i:i + 2]
    sys.exit(main(["compare", *extra, *user]))
