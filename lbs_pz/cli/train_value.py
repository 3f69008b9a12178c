"""`lbs-pz train-value`: train the centralized value that bootstraps LBS-k rollouts, FOR a
blueprint, on its batched self-play (deals from the training stream); the checkpoint
records the blueprint and the game.

    lbs-pz train-value --blueprint py:my_bot.py:MyBot --minutes 10 --out my_value.pt
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-16 --value-checkpoint my_value.pt

One option per field of `lbs_pz.train.configs.ValueTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_trainer_command, run_trainer
from lbs_pz.train.configs import ValueTrainConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "train-value", __doc__, ValueTrainConfig, run,
        help="train the centralized value (bootstraps LBS-k rollouts) for a blueprint",
        trained_for="the blueprint the value is trained for")


def run(args) -> int:
    from lbs_pz.train.value import train_value      # torch: only when the command runs
    return run_trainer("train-value", ValueTrainConfig, args, train_value)
