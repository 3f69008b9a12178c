"""Self-play evaluation of any blueprint: the one evaluator behind `lbs-pz eval`, the demo
and the benchmarks.

    >>> from lbs_pz.agents import RuleBot, as_blueprint, load_blueprint
    >>> r = evaluate(RuleBot("strong"), games=20)
    >>> r.games, 0 <= r.mean <= 25
    (20, True)

Game i of a run seeded `seed` is dealt from `deal_seeds(EVAL, seed, i, 1)` (the
evaluation stream, disjoint from the deals training uses), so every blueprint plays the
same deals and no evaluation replays a training game. The games of a chunk live in one
`HanabiBatch`, stepped with `blueprint.act_batch(batch)` until every game is over; the
C rule bots play the whole chunk in C (`RuleBot.rollout(batch)`, their batched
self-play), with the same moves as stepping their `act_batch`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Iterator, List, Optional, Tuple

import numpy as np
from tqdm import tqdm

from lbs_pz.agents import RuleBot, as_blueprint, load_blueprint
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import EVAL, MAX_GAMES, check_run_seed, deal_seeds
from lbs_pz.search.stats import mean_sem_from_sums


@dataclasses.dataclass
class EvalResult:
    """Summary of a self-play evaluation (rates are fractions in [0, 1])."""

    bot: str                  # the blueprint's name
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
    first_game: int = 0

    def summary(self) -> str:
        return (f"{self.bot}: {self.games:,} games, mean {self.mean:.3f} +- {self.sem:.3f} "
                f"(s.e.m.), perfect {100 * self.perfect_rate:.2f}%, "
                f"bomb-out {100 * self.bomb_rate:.2f}%, {self.games_per_s:,.0f} games/s, "
                f"{self.moves_per_s:,.0f} moves/s")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def play_batch(blueprint, batch: HanabiBatch) -> np.ndarray:
    """Self-play every game of `batch` to the end with `blueprint` in every seat; returns
    the moves made per game, int64 (N,). Rule bots play in C; any other blueprint is
    stepped with one `act_batch` call per move over all unfinished games."""
    if isinstance(blueprint, RuleBot):
        return np.asarray(blueprint.rollout(batch), dtype=np.int64)
    n = len(batch)
    moves = np.zeros(n, dtype=np.int64)
    done = batch.terminals()
    while not done.all():
        actions = np.asarray(blueprint.act_batch(batch), dtype=np.int64)
        if actions.shape != (n,):
            raise ValueError(f"{getattr(blueprint, 'name', blueprint)!r}: act_batch returned "
                             f"shape {actions.shape} for {n} games, expected ({n},)")
        actions[done] = -1
        batch.step(actions)
        moves += ~done
        batch.terminals(out=done)
    return moves


def played_chunks(blueprint, config: HanabiConfig, games: int, seed: int, first_game: int = 0,
                  chunk: int = 1000) -> Iterator[Tuple[HanabiBatch, np.ndarray]]:
    """(batch, moves per game) of evaluation games first_game .. first_game + games - 1 of
    run `seed`, self-played by `blueprint` (`play_batch`) `chunk` games at a time, in deal
    order: memory is one chunk's, whatever `games` is."""
    done = 0
    while done < games:
        n = min(chunk, games - done)
        batch = HanabiBatch(config, n, seeds=deal_seeds(EVAL, seed, first_game + done, n))
        yield batch, play_batch(blueprint, batch)
        done += n


def evaluate(blueprint, config: Optional[HanabiConfig] = None, games: int = 1000, seed: int = 0,
             first_game: int = 0, chunk: int = 1000, progress: bool = False) -> EvalResult:
    """Self-play games first_game .. first_game + games - 1 of the evaluation stream with
    `blueprint` in every seat.

    Args:
        blueprint: a Blueprint, any object `lbs_pz.agents.as_blueprint` accepts (a
            class with `name` and `act(state, seat=None)`), or a blueprint spec string
            ("strong", "lstm:PATH", "py:my_bot.py:MyBot": `load_blueprint`).
        config: the game variant (default `HanabiConfig()`).
        games: number of games (>= 1, games + first_game <= 2**32); chunk: games per
            batch. The games are played a chunk at a time and only running totals are
            kept, so memory does not grow with `games`.
        seed: run seed in [0, 2**31): game i is dealt from deal_seeds(EVAL, seed, i, 1).
    """
    config = HanabiConfig() if config is None else config
    seed = check_run_seed(seed)
    blueprint = load_blueprint(blueprint) if isinstance(blueprint, str) else \
        as_blueprint(blueprint)
    if games < 1 or chunk < 1 or first_game < 0:
        raise ValueError(f"need games >= 1, chunk >= 1 and first_game >= 0, got {games}, "
                         f"{chunk} and {first_game}")
    if first_game + games > MAX_GAMES:
        raise ValueError(f"games {first_game} .. {first_game + games - 1}: a run has games "
                         f"0 .. {MAX_GAMES - 1}")
    name = getattr(blueprint, "name", type(blueprint).__name__)
    max_score = config.colors * config.ranks
    # Running totals only (a histogram of the scores, sums of moves and bomb-outs):
    # memory is one chunk's, whatever `games` is.
    histogram = np.zeros(max_score + 1, dtype=np.int64)
    total_moves = bombs = 0
    bar = None
    if progress:
        bar = tqdm(total=games, unit="game", desc=f"eval {name}", file=sys.stderr)
    start = time.perf_counter()
    done = 0
    for batch, moves in played_chunks(blueprint, config, games, seed, first_game, chunk):
        n = len(batch)
        total_moves += int(moves.sum())
        histogram += np.bincount(np.asarray(batch.scores(), dtype=np.int64),
                                 minlength=max_score + 1)[:max_score + 1]
        bombs += sum(batch.get_state(i).life_tokens == 0 for i in range(n))
        done += n
        if bar is not None:
            bar.update(n)
            bar.set_postfix(mean=f"{histogram @ np.arange(max_score + 1) / done:.3f}")
    seconds = max(time.perf_counter() - start, 1e-9)
    if bar is not None:
        bar.close()
    points = np.arange(max_score + 1, dtype=np.float64)
    sums, squares = float(histogram @ points), float(histogram @ points ** 2)
    mean, sem = (float(x) for x in mean_sem_from_sums(sums, squares, games))
    variance = max(squares / games - mean ** 2, 0.0) * games / (games - 1) if games > 1 else 0.0
    return EvalResult(
        bot=name, config=dataclasses.asdict(config), games=games, seed=seed,
        mean=mean, sem=sem, std=float(np.sqrt(variance)),
        perfect_rate=float(histogram[max_score] / games),
        bomb_rate=float(bombs / games),
        mean_moves=total_moves / games, seconds=seconds, games_per_s=games / seconds,
        moves_per_s=total_moves / seconds,
        histogram=histogram.tolist(),
        first_game=first_game,
    )
