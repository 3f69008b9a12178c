"""Belief figures: quality (cross-entropy), learned-belief sampling speed, and exact-belief
memory / update time for 5-, 6- and 7-card hands.

    python benchmarks/beliefs.py                      # all three sections
    python benchmarks/beliefs.py --quality-games 20 --exact-moves 4 --skip 6

1. Cross-entropy of the true hand, per card, averaged over blueprint self-play games:
   exact (SPARTA) < learned < grounded is the paper's ordering.
2. Learned belief: wall time of `sample(10_000)` on one CPU core (torch set to 1
   thread), at several points of a 2p 5-card game.
3. Exact belief: candidate hands, memory and update time over the first moves of a 2p
   game with 5-, 6- and 7-card hands (7-card with 4 hint tokens, the paper's variant);
   the 7-card enumeration exceeds the memory cap and raises BeliefMemoryError, the
   paper's out-of-memory case.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction

import numpy as np


from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.agents.rule_bots import _bots as bots


def initial_hand_count(config: HanabiConfig) -> int:
    """Ordered own hands at the start of a game (no hints), counting unseen copies as
    the full deck minus one partner hand of the same size: n! [x^n] prod_t sum_k x^k/k!."""
    n = config.hand_size
    counts = [config.card_count(t) for t in range(config.num_card_types)]
    # Typical partner hand: remove the most common copies first (one per type, lowest
    # ranks) - the count changes by < 10% with the partner's actual cards.
    left = list(counts)
    for t in sorted(range(len(counts)), key=lambda t: -counts[t])[:n]:
        left[t] -= 1
    poly = [Fraction(1)]
    for u in left:
        term = [Fraction(1, math.factorial(k)) for k in range(u + 1)]
        new = [Fraction(0)] * min(n + 1, len(poly) + len(term) - 1)
        for i, a in enumerate(poly):
            for k, b in enumerate(term):
                if i + k <= n:
                    new[i + k] += a * b
        poly = new
    return int(poly[n] * math.factorial(n)) if len(poly) > n else 0


def section_quality(games: int, seed: int, plot_path: str) -> None:
    from lbs_pz.eval.belief_quality import phase_table, plot, run_quality

    config = HanabiConfig(players=2)
    t0 = time.perf_counter()
    result = run_quality(config, "strong", games, seed, progress=False)
    print(f"\n1. Belief quality: {games} games of the strong bot (2p, 5 cards), per-card "
          f"cross-entropy of the true hand (nats), by move number "
          f"({time.perf_counter() - t0:.0f} s)")
    print(phase_table(result))
    if plot_path and plot(result, plot_path, f"strong bot, 2p, {games} games"):
        print(f"plot: {plot_path}")


def section_sampling(reps: int = 7) -> None:
    from lbs_pz.search.beliefs.learned import LearnedBelief

    config = HanabiConfig(players=2)
    print("\n2. Learned belief: 10,000 sampled hands on one CPU core (torch 1 thread)")
    print(f"{'move':>6} {'median ms':>10} {'min ms':>8} {'legal':>7}")
    state = HanabiState(config, seed=42)
    belief = LearnedBelief(threads=1).reset(state, 0)
    rng = np.random.default_rng(0)
    for stop in (0, 10, 20, 30, 40):
        while state.num_moves_played < stop and not state.is_terminal:
            state.apply(bots.act("strong", state))
        belief.observe(state)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            belief.sample(10_000, rng)
            times.append(time.perf_counter() - t)
        print(f"{state.num_moves_played:6d} {np.median(times) * 1e3:10.1f} {min(times) * 1e3:8.1f} "
              f"{belief.last_legal / belief.last_proposed:7.1%}")


def section_exact(moves: int, skip, memory_cap_gb: float) -> None:
    from lbs_pz.search.beliefs import BeliefMemoryError, ExactBelief

    cap = int(memory_cap_gb * 2**30)
    print(f"\n3. Exact belief (strong-bot partner, counterfactual filtering in C), first "
          f"{moves} moves of one 2p game; memory cap {memory_cap_gb:g} GiB")
    head = (f"{'hand':>5} {'hints':>5} {'initial hands':>14} {'est. need':>10} "
            f"{'peak memory':>12} {'reset s':>8} {'mean update s':>14} {'max update s':>13}  note")
    print(head)
    print("-" * len(head))
    for hand, hints in ((5, 8), (6, 8), (7, 4)):
        config = HanabiConfig(players=2, hand_size=hand, max_information_tokens=hints)
        est = initial_hand_count(config)
        need = est * (hand + 9) / 2**30
        row = f"{hand:5d} {hints:5d} {est:14,d} {need:8.1f}G "
        if hand in skip:
            print(row + f"{'-':>12} {'-':>8} {'-':>14} {'-':>13}  skipped")
            continue
        state = HanabiState(config, seed=1)
        belief = ExactBelief("strong", memory_cap=cap)
        t0 = time.perf_counter()
        try:
            belief.reset(state, 0)
        except BeliefMemoryError as err:
            print(row + f"{'-':>12} {time.perf_counter() - t0:8.2f} {'-':>14} {'-':>13}  "
                  f"BeliefMemoryError: {str(err).split(';')[0]}")
            continue
        reset_s = time.perf_counter() - t0
        for _ in range(moves):
            if state.is_terminal:
                break
            state.apply(bots.act("strong", state))
            belief.observe(state)
            belief.sample(10, np.random.default_rng(0))      # weights: counted in the peak
        ups = belief.update_seconds[1:]
        print(row + f"{belief.peak_memory_bytes / 2**20:10.0f}MB {reset_s:8.2f} "
              f"{np.mean(ups):14.3f} {np.max(ups):13.3f}  hands after {len(ups)} moves: "
              f"{belief.sizes}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quality-games", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default="belief_quality.png")
    p.add_argument("--exact-moves", type=int, default=6)
    p.add_argument("--skip", type=int, nargs="*", default=[], help="hand sizes to skip in 3")
    p.add_argument("--memory-cap-gb", type=float, default=8.0)
    p.add_argument("--sections", default="1,2,3")
    args = p.parse_args(argv)
    sections = set(args.sections.split(","))
    if "2" in sections:
        section_sampling()
    if "3" in sections:
        section_exact(args.exact_moves, set(args.skip), args.memory_cap_gb)
    if "1" in sections:
        section_quality(args.quality_games, args.seed, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
