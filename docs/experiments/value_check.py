"""Is a blueprint's own value right where LBS-k uses it? Predicted against realised scores.

    python docs/experiments/value_check.py --blueprint lstm:conventions_expert_value_2p \\
        --games 1000

LBS-k bootstraps with `blueprint.value(worlds)` after a candidate move and k blueprint
moves, so the value must be right after moves the blueprint itself would not make. For
each move number t and each kind of move at t (the blueprint's own, a uniformly random
legal one, a random play), this plays `--games` evaluation deals with the blueprint up
to t, makes that move, asks the value, plays the game out with the blueprint and prints
the mean predicted and realised final score (their difference is the value's bias; a
positive bias after bad moves is what makes search deviate wrongly) and the correlation.
Its figures: finetuning.md.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiBatch, HanabiConfig  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402

KINDS = ("blueprint", "random", "play")


def check(bp, config, games: int, t: int, kind: str, seed: int = 0):
    """(predicted mean, realised mean, correlation, games still running at t)."""
    rng = np.random.default_rng([seed, t, KINDS.index(kind)])
    batch = HanabiBatch(config, games, seeds=deal_seeds(EVAL, seed, 0, games))
    bp.rollout(batch, max_moves=t)
    live = ~batch.terminals()
    legal = batch.legal_masks().astype(bool)
    if kind == "blueprint":
        moves = bp.act_batch(batch)
    else:
        first = 0 if kind == "random" else config.hand_size    # plays follow the discards
        last = config.num_moves if kind == "random" else 2 * config.hand_size
        moves = np.array([rng.choice(np.flatnonzero(row[first:last]) + first)
                          if row[first:last].any() else -1 for row in legal])
        live &= moves >= 0
    moves[~live] = -1
    batch.step(moves)
    live &= ~batch.terminals()
    predicted = bp.value(batch)
    bp.rollout(batch)
    realised = batch.scores().astype(np.float64)
    p, r = predicted[live], realised[live]
    corr = float(np.corrcoef(p, r)[0, 1]) if live.sum() > 2 and p.std() > 0 else float("nan")
    return float(p.mean()), float(r.mean()), corr, int(live.sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blueprint", default="lstm:conventions_expert_value_2p",
                        help="a blueprint spec with its own value (default %(default)s)")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--moves", default="0,10,20,40", help="move numbers t")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    bp = load_blueprint(args.blueprint)
    if not callable(getattr(bp, "value", None)) or not getattr(bp, "has_value", True):
        parser.error(f"{args.blueprint} has no value of its own")
    config = HanabiConfig()
    print(f"{args.blueprint}: value after a move at move number t against the realised final "
          f"score ({args.games} evaluation deals)")
    print("| t | move at t | games | predicted | realised | bias | correlation |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for t in (int(x) for x in args.moves.split(",")):
        for kind in KINDS:
            p, r, c, n = check(bp, config, args.games, t, kind, args.seed)
            print(f"| {t} | {kind} | {n} | {p:.2f} | {r:.2f} | {p - r:+.2f} | {c:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
