"""Multi-agent PPO with RLlib (its new API stack) on the PettingZoo env: what
`examples/rllib_ppo.py` runs, and what its test runs on a tiny game.

One policy ("shared") plays every seat, with action masking: the AEC env
(`lbs_pz.envs.hanabi_v0.env`) goes through RLlib's `PettingZooEnv` wrapper, its
observation {"observation", "action_mask"} renamed to RLlib's masking convention
{"observations", "action_mask"} (`RLlibObservations`), and the module is
`lbs_pz.agents.rllib_policy.MaskedPPOTorchRLModule`. Every agent is rewarded with each
change of score (as HLE), so the rewards an agent receives over a game add up to its
final score. RLlib credits an agent only with the rewards that follow its own moves (a
reward that arrives with an agent's first observation, say a card played on the first
move, is left out of its return), so the score of a game is the return of `player_0`,
who moves first (the env's seat order), and RLlib's episode return (the sum over agents)
is at most `players` times it.

    run = RLlibPPORun(colors=2, ranks=3, hand_size=3, iterations=2, env_runners=0)
    summary = train(run, out="results/rllib_tiny")   # then rllib:results/rllib_tiny

`train` starts Ray for the run (a local one, or joins the cluster at `run.address`; with
`env_runners` > 0 the games are sampled by that many Ray actors, which need lbs_pz
installed where they run), trains until `iterations` or `minutes` is reached (or Ctrl-C),
and saves the learner's module as an RLModule checkpoint (`module.save_to_path`, plus
summary.json) that `RLlibBlueprint.load` / the spec `rllib:OUT` reads. Training deals
are fresh random deals (the env's own entropy, seeded once by RLlib), never the
evaluation stream's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from lbs_pz.agents.rllib_policy import (ACTION_MASK, OBSERVATIONS, POLICY_ID, RLlibBlueprint,
                                        module_spec)
from lbs_pz.engine import HanabiConfig
from lbs_pz.envs import hanabi_v0
from lbs_pz.optional import ray_session, require, require_rllib, require_torch
from lbs_pz.train.board import Board, check_board

_WHAT = "RLlib training (examples/rllib_ppo.py)"
require_rllib(_WHAT)
if TYPE_CHECKING:           # torch's and RLlib's own types for the checker
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
else:                       # at run time, through the gate
    torch = require_torch(_WHAT)
    PPOConfig = require("ray.rllib.algorithms.ppo", _WHAT).PPOConfig
    PettingZooEnv = require("ray.rllib.env.wrappers.pettingzoo_env", _WHAT).PettingZooEnv
MultiRLModuleSpec = require("ray.rllib.core.rl_module.multi_rl_module", _WHAT).MultiRLModuleSpec
register_env = require("ray.tune.registry", _WHAT).register_env

ENV_NAME = "lbs_pz_hanabi"
GAME_FIELDS = ("players", "colors", "ranks", "hand_size")


@dataclasses.dataclass
class RLlibPPORun:
    """One training run: the game variant, when to stop, where to run, PPO's settings."""
    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: Optional[int] = None      # None: 5 cards, 4 with 4+ players
    iterations: Optional[int] = 20       # PPO iterations (None: until `minutes`)
    minutes: Optional[float] = None      # wall-clock budget (None: until `iterations`)
    address: Optional[str] = None        # a Ray cluster (None: a local Ray for the run)
    env_runners: int = 1                 # Ray actors sampling games (0: in this process)
    train_batch_size: int = 4000         # env steps per iteration
    minibatch_size: int = 500
    num_epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.99
    lambda_: float = 0.95
    entropy_coeff: float = 0.01
    hidden: Tuple[int, ...] = (256, 256)
    seed: int = 0

    def game(self) -> HanabiConfig:
        return HanabiConfig(players=self.players, colors=self.colors, ranks=self.ranks,
                            hand_size=self.hand_size)


class RLlibObservations(BaseWrapper):
    """The AEC env with RLlib's action-masking observation: {"observations": the
    canonical vector float32 (E,), "action_mask": float32 (A,), 1 for a legal move}."""

    def __init__(self, env):
        super().__init__(env)
        self._spaces = {}
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            self._spaces[agent] = spaces.Dict({
                OBSERVATIONS: space["observation"],
                ACTION_MASK: spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32)})

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {OBSERVATIONS: obs["observation"],
                ACTION_MASK: obs["action_mask"].astype(np.float32)}


def make_env(env_config: Optional[dict] = None) -> PettingZooEnv:
    """RLlib's `PettingZooEnv` over the AEC env of the variant `env_config` names
    (GAME_FIELDS; RLlib's env creator signature)."""
    game = {k: v for k, v in dict(env_config or {}).items() if k in GAME_FIELDS}
    return PettingZooEnv(RLlibObservations(hanabi_v0.env(**game)))


def _shared(agent_id, episode=None, **kwargs) -> str:
    return POLICY_ID


def ppo_config(run: RLlibPPORun) -> PPOConfig:
    """RLlib's PPOConfig of a run: the env (registered as ENV_NAME), one shared masked
    module for every seat, the sampling and the PPO settings."""
    register_env(ENV_NAME, make_env)
    game = run.game()
    return (
        PPOConfig()
        # RLlib's env check steps one random, unmasked action: an illegal move in most
        # positions, which the env answers by ending the game with a warning.
        .environment(ENV_NAME, env_config={"players": game.players, "colors": game.colors,
                                           "ranks": game.ranks, "hand_size": game.hand_size},
                     disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=run.env_runners)
        .learners(num_learners=0)
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=_shared)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY_ID: module_spec(game, run.hidden, gamma=run.gamma)}))
        .training(train_batch_size_per_learner=run.train_batch_size,
                  minibatch_size=run.minibatch_size, num_epochs=run.num_epochs, lr=run.lr,
                  gamma=run.gamma, lambda_=run.lambda_, entropy_coeff=run.entropy_coeff)
        .debugging(seed=run.seed, log_level="ERROR")
    )


