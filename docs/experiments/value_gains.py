"""Does LBS-k's value mislead its decisions? Each move's paired gain at depth k against the
same worlds rolled out to the end of the game.

    python docs/experiments/value_gains.py --blueprint strong --games 30 --worlds 1024

LBS-k ranks a seat's candidate moves by their paired gain over the blueprint's move,
bootstrapped with a value after k blueprint moves; rolled out to the end instead, the
same worlds give the gain with no value in it. On the blueprint's own games (tuning
deals: the evaluation deals of run seed 1, which no figure plays), at every --every-th
decision of seat 0, this samples --worlds hands from the search's resolved belief (what
LBS-k would sample there) and rolls every legal move out in each world twice, to depth k
with the resolved value and to the end, on the same hands and decks (common random
numbers). Per candidate move other than the blueprint's: g_k and g_end, its mean gains,
and d = g_end - g_k world by world. `--values A.pt B.pt` measures more values for the
blueprint on the same worlds. It prints, per value where it differs:

- the value's bias in the gain, mean(g_k - g_end), and its spread, by kind of move;
- how often the best move by g_k is not the best by g_end, and how often the deviation
  test (gain > delta and > 2 s.e. of the gain, the s.e. of at most 32 worlds as LBS-16
  runs) decides differently on the two estimates;
- the points the test's picks on g_k lose against its picks on g_end (scored by g_end);
- the median standard error of a candidate's g_k at these worlds, and the world count
  whose standard error equals the bias's spread (a deviation margin capped there is
  as wide as the bias);
- var(d) / var(g_end) per move (median): a depth-k estimate corrected by rolling every
  N-th world to the end (a control variate) has variance var(g_k) + N var(d) per world,
  so this ratio says whether such a correction buys precision cheaper than rolling every
  world to the end;
- the seconds of the depth-k and the to-the-end rollouts.
Its figures: value_gains.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState, decode_move  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.search.agents import SearchAgent  # noqa: E402
from lbs_pz.search.config import SearchConfig  # noqa: E402
from lbs_pz.search.resolve import resolve  # noqa: E402
from lbs_pz.search.rollout_search import move_returns  # noqa: E402
from lbs_pz.search.value import CentralValue  # noqa: E402

KINDS = ("play", "discard", "hint")


def kind_of(config: HanabiConfig, move: int) -> str:
    """play | discard | hint."""
    name = decode_move(config, move).kind
    return name if name in ("play", "discard") else "hint"


def positions(bp, config: HanabiConfig, games: int, every: int, seed: int):
    """Seat 0's every `every`-th decision in the blueprint's own games on the evaluation
    deals of run `seed` (states, copied)."""
    for deal in deal_seeds(EVAL, seed, 0, games):
        state = HanabiState(config, seed=int(deal))
        decisions = 0
        while not state.is_terminal:
            if state.current_player == 0:
                if decisions % every == 0:
                    yield state.clone()
                decisions += 1
            state.apply(bp.act(state))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blueprint", default="strong", help="blueprint spec (default strong)")
    parser.add_argument("--depth", type=int, default=16, help="LBS depth k (default 16)")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--every", type=int, default=4, help="every N-th decision of seat 0")
    parser.add_argument("--worlds", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=1, help="run seed of the deals (1: tuning)")
    parser.add_argument("--values", nargs="*", default=[], metavar="CHECKPOINT",
                        help="more values for the blueprint, measured on the same worlds")
    args = parser.parse_args(argv)
    config = HanabiConfig()
    bp = load_blueprint(args.blueprint)
    method = f"lbs-{args.depth}"
    r = resolve(bp, config, SearchConfig(rollouts=args.worlds), method)
    if r.depth < 0:
        parser.error(f"{args.blueprint} has no value for {method} to bootstrap with")
    agent = SearchAgent(bp, r.belief, r.config, depth=r.depth, value=r.value)
    values = [("resolved", agent.value)] + [(path, CentralValue(path, blueprint=bp, threads=1))
                                           for path in args.values]
    rng = np.random.default_rng(args.seed)
    bias = {(name, k): [] for name, _ in values for k in KINDS}
    ratios, n_pos = [], 0
    sds = {name: [] for name, _ in values}     # per-world sd of each candidate's g_k
    best_differs = {name: 0 for name, _ in values}
    test_differs = dict(best_differs)
    loss = {name: 0.0 for name, _ in values}   # g_end of the test's pick on g_end, minus on g_k
    seconds = [0.0, 0.0]
    for state in positions(bp, config, args.games, args.every, args.seed):
        agent.sync_belief(state, 0)
        hands, _ = agent.belief.sample_weighted(args.worlds, rng)
        legal = np.array(state.legal_moves(), dtype=np.int64)
        if len(hands) < 64 or len(legal) < 2:
            continue
        seeds = rng.integers(0, 2**63, size=len(hands))
        t1 = time.perf_counter()
        at_end, _ = move_returns(state, 0, legal, hands, seeds, agent.rollout_blueprint, -1, None)
        seconds[1] += time.perf_counter() - t1
        ref = int(np.flatnonzero(legal == bp.act(state))[0])
        g_end = at_end - at_end[ref]
        others = [i for i in range(len(legal)) if i != ref]
        n_pos += 1
        for name, value in values:
            t0 = time.perf_counter()
            at_k, _ = move_returns(state, 0, legal, hands, seeds, agent.rollout_blueprint,
                                   r.depth, value)
            if name == "resolved":
                seconds[0] += time.perf_counter() - t0
            g_k = at_k - at_k[ref]
            for i in others:
                bias[name, kind_of(config, int(legal[i]))].append(g_k[i].mean() - g_end[i].mean())
                sds[name].append(g_k[i].std(ddof=1))
                if name == "resolved":
                    v_end = g_end[i].var()
                    if v_end > 0:
                        ratios.append((g_end[i] - g_k[i]).var() / v_end)
            best_differs[name] += int(np.argmax(g_k.mean(1)) != np.argmax(g_end.mean(1)))
            pick_k, pick_end = _deviates(g_k, ref, r.config), _deviates(g_end, ref, r.config)
            test_differs[name] += int(pick_k != pick_end)
            loss[name] += float(g_end[pick_end].mean() - g_end[pick_k].mean())
    print(f"{args.blueprint}, {method} ({r.config.rollouts} worlds from its resolved belief) "
          f"against the same worlds to the end: {n_pos} positions of seat 0 in {args.games} "
          f"games (run seed {args.seed})")
    print("| value | move kind | candidates | mean gain bias g_k - g_end | mean abs bias | "
          "sd of bias |")
    print("|---|---|---:|---:|---:|---:|")
    for name, _ in values:
        for k in KINDS + ("all",):
            b = np.array(sum((bias[name, j] for j in KINDS), []) if k == "all"
                         else bias[name, k])
            if len(b):
                print(f"| {name} | {k} | {len(b)} | {b.mean():+.3f} | {np.abs(b).mean():.3f} | "
                      f"{b.std():.3f} |")
    for name, _ in values:
        print(f"{name}: best move differs: {best_differs[name]}/{n_pos} positions; deviation "
              f"test differs (delta {r.config.delta}, confidence {r.config.confidence}, margin "
              f"of at most {r.config.margin_worlds} worlds): {test_differs[name]}/{n_pos}, "
              f"points lost per position by its picks (g_end): {loss[name] / n_pos:.4f}")
    print(f"standard error of a candidate's g_k at {r.config.rollouts} worlds: median "
          f"{np.median(sds['resolved']) / np.sqrt(r.config.rollouts):.3f}")
    for name, _ in values:
        sd_bias = np.array(sum((bias[name, j] for j in KINDS), [])).std()
        print(f"{name}: worlds whose standard error equals the bias's sd, (median per-world "
              f"sd {np.median(sds[name]):.3f} / {sd_bias:.3f})^2 = "
              f"{(np.median(sds[name]) / sd_bias) ** 2:.0f}")
    q = np.percentile(ratios, [25, 50, 75])
    print(f"var(g_end - g_k) / var(g_end) per candidate: median {q[1]:.2f} (quartiles "
          f"{q[0]:.2f}, {q[2]:.2f}); a correction every N worlds costs N times that in variance")
    print(f"seconds: depth {r.depth} {seconds[0]:.1f}, to the end {seconds[1]:.1f} "
          f"(ratio {seconds[1] / max(seconds[0], 1e-9):.2f})")
    return 0


def _deviates(gains: np.ndarray, ref: int, config: SearchConfig) -> int:
    """The move index the deviation test picks on per-world gains (moves, worlds): the best
    by mean if it clears delta and `confidence` s.e. (capped at margin_worlds), else ref."""
    n = gains.shape[1]
    mean = gains.mean(1)
    sem = gains.std(1, ddof=1) / np.sqrt(n)
    if config.margin_worlds:
        sem = sem * np.sqrt(max(n / config.margin_worlds, 1.0))
    best = int(np.argmax(mean))
    return best if mean[best] > config.delta and mean[best] > config.confidence * sem[best] \
        else ref


if __name__ == "__main__":
    sys.exit(main())
