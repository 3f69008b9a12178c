"""`lbs-pz train-blueprint`: train the paper's public-LSTM blueprint (recurrent
Q-learning, R2D2-style VDN, DQfD demonstrations optional); load the result anywhere as
`--blueprint lstm:PATH`.

    lbs-pz train-blueprint --minutes 30 --out bp.pt                       # from scratch
    lbs-pz train-blueprint --arch card_features --hidden 128 --out bp.pt  # another net
    lbs-pz train-blueprint --init distilled.pt --minutes 60 --out ft.pt   # fine-tune a start
    lbs-pz train-blueprint --init distill:strong --init-minutes 6 --out ft.pt
    lbs-pz train-blueprint --resume ft.pt --minutes 30 --out ft.pt        # go on

The net is a named architecture (`--arch`, "paper" by default; Q-learning trains the
mean-centred presets "paper", "card_features" and "conventions") of width `--hidden` (the
preset's, 256, by default). `--init` (a checkpoint of `distill` or `train-blueprint`,
`lstm:PATH`, or `distill:SPEC` to distil SPEC first) starts the net, its architecture
(which an `--arch` or `--hidden` given too must match) and the target net from those
weights and switches the unset (None) options to the fine-tuning preset
(`lbs_pz.train.blueprint.FINETUNE`). Every run writes
its learning curve (greedy self-play on EVAL deals per evaluation) as OUT's stem +
.curve.csv and .curve.png (`--curve PATH.csv` to choose, `--curve none` for none).

One option per field of `lbs_pz.train.configs.BlueprintTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_trainer_command, run_trainer
from lbs_pz.train.configs import BlueprintTrainConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "train-blueprint", __doc__, BlueprintTrainConfig, run,
        help="train the public-LSTM blueprint (recurrent Q-learning, R2D2-style)")


def run(args) -> int:
    from lbs_pz.train.blueprint import train_blueprint    # torch: only when the command runs
    return run_trainer("train-blueprint", BlueprintTrainConfig, args, train_blueprint,
                       progress_bar=not args.no_progress)
