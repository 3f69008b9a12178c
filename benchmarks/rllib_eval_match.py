"""A saved RLlib module's greedy self-play score as `lbs-pz eval` measures it, next to
RLlib's own play of the same module on the same deals.

    python benchmarks/rllib_eval_match.py results/rllib_ppo_2p --games 300

DIR is what examples/rllib_ppo.py saves (an RLModule checkpoint; an Algorithm or
MultiRLModule checkpoint holding exactly one module works too). Both sides play the
variant the module records (`RLlibBlueprint.game`; the standard 2-player game for a
module that records none), evaluation deals 0 .. N-1 of run seed --seed:

- lbs-pz eval's side: `lbs_pz.eval.evaluate(load_blueprint("rllib:DIR"), game, N, seed)`,
  what `lbs-pz eval --blueprint rllib:DIR --games N --seed S` runs (the safe loader,
  batched greedy moves over the legal ones). Its per-deal scores come from the
  evaluator's own `play_batch` on the batches it builds (`HanabiBatch(game, n,
  seeds=deal_seeds(EVAL, seed, first, n))`, chunks of its default 1,000 deals); their
  histogram is checked against `evaluate`'s.
- RLlib's side: the module restored by RLlib itself (`RLModule.from_checkpoint`, which
  unpickles the folder's files with cloudpickle: run it on folders you made), the env
  built as the training builds it (`lbs_pz.train.rllib_ppo.make_env`: RLlib's
  PettingZooEnv over the AEC env with the masking observation), one game per deal,
  each move `forward_inference` on the mover's observation (batch of 1) and the
  arg-max of its logits over the legal moves the observation's action mask marks (ties
  to the lowest move id). A deal's score is player_0's return (the rewards RLlib
  reports for player_0, who moves first: they add up to the final score, see
  lbs_pz.train.rllib_ppo), checked against the env's final game score.

Same deals: the AEC env's `reset(seed=s)` deals `HanabiState(config, seed=s)`, and the
evaluator's game i is `HanabiBatch(config, n, seeds=...)` slot i, which deals exactly
`HanabiState(config, seed=deal_seeds(EVAL, seed, i, 1)[0])` (the batch and the state
reset a game the same way from an engine seed). So RLlib's game i is reset with the
evaluator's deal seed i as the env seed (`env.reset(seed=int(deal_seeds(EVAL, seed, 0,
N)[i]))`, through PettingZooEnv's reset, which passes the seed on); the script also
checks, deal by deal, that the env's dealt game (deck and hands) equals the
evaluator's before play starts.

Torch runs on one thread for both. Prints both means +- s.e.m., the paired per-deal difference (evaluator - RLlib) +-
s.e.m., the deals whose scores differ, whether every deal's score is equal, and whether
both sides hold the same weights (`module_fingerprint`). Exit status 1 when a deal's
scores differ, a deal was dealt differently or the weights differ; 0 otherwise.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from lbs_pz.agents import load_blueprint
from lbs_pz.agents.rllib_policy import (ACTION_MASK, OBSERVATIONS, find_module_dir,
                                        module_fingerprint)
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.eval import evaluate
from lbs_pz.eval.evaluate import play_batch
from lbs_pz.models.checkpoint import describe_game, game_to_dict
from lbs_pz.train.rllib_ppo import GAME_FIELDS, make_env

CHUNK = 1000          # evaluate()'s default chunk: its batches, rebuilt for per-deal scores


def mean_sem(x: np.ndarray) -> tuple:
    x = np.asarray(x, dtype=np.float64)
    sem = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
    return float(x.mean()), sem


def evaluator_scores(blueprint, game: HanabiConfig, seeds: np.ndarray) -> np.ndarray:
    """Per-deal scores of `evaluate`'s games: its batches, played by its `play_batch`."""
    scores = []
    for first in range(0, len(seeds), CHUNK):
        batch = HanabiBatch(game, len(seeds[first:first + CHUNK]),
                            seeds=seeds[first:first + CHUNK])
        play_batch(blueprint, batch)
        scores.append(np.asarray(batch.scores(), dtype=np.int64))
    return np.concatenate(scores)


def same_deal(a: HanabiState, b: HanabiState) -> bool:
    """Two fresh games dealt alike: the deck left and every hand."""
    return list(a.deck) == list(b.deck) and all(
        list(a.hand(p)) == list(b.hand(p)) for p in range(a.config.players))


