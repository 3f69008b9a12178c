"""Environment throughput: lbs_pz's PettingZoo/SB3 environments, side by side in one run.

1. AEC API random-legal play through `hanabi_v0.env()` (the standard wrappers, `last()`,
   the action mask, `step`), vs PettingZoo's classic `hanabi_v5.env()` doing the same
   (it runs HLE through OpenSpiel and Shimmy; install `shimmy[openspiel]` to measure it).
2. The native SB3 VecEnv over the batched engine: env steps/s with 256 games, observations
   and action masks, random legal actions.
3. MaskablePPO training on that VecEnv: env steps per second of `learn()` (rollouts and
   gradient updates together), on CPU. (`measure_maskable_ppo_rollouts` times its rollout
   collection alone; benchmarks/rllib_throughput.py prints it beside RLlib's sampling.)

    python benchmarks/env_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Optional

import numpy as np

from _common import limit_threads, pin_to_one_core, play_random_aec_game, timed_rates

TARGETS = {"aec_ratio": 10.0, "vec_env_steps": 200_000}


def _aec_random_play(make_env, steps: int, seed: int) -> int:
    """Random legal moves through an AEC env until `steps` moves were made."""
    env = make_env()
    rng = np.random.default_rng(seed)
    done_steps, game = 0, 0
    while done_steps < steps:
        done_steps += play_random_aec_game(env, seed + game, rng)
        game += 1
    env.close()
    return done_steps


def measure_aec(steps: int, repeats: int, seed: int = 0) -> dict:
    from lbs_pz.envs import hanabi_v0

    rates = timed_rates(lambda: _aec_random_play(hanabi_v0.env, steps, seed), repeats)
    return {"rate": statistics.median(rates), "samples": rates}


def measure_hanabi_v5(steps: int, repeats: int, seed: int = 0) -> dict:
    try:
        from pettingzoo.classic import hanabi_v5

        hanabi_v5.env()
    except Exception as err:  # missing shimmy / open_spiel
        return {"error": f"{type(err).__name__}: {err}".splitlines()[0][:120]}
    rates = timed_rates(lambda: _aec_random_play(hanabi_v5.env, steps, seed), repeats)
    return {"rate": statistics.median(rates), "samples": rates}


def measure_vec_env(num_envs: int, vec_steps: int, repeats: int, seed: int = 0) -> dict:
    from lbs_pz.wrappers.vec_env import HanabiVecEnv

    env = HanabiVecEnv(num_envs, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)

    def run() -> int:
        for _ in range(vec_steps):
            masks = env.action_masks()
            # A uniformly random legal action per game: argmax of masked noise.
            env.step((rng.random(masks.shape) * masks).argmax(axis=1))
        return vec_steps * num_envs

    rates = timed_rates(run, repeats)
    return {"rate": statistics.median(rates), "samples": rates, "num_envs": num_envs}


def make_maskable_ppo(num_envs: int, seed: int = 0, n_steps: int = 32,
                      batch_size: int = 2048):
    """The MaskablePPO model this benchmark times: an MLP policy and critic of two hidden
    layers of 256 each, on the native VecEnv of `num_envs` games, CPU, torch on one thread,
    `n_steps` per env per rollout. ImportError without sb3_contrib (the [sb3] extra)."""
    import torch
    from sb3_contrib import MaskablePPO

    from lbs_pz.wrappers.vec_env import HanabiVecEnv

    torch.set_num_threads(1)
    env = HanabiVecEnv(num_envs, seed=seed)
    return MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, n_epochs=4,
                       seed=seed, device="cpu", policy_kwargs=dict(net_arch=[256, 256]))


def measure_maskable_ppo(num_envs: int, timesteps: int, seed: int = 0) -> dict:
    try:
        model = make_maskable_ppo(num_envs, seed)
    except ImportError as err:
        return {"error": f"{err} (install lbs_pz[sb3])"}
    model.learn(num_envs * 32)  # warm-up: one rollout and one update
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    seconds = time.perf_counter() - start
    return {"rate": timesteps / seconds, "timesteps": timesteps, "num_envs": num_envs}


def measure_maskable_ppo_rollouts(num_envs: int, seconds: float, n_steps: int = 256,
                                  seed: int = 0) -> dict:
    """MaskablePPO's rollout collection alone (`collect_rollouts`: the masked policy's
    forward pass, the VecEnv's step, the rollout buffer; no gradient update), env steps
    per second over whole rollouts of `n_steps` per env, repeated until `seconds` of wall
    time have passed, after a warm-up `learn` of one rollout and one update."""
    try:
        model = make_maskable_ppo(num_envs, seed, n_steps=n_steps,
                                  batch_size=min(2048, num_envs * n_steps))
    except ImportError as err:
        return {"error": f"{err} (install lbs_pz[sb3])"}
    model.learn(num_envs * n_steps)  # warm-up: one rollout and one update
    # learn()'s own set-up, without resetting the games or the step count; then the
    # rollouts learn() would collect
    _, callback = model._setup_learn(0, None, reset_num_timesteps=False)
    callback.on_training_start(locals(), globals())
    steps, start = 0, time.perf_counter()
    while steps == 0 or time.perf_counter() - start < seconds:
        model.collect_rollouts(model.env, callback, model.rollout_buffer, n_steps)
        steps += n_steps * num_envs
    elapsed = time.perf_counter() - start
    return {"rate": steps / elapsed, "steps": steps, "seconds": elapsed, "num_envs": num_envs}


def run(quick: bool = False, seed: int = 0, pin: bool = True, log=print) -> dict:
    limit_threads()
    core = pin_to_one_core() if pin else None
    steps = 5_000 if quick else 40_000
    repeats = 3 if quick else 5
    log("AEC env (lbs_pz) ...")
    ours = measure_aec(steps, repeats, seed)
    log("AEC env (PettingZoo hanabi_v5) ...")
    theirs = measure_hanabi_v5(max(steps // 10, 1000), repeats, seed)
    log("VecEnv ...")
    vec = measure_vec_env(256, 200 if quick else 1000, repeats, seed)
    log("MaskablePPO ...")
    ppo = measure_maskable_ppo(256, 256 * 32 * (2 if quick else 8), seed)
    return {"aec": ours, "hanabi_v5": theirs, "vec_env": vec, "maskable_ppo": ppo,
            "pinned_core": core, "quick": quick}


def format_table(results: dict) -> str:
    ours, theirs, vec, ppo = (results[k] for k in ("aec", "hanabi_v5", "vec_env", "maskable_ppo"))
    ratio = ours["rate"] / theirs["rate"] if "rate" in theirs else None
    v5 = f"{theirs['rate']:,.0f}" if "rate" in theirs else f"unavailable ({theirs['error']})"
    rows = [
        "| figure | lbs_pz | baseline | ratio | target | pass/fail |",
        "|---|---:|---:|---:|---|---|",
        f"| AEC random-legal play, env() + last() + mask + step (steps/s) | {ours['rate']:,.0f} | "
        f"{v5} (PettingZoo hanabi_v5) | {f'{ratio:.1f}x' if ratio else 'n/a'} | >= "
        f"{TARGETS['aec_ratio']:.0f}x | {'n/a' if ratio is None else ('PASS' if ratio >= TARGETS['aec_ratio'] else 'FAIL')} |",
        f"| VecEnv, {vec['num_envs']} games, obs + masks (env steps/s) | {vec['rate']:,.0f} | | | "
        f">= {TARGETS['vec_env_steps']:,} | {'PASS' if vec['rate'] >= TARGETS['vec_env_steps'] else 'FAIL'} |",
        "| MaskablePPO training on the VecEnv (env steps/s, CPU) | "
        + (f"{ppo['rate']:,.0f} |" if "rate" in ppo else f"unavailable ({ppo['error']}) |")
        + " | | | |",
    ]
    core = results["pinned_core"]
    rows.append("")
    rows.append(f"Median of timed runs after a warm-up; one process"
                f"{'' if core is None else f' pinned to core {core}'}; torch with 1 thread; "
                f"{'quick' if results['quick'] else 'full'} run.")
    return "\n".join(rows)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (noisier)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one core")
    args = parser.parse_args(argv)
    results = run(quick=args.quick, seed=args.seed, pin=not args.no_pin,
                  log=lambda msg: print(f"[env_throughput] {msg}", file=sys.stderr, flush=True))
    print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
