"""Soak test: resident memory over long runs of the engine, the environment and error paths.

    python benchmarks/soak.py            # 10^6 batched random games, 10^5 strong-bot games,
                                         # 20,000 AEC games, 10^6 clones, 200,000 refused
                                         # calls (a few minutes on one core)
    python benchmarks/soak.py --quick    # a tenth of each

Each stage warms up first (allocator pools, caches), then reads the resident set size
(/proc/self/statm) before and after its main loop. A leak of even a few bytes per game,
clone or failed call shows up as megabytes here; the goal is no growth beyond allocator
noise (< 2 MiB per stage).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from _common import play_random_aec_game

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def measure(name: str, unit: str, count: int, warmup, body) -> dict:
    warmup()
    before = rss_mib()
    start = time.perf_counter()
    body()
    seconds = time.perf_counter() - start
    growth = rss_mib() - before
    print(f"{name:34s} {count:>9,} {unit:10s} {seconds:7.1f} s   RSS {before:7.1f} -> "
          f"{before + growth:7.1f} MiB   growth {growth:+6.2f} MiB", flush=True)
    return dict(name=name, count=count, seconds=seconds, growth_mib=growth)


def batched_games(games: int):
    from lbs_pz.engine import HanabiBatch, HanabiConfig
    batch = HanabiBatch(HanabiConfig(), 1000)
    masks = np.empty((1000, batch.config.num_moves), np.int8)
    enc = np.empty((1000, batch.config.encoding_size), np.float32)

    def rounds(first, n):
        for r in range(first, first + n):
            batch.reset(r)
            batch.play_random()
            batch.legal_masks(out=masks)
            batch.encode(out=enc)
    return (lambda: rounds(10**6, 20)), (lambda: rounds(0, games // 1000))


def bot_games(games: int):
    from lbs_pz.agents.rule_bots import RuleBot
    from lbs_pz.engine import HanabiBatch, HanabiConfig
    bot = RuleBot("strong")
    batch = HanabiBatch(HanabiConfig(), 1000)

    def rounds(first, n):
        for r in range(first, first + n):
            batch.reset(r)
            bot.rollout(batch)
    return (lambda: rounds(10**6, 5)), (lambda: rounds(0, games // 1000))


def clones(count: int):
    from lbs_pz.engine import HanabiConfig, HanabiState
    state = HanabiState(HanabiConfig(), seed=0)
    for _ in range(10):
        state.apply(state.legal_moves()[-1])

    def run(n):
        for _ in range(n):
            state.clone()
    return (lambda: run(50_000)), (lambda: run(count))


def aec_games(games: int):
    from lbs_pz.envs import hanabi_v0
    env = hanabi_v0.env()
    rng = np.random.default_rng(0)

    def run(first, n):
        for g in range(first, first + n):
            play_random_aec_game(env, g, rng)
    return (lambda: run(10**6, 200)), (lambda: run(0, games))


def refused_calls(count: int):
    """Calls that raise: each error path must free what it allocated before raising."""
    from lbs_pz.agents.rule_bots import RuleBot
    from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
    from lbs_pz.engine.records import from_hanablive, to_hanablive
    cfg = HanabiConfig()
    bot = RuleBot("strong")
    states = [HanabiState(cfg, seed=s) for s in range(64)]
    batch = HanabiBatch(cfg, 64)
    read_only = np.frombuffer(bytes(64 * cfg.num_moves), np.int8).reshape(64, cfg.num_moves)
    record = to_hanablive(states[0])
    bad_record = dict(record, actions=[{"type": 2, "target": 1, "value": 99}])
    attempts = [
        lambda: HanabiBatch.from_states(states + ["x"]),
        lambda: bot.rollout(states),
        lambda: batch.legal_masks(out=read_only),
        lambda: batch.step(np.full(64, 10**6)),
        lambda: states[0].apply(10**6),
        lambda: from_hanablive(bad_record),
    ]

    def run(n):
        for i in range(n):
            try:
                attempts[i % len(attempts)]()
            except Exception:
                pass
            else:
                raise AssertionError(f"attempt {i % len(attempts)} was accepted")
    return (lambda: run(6_000)), (lambda: run(count))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of every stage")
    parser.add_argument("--max-growth-mib", type=float, default=2.0,
                        help="RSS growth per stage above which the run fails (default 2)")
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    stages = [("batched games (HanabiBatch)", "games", 10**6 // scale, batched_games),
              ("strong-bot games (RuleBot.rollout)", "games", 10**5 // scale, bot_games),
              ("AEC games (hanabi_v0.env)", "games", 20_000 // scale, aec_games),
              ("HanabiState.clone", "clones", 10**6 // scale, clones),
              ("refused calls (error paths)", "calls", 200_000 // scale, refused_calls)]
    print(f"soak on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = []
    for name, unit, count, make in stages:
        warmup, body = make(count)
        results.append(measure(name, unit, count, warmup, body))
    worst = max(results, key=lambda r: r["growth_mib"])
    print(f"\nlargest RSS growth after warm-up: {worst['growth_mib']:+.2f} MiB ({worst['name']}); "
          f"limit {args.max_growth_mib} MiB")
    return 0 if worst["growth_mib"] <= args.max_growth_mib else 1


if __name__ == "__main__":
    sys.exit(main())
