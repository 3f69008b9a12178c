"""`lbs-pz train-value`: train the centralized value that bootstraps LBS-k rollouts, FOR a
blueprint, on its batched self-play (deals from the training stream); the checkpoint
records the blueprint and the game.

    lbs-pz train-value --blueprint py:my_bot.py:MyBot --minutes 10 --out my_value.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-16 --value-checkpoint my_value.pt

One option per field of `lbs_pz.train.value.ValueTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_trainer_command
from lbs_pz.train.value import ValueTrainConfig, train_value


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "train-value",
        help="train the centralized value (bootstraps LBS-k rollouts) for a blueprint",
        description=__doc__, config_class=ValueTrainConfig, trainer=train_value,
        trained="value")