def greedy(module, obs: dict) -> int:
    """The module's greedy legal move for one observation {"observations",
    "action_mask"}: `forward_inference` on a batch of 1, arg-max over the legal moves."""
    mask = np.asarray(obs[ACTION_MASK], dtype=np.float32)
    batch = {Columns.OBS: {
        OBSERVATIONS: torch.from_numpy(np.asarray(obs[OBSERVATIONS], np.float32)[None]),
        ACTION_MASK: torch.from_numpy(mask[None])}}
    with torch.no_grad():
        out = module.forward_inference(batch)
    logits = out[Columns.ACTION_DIST_INPUTS][0].float().cpu().numpy()
    return int(np.argmax(np.where(mask > 0, logits, -np.inf)))


def rllib_play(module, env, seed: int, reference: HanabiState) -> tuple:
    """One greedy self-play game of `module` on RLlib's env reset with `seed`: (player_0's
    return, the env's final score, whether the env dealt `reference`'s game)."""
    obs, _ = env.reset(seed=seed)
    raw = env.env.unwrapped
    dealt_alike = same_deal(raw.game, reference)
    score = 0.0
    while True:
        (agent, agent_obs), = obs.items()          # the AEC env: one agent moves at a time
        obs, rewards, terminated, truncated, _ = env.step({agent: greedy(module, agent_obs)})
        score += float(rewards.get("player_0", 0.0))
        if terminated["__all__"] or truncated["__all__"]:
            return score, raw.game.score, dealt_alike


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", help="the saved module (examples/rllib_ppo.py's "
                                                   "--out)")
    parser.add_argument("--games", type=int, default=300,
                        help="evaluation deals 0 .. N-1 (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="run seed of the evaluation deals, as lbs-pz eval's --seed "
                             "(default %(default)s)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")

    torch.set_num_threads(1)        # both sides' forward passes on one thread
    blueprint = load_blueprint(f"rllib:{args.dir}")
    game = blueprint.game or HanabiConfig()
    env = make_env({k: getattr(game, k) for k in GAME_FIELDS})
    if game_to_dict(env.env.unwrapped.config) != game_to_dict(game):
        sys.exit(f"the module's variant ({describe_game(game)}) is not one the training env "
                 f"makes (it takes {', '.join(GAME_FIELDS)} only)")
    module = RLModule.from_checkpoint(os.path.abspath(find_module_dir(args.dir)))
    module.eval()
    seeds = deal_seeds(EVAL, args.seed, 0, args.games)
    print(f"{blueprint.spec}: {describe_game(game)}"
          f"{'' if blueprint.game else ' (no variant recorded: the standard game)'}, "
          f"evaluation deals 0 .. {args.games - 1} of run seed {args.seed}")

    result = evaluate(blueprint, game, games=args.games, seed=args.seed)
    ours = evaluator_scores(blueprint, game, seeds)
    max_score = game.colors * game.ranks
    if not np.array_equal(np.bincount(ours, minlength=max_score + 1), result.histogram):
        sys.exit("the per-deal scores rebuilt from the evaluator's batches do not match "
                 "evaluate()'s histogram")

    start = time.perf_counter()
    theirs, final, dealt = [], [], []
    for seed in seeds:
        ret, score, alike = rllib_play(module, env, int(seed), HanabiState(game, seed=int(seed)))
        theirs.append(ret)
        final.append(score)
        dealt.append(alike)
    theirs_s = time.perf_counter() - start
    theirs, final = np.asarray(theirs), np.asarray(final)

    diff = ours - theirs
    d_mean, d_sem = mean_sem(diff)
    t_mean, t_sem = mean_sem(theirs)
    differ = np.flatnonzero(diff != 0)
    same_weights = blueprint.fingerprint == module_fingerprint(module)
    print(f"lbs-pz eval's evaluator (rllib:DIR, batched): mean {result.mean:.3f} +- "
          f"{result.sem:.3f} (s.e.m.), {args.games} deals, {result.seconds:.1f} s")
    print(f"RLlib (PettingZooEnv + RLModule.from_checkpoint, forward_inference, greedy): "
          f"mean {t_mean:.3f} +- {t_sem:.3f} (s.e.m.), {args.games} deals, {theirs_s:.1f} s")
    print(f"paired difference (evaluator - RLlib): {d_mean:+.3f} +- {d_sem:.3f} (s.e.m.); "
          f"deals whose scores differ: {len(differ)} of {args.games}"
          + (f" (first: {', '.join(str(i) for i in differ[:10])})" if len(differ) else ""))
    print(f"every deal's score equal: {'yes' if len(differ) == 0 else 'NO'}")
    print(f"checks: env dealt the evaluator's game on {sum(dealt)} of {args.games} deals; "
          f"player_0's return = env's final score on {int((theirs == final).sum())} of "
          f"{args.games}; same weights (fingerprint): {'yes' if same_weights else 'NO'}")
    return 0 if len(differ) == 0 and all(dealt) and same_weights else 1


if __name__ == "__main__":
    sys.exit(main())
