"""`lbs-pz train-belief`: train a learned belief FOR a blueprint on its batched self-play
(deals from the training stream, never the evaluation one); the checkpoint records the
blueprint (spec and fingerprint) and the game, so using it with another is an error.

    lbs-pz train-belief --blueprint py:my_bot.py:MyBot --minutes 20 --out my_belief.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-inf --belief-checkpoint my_belief.pt

One option per field of `lbs_pz.train.belief.BeliefTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_trainer_command
from lbs_pz.train.belief import BeliefTrainConfig, train_belief


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "train-belief",
        help="train a learned belief for a blueprint on its self-play", description=__doc__,
        config_class=BeliefTrainConfig, trainer=train_belief, trained="belief")
