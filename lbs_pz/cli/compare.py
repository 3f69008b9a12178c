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
import warnings

from lbs_pz.cli.options import (add_backend_options, add_blueprint_command, add_blueprint_option,
                                add_game_options, add_games_option, add_search_options,
                                add_search_seats_option, add_seed_option, check_backend,
                                check_distinct_outputs, check_output_path, game_from,
                                int_at_least, interrupted, one_interrupt, output_errors,
                                search_seats_from, search_spec)
from lbs_pz.eval.backends import check_log_path, collect, log_contents
from lbs_pz.eval.report import check_plot_format, format_markdown, plot, summarize, write_json
from lbs_pz.files import readable_log, seed_log
from lbs_pz.search.build import describe
from lbs_pz.search.methods import METHOD_HELP, MethodSpec, parse_method


INTERRUPT_HELP = """\
interrupting and resuming:
  Ctrl-C stops the run at once (a local Ray takes a second or two to shut down):
  queued games are cancelled, running ones are abandoned (process pool: workers ignore
  SIGINT and are terminated; Ray: pending tasks are cancelled), a second Ctrl-C is
  ignored while it stops, and the exit status is 130. The --jsonl log then holds every
  game finished before the interrupt, one complete line each. Run the SAME command
  again to resume: only the missing games are played, and the result equals an
  uninterrupted run's (scores and every per-game count; only the timings differ). A
  run killed harder (SIGKILL, power loss) may leave an incomplete last line: the next
  run warns (file and line), drops it and plays that game again. A broken line
  elsewhere is an error. --report-only reports the games of the log in range without
  playing; it fails if the log is missing or holds no games for a method, variant or
  seed asked for. A log kept gzipped (PATH.gz, as the repository keeps a finished one)
  is read as it is; a run on PATH with no file there starts from PATH.gz's games. Every
  logged game is checked against its variant (field types, the score within the
  maximum, a plausible number of moves): a line that cannot be true
  is an error naming the file and line (remove it: its game is played again). A run
  locks its log: a second run on the same --jsonl is refused while the first one runs.
  Outputs (--json, --plot, --jsonl) are checked before any game: each must be a regular
  file or not exist yet (a FIFO or a device such as /dev/full is refused). If writing
  --json or --plot fails at the end, the table is printed first and the error is one
  line (exit status 2)."""


def _parse_methods(text: str):
    """--methods -> method names, each once (a method given twice, in any spelling,
    would count its games twice as independent games)."""
    raw = text.split(",")
    methods = [parse_method(m) for m in raw]
    for i, method in enumerate(methods):
        if method in methods[:i]:
            j = methods.index(method)
            same = (f"{raw[j].strip()!r} given twice" if raw[j].strip() == raw[i].strip()
                    else f"{raw[j].strip()!r} and {raw[i].strip()!r} are the same method")
            raise ValueError(f"--methods {text!r}: {same}; give each method once (its games "
                             f"would count twice)")
    return methods


def _check_outputs(args) -> None:
    """Every output path, before any game: a bad one fails now, not after the run."""
    check_distinct_outputs(jsonl=args.jsonl, json=args.json, plot=args.plot)
    if args.report_only:
        if not args.jsonl:
            raise ValueError("--report-only reads the games of --jsonl PATH: give it")
        args.jsonl = readable_log(args.jsonl)       # no PATH: its committed PATH.gz
        check_log_path(args.jsonl, must_exist=True, option="--jsonl")
    elif args.jsonl:
        check_output_path(args.jsonl, "--jsonl")
    if args.json:
        check_output_path(args.json, "--json")
    if args.plot:
        check_output_path(args.plot, "--plot")
        check_plot_format(args.plot, "--plot")
    check_backend(args)


