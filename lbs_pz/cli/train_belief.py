"""`lbs-pz train-belief`: train a learned belief FOR a blueprint on its batched self-play
(deals from the training stream, never the evaluation one); the checkpoint records the
blueprint (spec and fingerprint) and the game, so using it with another is an error.

    lbs-pz train-belief --blueprint py:my_bot.py:MyBot --minutes 20 --out my_belief.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-inf --belief-checkpoint my_belief.pt

One option per field of `lbs_pz.train.belief.BeliefTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option, add_dataclass_options,
                               add_seed_option, run_trainer)
from lbs_pz.train.configs import BeliefTrainConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(subparsers, "train-belief", __doc__,
                                   help="train a learned belief for a blueprint on its self-play")
    add_blueprint_option(parser, what="the blueprint the belief is trained for")
    add_seed_option(parser, "run seed of the training deals")
    add_dataclass_options(parser, BeliefTrainConfig, skip=("blueprint", "seed"))
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from lbs_pz.train.belief import train_belief    # torch: only when the command runs
    return run_trainer("train-belief", BeliefTrainConfig, args, train_belief)