def save_module(algo, run: RLlibPPORun, out: str) -> str:
    """The learner's shared module saved as an RLModule checkpoint in `out` (created):
    rebuilt here from its spec (the model config merged as RLlib merges it) and given the
    learner's weights, strictly. Returns `out`."""
    spec = module_spec(run.game(), run.hidden, gamma=run.gamma)
    spec.model_config = algo.config.model_config | spec.model_config
    module = cast("TorchRLModule", spec.build())      # a torch module: the spec's class
    weights = algo.learner_group.get_weights([POLICY_ID])[POLICY_ID]
    module.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()},
                           strict=True)
    os.makedirs(out, exist_ok=True)
    module.save_to_path(os.path.abspath(out))
    return out


def _metric(result: dict, key: str) -> float:
    """An env runner metric of an iteration's result (RLlib gives numpy numbers); NaN
    where it is missing (no episode ended yet: no episode return)."""
    value = result.get("env_runners", {}).get(key)
    return float(value) if isinstance(value, (int, float, np.number)) else math.nan


def _score(result: dict) -> float:
    """The mean final score of an iteration's games: player_0's mean return (module
    docstring); NaN where no game ended."""
    returns = result.get("env_runners", {}).get("agent_episode_returns_mean") or {}
    value = returns.get("player_0") if isinstance(returns, dict) else None
    return float(value) if isinstance(value, (int, float, np.number)) else math.nan


def _finite(value: float) -> Optional[float]:
    return value if math.isfinite(value) else None


def train(run: RLlibPPORun, out: str, progress: Optional[Callable[[str], None]] = print,
          tensorboard: str = "") -> Dict[str, object]:
    """Train a run (module docstring), save its module in `out` and return a summary:
    iterations, env_steps, seconds, env_steps_per_second, episode_return (RLlib's mean
    over the last iteration's games) and mean_score (theirs), spec ("rllib:OUT"),
    fingerprint, history (per iteration), run. `progress` gets one line per iteration
    (None: quiet). tensorboard: a folder ("" none) that gets each iteration's history
    entry as scalars "rllib/KEY" at the iteration's number (`lbs_pz.train.board`)."""
    if run.iterations is None and run.minutes is None:
        raise ValueError("a run needs iterations or minutes (or both)")
    if run.iterations is not None and run.iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {run.iterations}")
    if run.env_runners < 0:
        raise ValueError(f"env_runners must be 0 or more, got {run.env_runners}")
    run.game()                                        # a bad variant fails before Ray starts
    check_board(tensorboard)                          # and so does a board that cannot be
    os.makedirs(out, exist_ok=True)                   # and a bad path
    cpus = max(os.cpu_count() or 1, run.env_runners + 1)
    history: List[Dict[str, Any]] = []
    with ray_session(run.address, workers=cpus, what=_WHAT,
                     rerun="a run saves its module at its end (or on Ctrl-C), so nothing of "
                           "this one was saved: run it again"), Board(tensorboard) as board:
        algo = ppo_config(run).build_algo()
        try:
            start = time.perf_counter()
            steps = 0
            try:
                while run.iterations is None or len(history) < run.iterations:
                    if run.minutes is not None and \
                            time.perf_counter() - start >= 60 * run.minutes:
                        break
                    began = time.perf_counter()
                    result = algo.train()
                    seconds = time.perf_counter() - began
                    sampled = _metric(result, "num_env_steps_sampled")
                    sampled = int(sampled) if math.isfinite(sampled) else 0
                    steps += sampled
                    returns, score = _metric(result, "episode_return_mean"), _score(result)
                    history.append({"env_steps": sampled, "seconds": seconds,
                                    "episode_return": _finite(returns),
                                    "score": _finite(score)})
                    board.write(len(history), {f"rllib/{key}": value
                                               for key, value in history[-1].items()})
                    if progress is not None:
                        progress(f"iteration {len(history):>4}: {sampled:,} env steps, "
                                 f"{sampled / seconds:,.0f} steps/s, mean episode return "
                                 f"{returns:.2f} (mean score {score:.2f})")
            except KeyboardInterrupt:
                if not history:
                    raise
                if progress is not None:
                    progress("interrupted: saving the module trained so far")
            seconds = time.perf_counter() - start
            save_module(algo, run, out)
        finally:
            algo.stop()
    blueprint = RLlibBlueprint.load(out)
    last = history[-1] if history else {}
    summary: Dict[str, object] = {
        "iterations": len(history), "env_steps": steps, "seconds": seconds,
        "env_steps_per_second": steps / seconds if seconds > 0 else None,
        "episode_return": last.get("episode_return"), "mean_score": last.get("score"),
        "spec": blueprint.spec, "fingerprint": blueprint.fingerprint,
        "history": history, "run": dataclasses.asdict(run)}
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2, default=str)
    return summary


__all__ = ["RLlibPPORun", "RLlibObservations", "make_env", "ppo_config", "save_module",
           "train", "ENV_NAME"]
