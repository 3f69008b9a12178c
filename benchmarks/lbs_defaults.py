#!/usr/bin/env python
"""`LBSAgent(bp)` with nothing but its defaults, against the blueprint on the same deals.

For each blueprint spec, plays evaluation deals twice: the blueprint in both seats, then
`LBSAgent(bp)` (no other argument) on seat 0. Prints the defaults the agent chose, each
method's mean, the paired gain with its standard error, and seconds per game. The defaults
never make a blueprint worse silently: this measures that they also help.

    python benchmarks/lbs_defaults.py --blueprint strong --games 30
    python benchmarks/lbs_defaults.py --games 5 \
        --blueprint py:examples/my_blueprint.py:HintPlayDiscard
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.search.agents import LBSAgent  # noqa: E402
from lbs_pz.search.stats import mean_sem  # noqa: E402


def play(state: HanabiState, blueprint, searcher=None) -> int:
    while not state.is_terminal:
        agent = searcher if searcher is not None and state.current_player == 0 else blueprint
        state.apply(agent.act(state))
    return state.score


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprint", default="strong", help="a blueprint spec (lbs-pz --help)")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--first", type=int, default=0, help="first evaluation deal")
    parser.add_argument("--seed", type=int, default=0, help="run seed of the evaluation deals")
    args = parser.parse_args(argv)
    config = HanabiConfig()
    blueprint = load_blueprint(args.blueprint)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = LBSAgent(blueprint)
    print(f"LBSAgent({args.blueprint}) defaults: rollouts={agent.rollouts}, depth={agent.depth}")
    for line in agent.defaults:
        print(f"  {line}")
    for w in caught:
        print(f"  warning: {w.message}")
    base, searched, seconds = [], [], []
    for game, seed in enumerate(deal_seeds(EVAL, args.seed, args.first, args.games)):
        base.append(play(HanabiState(config, seed=int(seed)), blueprint))
        start = time.perf_counter()
        searched.append(play(HanabiState(config, seed=int(seed)), blueprint, agent))
        seconds.append(time.perf_counter() - start)
        print(f"game {args.first + game}: blueprint {base[-1]}, LBS {searched[-1]} "
              f"({seconds[-1]:.1f} s)", flush=True)
    base, searched = np.array(base, float), np.array(searched, float)
    b, s, g = mean_sem(base), mean_sem(searched), mean_sem(searched - base)
    print("\n| method | games | mean +- s.e.m. | paired gain | s/game |\n|---|---:|---:|---:|---:|")
    print(f"| {args.blueprint} | {len(base)} | {b[0]:.3f} +- {b[1]:.3f} | | |")
    print(f"| LBSAgent(bp) defaults | {len(base)} | {s[0]:.3f} +- {s[1]:.3f} | "
          f"{g[0]:+.3f} +- {g[1]:.3f} | {np.mean(seconds):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
