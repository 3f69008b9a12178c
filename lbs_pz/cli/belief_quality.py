"""`lbs-pz belief-quality`: per-card cross-entropy of the true hand under the exact,
grounded and learned beliefs over blueprint self-play games (the paper's study), by move
number, as a table and a plot. See `lbs_pz.eval.belief_quality`.

    lbs-pz belief-quality --games 1000 --plot belief_quality.png
    lbs-pz belief-quality --blueprint py:my_bot.py:MyBot --belief-checkpoint my_belief.pt
    lbs-pz belief-quality --players 3 --beliefs grounded,learned --games 500

The exact belief enumerates ~9M hands at the start of a 2p game: tens of seconds per game
on one core; choose --games (and --beliefs) accordingly.
"""

from __future__ import annotations

import argparse
import sys
import time

from lbs_pz.agents import load_blueprint
from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option, add_game_options,
                                add_games_option, add_seed_option, check_output_path,
                                game_from, output_errors)
from lbs_pz.eval.belief_quality import phase_table, plot, run_quality

BELIEFS = ("exact", "grounded", "learned")


def run(args) -> int:
    beliefs = [b.strip() for b in args.beliefs.split(",") if b.strip()]
    for b in beliefs:
        if b not in BELIEFS:
            raise ValueError(f"unknown belief {b!r}; choose from {', '.join(BELIEFS)}")
    if args.plot:       # before the games: a bad path cannot lose the run at its end
        check_output_path(args.plot, "--plot")
    config = game_from(args)
    blueprint = load_blueprint(args.blueprint)
    cap = None if args.memory_cap_gb is None else int(args.memory_cap_gb * 2**30)
    t0 = time.perf_counter()
    result = run_quality(config, blueprint, args.games, args.seed, beliefs,
                         args.belief_checkpoint, cap, progress=not args.no_progress,
                         allow_mismatch=args.allow_mismatch)
    print(f"belief quality: {args.games} games of {blueprint.name} ({config.players}p, "
          f"{config.hand_size} cards, {config.colors}x{config.ranks}), mean score "
          f"{result['scores'].mean():.2f}; "
          f"per-card cross-entropy of the true hand (nats), by move number; "
          f"{time.perf_counter() - t0:.0f} s")
    print(phase_table(result))
    if args.plot:
        sys.stdout.flush()          # the table is out before a write can fail
        with output_errors(args.plot, "--plot"):
            drawn = plot(result, args.plot, f"{blueprint.name}, {config.players}p, "
                                            f"{args.games} games")
        if drawn:
            print(f"plot: {args.plot}")
        else:
            print("plot skipped: matplotlib is not installed (pip install matplotlib)")
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    p = add_blueprint_command(
        subparsers, "belief-quality", __doc__,
        help="cross-entropy of exact, grounded and learned beliefs over blueprint games "
             "(table + PNG)")
    add_games_option(p, 1000, "games of the blueprint (one at a time: memory grows with "
                        "the per-move results kept, not with N)")
    add_blueprint_option(p, what="the blueprint playing every seat")
    add_game_options(p)
    p.add_argument("--beliefs", default="exact,grounded,learned",
                   help="comma-separated subset of exact,grounded,learned")
    p.add_argument("--belief-checkpoint", "--checkpoint", dest="belief_checkpoint",
                   metavar="PATH", default=None,
                   help="learned belief (default: the one shipped for this blueprint)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="use a learned belief trained for another blueprint or game anyway")
    p.add_argument("--memory-cap-gb", type=float, default=None, help="exact belief cap")
    add_seed_option(p)
    p.add_argument("--plot", default="belief_quality.png",
                   help="PNG path, a regular file or none yet ('' for no plot)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)
    return p
