"""`lbs-pz distill`: imitate any blueprint with the public-LSTM net (supervised
cross-entropy over legal moves on the teacher's streamed self-play); the result loads
anywhere as `--blueprint lstm:PATH`.

    lbs-pz distill --teacher strong --out distilled.pt --minutes 30
    lbs-pz distill --teacher strong --out distilled.pt --minutes 30 --resume distilled.pt

One option per field of `lbs_pz.train.distill.DistillConfig`.
"""

from __future__ import annotations

import argparse

from lbs_pz.cli.options import add_dataclass_options, dataclass_from
from lbs_pz.train.distill import DistillConfig, distill


def run(args) -> int:
    distill(dataclass_from(DistillConfig, args), progress_bar=not args.no_progress)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "distill", help="imitate a blueprint with the public-LSTM net (supervised, streamed "
                        "teacher games)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataclass_options(parser, DistillConfig)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser
