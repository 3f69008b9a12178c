"""Where do LBS-k's deviations go wrong: the value, the belief, or neither?

    python docs/experiments/deviation_check.py --blueprint lstm:conventions_expert_value_2p \\
        --depth 1 --games 5

The question it answers, and its figures: where_deviations_go_wrong.md (and more_worlds.md).

Plays the blueprint's own games on evaluation deals and, at each of seat 0's decisions,
runs the search (`--depth` blueprint moves, then the blueprint's own value; `--belief`
with `--rollouts` worlds) without playing its move (with `--follow search`, seat 0 plays
the search's move instead: the search's own games, where earlier deviations have taken
the game off the blueprint's path). For every position where the search
would deviate, the gain of its move over the blueprint's move is measured three ways:

    claimed  what the search measured (depth-k rollouts + value, sampled hands)
    belief   rollouts to the end of the game, no value, in `--check-worlds` worlds whose
             own hands are sampled from the same belief
    true     rollouts to the end with the seat's TRUE hand, in `--check-worlds` re-dealt
             decks (the deviation's real worth, the deck aside)

claimed - belief is the value's error on the deviations it picks; belief - true is the
belief's. Rows are grouped by (the search's move kind, the blueprint's move kind),
D = discard, P = play, H = hint.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.engine.moves import decode_move  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.search.build import build_agent  # noqa: E402
from lbs_pz.search.config import PAPER_DELTA
from lbs_pz.search.methods import MethodSpec  # noqa: E402
from lbs_pz.search.rollout_search import move_returns  # noqa: E402


def move_kind(state: HanabiState, move: int) -> str:
    return {"discard": "D", "play": "P"}.get(decode_move(state.config, move).kind, "H")


def seat0_decisions(blueprint_spec: str, belief: str, depth: int, rollouts: int,
                    games: int, seed: int = 0, per_game: int = 0, log=print,
                    precision: str = "float32", belief_checkpoint=None,
                    delta: float = PAPER_DELTA):
    """Walk the blueprint's own games on evaluation deals of run `seed`: yields
    (blueprint, the LBS-k agent (its rollouts in `precision`, deviating only for a gain
    above `delta`), game index, state, the blueprint's move) at each of seat 0's
    decisions (the first per_game of each game if > 0), then plays that move.
    belief_checkpoint: a learned belief's file for the blueprint (None: the one that
    ships for it). The consumer may `send` a move for seat 0
    to play instead of the blueprint's (the search's own games)."""
    config = HanabiConfig()
    spec = MethodSpec(method=f"lbs-{depth}", blueprint=blueprint_spec, belief=belief,
                      rollouts=rollouts, seed=seed, precision=precision,
                      belief_checkpoint=belief_checkpoint, delta=delta)
    bp, agent = build_agent(spec, config)
    for g, deal in enumerate(deal_seeds(EVAL, seed, 0, games)):
        state = HanabiState(config, seed=int(deal))
        seen = 0
        while not state.is_terminal and not (per_game and seen >= per_game):
            move = bp.act(state)
            if state.current_player == 0:
                seen += 1
                chosen = yield bp, agent, g, state, move
                move = move if chosen is None else chosen
            state.apply(move)
        log(f"game {g + 1}/{games}: {seen} decisions")


def deviations(blueprint_spec: str, belief: str, depth: int, rollouts: int, games: int,
               check_worlds: int, seed: int = 0, log=print, belief_checkpoint=None,
               follow: str = "blueprint", delta: float = PAPER_DELTA):
    """One row per deviation: (kinds, claimed gain, belief gain, true gain). follow:
    "blueprint" (seat 0 plays the blueprint's move after each search) or "search" (seat 0
    plays the search's move: the search's own games)."""
    if follow not in ("blueprint", "search"):
        raise ValueError(f"follow must be blueprint or search, got {follow!r}")
    rows = []
    walk = seat0_decisions(blueprint_spec, belief, depth, rollouts, games, seed, log=log,
                           belief_checkpoint=belief_checkpoint, delta=delta)
    played = None
    while True:
        try:
            bp, agent, g, state, _ = walk.send(played)
        except StopIteration:
            break
        result = agent.search(state)
        played = result.move if follow == "search" else None
        if result.deviated:
            pair = [result.move, result.blueprint_move]
            rng = np.random.default_rng([seed, g, state.num_moves_played])
            decks = rng.integers(0, 2**63, size=check_worlds)
            hands = agent.belief.sample(check_worlds, rng)
            sampled = move_returns(state, 0, pair, hands, decks[:len(hands)], bp, -1, None)[0]
            true = np.repeat(np.asarray(state.hand(0))[None], check_worlds, axis=0)
            real = move_returns(state, 0, pair, true, decks, bp, -1, None)[0]
            i = list(result.moves).index(result.move)
            rows.append((move_kind(state, result.move) + move_kind(state, result.blueprint_move),
                         float(result.gains[i]), float((sampled[0] - sampled[1]).mean()),
                         float((real[0] - real[1]).mean())))
    log(f"{len(rows)} deviations")
    return rows


def report(rows, log=print) -> None:
    log("| search / blueprint move | deviations | claimed gain | to the end, belief's hands "
        "| to the end, true hand |")
    log("|---|---:|---:|---:|---:|")
    groups = collections.defaultdict(list)
    for row in rows:
        groups[row[0]].append(row[1:])
    for name in sorted(groups, key=lambda k: -len(groups[k])) + ["all"]:
        values = np.array([r[1:] for r in rows] if name == "all" else groups[name])
        if not len(values):
            continue
        mean = values.mean(axis=0)
        sem = values.std(axis=0) / np.sqrt(len(values))
        log(f"| {name} | {len(values)} | " + " | ".join(
            f"{m:+.2f} +- {s:.2f}" for m, s in zip(mean, sem)) + " |")


def common_parser(doc: str, blueprint: str) -> argparse.ArgumentParser:
    """The options this script shares with value_ranking.py: the blueprint, the belief,
    LBS-k's k, the evaluation deals and the run seed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=doc.split("\n\n", 2)[2])
    parser.add_argument("--blueprint", default=blueprint,
                        help="a blueprint spec with its own value (default %(default)s)")
    parser.add_argument("--belief", default="learned",
                        help="the search's belief (default %(default)s)")
    parser.add_argument("--belief-checkpoint", metavar="PATH", default=None,
                        help="a learned belief's file for the blueprint (`lbs-pz "
                             "train-belief`; default: the one that ships for it)")
    parser.add_argument("--depth", type=int, default=1, help="LBS-k's k (default 1)")
    parser.add_argument("--games", type=int, default=5, help="evaluation deals (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def parse_counts(parser: argparse.ArgumentParser, argv, names) -> argparse.Namespace:
    """Parse argv; an error unless every option in `names` is >= 1."""
    args = parser.parse_args(argv)
    for name in ("depth", "games") + tuple(names):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def main(argv=None) -> int:
    parser = common_parser(__doc__, "lstm:conventions_expert_value_2p")
    parser.add_argument("--rollouts", type=int, default=32,
                        help="the search's worlds per decision (default 32)")
    parser.add_argument("--check-worlds", type=int, default=256,
                        help="worlds of each re-measurement to the end (default 256)")
    parser.add_argument("--follow", choices=("blueprint", "search"), default="blueprint",
                        help="whose move seat 0 plays after each search: the blueprint's "
                             "(its own games, default) or the search's (the search's own "
                             "games)")
    parser.add_argument("--delta", type=float, default=PAPER_DELTA,
                        help="the search deviates only for a gain above this (default "
                             "%(default)s, the paper's)")
    args = parse_counts(parser, argv, ("rollouts", "check_worlds"))
    try:
        rows = deviations(args.blueprint, args.belief, args.depth, args.rollouts, args.games,
                          args.check_worlds, args.seed,
                          belief_checkpoint=args.belief_checkpoint, follow=args.follow,
                          delta=args.delta)
    except ValueError as err:            # a bad spec, belief or seed: say so, no traceback
        parser.error(str(err))
    print(f"{args.blueprint}, LBS-{args.depth} with the {args.belief} belief and the "
          f"blueprint's own value, {args.rollouts} worlds, delta {args.delta:g}; seat 0's "
          f"decisions in "
          f"{args.games} of the "
          + ("search's own games" if args.follow == "search" else "blueprint's self-play games")
          + " (evaluation deals); gains of the search's move over the blueprint's, mean +- "
          "s.e.m. over deviations:")
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