def run(args) -> int:
    """Blueprint vs SPARTA vs LBS-k on the same deals (markdown, JSON, plot)."""
    config = game_from(args)
    _check_outputs(args)
    seats = search_seats_from(args.search_seats, config.players)
    specs = [search_spec(args, m, search_seats=seats) for m in _parse_methods(args.methods)]
    if "blueprint" not in [s.method for s in specs]:
        specs.insert(0, MethodSpec("blueprint", blueprint=args.blueprint, seed=args.seed))
    config_kwargs = dataclasses.asdict(config)
    if args.jsonl and not args.report_only and seed_log(args.jsonl, "--jsonl"):
        print(f"{args.jsonl}: made from its committed copy {args.jsonl}.gz; this run "
              f"continues it", file=sys.stderr)
    with warnings.catch_warnings():     # e.g. an incomplete last line in the log: one line
        warnings.showwarning = lambda message, *rest: print(
            f"lbs-pz compare: warning: {message}", file=sys.stderr)
        try:
            with one_interrupt():
                if not args.report_only:
                    for spec in specs:   # each agent built once: bad input fails now
                        for note in describe(spec, config):
                            print(f"{spec.label()}: {note}", file=sys.stderr)
                results = collect(specs, config_kwargs, args.games, seed=args.seed,
                                  backend=args.backend, workers=args.workers,
                                  address=args.address, show_progress=not args.no_progress,
                                  first_game=args.first_game, jsonl=args.jsonl,
                                  play=not args.report_only)
        except KeyboardInterrupt:
            return interrupted("compare", (
                f"stopped; the games finished so far are in {args.jsonl}: run the same "
                f"command again to play only the missing ones") if args.jsonl else (
                "stopped; no --jsonl PATH, so the games played are not kept (give one to "
                "make a run resumable)"))
    if args.report_only:
        missing = [label for label, games in results.items() if not games]
        if missing:
            held = log_contents(args.jsonl, specs, config_kwargs, args.seed)
            last = args.first_game + args.games - 1
            raise ValueError(
                f"--report-only: {args.jsonl!r} has no games of {', '.join(missing)} with "
                f"this variant and --seed {args.seed} in games {args.first_game}..{last}; "
                f"it holds: {'; '.join(held) if held else 'no games'}")
    rows = summarize(results, config.colors * config.ranks)
    print(format_markdown(rows))
    sys.stdout.flush()          # the table is out before a write can fail
    if args.json:
        write_json(args.json, rows, results, config=config_kwargs, games=args.games,
                   seed=args.seed, backend=args.backend, blueprint=args.blueprint)
    if args.plot:
        with output_errors(args.plot, "--plot"):
            plot(rows, args.plot)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "compare", __doc__, help="blueprint vs SPARTA vs LBS-k on the same deals")
    parser.add_argument("--methods", default="blueprint,lbs-inf",
                        help=f"comma-separated methods: {METHOD_HELP} (default blueprint,lbs-inf)")
    add_blueprint_option(parser)
    add_search_options(parser)
    add_search_seats_option(parser, "0", "seats that search")
    add_games_option(parser, 100, "games per method; with --first-game, games FIRST .. "
                     "FIRST + N - 1 of the evaluation stream")
    add_seed_option(parser, "seed of the deals and searches")
    parser.add_argument("--first-game", type=int_at_least(0), default=0,
                        help="index of the first deal (to split a run; default 0)")
    parser.add_argument("--jsonl", metavar="PATH",
                        help="append every finished game to PATH; games already there "
                             "are reused, so an interrupted run resumes (no PATH yet: it "
                             "starts from PATH.gz, a committed log, if there is one)")
    parser.add_argument("--report-only", action="store_true",
                        help="play nothing: report the games of --jsonl PATH in range "
                             "(PATH may be gzipped; no PATH: PATH.gz)")
    add_backend_options(parser, "processes or Ray workers (default: all cores)")
    parser.add_argument("--json", metavar="PATH", help="write rows and per-game results as JSON")
    parser.add_argument("--plot", metavar="PNG", help="plot score vs seconds per game")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_game_options(parser)
    parser.epilog = f"{INTERRUPT_HELP}\n\n{parser.epilog}"
    parser.set_defaults(func=run)
    return parser
