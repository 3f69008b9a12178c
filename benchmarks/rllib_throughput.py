"""Sampling throughput of RLlib's multi-agent PPO on lbs_pz's PettingZoo env, next to
sb3_contrib MaskablePPO's rollout collection on lbs_pz's native SB3 VecEnv.

    python benchmarks/rllib_throughput.py --seconds 60 --runners 1,2 --envs 1,2

RLlib rows: the PPO config examples/rllib_ppo.py trains with (`lbs_pz.train.rllib_ppo.
ppo_config` of a default `RLlibPPORun`: the standard 2-player game through RLlib's
PettingZooEnv, one shared masked module of two hidden layers of 256, a train batch of
--batch env steps) with `num_env_runners` = each of --runners (Ray actors on a local
Ray, each with one env, one CPU and torch on one thread, Ray's OMP_NUM_THREADS for a
1-CPU actor). What is timed is PPO's sampling phase as `PPO.training_step` runs it in
RLlib 2.60: `synchronous_parallel_sample(env_runner_group, max_env_steps=train batch)`,
every runner's `sample()` in parallel (rollout fragments of
train batch / runners steps each: the module's exploration forward pass, the env, the
connectors, the episodes) and the episodes shipped back to this process; no learner
update, so the weights stay the initial ones. One call is made as a warm-up, then calls
are repeated until --seconds of wall time have passed; env steps are counted from the
returned episodes (one env step is one move of one player, as in the VecEnv).

SB3 rows: `env_throughput.measure_maskable_ppo_rollouts` (benchmarks/env_throughput.py's
MaskablePPO model, the same two layers of 256 for policy and critic, torch on one
thread): `collect_rollouts` of --sb3-steps per env, repeated for --seconds after a
warm-up, with n_envs = each of --envs games stepped together in this one process.

Each row gives the machine's 1-minute load average before and after its measurement (a
load above the processes the row runs means other work shared the cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

from env_throughput import measure_maskable_ppo_rollouts
from lbs_pz.optional import ray_session
from lbs_pz.train.rllib_ppo import RLlibPPORun, ppo_config


def sample_rate(runners: int, seconds: float, batch: int, seed: int = 0) -> dict:
    """RLlib PPO's sampling phase (module docstring) with `runners` env runners, timed
    for `seconds` after one warm-up call; a local Ray session must be running."""
    run = RLlibPPORun(env_runners=runners, train_batch_size=batch,
                      minibatch_size=min(500, batch), seed=seed)
    algo = ppo_config(run).build_algo()
    try:
        group = algo.env_runner_group

        def sample() -> int:
            episodes = synchronous_parallel_sample(worker_set=group, max_env_steps=batch,
                                                   _uses_new_env_runners=True, concat=True)
            return sum(episode.env_steps() for episode in episodes)

        sample()                                       # warm-up
        steps, calls, start = 0, 0, time.perf_counter()
        while calls == 0 or time.perf_counter() - start < seconds:
            steps += sample()
            calls += 1
        elapsed = time.perf_counter() - start
    finally:
        algo.stop()
    return {"rate": steps / elapsed, "steps": steps, "seconds": elapsed, "calls": calls}


def parse_counts(text: str) -> list:
    counts = [int(x) for x in text.split(",") if x.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"need comma-separated counts >= 1, got {text!r}")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="wall time each row is timed for, after its warm-up "
                             "(default %(default)s)")
    parser.add_argument("--runners", type=parse_counts, default=[1, 2],
                        help="RLlib num_env_runners to time, comma-separated (default 1,2)")
    parser.add_argument("--envs", type=parse_counts, default=[1, 2],
                        help="SB3 VecEnv n_envs to time, comma-separated (default 1,2)")
    parser.add_argument("--batch", type=int, default=4000,
                        help="RLlib's train batch: env steps per sampling call over all "
                             "runners (default %(default)s, the example's)")
    parser.add_argument("--sb3-steps", type=int, default=256,
                        help="SB3 rollout length per env (n_steps; default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.batch < 1 or args.sb3_steps < 1:
        parser.error("--seconds, --batch and --sb3-steps must be positive")

    def log(msg: str) -> None:
        print(f"[rllib_throughput] {msg}", file=sys.stderr, flush=True)

    rows = []
    cpus = max(os.cpu_count() or 1, max(args.runners) + 1)   # as lbs_pz.train.rllib_ppo.train
    with ray_session(workers=cpus, what="benchmarks/rllib_throughput.py"):
        for runners in args.runners:
            log(f"RLlib PPO sampling, {runners} env runner(s) ...")
            before = os.getloadavg()[0]
            result = sample_rate(runners, args.seconds, args.batch, args.seed)
            rows.append(("RLlib 2.60 PPO, sampling", f"{runners} runner(s)", result, before,
                         os.getloadavg()[0]))
    for envs in args.envs:
        log(f"MaskablePPO rollouts, {envs} env(s) ...")
        before = os.getloadavg()[0]
        result = measure_maskable_ppo_rollouts(envs, args.seconds, args.sb3_steps, args.seed)
        rows.append(("sb3_contrib MaskablePPO, collect_rollouts", f"{envs} env(s)", result,
                     before, os.getloadavg()[0]))

    print("| library | runners/envs | env steps | seconds | steps/s | load before | "
          "load after |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for library, size, result, before, after in rows:
        if "error" in result:
            print(f"| {library} | {size} | | | unavailable ({result['error']}) | "
                  f"{before:.2f} | {after:.2f} |")
            continue
        print(f"| {library} | {size} | {result['steps']:,} | {result['seconds']:.1f} | "
              f"{result['rate']:,.0f} | {before:.2f} | {after:.2f} |")
    print()
    print(f"Standard 2-player game; each row timed for at least {args.seconds:g} s after a "
          f"warm-up. RLlib: PPO's sampling phase (synchronous_parallel_sample of a "
          f"{args.batch:,}-step train batch over the runners, each with one env, one CPU "
          f"and one torch thread, "
          f"episodes back in the driver; no update). SB3: collect_rollouts of "
          f"{args.sb3_steps} steps per env in one process (no update), torch on one thread. "
          f"Load: 1-minute average; {os.cpu_count()} cores.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
