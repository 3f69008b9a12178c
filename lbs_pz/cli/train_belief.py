"""`lbs-pz train-belief`: train a learned belief FOR a blueprint on its batched self-play
(deals from the training stream, never the evaluation one); the checkpoint records the
blueprint (spec and fingerprint) and the game, so using it with another is an error.

    lbs-pz train-belief --blueprint py:my_bot.py:MyBot --minutes 20 --out my_belief.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-inf --belief-checkpoint my_belief.pt

A belief for the positions a search leads to (the blueprint's games never reach them):
record the search's own games on training deals, then replay them in part of every step
(games recorded in another game variant or with another blueprint are refused).

    lbs-pz search-games --blueprint strong --method lbs-16 --games 2000 --out lbs_games.jsonl
    lbs-pz train-belief --blueprint strong --search-games lbs_games.jsonl --init belief_strong_2p \
        --minutes 15 --out belief_on_lbs.pt

One option per field of `lbs_pz.train.configs.BeliefTrainConfig`.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from lbs_pz.cli.options import add_trainer_command, run_trainer
from lbs_pz.train.configs import BeliefTrainConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "train-belief", __doc__, BeliefTrainConfig, run,
        help="train a learned belief for a blueprint on its self-play",
        trained_for="the blueprint the belief is trained for")


def run(args) -> int:
    from lbs_pz.train.belief import train_belief    # torch: only when the command runs
    with warnings.catch_warnings():     # e.g. a cut last line in --search-games: one line
        warnings.showwarning = lambda message, *rest: print(
            f"lbs-pz train-belief: warning: {message}", file=sys.stderr)
        return run_trainer("train-belief", BeliefTrainConfig, args, train_belief)
