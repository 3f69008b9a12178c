"""`lbs-pz train-belief`: train a learned belief FOR a blueprint on its batched self-play
(deals from the training stream, never the evaluation one); the checkpoint records the
blueprint (spec and fingerprint) and the game, so using it with another is an error.

    lbs-pz train-belief --blueprint py:my_bot.py:MyBot --minutes 20 --out my_belief.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-inf --belief-checkpoint my_belief.pt

One option per field of `lbs_pz.train.belief.BeliefTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import (BLUEPRINT_HELP, add_blueprint_option, add_dataclass_options,
                                add_seed_option, dataclass_from)
from lbs_pz.train.belief import BeliefTrainConfig, train_belief


def run(args) -> int:
    train_belief(dataclass_from(BeliefTrainConfig, args))
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "train-belief", help="train a learned belief for a blueprint on its self-play",
        description=__doc__, epilog=BLUEPRINT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_blueprint_option(parser, what="the blueprint the belief is trained for")
    add_seed_option(parser, "run seed of the training deals")
    add_dataclass_options(parser, BeliefTrainConfig, skip=("blueprint", "seed"))
    parser.set_defaults(func=run)
    return parser
