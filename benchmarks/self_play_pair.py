"""Blueprints' self-play on the same evaluation deals, and each one's paired difference
with the first: e.g. what a net that learned a search's moves (`lbs-pz distill
--search-games`) gains over the net it started from, and where the strong rule bot stands.

    OMP_NUM_THREADS=1 python benchmarks/self_play_pair.py --games 5000 \\
        --blueprints strong,lstm:conventions_expert_value_2p

Every game is deal i of the evaluation stream of run --seed, played by the blueprint in
every seat (batched); prints each blueprint's mean +- s.e.m. and perfect-game rate, and
for each after the first its paired difference with the first (mean of the per-deal score
differences +- its s.e.m.) and the share of deals it scores higher, equal and lower.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiConfig  # noqa: E402
from lbs_pz.eval.evaluate import played_chunks  # noqa: E402
from lbs_pz.search.stats import mean_sem  # noqa: E402


def self_play_scores(spec: str, games: int, seed: int = 0) -> np.ndarray:
    """Final scores of `spec`'s self-play on evaluation deals 0 .. games-1 of run
    `seed`, int (games,)."""
    return np.concatenate([batch.scores() for batch, _ in
                           played_chunks(load_blueprint(spec), HanabiConfig(), games, seed)]
                          ).astype(np.int64)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", required=True,
                        help="comma-separated blueprint specs; the first is the reference")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    specs = [s.strip() for s in args.blueprints.split(",") if s.strip()]
    if len(specs) < 2:
        parser.error("--blueprints needs at least two specs")
    if args.games < 2:
        parser.error("--games must be >= 2")
    try:
        scores = [self_play_scores(spec, args.games, args.seed) for spec in specs]
    except ValueError as err:
        parser.error(str(err))
    perfect = HanabiConfig().colors * HanabiConfig().ranks
    print(f"self-play on {args.games} evaluation deals (run seed {args.seed}); paired: "
          f"the per-deal difference with {specs[0]}")
    print("| blueprint | mean +- s.e.m. | perfect | paired | paired / s.e. "
          "| higher / equal / lower |")
    print("|---|---:|---:|---:|---:|---|")
    for spec, s in zip(specs, scores):
        m, e = mean_sem(s.astype(np.float64))
        row = f"| {spec} | {m:.3f} +- {e:.3f} | {np.mean(s == perfect):.1%} |"
        if spec is specs[0]:
            print(row + " | | |")
            continue
        diff = (s - scores[0]).astype(np.float64)
        dm, de = mean_sem(diff)
        print(row + f" {dm:+.3f} +- {de:.3f} | {dm / de if de else float('inf'):+.1f} | "
              f"{np.mean(diff > 0):.1%} / {np.mean(diff == 0):.1%} / {np.mean(diff < 0):.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
