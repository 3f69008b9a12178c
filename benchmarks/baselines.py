"""Baselines: every built-in rule bot's self-play at 2-5 players beside the literature's.

    python benchmarks/baselines.py [--quick] [--deals N] [--json PATH] [--plot PNG]

For each bot of `RuleBot` (BOT_NAMES) and 2, 3, 4, 5 players: self-play (a batched C
rollout) on N deals of the evaluation stream (`deal_seeds(EVAL, 0, 0, N)`; --quick 200,
default 2,000), mean +- s.e.m. under two scorings:
- HLE: the engine's score, 0 when the last life is lost;
- kept: the fireworks' sum even after the last life is lost (the state keeps its
  fireworks), as hanabi.rs and Quuxplusone/Hanabi score a game.
Then the published self-play means of the literature's bots, each in its own framework,
and for the bots reproduced here (`info`, `smart`) the difference from the published
figures they reproduce (hanabi.rs's "info", Quuxplusone/Hanabi's SmartBot) in standard
errors of the difference, (kept mean - published) / sqrt(sem^2 + published sem^2) (only
this side's s.e.m. where the publication gives none, as for SmartBot). Points kept is
both publications' scoring. --plot draws the same against the number of players: each bot
here (HLE's score, with its s.e.m.) as a solid line, each publication as a dashed one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Dict, List

import matplotlib
import numpy as np

from lbs_pz.agents import BOT_NAMES, RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import EVAL, deal_seeds

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the Agg backend is chosen)

PLAYERS = (2, 3, 4, 5)

# Published self-play means at 2/3/4/5 players (None: not reported), each measured in its
# own framework (points kept after the third strike; 8 hint tokens, 3 lives, 5/5/4/4 cards):
# - hanabi.rs "info": github.com/WuTheFWasThat/hanabi.rs README, "Results", first 20,000
#   seeds, with its standard errors;
# - Quuxplusone/Hanabi InfoBot and SmartBot: github.com/Quuxplusone/Hanabi README, "Current
#   average scores" (InfoBot's 2p 19.99 at commit 369b531; 20.00 in other revisions);
# - FireFlower: as quoted beside SmartBot in "The Hanabi Challenge" (Bard et al. 2020),
#   which reports no 5-player figure.
PUBLISHED = {
    "hanabi.rs info": ((22.5217, 24.7946, 24.9356, 24.9223), (0.0125, 0.0039, 0.0022, 0.0024)),
    "Quuxplusone InfoBot": ((19.99, 24.26, 24.86, 24.89), None),
    "Quuxplusone SmartBot": ((23.09, 23.30, 22.44, 20.69), None),
    "FireFlower": ((22.56, 22.95, 22.83, None), None),
}
# the bots reproduced here, and the published figures each is compared with
REPRODUCED = {"info": "hanabi.rs info", "smart": "Quuxplusone SmartBot"}


def mean_sem(x: np.ndarray) -> tuple:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def self_play(bot: str, players: int, deals: int) -> Dict:
    """One cell: the bot in every seat on the first `deals` evaluation deals."""
    batch = HanabiBatch(HanabiConfig(players=players), deals,
                        seeds=deal_seeds(EVAL, 0, 0, deals))
    RuleBot(bot).rollout(batch)
    hle = batch.scores().astype(np.float64)
    kept = np.array([sum(batch.get_state(i).fireworks) for i in range(deals)], np.float64)
    (m, s), (km, ks) = mean_sem(hle), mean_sem(kept)
    return {"bot": bot, "players": players, "deals": deals, "hle_mean": m, "hle_sem": s,
            "kept_mean": km, "kept_sem": ks, "bomb_pct": 100.0 * float(np.mean(kept != hle))}


def run(deals: int) -> Dict:
    rows: List[Dict] = []
    for bot in BOT_NAMES:
        for players in PLAYERS:
            rows.append(self_play(bot, players, deals))
            print(f"  {bot} {players}p done", file=sys.stderr, flush=True)
    return {"deals": deals, "rows": rows, "published": PUBLISHED}


def _cell(row: Dict) -> str:
    return (f"{row['hle_mean']:.2f} +- {row['hle_sem']:.2f} / "
            f"{row['kept_mean']:.2f} +- {row['kept_sem']:.2f}")


def format_table(result: Dict) -> str:
    rows = {(r["bot"], r["players"]): r for r in result["rows"]}
    head = "| bot | " + " | ".join(f"{p}p" for p in PLAYERS) + " |"
    lines = [f"Self-play on {result['deals']:,} evaluation deals per cell, mean +- s.e.m., "
             f"HLE score / points kept after the last life:", "", head,
             "|---|" + "---:|" * len(PLAYERS)]
    for bot in BOT_NAMES:
        lines.append(f"| {bot} | " + " | ".join(_cell(rows[bot, p]) for p in PLAYERS) + " |")
    for name, (means, _) in PUBLISHED.items():
        cells = ["-" if m is None else f"{m:.2f}" for m in means]
        lines.append(f"| {name} (published) | " + " | ".join(cells) + " |")
    for bot, name in REPRODUCED.items():
        means, sems = PUBLISHED[name]
        cells = []
        for i, p in enumerate(PLAYERS):
            r = rows[bot, p]
            d = r["kept_mean"] - means[i]
            se = math.sqrt(r["kept_sem"] ** 2 + (sems[i] if sems else 0.0) ** 2)
            cells.append(f"{d:+.2f} ({d / se:+.1f} s.e.)" if se > 0 else f"{d:+.2f}")
        lines.append(f"| {bot} kept - {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(result: Dict, path: str) -> None:
    """The table as a figure at `path`: mean score against players, the bots here solid
    (HLE's score, error bars of one s.e.m.; the random bot left out), the publications
    dashed."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for bot in BOT_NAMES:
        rows = [r for r in result["rows"] if r["bot"] == bot]
        if bot == "random" or not rows:
            continue
        ax.errorbar([r["players"] for r in rows], [r["hle_mean"] for r in rows],
                    yerr=[r["hle_sem"] for r in rows], marker="o", capsize=3, label=bot)
    for name, (means, _) in result["published"].items():
        shown = [(p, m) for p, m in zip(PLAYERS, means) if m is not None]
        ax.plot([p for p, _ in shown], [m for _, m in shown], linestyle="--", marker="x",
                alpha=0.7, label=f"{name} (published)")
    ax.set_xticks(PLAYERS)
    ax.set_xlabel("players")
    ax.set_ylabel(f"mean score, {result['deals']:,} deals per point")
    ax.set_ylim(12, 25.2)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="200 deals per cell")
    p.add_argument("--deals", type=int, default=None, help="deals per cell (default 2,000)")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    p.add_argument("--plot", default=None, help="also draw the table to this PNG")
    args = p.parse_args()
    deals = args.deals or (200 if args.quick else 2000)
    result = run(deals)
    print(format_table(result))
    if args.plot:
        plot(result, args.plot)
        print(f"figure: {args.plot}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
