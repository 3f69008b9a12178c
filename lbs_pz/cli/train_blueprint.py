"""`lbs-pz train-blueprint`: train the paper's public-LSTM blueprint (recurrent
Q-learning, R2D2-style VDN, DQfD demonstrations optional); load the result anywhere as
`--blueprint lstm:PATH`.

    lbs-pz train-blueprint --minutes 30 --out bp.pt                       # from scratch
    lbs-pz train-blueprint --arch card_features --hidden 128 --out bp.pt  # another net
    lbs-pz train-blueprint --init distilled.pt --minutes 60 --out ft.pt   # fine-tune a start
    lbs-pz train-blueprint --init distill:strong --init-minutes 6 --out ft.pt
    lbs-pz train-blueprint --resume ft.pt --minutes 30 --out ft.pt        # go on

The net is a named architecture (`--arch`, "paper" by default) whose options the
"architecture overrides" change one by one. `--init` (a checkpoint of `distill` or
`train-blueprint`, `lstm:PATH`, or `distill:SPEC` to distil SPEC first) starts the net,
its architecture and the target net from those weights and switches the unset (None)
options to the fine-tuning preset (`lbs_pz.train.blueprint.FINETUNE`). Every run writes
its learning curve (greedy self-play on EVAL deals per evaluation) as OUT's stem +
.curve.csv and .curve.png (`--curve PATH.csv` to choose, `--curve none` for none).

One option per field of `lbs_pz.train.configs.BlueprintTrainConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_arch_options, add_dataclass_options, run_trainer
from lbs_pz.train.configs import ARCH_OVERRIDES, BlueprintTrainConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "train-blueprint", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="train the public-LSTM blueprint (recurrent Q-learning, R2D2-style)")
    add_dataclass_options(parser, BlueprintTrainConfig, skip=("arch",) + ARCH_OVERRIDES)
    add_arch_options(parser, BlueprintTrainConfig)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from lbs_pz.train.blueprint import train_blueprint    # torch: only when the command runs
    return run_trainer("train-blueprint", BlueprintTrainConfig, args, train_blueprint,
                       progress_bar=not args.no_progress)
