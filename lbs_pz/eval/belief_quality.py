"""Belief quality (the paper's study): per-card cross-entropy of the true hand under the
exact, grounded and learned beliefs over the course of blueprint self-play games.

In game g the belief tracks seat g % 2; after every move, each belief scores the seat's
true hand: cross-entropy = -log p(true hand) / hand_len (nats per card). The table
averages it by game phase (move number); `--plot` draws it against the move number.

    lbs-pz belief-quality --games 1000 --plot belief_quality.png
    lbs-pz belief-quality --blueprint py:my_bot.py:MyBot --belief-checkpoint my_belief.pt

The games are dealt from the evaluation stream (`deal_seeds(EVAL, seed, g, 1)`), never
from the deals a learned belief was trained on.

The exact belief enumerates ~9M hands at the start of a 2p game and filters them through
the blueprint after each partner move: tens of seconds per game on one core, so 1,000
games take hours; use --games (and --beliefs) to choose.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, cast

import numpy as np
from tqdm import tqdm

from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiState
from lbs_pz.engine.seeds import EVAL, MAX_GAMES, check_run_seed, deal_seeds
from lbs_pz.search.resolve import learned_belief
from lbs_pz.search.beliefs import Belief, make_belief

if TYPE_CHECKING:           # imports torch: only for the checker here
    from lbs_pz.search.beliefs.learned import LearnedBelief

PHASES = ((0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 60), (60, 10_000))


def run_quality(config, blueprint, num_games: int, seed: int = 0,
                beliefs: Sequence[str] = ("exact", "grounded", "learned"),
                checkpoint: Optional[str] = None, memory_cap: Optional[int] = None,
                progress: bool = True, allow_mismatch: bool = False) -> Dict:
    """Play `num_games` games of `blueprint` (a Blueprint) and score every belief after
    every move. The learned belief is `checkpoint`, else one shipped for this blueprint
    and game (else a ValueError naming the fix).

    Returns {"ce": {belief: list of per-game float arrays (one entry per move)},
             "seconds": {belief: total update+scoring time}, "scores": game scores}."""
    seed = check_run_seed(seed)
    num_games = as_int(num_games, "num_games", 1, MAX_GAMES, error=ValueError)
    ce: Dict[str, List[np.ndarray]] = {b: [] for b in beliefs}
    seconds = {b: 0.0 for b in beliefs}
    scores = []
    learned_model: Optional[LearnedBelief] = None
    it = range(num_games)
    if progress:
        it = tqdm(it, unit="game", dynamic_ncols=True)
    for g in it:
        state = HanabiState(config, seed=int(deal_seeds(EVAL, seed, g, 1)[0]))
        seat = g % config.players
        tracked = {}
        for b in beliefs:
            kwargs = {}
            if b == "exact" and memory_cap is not None:
                kwargs["memory_cap"] = memory_cap
            if b == "learned":
                if learned_model is None:
                    learned_model = cast("LearnedBelief", learned_belief(  # not filtered
                        blueprint, config, checkpoint, allow_mismatch, filtered=False))
                    belief: Belief = learned_model
                else:
                    belief = make_belief("learned", model=learned_model.model,
                                         config=learned_model.model_config, threads=1)
            else:
                belief = make_belief(b, blueprint=blueprint, **kwargs)
            t0 = time.perf_counter()
            belief.reset(state, seat)
            seconds[b] += time.perf_counter() - t0
            tracked[b] = belief
        per_move: Dict[str, List[float]] = {b: [] for b in beliefs}
        while not state.is_terminal:
            state.apply(blueprint.act(state))
            true = state.hand(seat)
            for b, belief in tracked.items():
                t0 = time.perf_counter()
                belief.observe(state)
                per_move[b].append(belief.cross_entropy(true))
                seconds[b] += time.perf_counter() - t0
        for b in beliefs:
            ce[b].append(np.asarray(per_move[b]))
        scores.append(state.score)
    return {"ce": ce, "seconds": seconds, "scores": np.asarray(scores)}


def phase_means(result) -> List[tuple]:
    """[(moves label, {belief: mean cross-entropy per card}, samples)] per stage of the
    game (`PHASES`) that has moves."""
    ce = result["ce"]
    out = []
    for lo, hi in PHASES:
        means, count = {}, 0
        for n, per_game in ce.items():
            xs = [x[lo:hi] for x in per_game]
            flat = np.concatenate(xs) if xs else np.zeros(0)
            means[n] = flat.mean() if flat.size else math.nan
            count = flat.size
        if count:
            out.append((f"{lo}-{hi - 1}" if hi < 10_000 else f"{lo}+", means, count))
    return out


def phase_table(result) -> str:
    ce = result["ce"]
    names = list(ce)
    lines = []
    head = f"{'moves':>10} " + " ".join(f"{n:>10}" for n in names) + f" {'samples':>8}"
    lines.append(head)
    lines.append("-" * len(head))
    for label, means, count in phase_means(result):
        lines.append(f"{label:>10} " + " ".join(f"{means[n]:10.3f}" for n in names)
                     + f" {count:8d}")
    means = [np.concatenate(ce[n]).mean() for n in names]
    lines.append("-" * len(head))
    lines.append(f"{'all':>10} " + " ".join(f"{v:10.3f}" for v in means))
    secs = result["seconds"]
    games = len(result["scores"])
    lines.append(f"{'s/game':>10} " + " ".join(f"{secs[n] / max(games, 1):10.3f}" for n in names))
    return "\n".join(lines)


def plot(result, path: str, title: str = "") -> bool:
    """Mean cross-entropy vs move number, one line per belief. False if matplotlib is
    missing (pip install matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, games in result["ce"].items():
        T = max(len(x) for x in games)
        sums, counts = np.zeros(T), np.zeros(T)
        for x in games:
            sums[:len(x)] += x
            counts[:len(x)] += 1
        keep = counts >= max(1, 0.1 * len(games))
        t = np.arange(1, T + 1)
        ax.plot(t[keep], (sums / np.maximum(counts, 1))[keep], label=name)
    ax.set_xlabel("move number")
    ax.set_ylabel("cross-entropy of the true hand (nats / card)")
    ax.set_title(title or "belief quality")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
