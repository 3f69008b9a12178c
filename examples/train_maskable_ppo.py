"""Train a self-play Hanabi policy with sb3-contrib's MaskablePPO on CPU.

One shared policy plays every seat. The games run in lbs_pz's native VecEnv, so stepping,
observing and masking N games is a few C calls per step. Reads top to bottom:
hyper-parameters, environment, model, training with a wall-clock budget, evaluation, save.

    python examples/train_maskable_ppo.py --minutes 30 --out results/maskable_ppo_2p
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from lbs_pz.engine import HanabiConfig
from lbs_pz.wrappers.vec_env import HanabiVecEnv


@dataclasses.dataclass
class Args:
    players: int = 2
    minutes: float = 30.0            # wall-clock training budget
    total_timesteps: int = 50_000_000  # upper bound; the budget usually stops first
    num_envs: int = 256
    n_steps: int = 32                # per env and rollout: 8,192 transitions per update
    batch_size: int = 2048
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    hidden: int = 256
    eval_games: int = 1000
    seed: int = 0
    threads: int = 2
    out: str = "results/maskable_ppo"


class WallClockBudget(BaseCallback):
    """Stops training after `minutes`, with a progress bar over the budget and the mean
    score of recently finished self-play games."""

    def __init__(self, minutes: float):
        super().__init__()
        self.budget = minutes * 60.0
        self.scores: list = []

    def _on_training_start(self) -> None:
        self.start = time.perf_counter()
        self.bar = tqdm(total=int(self.budget), unit="s", desc="training")

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                self.scores.append(info["episode"]["score"])
        elapsed = time.perf_counter() - self.start
        seconds = min(int(elapsed), int(self.budget))
        if seconds > self.bar.n:  # redraw at most once a second
            recent = self.scores[-2000:]
            self.bar.set_postfix(steps=self.num_timesteps,
                                 score=f"{np.mean(recent):.2f}" if recent else "-", refresh=False)
            self.bar.update(seconds - self.bar.n)
        return elapsed < self.budget

    def _on_training_end(self) -> None:
        self.bar.close()


def evaluate(model: MaskablePPO, config: HanabiConfig, games: int, seed: int) -> np.ndarray:
    """Greedy self-play scores of `games` complete games."""
    env = HanabiVecEnv(min(games, 256), config=config, seed=seed + 1)
    obs = env.reset()
    scores: list = []
    with tqdm(total=games, desc="evaluating", unit="game") as bar:
        while len(scores) < games:
            actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, dones, infos = env.step(actions)
            for i in np.flatnonzero(dones):
                if len(scores) < games:
                    scores.append(infos[i]["episode"]["score"])
                    bar.update(1)
    return np.asarray(scores)


def main(args: Args) -> dict:
    torch.set_num_threads(args.threads)
    config = HanabiConfig(players=args.players)
    env = HanabiVecEnv(args.num_envs, config=config, seed=args.seed)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, learning_rate=args.learning_rate, gamma=args.gamma,
        gae_lambda=args.gae_lambda, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
        policy_kwargs=dict(net_arch=[args.hidden, args.hidden]),
    )
    budget = WallClockBudget(args.minutes)
    start = time.perf_counter()
    model.learn(args.total_timesteps, callback=budget)
    train_seconds = time.perf_counter() - start

    scores = evaluate(model, config, args.eval_games, args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    summary = {
        "players": args.players,
        "train_minutes": train_seconds / 60,
        "env_steps": int(model.num_timesteps),
        "env_steps_per_second": model.num_timesteps / train_seconds,
        "eval_games": len(scores),
        "mean_score": float(scores.mean()),
        "sem": float(scores.std(ddof=1) / np.sqrt(len(scores))),
        "bomb_out_rate": float(np.mean(scores == 0)),
        "hyper_parameters": dataclasses.asdict(args),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"trained {summary['env_steps']:,} env steps in {summary['train_minutes']:.1f} min "
          f"({summary['env_steps_per_second']:,.0f} steps/s); greedy self-play over "
          f"{len(scores)} games: {summary['mean_score']:.2f} +- {summary['sem']:.2f} "
          f"(bomb-outs {summary['bomb_out_rate']:.1%}); saved {out / 'model.zip'}")
    return summary


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default),
                            default=field.default, help=f"default {field.default}")
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    main(parse_args())
