"""`lbs-pz train-blueprint`: train the paper's public-LSTM blueprint (recurrent
Q-learning, R2D2-style VDN, DQfD demonstrations optional); load the result anywhere as
`--blueprint lstm:PATH`.

One option per field of `lbs_pz.train.blueprint.BlueprintTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_dataclass_options, dataclass_from
from lbs_pz.train.blueprint import BlueprintTrainConfig, train_blueprint


def run(args) -> int:
    train_blueprint(dataclass_from(BlueprintTrainConfig, args),
                    progress_bar=not args.no_progress)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "train-blueprint", help="train the public-LSTM blueprint (recurrent Q-learning, "
                                "R2D2-style)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataclass_options(parser, BlueprintTrainConfig)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser
