"""Two blueprints' greedy self-play on the same evaluation deals, and their paired
difference: what a net that learned a search's moves (`lbs-pz distill --search-games`)
gains over the net it started from.

    OMP_NUM_THREADS=1 python benchmarks/self_play_pair.py --blueprint lstm:conventions_maxq_2p \\
        --candidate lstm:conventions_expert_2p --games 2000

Every game is deal i of the evaluation stream of run --seed, played by the blueprint in
every seat (batched); prints each blueprint's mean +- s.e.m. and perfect-game rate, then
the candidate's paired gain (mean of the per-deal score differences +- its s.e.m.) and
the share of deals it scores higher, equal and lower.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiBatch, HanabiConfig  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.search.stats import mean_sem  # noqa: E402


def self_play_scores(spec: str, games: int, seed: int = 0) -> np.ndarray:
    """Final scores of `spec`'s self-play on evaluation deals 0 .. games-1 of run
    `seed`, int (games,)."""
    blueprint = load_blueprint(spec)
    batch = HanabiBatch(HanabiConfig(), games, seeds=deal_seeds(EVAL, seed, 0, games))
    while not batch.terminals().all():
        batch.step(blueprint.act_batch(batch))
    return batch.scores().astype(np.int64)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprint", required=True, help="the reference blueprint spec")
    parser.add_argument("--candidate", required=True, help="the blueprint compared with it")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be >= 2")
    try:
        scores = {spec: self_play_scores(spec, args.games, args.seed)
                  for spec in (args.blueprint, args.candidate)}
    except ValueError as err:
        parser.error(str(err))
    perfect = HanabiConfig().colors * HanabiConfig().ranks
    print(f"greedy self-play on {args.games} evaluation deals (run seed {args.seed}):")
    print("| blueprint | mean +- s.e.m. | perfect |")
    print("|---|---:|---:|")
    for spec, s in scores.items():
        m, e = mean_sem(s.astype(np.float64))
        print(f"| {spec} | {m:.3f} +- {e:.3f} | {np.mean(s == perfect):.1%} |")
    diff = (scores[args.candidate] - scores[args.blueprint]).astype(np.float64)
    m, e = mean_sem(diff)
    print(f"{args.candidate} - {args.blueprint}, paired on the same deals: {m:+.3f} +- {e:.3f} "
          f"({m / e if e else float('inf'):+.1f} s.e.); higher on {np.mean(diff > 0):.1%} of "
          f"deals, equal on {np.mean(diff == 0):.1%}, lower on {np.mean(diff < 0):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
