"""`lbs-pz compare`: blueprint vs SPARTA vs LBS-k on the same evaluation deals.

Each method plays the same games (game i is dealt from the evaluation stream, as in
`lbs-pz eval`); searching seats use the search agent, the others the blueprint. Reported
per method: mean score +- s.e.m., the paired difference to the blueprint on the same
deals with its standard error, perfect-game rate, seconds per game, rollouts per second,
and the fallback and deviation rates; as a markdown table, JSON, and a plot of score
against seconds per game (the LBS paper's Figure 3).

LBS's defaults never make the blueprint worse silently: the belief is a learned belief
trained for this blueprint when one ships (else grounded+cf), and lbs-K bootstraps with
the blueprint's own value, else --value-checkpoint, else a value shipped for it; with
none of these it rolls out to the end and says so. Bring your own with
`--belief-checkpoint PATH` / `--value-checkpoint PATH` (from `lbs-pz train-belief` /
`train-value --blueprint SPEC`); a checkpoint trained for another blueprint or game is
an error unless --allow-mismatch.

Backends: "inline" (this process), "process" (a local process pool, default all cores)
and "ray" (a Ray cluster, --address, or a local Ray); every backend gives the same numbers.

    lbs-pz compare --methods blueprint,lbs-16,sparta --games 100
    lbs-pz compare --blueprint py:my_bot.py:MyBot --methods lbs-16 \\
        --belief-checkpoint my_belief.pt --value-checkpoint my_value.pt
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option, add_game_options,
                                add_seed_option, game_from)
from lbs_pz.eval.backends import BACKENDS, collect
from lbs_pz.eval.report import format_markdown, plot, summarize, write_json
from lbs_pz.eval.specs import METHOD_HELP, MethodSpec, describe, parse_method
from lbs_pz.search.beliefs import BELIEF_KINDS


def run(args) -> int:
    """Blueprint vs SPARTA vs LBS-k on the same deals (markdown, JSON, plot)."""
    config = game_from(args)
    if args.report_only and not args.jsonl:
        raise ValueError("--report-only reads the games of --jsonl PATH")
    if args.search_seats == "all":
        seats = ("all",)
    else:
        try:
            seats = tuple(int(s) for s in args.search_seats.split(","))
        except ValueError:
            raise ValueError(f"--search-seats: comma-separated seats or 'all', got "
                             f"{args.search_seats!r}") from None
        for seat in seats:
            if not 0 <= seat < config.players:
                raise ValueError(f"--search-seats: seat {seat} is not in [0, {config.players})")
    specs = [MethodSpec(parse_method(m), blueprint=args.blueprint, belief=args.belief,
                        rollouts=args.rollouts, search_seats=seats, seed=args.seed,
                        verify=args.verify, confidence=args.confidence,
                        belief_checkpoint=args.belief_checkpoint,
                        value_checkpoint=args.value_checkpoint,
                        allow_mismatch=args.allow_mismatch)
             for m in args.methods.split(",")]
    if "blueprint" not in [s.method for s in specs]:
        specs.insert(0, MethodSpec("blueprint", blueprint=args.blueprint, seed=args.seed))
    if not args.report_only:
        for spec in specs:       # build each agent once here: bad input fails before any game
            for note in describe(spec, config):
                print(f"{spec.label()}: {note}", file=sys.stderr)
    config_kwargs = dataclasses.asdict(config)
    results = collect(specs, config_kwargs, args.games, seed=args.seed, backend=args.backend,
                      workers=args.workers, address=args.address,
                      show_progress=not args.no_progress, first_game=args.first_game,
                      jsonl=args.jsonl, play=not args.report_only)
    rows = summarize(results, config.colors * config.ranks)
    print(format_markdown(rows))
    if args.json:
        write_json(args.json, rows, results, config=config_kwargs, games=args.games,
                   seed=args.seed, backend=args.backend, blueprint=args.blueprint)
    if args.plot:
        plot(rows, args.plot)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "compare", __doc__, help="blueprint vs SPARTA vs LBS-k on the same deals")
    parser.add_argument("--methods", default="blueprint,lbs-inf",
                        help=f"comma-separated methods: {METHOD_HELP} (default blueprint,lbs-inf)")
    add_blueprint_option(parser)
    parser.add_argument("--belief", default=None, choices=BELIEF_KINDS,
                        help="belief used by LBS (default: learned+cf with a learned belief "
                             "trained for this blueprint if one ships or is given, else "
                             "grounded+cf)")
    parser.add_argument("--belief-checkpoint", metavar="PATH", default=None,
                        help="a learned belief trained for this blueprint (lbs-pz "
                             "train-belief); implies --belief learned+cf unless given")
    parser.add_argument("--value-checkpoint", metavar="PATH", default=None,
                        help="a value trained for this blueprint (lbs-pz train-value), "
                             "bootstrapping lbs-K rollouts")
    parser.add_argument("--allow-mismatch", action="store_true",
                        help="use a belief/value checkpoint trained for another blueprint "
                             "or game anyway")
    parser.add_argument("--rollouts", type=int, default=256, help="sampled worlds per decision")
    parser.add_argument("--verify", type=int, default=0,
                        help="extra worlds on which a proposed deviation is re-measured "
                             "against the blueprint's move (default 0: off)")
    parser.add_argument("--confidence", type=float, default=2.0,
                        help="standard errors of the paired gain a deviation must exceed, "
                             "besides delta = 0.05 (default 2; 0 is the paper's rule)")
    parser.add_argument("--search-seats", default="0",
                        help="seats that search, comma-separated, or 'all' (default 0)")
    parser.add_argument("--games", type=int, default=100, help="games per method (default 100)")
    add_seed_option(parser, "seed of the deals and searches")
    parser.add_argument("--first-game", type=int, default=0,
                        help="index of the first deal (to split a run; default 0)")
    parser.add_argument("--jsonl", metavar="PATH",
                        help="append every finished game to PATH; games already there "
                             "are reused, so an interrupted run resumes")
    parser.add_argument("--report-only", action="store_true",
                        help="play nothing: report the games of --jsonl PATH in range")
    parser.add_argument("--backend", default="process", choices=sorted(BACKENDS),
                        help="where games run (default: a local process pool)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--address", default=None, help="Ray cluster address (ray backend)")
    parser.add_argument("--json", metavar="PATH", help="write rows and per-game results as JSON")
    parser.add_argument("--plot", metavar="PNG", help="plot score vs seconds per game")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_game_options(parser)
    parser.set_defaults(func=run)
    return parser
