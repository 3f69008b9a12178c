"""`lbs-pz search-games`: record a search's own games on training deals, for a net to
learn the search's moves from (`lbs-pz distill --search-games PATH`: expert iteration).

Game i is deal i of the TRAINING stream of run --seed (never an evaluation deal), played
by the blueprint with the search at --search-seats turned by i (seat s searches at seat
(s + i) % players: the default, one seat, covers every seat's view across games; 'all':
the search plays every move); each game is appended to --out as
one JSON line (the deal, every move, which moves the search chose and where it left the
blueprint's move), so running the same command again plays only the missing games (a
last line cut short by a killed run is removed, with a warning, and its game played again).

    lbs-pz search-games --blueprint lstm:conventions_expert_value_2p --method lbs-16 \\
        --rollouts 32 --games 1500 --out search_games.jsonl
    lbs-pz distill --teacher lstm:conventions_expert_value_2p --init conventions_expert_value_2p \\
        --search-games search_games.jsonl --deviation-weight 30 --lr 3e-4 --updates 600 \\
        --out improved.pt
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings

from lbs_pz.cli.options import (add_backend_options, add_blueprint_command, add_blueprint_option,
                                add_game_options, add_games_option, add_search_options,
                                add_search_seats_option, add_seed_option, check_backend,
                                check_output_path, game_from, int_at_least, search_seats_from,
                                search_spec)
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.search.build import describe
from lbs_pz.search.methods import parse_method


def run(args) -> int:
    config = game_from(args)
    method = parse_method(args.method)
    if method == "blueprint":
        raise ValueError("--method must be a search: sparta or lbs-K")
    spec = search_spec(args, method,
                       search_seats=search_seats_from(args.search_seats, config.players))
    check_backend(args)
    check_output_path(args.out, "--out")        # before the agent is built
    for note in describe(spec, config):          # builds the agent: bad input fails now
        print(f"{spec.label()}: {note}")
    with warnings.catch_warnings():     # e.g. a cut last line in --out: one line
        warnings.showwarning = lambda message, *rest: print(
            f"lbs-pz search-games: warning: {message}", file=sys.stderr)
        record_search_games(spec, args.games, args.out, dataclasses.asdict(config),
                            seed=args.seed, first_game=args.first_game, workers=args.workers,
                            option="--out", backend=args.backend, address=args.address)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "search-games", __doc__,
        help="record a search's games on training deals (for distill --search-games)")
    parser.add_argument("--method", default="lbs-16",
                        help="the search: sparta | lbs-K | lbs-inf (default lbs-16)")
    add_blueprint_option(parser)
    add_search_options(parser)
    add_search_seats_option(parser, "0", "seats that search, turned by the game's index")
    add_games_option(parser, 100, "training deals to play")
    parser.add_argument("--first-game", type=int_at_least(0), default=0,
                        help="index of the first deal (default 0)")
    add_backend_options(parser, "processes or Ray workers playing games at once (default 1)",
                        1)
    parser.add_argument("--out", required=True, metavar="PATH",
                        help="the JSONL file the games are appended to (a regular file, or "
                             "none yet)")
    add_seed_option(parser, "run seed of the training deals and the search")
    add_game_options(parser)
    parser.set_defaults(func=run)
    return parser
