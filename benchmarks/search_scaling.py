#!/usr/bin/env python
"""How search cost grows with the hand size: SPARTA (exact belief) against LBS.

For 2-player games with 5-, 6- and 7-card hands (7 with 4 hint tokens, the paper's
variant), seat 0 searches over the first `--moves` moves of `--games` games, once with
SPARTA and once with LBS-inf, with the same rollouts per decision. Printed per variant:
seconds per search decision (belief updates included), the exact belief's peak memory,
and LBS's fallback rate. SPARTA's exact belief enumerates every hand the seat may hold;
with 7 cards that exceeds its memory cap and it stops with BeliefMemoryError (the paper's
64 GB out-of-memory case), while LBS's cost does not depend on the number of hands.

The belief for LBS is the same at every hand size: by default the grounded belief
filtered through the blueprint ("grounded+cf"), which needs no training (the shipped
learned belief was trained for 5 cards only; `--belief learned+cf` with `--hand-sizes 5`).

    python benchmarks/search_scaling.py --games 2 --moves 12 --rollouts 256
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.search.agents import LBSAgent, SpartaAgent
from lbs_pz.search.beliefs import BeliefMemoryError, ExactBelief, make_belief

VARIANTS = {
    5: HanabiConfig(players=2, hand_size=5),
    6: HanabiConfig(players=2, hand_size=6),
    7: HanabiConfig(players=2, hand_size=7, max_information_tokens=4),
}


def time_searcher(make_agent, config, games: int, moves: int, seed: int):
    """Seconds per seat-0 decision over the first `moves` moves of each game; the agent
    of the last game (for its statistics)."""
    blueprint = RuleBot("strong")
    seconds, agent = [], None
    for game in range(games):
        agent = make_agent()
        state = HanabiState(config, seed=int(deal_seeds(EVAL, seed, game, 1)[0]))
        while not state.is_terminal and state.num_moves_played < moves:
            if state.current_player == 0:
                start = time.perf_counter()
                move = agent.act(state)
                seconds.append(time.perf_counter() - start)
            else:
                move = blueprint.act(state)
            state.apply(move)
    return float(np.mean(seconds)), agent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2, help="games per variant (default 2)")
    parser.add_argument("--moves", type=int, default=12,
                        help="moves played per game, both seats (default 12)")
    parser.add_argument("--rollouts", type=int, default=256, help="worlds per decision")
    parser.add_argument("--hand-sizes", default="5,6,7", help="comma-separated (default 5,6,7)")
    parser.add_argument("--memory-cap-gib", type=float, default=8.0,
                        help="the exact belief's memory cap in GiB (default 8)")
    parser.add_argument("--belief", default="grounded+cf", help="LBS belief (default grounded+cf)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    blueprint = RuleBot("strong")
    cap = int(args.memory_cap_gib * 2**30)

    rows = []
    for size in [int(s) for s in args.hand_sizes.split(",")]:
        config = VARIANTS[size]
        kind = args.belief
        lbs_s, lbs = time_searcher(
            lambda: LBSAgent(blueprint, make_belief(kind, blueprint=blueprint), depth=-1,
                             rollouts=args.rollouts, seed=args.seed),
            config, args.games, args.moves, args.seed)
        fallback = lbs.fallbacks / max(lbs.decisions, 1)
        try:
            sparta_s, sparta = time_searcher(
                lambda: SpartaAgent(blueprint, belief=ExactBelief(blueprint, memory_cap=cap),
                                    rollouts=args.rollouts, seed=args.seed),
                config, args.games, args.moves, args.seed)
            peak = f"{sparta.belief.peak_memory_bytes / 2**20:,.0f} MiB"
            sparta_cell = f"{sparta_s:.2f}"
        except BeliefMemoryError as err:
            sparta_s, peak, sparta_cell = float("nan"), "over the cap", "stopped"
            print(f"{size} cards, SPARTA: {err}")
        rows.append((size, config.max_information_tokens, sparta_cell, peak, lbs_s, kind,
                     fallback, sparta_s / lbs_s))
        print(f"{size} cards done: SPARTA {sparta_cell} s/decision, LBS {lbs_s:.2f} s/decision",
              flush=True)

    print(f"\nSeconds per seat-0 decision over the first {args.moves} moves of {args.games} "
          f"game(s), {args.rollouts} worlds per decision, strong rule blueprint:\n")
    print("| hand | hint tokens | SPARTA s/decision | exact belief peak | LBS-inf s/decision "
          "| LBS belief | LBS fallback | SPARTA / LBS |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|")
    base = {r[0]: r for r in rows}
    for size, tokens, sparta_cell, peak, lbs_s, kind, fallback, ratio in rows:
        print(f"| {size} | {tokens} | {sparta_cell} | {peak} | {lbs_s:.2f} | {kind} | "
              f"{100 * fallback:.0f}% | {'' if np.isnan(ratio) else f'{ratio:.1f}x'} |")
    if 5 in base:
        for size, row in base.items():
            if size != 5:
                growth = (f"SPARTA x{row[7] * row[4] / (base[5][7] * base[5][4]):.1f}, "
                          if not np.isnan(row[7]) else "SPARTA stopped, ")
                print(f"{size} vs 5 cards: {growth}LBS x{row[4] / base[5][4]:.2f} per decision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
