"""`lbs-pz distill`: imitate any blueprint with the public-LSTM net (supervised
cross-entropy over legal moves on the teacher's streamed self-play); the result loads
anywhere as `--blueprint lstm:PATH`.

    lbs-pz distill --teacher strong --out distilled.pt --minutes 30
    lbs-pz distill --teacher strong --out distilled.pt --minutes 30 --resume distilled.pt
    lbs-pz distill --teacher strong --arch conventions --out conv.pt --minutes 30
    # the net's own value, fitted on its own games by a value MLP of its own
    # (every move stays the same):
    lbs-pz distill --teacher lstm:distilled.pt --init distilled.pt --value-only \\
        --value-hidden 256 --minutes 15 --out distilled_v.pt
    # ... reading a public LSTM of its own (features trained for the value alone):
    lbs-pz distill --teacher lstm:distilled.pt --init distilled.pt --value-only \\
        --value-hidden 256 --value-lstm 128 --explore 1.0 --minutes 25 --out distilled_vl.pt
    # the same moves with Q centred on the best legal move (the value is then score + the
    # seats' V, without the advantage's margin), its value head refitted:
    lbs-pz distill --teacher lstm:distilled.pt --init distilled.pt --value-only \\
        --dueling max --minutes 15 --out distilled_maxq.pt

The net is a named architecture (`--arch`, "card_features" by default) whose options the
"architecture overrides" change one by one; with `--init` it is the start's (`--dueling`
re-centres it; `--value-only` gives it the value head of --arch and the overrides).

One option per field of `lbs_pz.train.configs.DistillConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_trainer_command, check_input_path, run_trainer
from lbs_pz.train.configs import DistillConfig


def add_command(subparsers) -> argparse.ArgumentParser:
    return add_trainer_command(
        subparsers, "distill", __doc__, DistillConfig, run,
        help="imitate a blueprint with the public-LSTM net (supervised, streamed teacher games)")


def run(args) -> int:
    from lbs_pz.train.distill import distill         # torch: only when the command runs
    if args.search_games:               # read whole: a FIFO or a device would never end
        check_input_path(args.search_games, "--search-games")
    return run_trainer("distill", DistillConfig, args, distill,
                       progress_bar=not args.no_progress)
