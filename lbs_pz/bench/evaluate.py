"""Self-play evaluation of blueprints: `lbs-pz eval`.

    lbs-pz eval --bot strong --games 10000 --players 2 --json strong_2p.json

plays N games of self-play (the same agent in every seat) on the deals
`HanabiBatch(config, N, seeds=seed)` uses, with a progress bar, and prints the mean score,
its standard error, the perfect-game and bomb-out rates and the speed. The C rule bots run
in C, chunk by chunk; any other Agent is played move by move from Python.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from typing import List

import numpy as np


@dataclasses.dataclass
class EvalResult:
    """Summary of a self-play evaluation (rates are fractions in [0, 1])."""

    bot: str
    config: dict
    games: int
    seed: int
    mean: float
    sem: float                # standard error of the mean
    std: float
    perfect_rate: float       # games reaching the maximum score
    bomb_rate: float          # games lost by losing every life (score 0)
    mean_moves: float
    seconds: float
    games_per_s: float
    moves_per_s: float
    histogram: List[int]      # games per final score 0..max

    def summary(self) -> str:
        return (f"{self.bot}: {self.games:,} games, mean {self.mean:.3f} +- {self.sem:.3f} "
                f"(s.e.m.), perfect {100 * self.perfect_rate:.2f}%, "
                f"bomb-out {100 * self.bomb_rate:.2f}%, {self.games_per_s:,.0f} games/s, "
                f"{self.moves_per_s:,.0f} moves/s")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _summarise(name, config, seed, scores, moves, lives, seconds) -> EvalResult:
    n = len(scores)
    max_score = config.colors * config.ranks
    std = float(np.std(scores, ddof=1)) if n > 1 else 0.0
    seconds = max(seconds, 1e-9)
    return EvalResult(
        bot=name,
        config=dataclasses.asdict(config),
        games=n,
        seed=seed,
        mean=float(np.mean(scores)),
        sem=std / math.sqrt(n) if n > 1 else 0.0,
        std=std,
        perfect_rate=float(np.mean(scores == max_score)),
        bomb_rate=float(np.mean(lives == 0)),
        mean_moves=float(np.mean(moves)),
        seconds=seconds,
        games_per_s=n / seconds,
        moves_per_s=float(np.sum(moves)) / seconds,
        histogram=np.bincount(scores, minlength=max_score + 1).tolist(),
    )


def evaluate(agent, config=None, games: int = 1000, seed: int = 0, chunk: int = 500,
             progress: bool = False) -> EvalResult:
    """Self-play `games` games with `agent` (a RuleBot, a bot name, or any Agent) in
    every seat. Game i uses the i-th deal of `HanabiBatch(config, games, seeds=seed)`,
    so results are reproducible and comparable between agents."""
    from lbs_pz.agents import RuleBot
    from lbs_pz.engine import HanabiConfig, HanabiState
    from lbs_pz.engine import game_seeds

    if config is None:
        config = HanabiConfig()
    if isinstance(agent, str):
        agent = RuleBot(agent)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    name = getattr(agent, "name", type(agent).__name__)
    scores = np.empty(games, dtype=np.int64)
    moves = np.empty(games, dtype=np.int64)
    lives = np.empty(games, dtype=np.int64)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, unit="game", desc=f"eval {name}", file=sys.stderr)
    start = time.perf_counter()
    done = 0
    while done < games:
        n = min(chunk, games - done)
        if isinstance(agent, RuleBot):
            out = agent.selfplay(config, n, seed=seed, first_game=done)
            scores[done:done + n] = out["score"]
            moves[done:done + n] = out["moves"]
            lives[done:done + n] = out["lives"]
        else:
            for i, s in enumerate(game_seeds(seed, done, n)):
                state = HanabiState(config, seed=int(s))
                while not state.is_terminal:
                    state.apply(agent.act(state))
                scores[done + i] = state.score
                moves[done + i] = state.num_moves_played
                lives[done + i] = state.life_tokens
        done += n
        if bar is not None:
            bar.update(n)
            bar.set_postfix(mean=f"{scores[:done].mean():.3f}")
    seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return _summarise(name, config, seed, scores, moves, lives, seconds)


# --- the `lbs-pz eval` command -----------------------------------------------------------

def cmd_eval(args) -> int:
    """Self-play a blueprint for N games and print its score statistics."""
    from lbs_pz.cli import _config_from

    config = _config_from(args)
    result = evaluate(args.bot, config, games=args.games, seed=args.seed,
                      progress=not args.no_progress)
    print(f"lbs-pz eval: {config.players} players, hand size {config.hand_size}, "
          f"{config.colors} colors x {config.ranks} ranks")
    print(f"  bot            {result.bot}")
    print(f"  games          {result.games:,} (seed {result.seed})")
    print(f"  mean score     {result.mean:.3f} +- {result.sem:.3f} (s.e.m.; std {result.std:.3f})")
    print(f"  perfect games  {100 * result.perfect_rate:.2f}%")
    print(f"  bomb-outs      {100 * result.bomb_rate:.2f}%")
    print(f"  speed          {result.games_per_s:,.0f} games/s, {result.moves_per_s:,.0f} moves/s "
          f"({result.seconds:.2f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result.to_dict(), fh, indent=2)
        print(f"  results        {args.json}")
    return 0


def add_eval_command(subparsers) -> argparse.ArgumentParser:
    """Register `eval` on the `lbs-pz` subcommand parser (called by lbs_pz.cli)."""
    from lbs_pz.cli import _config_args
    from lbs_pz.agents.rule_bots import BOT_NAMES

    parser = subparsers.add_parser(
        "eval", help="self-play a blueprint: mean score, s.e.m., perfect and bomb-out rates",
        description=cmd_eval.__doc__)
    parser.add_argument("--bot", default="strong", choices=BOT_NAMES,
                        help="the blueprint (default: strong)")
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results as JSON to PATH")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _config_args(parser)
    parser.set_defaults(func=cmd_eval)
    return parser
