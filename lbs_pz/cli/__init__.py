"""The `lbs-pz` command: one module per subcommand, each with `add_command(subparsers)`.

    lbs-pz demo | eval | compare | search-games | train-belief | train-value
           | train-blueprint | distill | improve | belief-quality | paper | models | serve

Every command that takes a blueprint takes one spec (`--blueprint SPEC`, see
`lbs_pz.cli.options.blueprint_help`). A bad parameter (a ValueError, e.g. a checkpoint
trained for another blueprint) or a missing optional dependency (`lbs_pz.optional.
MissingDependency`, naming the pip extra) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from lbs_pz.cli import (belief_quality, compare, demo, distill, improve, models, paper,
                        search_games, serve, train_belief, train_blueprint, train_value)
from lbs_pz.cli import eval as eval_command
from lbs_pz.cli.options import blueprint_help
from lbs_pz.optional import MissingDependency

SUBCOMMANDS = (demo, eval_command, compare, train_belief, train_value, train_blueprint,
               distill, improve, search_games, belief_quality, paper, serve, models)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lbs-pz",
        description="Hanabi research toolkit: exact Cython engine, PettingZoo/Gymnasium "
                    "environments, blueprints and Learned Belief Search.",
        epilog=blueprint_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_command(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, MissingDependency) as err:  # one clear line, no traceback
        message = " ".join(str(err).split("\n"))
        print(f"lbs-pz {args.command}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:     # the reader went away (`lbs-pz models | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
