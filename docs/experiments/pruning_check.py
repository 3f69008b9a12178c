"""What each pruning rule costs and whether it changes the search's move.

    python docs/experiments/pruning_check.py --blueprint lstm:conventions_expert_value_2p \\
        --depth 16 --games 4

Plays the blueprint's own games on evaluation deals. At each of seat 0's decisions it
samples the search's worlds once from the belief and runs LBS-k on them once per rule, with
the same seed (so the same hands and the same re-dealt decks): "off" (every legal move in
every world) and each pruning rule, in turn, in a rotating order. A rule's move is then
compared with "off"'s: pruning is meant to save rollouts, not to change the decision.
Reports per rule the rollouts and seconds per decision and the decisions whose move differs.
The questions it answers: pruning_and_precision.md and python_blueprints.md (the
pruning-strong and pruning-python sections of benchmarks/sections.toml run it).
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from lbs_pz.search.config import PRUNING_RULES  # noqa: E402
from lbs_pz.search.rollout_search import search_move  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deviation_check import common_parser, parse_counts, seat0_decisions  # noqa: E402


def check(blueprint_spec: str, belief: str, depth: int, worlds: int, games: int,
          rules, precision: str = "float32", refill=None, seed: int = 0, log=print,
          belief_checkpoint=None):
    """Per rule ("off" first): (moves int64 (D,), rollouts int64 (D,), seconds (D,)) over
    the D decisions with two legal moves and enough sampled worlds."""
    rules = ["off"] + [r for r in rules if r != "off"]
    out = {rule: ([], [], []) for rule in rules}
    decisions = seat0_decisions(blueprint_spec, belief, depth, worlds, games, seed,
                                log=log, precision=precision,
                                belief_checkpoint=belief_checkpoint)
    for d, (bp, agent, g, state, _) in enumerate(decisions):
        agent.sync_belief(state, 0)
        rng = np.random.default_rng([seed, g, state.num_moves_played])
        hands = agent.belief.sample(worlds, rng)
        if len(state.legal_moves()) < 2 or len(hands) < agent.config.batch_size:
            continue
        search_seed = int(rng.integers(2**62))
        for rule in rules[d % len(rules):] + rules[:d % len(rules)]:
            config = agent.config.replace(pruning=rule, refill=refill)
            result = search_move(state, 0, bp, hands, config, depth=agent.depth,
                                 value=agent.value, rollout_blueprint=agent.rollout_blueprint,
                                 seed=search_seed)
            for column, x in zip(out[rule], (result.move, result.rollouts, result.seconds)):
                column.append(x)
    return {rule: tuple(np.array(c) for c in cols) for rule, cols in out.items()}


def report(results, log=print) -> None:
    reference = results["off"][0]
    log("| pruning | decisions | rollouts / decision | seconds / decision | speed-up | "
        "move differs from off |")
    log("|---|---:|---:|---:|---:|---:|")
    base = results["off"][2].sum()
    for rule, (moves, rollouts, seconds) in results.items():
        differ = int((moves != reference).sum())
        log(f"| {rule} | {len(moves)} | {rollouts.mean():,.0f} | {seconds.mean():.3f} | "
            f"{base / seconds.sum():.2f}x | {differ} ({differ / max(len(moves), 1):.1%}) |")


def main(argv=None) -> int:
    parser = common_parser(__doc__, "lstm:conventions_expert_value_2p")
    parser.add_argument("--worlds", type=int, default=256,
                        help="sampled worlds per decision (default 256)")
    parser.add_argument("--rules", default="means,paired,threshold",
                        help=f"pruning rules to compare with off, comma-separated, from "
                             f"{', '.join(PRUNING_RULES)} (default %(default)s)")
    parser.add_argument("--search-precision", default="float32",
                        choices=("float32", "bfloat16"),
                        help="the rollouts' precision, as compare's (default float32)")
    parser.add_argument("--no-refill", action="store_true",
                        help="batch_size worlds per batch after pruning, not refilled (the "
                             "default refills them for a neural blueprint)")
    args = parse_counts(parser, argv, ("worlds",))
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    unknown = [r for r in rules if r not in PRUNING_RULES]
    if unknown or not rules:
        parser.error(f"--rules: choose from {', '.join(PRUNING_RULES)}, got {args.rules!r}")
    try:
        results = check(args.blueprint, args.belief, args.depth, args.worlds, args.games,
                        rules, args.search_precision, False if args.no_refill else None,
                        args.seed, belief_checkpoint=args.belief_checkpoint)
    except ValueError as err:            # a bad spec, belief or seed: say so, no traceback
        parser.error(str(err))
    if not len(results["off"][0]):
        parser.error("no decision had two legal moves and enough sampled worlds")
    print(f"{args.blueprint}, LBS-{args.depth} with the {args.belief} belief, {args.worlds} "
          f"worlds, rollouts in {args.search_precision}"
          f"{', batches not refilled' if args.no_refill else ''}: seat 0's decisions in "
          f"{args.games} of the blueprint's self-play games (evaluation deals), each searched "
          f"once per rule on the same worlds:")
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
