"""The `lbs-pz` command. Each subcommand imports what it needs only when it runs."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import List, Optional


def _config_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("game variant (HLE parameter names)")
    group.add_argument("--players", type=int, default=2, help="2..5 (default 2)")
    group.add_argument("--colors", type=int, default=5, help="1..5 (default 5)")
    group.add_argument("--ranks", type=int, default=5, help="1..5 (default 5)")
    group.add_argument("--hand-size", type=int, default=None,
                       help="1..8 (default: 5, or 4 with 4+ players)")
    group.add_argument("--max-information-tokens", type=int, default=8, help="default 8")
    group.add_argument("--max-life-tokens", type=int, default=3, help="default 3")


def _config_from(args):
    from lbs_pz.engine import HanabiConfig

    return HanabiConfig(
        players=args.players, colors=args.colors, ranks=args.ranks, hand_size=args.hand_size,
        max_information_tokens=args.max_information_tokens, max_life_tokens=args.max_life_tokens,
    )


def cmd_demo(args) -> int:
    """A short tour on the default game: one game of the strongest rule blueprint shown
    move by move, every blueprint's self-play score over many games (in C), then a few
    games with Learned Belief Search on top of the strongest blueprint."""
    from lbs_pz.agents import RuleBot
    from lbs_pz.bench.evaluate import evaluate
    from lbs_pz.engine import HanabiState, move_name
    from lbs_pz.agents.rule_bots import BOT_NAMES

    start = time.perf_counter()
    config = _config_from(args)
    print(f"lbs_pz demo: {config.players} players, {config.colors} colors, {config.ranks} ranks, "
          f"hand size {config.hand_size}; {config.num_moves} move ids, "
          f"{config.encoding_size}-float canonical observation\n")

    bot = RuleBot("strong")
    state = HanabiState(config, seed=args.seed)
    print(state.render(viewer=state.current_player), "\n")
    while not state.is_terminal:
        player, move = state.current_player, bot.act(state)
        state.apply(move)
        if state.num_moves_played <= args.show_moves:
            print(f"P{player} {move_name(config, move)}")
    print(f"... {state.num_moves_played} moves, final position:\n{state.render()}\n")

    print(f"Self-play over {args.games:,} games per blueprint (same deals for all):")
    print("| blueprint | mean +- s.e.m. | perfect | bomb-outs | games/s |")
    print("|---|---:|---:|---:|---:|")
    for name in BOT_NAMES:
        r = evaluate(RuleBot(name), config, games=args.games, seed=args.seed, progress=False)
        print(f"| {name} | {r.mean:.2f} +- {r.sem:.2f} | {100 * r.perfect_rate:.1f}% | "
              f"{100 * r.bomb_rate:.1f}% | {r.games_per_s:,.0f} |")
    if args.search_games > 0:
        from lbs_pz.bench.compare import MethodSpec, collect, format_markdown, summarize

        from lbs_pz.engine import HanabiConfig

        if config == HanabiConfig():   # the variant the shipped belief and value were made for
            method, belief, how = "lbs-16", "learned+cf", (
                "the shipped learned belief filtered through the blueprint; 16 blueprint "
                "moves, then the shipped value model")
        else:
            method, belief, how = "lbs-inf", "grounded+cf", (
                "the grounded belief filtered through the blueprint (the shipped models are "
                "for 2 players, 5 cards); rollouts to the end")
        print(f"\nLearned Belief Search ({method}) on seat 0 vs the strong blueprint, same "
              f"{args.search_games} deals, {args.rollouts} worlds per move: {how}.")
        specs = [MethodSpec("blueprint", seed=args.seed),
                 MethodSpec(method, belief=belief, rollouts=args.rollouts, seed=args.seed)]
        results = collect(specs, dataclasses.asdict(config), args.search_games, seed=args.seed,
                          backend="inline")
        print(format_markdown(summarize(results, config.colors * config.ranks)))
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
    return 0


# Subcommands whose options are parsed by their own module (their --help is theirs).
PASS_THROUGH = {
    "bench-engine": "lbs_pz.bench.engine_throughput",
    "bench-env": "lbs_pz.bench.env_throughput",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lbs-pz",
        description="Hanabi research toolkit: exact Cython engine, PettingZoo/Gymnasium "
                    "environments, blueprints and Learned Belief Search.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="a short tour: one game of the strongest blueprint "
                                       "move by move, then every blueprint's score",
                          description=cmd_demo.__doc__)
    _config_args(demo)
    demo.add_argument("--seed", type=int, default=0, help="seed of the shown game and the batch")
    demo.add_argument("--games", type=int, default=10_000, help="self-play games per blueprint")
    demo.add_argument("--show-moves", type=int, default=12, help="moves of the game to print")
    demo.add_argument("--search-games", type=int, default=5,
                      help="games played with LBS on top of the blueprint (0: skip)")
    demo.add_argument("--rollouts", type=int, default=256, help="LBS worlds per move (default 256)")
    demo.set_defaults(func=cmd_demo)

    sub.add_parser("bench-engine", help="engine throughput against HLE, side by side "
                                        "(same as benchmarks/engine_throughput.py)")
    sub.add_parser("bench-env", help="PettingZoo AEC env vs hanabi_v5, VecEnv and MaskablePPO "
                                     "throughput (same as benchmarks/env_throughput.py)")

    from lbs_pz.bench.evaluate import add_eval_command
    add_eval_command(sub)
    from lbs_pz.bench.compare import add_compare_command
    add_compare_command(sub)
    from lbs_pz.train.belief import add_train_belief_command
    add_train_belief_command(sub)
    from lbs_pz.bench.beliefs import add_belief_quality_command
    add_belief_quality_command(sub)
    from lbs_pz.train.value import add_train_value_command
    add_train_value_command(sub)
    from lbs_pz.train.blueprint import add_train_blueprint_command
    add_train_blueprint_command(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in PASS_THROUGH:
        import importlib

        return importlib.import_module(PASS_THROUGH[argv[0]]).main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as err:  # bad parameters: one clear line, no traceback
        print(f"lbs-pz {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
