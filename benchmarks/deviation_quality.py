#!/usr/bin/env python
"""Are a search's deviations really better? The true gain of each deviation, by belief.

A search deviates from the blueprint when a move beats the blueprint's move in the worlds
its belief samples. Whether that move is really better depends on the belief: in worlds
the seat could not be in, the gain is an illusion. This benchmark plays 2-player games of
the strong blueprint with seat 0 searching (LBS-inf or SPARTA, `--rollouts` worlds per
decision) and, at every deviation, measures the deviation's *true* gain: the move and the
blueprint's move are rolled out `--truth-rollouts` times from the real position with the
seat's real hand (only the undrawn deck re-dealt), which no agent may see, so it is an
unbiased estimate of what the deviation is worth in that game.

    python benchmarks/deviation_quality.py --beliefs learned,learned+cf,exact --games 6

Printed per belief: deviations per game, the gain the search estimated, the true gain
(mean +- s.e. over deviations), and seconds per game.
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
from lbs_pz.search.beliefs import make_belief
from lbs_pz.search.rollout_search import move_returns


def true_gain(state: HanabiState, seat: int, move: int, blueprint_move: int, blueprint,
              rollouts: int, seed: int) -> float:
    """Mean return of `move` minus the blueprint's move from `state` with the seat's real
    hand, over `rollouts` re-deals of the undrawn deck (common to both moves)."""
    hands = np.array([state.hand(seat)] * rollouts)
    seeds = np.random.default_rng(seed).integers(0, 2**62, rollouts)
    returns, _ = move_returns(state, seat, [move, blueprint_move], hands, seeds, blueprint,
                               -1, None)
    return float((returns[0] - returns[1]).mean())


def run(belief: str, games: int, rollouts: int, truth_rollouts: int, seed: int):
    blueprint = RuleBot("strong")
    if belief == "exact":
        agent = SpartaAgent(blueprint, rollouts=rollouts, seed=seed)
    else:
        agent = LBSAgent(blueprint, make_belief(belief, blueprint=blueprint),
                         rollouts=rollouts, depth=-1, seed=seed)
    estimated, true = [], []
    start = time.perf_counter()
    truth_seconds = 0.0
    for game in range(games):
        state = HanabiState(HanabiConfig(), seed=int(deal_seeds(EVAL, seed, game, 1)[0]))
        while not state.is_terminal:
            if state.current_player != 0:
                state.apply(blueprint.act(state))
                continue
            result = agent.search(state)
            if result.deviated:
                i = list(result.moves).index(result.move)
                estimated.append(result.gains[i])
                t0 = time.perf_counter()
                true.append(true_gain(state, 0, result.move, result.blueprint_move, blueprint,
                                      truth_rollouts, seed=game * 1000 + state.num_moves_played))
                truth_seconds += time.perf_counter() - t0
            state.apply(result.move)
    seconds = (time.perf_counter() - start - truth_seconds) / games
    return np.array(estimated), np.array(true), seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--beliefs", default="learned,learned+cf,exact",
                        help="comma-separated: exact (SPARTA) or any LBS belief "
                             "(learned, learned+cf, grounded, grounded+cf)")
    parser.add_argument("--games", type=int, default=6, help="games per belief (default 6)")
    parser.add_argument("--rollouts", type=int, default=256, help="worlds per decision")
    parser.add_argument("--truth-rollouts", type=int, default=400,
                        help="re-deals measuring each deviation's true gain (default 400)")
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args(argv)

    rows = []
    for belief in args.beliefs.split(","):
        est, true, seconds = run(belief, args.games, args.rollouts, args.truth_rollouts,
                                 args.seed)
        sem = true.std(ddof=1) / np.sqrt(len(true)) if len(true) > 1 else float("nan")
        rows.append((belief, len(true) / args.games, est.mean() if len(est) else float("nan"),
                     true.mean() if len(true) else float("nan"), sem, seconds))
        print(f"{belief} done", flush=True)
    print(f"\nSeat 0 searches ({args.rollouts} worlds per decision, strong blueprint, 2p), "
          f"{args.games} games per belief; true gain from {args.truth_rollouts} re-deals "
          f"with the real hand:\n")
    print("| belief | deviations / game | estimated gain | true gain +- s.e. | "
          "true gain / game | s/game |")
    print("|---|---:|---:|---:|---:|---:|")
    for belief, per_game, est, true, sem, seconds in rows:
        name = "exact (SPARTA)" if belief == "exact" else belief
        print(f"| {name} | {per_game:.1f} | {est:+.3f} | {true:+.3f} +- {sem:.3f} | "
              f"{per_game * true:+.2f} | {seconds:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
