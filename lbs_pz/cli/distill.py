"""`lbs-pz distill`: imitate any blueprint with the public-LSTM net (supervised
cross-entropy over legal moves on the teacher's streamed self-play); the result loads
anywhere as `--blueprint lstm:PATH`.

    lbs-pz distill --teacher strong --out distilled.pt --minutes 30
    lbs-pz distill --teacher strong --out distilled.pt --minutes 30 --resume distilled.pt
    lbs-pz distill --teacher strong --arch conventions --out conv.pt --minutes 30
    # the teacher's games played by Ray workers (the same games, the same net):
    lbs-pz distill --teacher lstm:conv.pt --backend ray --workers 8 --out d.pt --minutes 30
    # the net's own value refitted on its own games (every move stays the same):
    lbs-pz distill --teacher lstm:conv.pt --init conv.pt --value-only \\
        --minutes 15 --out conv_v.pt
    # the same moves with Q centred on the best legal move (the value is then score + the
    # seats' V, without the advantage's margin), its value head refitted:
    lbs-pz distill --teacher lstm:conv.pt --init conv.pt --value-only \\
        --arch conventions_maxq --minutes 15 --out conv_maxq.pt
    # ... then a value MLP of its own reading a public LSTM of its own:
    lbs-pz distill --teacher lstm:conv_maxq.pt --init conv_maxq.pt --value-only \\
        --arch conventions_value --explore 1.0 --minutes 25 --out conv_value.pt

The net is a named architecture (`--arch`, "card_features" by default) of width
`--hidden` (the preset's, 256, by default). With `--init` it is the start's: an `--arch`
given too may differ from the start only in the value head (dueling, value_hidden,
value_lstm), which the start then takes from the preset; anything else that differs
(or a `--hidden` that is not the start's) is an error.

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
