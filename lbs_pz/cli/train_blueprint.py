"""`lbs-pz train-blueprint`: train the paper's public-LSTM blueprint (recurrent
Q-learning, R2D2-style VDN, DQfD demonstrations optional); load the result anywhere as
`--blueprint lstm:PATH`.

One option per field of `lbs_pz.train.blueprint.BlueprintTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_net_trainer_command
from lbs_pz.train.blueprint import BlueprintTrainConfig, train_blueprint


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_net_trainer_command(
        subparsers, "train-blueprint", "train the public-LSTM blueprint (recurrent Q-learning, "
        "R2D2-style)",
        __doc__, BlueprintTrainConfig, train_blueprint)
