"""How the net's own value ranks EVERY candidate move where LBS-k uses it.

    python docs/experiments/value_ranking.py --blueprint lstm:conventions_expert_value_2p \\
        --depth 1 --games 4

deviation_check.py measures the moves the search picks; this script measures all of them,
to tell a value that is off by a constant for off-path moves from one whose errors are
spread out (the largest of ~15 noisy estimates then looks like a gain: the winner's curse).

Plays the blueprint's own games on evaluation deals. At each of seat 0's decisions it
samples `--worlds` own hands from the belief and, in those same worlds (same hands, same
re-dealt decks), scores every legal move twice: as LBS-k does (the move, k blueprint
moves, then the blueprint's own value) and by rollouts to the end of the game (no value).
A move's gain is its mean paired difference with the blueprint's move; its value error is
the first gain minus the second, so the belief and the deck cancel out. The question it
answers, and its figures: where_deviations_go_wrong.md (and value_stream.md,
deviation_threshold.md).
"""

from __future__ import annotations

import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from lbs_pz.search.rollout_search import move_returns  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deviation_check import (common_parser, move_kind, parse_counts,  # noqa: E402
                             seat0_decisions)


def decisions(blueprint_spec: str, belief: str, depth: int, worlds: int, games: int,
              seed: int = 0, log=print, per_game: int = 0, belief_checkpoint=None):
    """Per decision: (kinds (str per move), claimed gains, true gains, the standard error
    of each move's value error over the worlds) over the legal moves other than the
    blueprint's, each float64 (m,). per_game > 0: only the first per_game decisions of
    each game."""
    out = []
    for bp, agent, g, state, move in seat0_decisions(blueprint_spec, belief, depth, worlds,
                                                     games, seed, per_game, log,
                                                     belief_checkpoint=belief_checkpoint):
        agent.sync_belief(state, 0)
        if agent.value is None or agent.depth < 0:
            raise ValueError(f"{blueprint_spec} has no value of its own: LBS-{depth} rolls "
                             "out to the end, so there is no value to rank moves with")
        rng = np.random.default_rng([seed, g, state.num_moves_played])
        hands = agent.belief.sample(worlds, rng)
        legal = np.array(state.legal_moves(), dtype=np.int64)
        if not len(hands) or len(legal) < 2:
            continue
        decks = rng.integers(0, 2**63, size=len(hands))
        claimed = move_returns(state, 0, legal, hands, decks, bp, agent.depth, agent.value)[0]
        true = move_returns(state, 0, legal, hands, decks, bp, -1, None)[0]
        b = int(np.flatnonzero(legal == move)[0])
        others = np.flatnonzero(legal != move)
        gain, real = claimed[others] - claimed[b], true[others] - true[b]
        err_se = (gain - real).std(axis=1) / np.sqrt(max(len(hands) - 1, 1))
        out.append(([move_kind(state, int(legal[i])) + move_kind(state, move) for i in others],
                    gain.mean(axis=1), real.mean(axis=1), err_se))
    return out


def report(rows, delta: float, log=print) -> None:
    kinds = np.concatenate([np.array(r[0]) for r in rows])
    claimed, true, noise = (np.concatenate([r[i] for r in rows]) for i in (1, 2, 3))
    error = claimed - true
    log("Every candidate move other than the blueprint's, by (candidate, blueprint) move kind "
        "(D discard, P play, H hint): its gain over the blueprint's move as LBS-k claims "
        "it and to the end in the same worlds; the value's error is the difference. Its "
        "s.d. over moves includes the worlds' sampling noise (rms s.e. of one move's "
        "error); net s.d. = sqrt(s.d.^2 - noise^2), the spread of the value's own errors.")
    log("| moves | candidates | claimed gain | gain to the end | value error | s.d. | noise "
        "| net s.d. | correlation |")
    log("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    groups = collections.defaultdict(list)
    for i, k in enumerate(kinds):
        groups[k].append(i)
    for name in sorted(groups, key=lambda k: -len(groups[k])) + ["all"]:
        i = np.arange(len(kinds)) if name == "all" else np.array(groups[name])
        corr = np.corrcoef(claimed[i], true[i])[0, 1] if len(i) > 2 else float("nan")
        sd, rms = error[i].std(), np.sqrt((noise[i] ** 2).mean())
        log(f"| {name} | {len(i)} | {claimed[i].mean():+.2f} | {true[i].mean():+.2f} | "
            f"{error[i].mean():+.2f} +- {sd / np.sqrt(len(i)):.2f} | {sd:.2f} | {rms:.2f} | "
            f"{np.sqrt(max(sd ** 2 - rms ** 2, 0.0)):.2f} | {corr:.2f} |")
    top = np.array([(r[1].max(), r[2][np.argmax(r[1])]) for r in rows])
    picks = top[:, 0] > delta
    log(f"Per decision ({len(rows)}): the largest claimed gain averages {top[:, 0].mean():+.2f} "
        f"and the move that has it gains {top[:, 1].mean():+.2f} to the end; it exceeds delta "
        f"{delta} at {picks.mean():.0%} of decisions, where that move gains "
        f"{top[picks, 1].mean() if picks.any() else float('nan'):+.2f} to the end.")


def main(argv=None) -> int:
    parser = common_parser(__doc__, "lstm:conventions_expert_value_2p")
    parser.add_argument("--worlds", type=int, default=32,
                        help="sampled worlds per decision (default 32)")
    parser.add_argument("--delta", type=float, default=0.05,
                        help="the search's deviation threshold (default 0.05)")
    args = parse_counts(parser, argv, ("worlds",))
    try:
        rows = decisions(args.blueprint, args.belief, args.depth, args.worlds, args.games,
                         args.seed, belief_checkpoint=args.belief_checkpoint)
    except ValueError as err:            # a bad spec, belief or seed: say so, no traceback
        parser.error(str(err))
    if not rows:
        parser.error("no decision had two legal moves and a sampled hand")
    print(f"{args.blueprint}, LBS-{args.depth}'s scores (the {args.belief} belief, "
          f"{args.worlds} worlds, the blueprint's own value) against rollouts to the end, "
          f"seat 0's decisions in {args.games} of the blueprint's self-play games "
          f"(evaluation deals):")
    report(rows, args.delta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
