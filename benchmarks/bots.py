"""Rule-bot figures: self-play strength of every bot in every variant, and rollout speed.

    python benchmarks/bots.py [--quick] [--json PATH]

1. Self-play strength: for each bot and each variant (2, 3, 4, 5 players; 2 players with
   6- and 7-card hands), `games` games on the evaluation deals (`lbs_pz.eval.evaluate`):
   mean score +- s.e.m., perfect-game % and bomb-out %.
2. Speed of the strongest bot on one core (the process is pinned to one core):
   - self-play from the deal, in C (moves/s);
   - rollouts to the end from mid-game copies, as a search does: `RuleBot.rollout` on a
     HanabiBatch of copies of games 20 moves in, history replay included (moves/s);
   - single decisions from scratch (`act_batch` on mid-game states, which replays the
     public history each time): decisions/s.

`run()` returns a JSON-ready dict; `format_table()` renders markdown tables.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from typing import Dict, List, Optional, Sequence

import numpy as np
from _common import pin_to_one_core

from lbs_pz.agents import BOT_NAMES, STRONGEST, RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.eval.evaluate import evaluate

VARIANTS = (
    ("2p", dict(players=2)),
    ("3p", dict(players=3)),
    ("4p", dict(players=4)),
    ("5p", dict(players=5)),
    ("2p, 6 cards", dict(players=2, hand_size=6)),
    ("2p, 7 cards", dict(players=2, hand_size=7)),
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def strength(bots: Sequence[str], variants=VARIANTS, games: int = 10_000, seed: int = 0,
             progress: bool = True) -> List[Dict]:
    rows = []
    for label, kwargs in variants:
        config = HanabiConfig(**kwargs)
        for bot in bots:
            res = evaluate(bot, config, games=games, seed=seed, chunk=2000, progress=progress)
            rows.append({
                "variant": label, "players": config.players, "hand_size": config.hand_size,
                "bot": bot, "games": games, "mean": res.mean, "sem": res.sem,
                "perfect_pct": 100 * res.perfect_rate, "bomb_pct": 100 * res.bomb_rate,
                "moves_per_s": res.moves_per_s,
            })
            log(f"  {label:12s} {bot:7s} {res.mean:6.3f} +- {res.sem:.3f}  "
                f"perfect {100 * res.perfect_rate:5.2f}%  bomb {100 * res.bomb_rate:5.2f}%")
    return rows


def _median_rate(fn, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        work, seconds = fn()
        rates.append(work / seconds)
    return float(np.median(rates))


def speed(bot: str = "strong", games: int = 2000, states: int = 500, clones: int = 8,
          seed: int = 0, repeats: int = 3) -> Dict:
    """Moves/s of `bot` on one core, three ways (see the module docstring)."""
    config = HanabiConfig(players=2)
    blueprint = RuleBot(bot)
    deals = deal_seeds(EVAL, seed, 0, games)

    def selfplay():
        batch = HanabiBatch(config, games, seeds=deals)
        start = time.perf_counter()
        moves = blueprint.rollout(batch)
        return int(moves.sum()), time.perf_counter() - start

    # Mid-game states: 20 moves of the bot's own play into each game.
    start_batch = HanabiBatch(config, states, seeds=deal_seeds(EVAL, seed + 1, 0, states))
    blueprint.rollout(start_batch, max_moves=20)
    mids = start_batch.take(np.flatnonzero(~start_batch.terminals()))
    worlds_index = np.repeat(np.arange(len(mids)), clones)

    def rollouts():
        worlds = mids.take(worlds_index)
        start = time.perf_counter()
        moves = blueprint.rollout(worlds)
        return int(moves.sum()), time.perf_counter() - start

    def decisions():
        start = time.perf_counter()
        for _ in range(clones):
            blueprint.act_batch(mids)
        return len(mids) * clones, time.perf_counter() - start

    selfplay()   # warm-up
    return {
        "bot": bot,
        "selfplay_moves_per_s": _median_rate(selfplay, repeats),
        "rollout_moves_per_s": _median_rate(rollouts, repeats),
        "rollout_worlds": len(worlds_index),
        "decisions_per_s": _median_rate(decisions, repeats),
    }


def run(games: int = 10_000, seed: int = 0, bots: Optional[Sequence[str]] = None,
        variants=VARIANTS, core: Optional[int] = None, pin: bool = True,
        progress: bool = True) -> Dict:
    bots = list(bots or BOT_NAMES)
    pinned = pin_to_one_core(core) if pin else None
    log(f"pinned to core {pinned}" if pinned is not None else "not pinned to a core")
    log(f"self-play strength, {games:,} games per bot and variant:")
    rows = strength(bots, variants, games=games, seed=seed, progress=progress)
    log(f"speed of {STRONGEST!r} on one core:")
    fast = speed(STRONGEST, seed=seed)
    return {
        "games": games, "seed": seed, "strength": rows, "speed": fast,
        "pinned_core": pinned, "python": platform.python_version(),
        "machine": platform.machine(), "processor": platform.processor(),
    }


def format_table(results: Dict) -> str:
    rows = results["strength"]
    bots = list(dict.fromkeys(r["bot"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    cell = {(r["variant"], r["bot"]): r for r in rows}
    out = [f"Self-play, {results['games']:,} games per cell (seed {results['seed']}): "
           "mean +- s.e.m. / perfect % / bomb-out %", ""]
    out.append("| variant | " + " | ".join(bots) + " |")
    out.append("|---|" + "---|" * len(bots))
    for v in variants:
        cells = []
        for b in bots:
            r = cell.get((v, b))
            cells.append("" if r is None else
                         f"{r['mean']:.2f} +- {r['sem']:.2f} / {r['perfect_pct']:.1f}% / "
                         f"{r['bomb_pct']:.1f}%")
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    sp = results["speed"]
    out += ["", f"Speed of {sp['bot']!r} on one core (2 players):", "",
            "| measure | rate |", "|---|---|",
            f"| self-play from the deal, in C | {sp['selfplay_moves_per_s']:,.0f} moves/s |",
            f"| rollouts to the end from {sp['rollout_worlds']:,} mid-game clones "
            f"(history replay included) | {sp['rollout_moves_per_s']:,.0f} moves/s |",
            f"| single decisions from scratch (act_batch, mid-game) | "
            f"{sp['decisions_per_s']:,.0f} decisions/s |"]
    return "\n".join(out)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=10_000, help="games per bot and variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bots", nargs="+", choices=BOT_NAMES, default=None,
                   help="bots to measure (default: all)")
    p.add_argument("--quick", action="store_true", help="1,000 games per cell")
    p.add_argument("--core", type=int, default=None, help="CPU core to pin to")
    p.add_argument("--no-pin", action="store_true", help="do not pin to one core")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", metavar="PATH", default=None, help="write the results as JSON")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(games=1000 if args.quick else args.games, seed=args.seed, bots=args.bots,
                  core=args.core, pin=not args.no_pin, progress=not args.no_progress)
    print(format_table(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
