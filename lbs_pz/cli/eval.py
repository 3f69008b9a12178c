"""`lbs-pz eval`: self-play any blueprint for N games on the evaluation deals.

    lbs-pz eval --blueprint strong --games 10000 --json strong_2p.json
    lbs-pz eval --blueprint py:my_bot.py:MyBot --games 1000
"""

from __future__ import annotations

import argparse
import json
import sys

from lbs_pz.agents import load_blueprint
from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option, add_game_options,
                                add_games_option, add_seed_option, check_output_path, game_from,
                                interrupted, one_interrupt)
from lbs_pz.eval.evaluate import evaluate
from lbs_pz.files import write_atomic


def run(args) -> int:
    """Self-play a blueprint for N games and print its score statistics."""
    config = game_from(args)
    if args.json:       # before the games: a bad path cannot lose the run at its end
        check_output_path(args.json, "--json")
    blueprint = load_blueprint(args.blueprint)
    try:
        with one_interrupt():
            result = evaluate(blueprint, config, games=args.games, seed=args.seed,
                              progress=not args.no_progress)
    except KeyboardInterrupt:
        return interrupted("eval", "stopped; nothing written")
    print(f"lbs-pz eval: {config.players} players, hand size {config.hand_size}, "
          f"{config.colors} colors x {config.ranks} ranks")
    print(f"  blueprint      {result.bot} ({args.blueprint})")
    print(f"  games          {result.games:,} (seed {result.seed}, evaluation deals)")
    print(f"  mean score     {result.mean:.3f} +- {result.sem:.3f} (s.e.m.; std {result.std:.3f})")
    print(f"  perfect games  {100 * result.perfect_rate:.2f}%")
    print(f"  bomb-outs      {100 * result.bomb_rate:.2f}%")
    print(f"  speed          {result.games_per_s:,.0f} games/s, {result.moves_per_s:,.0f} moves/s "
          f"({result.seconds:.2f} s)")
    if args.json:
        sys.stdout.flush()          # the summary is out before a write can fail
        write_atomic(args.json, json.dumps({**result.to_dict(), "blueprint_spec": args.blueprint},
                                           indent=2).encode("utf-8"), "--json")
        print(f"  results        {args.json}")
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "eval", __doc__,
        help="self-play a blueprint: mean score, s.e.m., perfect and bomb-out rates")
    add_blueprint_option(parser)
    add_games_option(parser, 1000, "games to play (a chunk at a time: memory does not "
                     "grow with N)")
    add_seed_option(parser)
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results as JSON to PATH")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_game_options(parser)
    parser.set_defaults(func=run)
    return parser
