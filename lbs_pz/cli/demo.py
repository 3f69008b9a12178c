"""`lbs-pz demo`: a short tour on one game variant: one game of a blueprint shown move by
move, the self-play score of every rule bot (and of the blueprint) on the same evaluation
deals, then a few games with Learned Belief Search on top of the blueprint, with LBS's
safe defaults (a belief and a value trained for the blueprint when they ship, else the
grounded belief and rollouts to the end)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import List

from lbs_pz.agents import BOT_NAMES, Blueprint, RuleBot, load_blueprint
from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option, add_game_options,
                                add_games_option, add_seed_option, game_from, int_at_least)
from lbs_pz.engine import HanabiState, move_name
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.eval.backends import collect
from lbs_pz.eval.evaluate import evaluate
from lbs_pz.eval.report import format_markdown, summarize
from lbs_pz.search.build import describe
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.methods import MethodSpec


def run(args) -> int:
    start = time.perf_counter()
    config = game_from(args)
    blueprint = load_blueprint(args.blueprint)
    print(f"lbs_pz demo: {config.players} players, {config.colors} colors, {config.ranks} ranks, "
          f"hand size {config.hand_size}; {config.num_moves} move ids, "
          f"{config.encoding_size}-float canonical observation\n")

    state = HanabiState(config, seed=int(deal_seeds(EVAL, args.seed, 0, 1)[0]))
    print(f"One game of {blueprint.name}:")
    print(state.render(viewer=state.current_player), "\n")
    while not state.is_terminal:
        player, move = state.current_player, blueprint.act(state)
        state.apply(move)
        if state.num_moves_played <= args.show_moves:
            print(f"P{player} {move_name(config, move)}")
    print(f"... {state.num_moves_played} moves, final position:\n{state.render()}\n")

    print(f"Self-play over {args.games:,} games per blueprint (same deals for all):")
    print("| blueprint | mean +- s.e.m. | perfect | bomb-outs | games/s |")
    print("|---|---:|---:|---:|---:|")
    players: List[Blueprint] = [RuleBot(name) for name in BOT_NAMES]
    if not isinstance(blueprint, RuleBot):
        players.append(blueprint)
    for bp in players:
        r = evaluate(bp, config, games=args.games, seed=args.seed)
        print(f"| {r.bot} | {r.mean:.2f} +- {r.sem:.2f} | {100 * r.perfect_rate:.1f}% | "
              f"{100 * r.bomb_rate:.1f}% | {r.games_per_s:,.0f} |")
    if args.search_games > 0:
        spec = MethodSpec("lbs-16", blueprint=args.blueprint, rollouts=args.rollouts,
                          seed=args.seed)
        print(f"\nLearned Belief Search (LBS-16) on seat 0 vs {blueprint.name} alone, same "
              f"{args.search_games} deals, {args.rollouts} worlds per move:")
        for note in describe(spec, config):
            print(f"  {note}")
        specs = [MethodSpec("blueprint", blueprint=args.blueprint, seed=args.seed), spec]
        results = collect(specs, dataclasses.asdict(config), args.search_games, seed=args.seed,
                          backend="inline", show_progress=False)
        print(format_markdown(summarize(results, config.colors * config.ranks)))
    print(f"\ndone in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "demo", __doc__,
        help="a short tour: one game of a blueprint move by move, every blueprint's score, "
             "then LBS on top of it")
    add_blueprint_option(parser, what="the blueprint shown and searched on")
    add_game_options(parser)
    add_seed_option(parser, "seed of the shown game and the deals")
    add_games_option(parser, 10_000, "self-play games per blueprint")
    parser.add_argument("--show-moves", type=int, default=12, help="moves of the game to print")
    add_games_option(parser, 5, "games played with LBS on top of the blueprint (0: skip)",
                     flag="--search-games", minimum=0)
    parser.add_argument("--rollouts", type=int_at_least(1), default=SearchConfig.rollouts,
                        help=f"LBS worlds per move (default {SearchConfig.rollouts})")
    parser.set_defaults(func=run)
    return parser
