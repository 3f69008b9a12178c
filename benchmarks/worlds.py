#!/usr/bin/env python
"""Does more compute buy more points? LBS's gain and cost against the number of worlds.

    python benchmarks/worlds.py play                 # hours on 2 cores; resumable
    python benchmarks/worlds.py curve results/compute_strong.jsonl
    python benchmarks/worlds.py cost --worlds 256 1024 4096 10000

`play [--quick]`: LBS with no flags at more and more worlds per decision, every
`lbs-pz compare` run logged to results/compute_strong.jsonl (the strong bot),
results/compute_budget.jsonl (the strong bot under a budget) or results/compute_net.jsonl
(the best neural blueprint), two worker processes, run seed 0's evaluation deals: the
strong bot with seat 0 searching at 256, 1,024, 4,096 (300 deals) and 10,000 worlds
(200), SPARTA at 256 and 1,024 worlds (300; no bias, so its margin follows the noise),
LBS-inf at 1,024 and 4,096 (200: importance-weighted, its default there, the search with
neither the value's bias nor the belief's, whose margin follows the noise), LBS-16 under
a budget of the moves of 256, 1,024, 4,096 (300 deals) and 10,000 (200) depth-16 worlds
(`WORLD_MOVES` each; a decision that the budget affords enough worlds to the end rolls
out to the end: docs/experiments/budget_depth.md), every seat searching at 256, 1,024 and
4,096 (200), the neural blueprint at 32, 256 and 1,024 (200). The strong bot's one-seat
curves come first, so a run stopped part way has their points; a stopped run continues
where it stopped (gzipped in the repository, results/compute_*.jsonl.gz; `play`
continues from them). `--quick`: 2 deals each, to logs ending in _quick.

`curve LOG`: from a `lbs-pz compare --jsonl` log holding one blueprint's games at several
world counts (same run seed, same deals), one row per search (its label names the seats
when more than seat 0 search) and world count: deals, mean score, gain over the blueprint
(paired), the step from the previous world count of the same search (paired on their
shared deals; the curve never falls when every step is >= -1 s.e.), seconds per game,
deviation rate, and, where SPARTA played the same world count, a one-seat search's gain as
a percentage of SPARTA's on their shared deals. Last, each world count minus the
smallest, paired, per search.

`cost`: seconds per decision, microseconds per world used and the process's peak
memory, for LBS-16 with no flags on the strong bot (seat 0's decisions over the first 30
moves of `--games` evaluation deals), each world count and each budget (`--budgets`) in a
fresh process on one core:
a flat cost per world and flat memory is what lets the search take 10,000 worlds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from lbs_pz.eval.backends import read_log
from lbs_pz.files import readable_log
from lbs_pz.search.methods import MethodSpec


def _mean_sem(x, sign: str = "") -> str:
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return f"{x.mean():{sign}.3f}" if len(x) else "-"
    return f"{x.mean():{sign}.3f} +- {x.std(ddof=1) / np.sqrt(len(x)):.3f}"


def _paired(a: dict, b: dict):
    shared = sorted(set(a) & set(b))
    return np.array([a[g]["score"] - b[g]["score"] for g in shared], dtype=float)


def curve(log: str) -> int:
    log = readable_log(log)
    if not os.path.exists(log):
        print(f"{log}: no games yet (`python benchmarks/worlds.py play` plays them)")
        return 0
    blueprint, searches = {}, {}  # searches: search label -> {worlds: {game: result}}
    for entry in read_log(log):
        spec, _, _ = json.loads(entry["key"])
        if spec["method"] == "blueprint":
            blueprint[entry["game"]] = entry["result"]
            continue
        method = MethodSpec.from_dict(spec)
        budget = method.search.budget
        if budget is not None:      # a budget's curve: one search, a point per budget
            method = dataclasses.replace(method, search=method.search.replace(budget=None))
        label = method.label() + (" under a budget" if budget is not None else "")
        point = budget if budget is not None else method.rollouts
        searches.setdefault(label, {}).setdefault(point, {})[entry["game"]] = entry["result"]
    if not searches:
        print(f"{log}: no search games yet (`python benchmarks/worlds.py play` plays them)")
        return 0
    sparta = {w: games for label, by in searches.items() if label == "sparta"
              for w, games in by.items()}
    print("| search | worlds (budget: moves per decision) | deals | score | vs blueprint "
          "| step from fewer worlds | % of SPARTA's gain | s/game | deviations |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, by in searches.items():
        previous = None
        for worlds in sorted(by):
            games = by[worlds]
            scores = [r["score"] for r in games.values()]
            gain = _paired(games, blueprint)
            step = _mean_sem(_paired(games, by[previous]), "+") if previous else ""
            share = ""
            if worlds in sparta and label != "sparta" and "seats" not in label \
                    and "budget" not in label:                                   # like for like
                shared = sorted(set(games) & set(sparta[worlds]) & set(blueprint))
                ours = np.mean([games[g]["score"] - blueprint[g]["score"] for g in shared])
                theirs = np.mean([sparta[worlds][g]["score"] - blueprint[g]["score"]
                                  for g in shared])
                share = f"{100 * ours / theirs:.0f}% ({len(shared)} deals)" if theirs > 0 else ""
            decisions = sum(r["decisions"] for r in games.values())
            print(f"| {label} | {worlds:,} | {len(scores)} | {_mean_sem(scores)} | "
                  f"{_mean_sem(gain, '+')} | {step} | {share} | "
                  f"{np.mean([r['seconds'] for r in games.values()]):.2f} | "
                  f"{sum(r['deviations'] for r in games.values()) / max(decisions, 1):.1%} |")
            previous = worlds
    print()
    for label, by in searches.items():
        lo = min(by)
        for hi in sorted(by)[1:]:
            d = _paired(by[hi], by[lo])
            unit = "moves" if "budget" in label else "worlds"
            print(f"{label}: {hi:,} {unit} minus {lo:,}, paired over {len(d)} deals: "
                  f"{_mean_sem(d, '+')}")
    return 0


def _cost_one(worlds: int, games: int, budget: int = 0) -> dict:
    """Run in a fresh process: LBS-16's decisions at `worlds` worlds, or under `budget`
    moves per decision when it is > 0 (see the module doc)."""
    import warnings

    from lbs_pz.agents import load_blueprint
    from lbs_pz.engine import HanabiConfig, HanabiState
    from lbs_pz.engine.seeds import EVAL, deal_seeds
    from lbs_pz.search.agents import LBSAgent

    blueprint = load_blueprint("strong")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(blueprint, budget=budget) if budget else LBSAgent(blueprint,
                                                                           rollouts=worlds)
    seconds, sampled, rollouts, decisions = 0.0, 0, 0, 0
    for game in range(games):
        state = HanabiState(HanabiConfig(), seed=int(deal_seeds(EVAL, 0, game, 1)[0]))
        while not state.is_terminal and state.num_moves_played < 30:
            if state.current_player == 0:
                start = time.perf_counter()
                result = agent.search(state)
                seconds += time.perf_counter() - start
                sampled, rollouts, decisions = (sampled + result.worlds,
                                                rollouts + result.rollouts, decisions + 1)
                state.apply(result.move)
            else:
                state.apply(blueprint.act(state))
    return {"worlds": worlds, "budget": budget, "decisions": decisions,
            "s_per_decision": seconds / decisions,
            "us_per_world": 1e6 * seconds / max(sampled, 1),
            "rollouts_per_decision": rollouts / decisions,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def cost(worlds, games: int, budgets=()) -> int:
    print("| worlds (budget: moves per decision) | decisions | s/decision | us per world used "
          "| rollouts per decision | peak memory (MB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for w, budget in [(w, 0) for w in worlds] + [(0, b) for b in budgets]:
        out = subprocess.run([sys.executable, __file__, "_cost_one", str(w), str(games),
                              "--budget", str(budget)],
                             env=env, capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        point = f"budget {budget:,}" if budget else f"{w:,}"
        print(f"| {point} | {r['decisions']} | {r['s_per_decision']:.3f} | "
              f"{r['us_per_world']:.0f} | {r['rollouts_per_decision']:,.0f} | "
              f"{r['peak_mb']:.0f} |")
    return 0


# The budget of one depth-16 world at the strong bot's median decision: 17 legal moves x 17
# moves per rollout (docs/experiments/budget_depth.md), so a budget of WORLD_MOVES * W is
# the budget's counterpart of W worlds.
WORLD_MOVES = 289


def runs(quick: bool) -> list:
    """The compare runs of `play`, as argument lists."""
    deals, few, tail = (2, 2, "_quick") if quick else (300, 200, "")
    compare = ["lbs-pz", "compare", "--backend", "process", "--workers", "2", "--no-progress"]
    strong = compare + ["--blueprint", "strong", "--jsonl", f"results/compute_strong{tail}.jsonl"]
    net = compare + ["--blueprint", "lstm:conventions_expert_value_2p",
                     "--jsonl", f"results/compute_net{tail}.jsonl"]
    play = lambda base, methods, worlds, games, *more: base + [   # noqa: E731
        "--methods", methods, "--rollouts", str(worlds), "--games", str(games), *more]
    budgeted = compare + ["--blueprint", "strong", "--jsonl", f"results/compute_budget{tail}.jsonl"]
    budget = lambda worlds, games: budgeted + [                   # noqa: E731
        "--methods", "blueprint,lbs-16", "--budget", str(WORLD_MOVES * worlds),
        "--games", str(games)]
    return [play(strong, "blueprint,lbs-16,sparta", 256, deals),
            play(strong, "lbs-16", 1024, deals),
            play(strong, "lbs-16", 4096, deals),
            play(strong, "lbs-inf", 1024, few, "--importance"),
            play(strong, "lbs-inf", 4096, few, "--importance"),
            play(strong, "sparta", 1024, deals),
            play(strong, "lbs-16", 10000, few),
            *(budget(w, deals) for w in (256, 1024, 4096)), budget(10000, few),
            *(play(strong, "lbs-16", w, few, "--search-seats", "all") for w in (256, 1024, 4096)),
            play(net, "blueprint,lbs-16", 32, few),
            *(play(net, "lbs-16", w, few) for w in (256, 1024))]


def play(quick: bool) -> int:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for args in runs(quick):
        print(" ".join(args), flush=True)
        subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("play", help="play every point of the curves (resumable)")
    p.add_argument("--quick", action="store_true", help="2 deals per point")
    c = sub.add_parser("curve", help="the gain against worlds, from a compare --jsonl log")
    c.add_argument("log")
    k = sub.add_parser("cost", help="seconds and memory against worlds, one core")
    k.add_argument("--worlds", type=int, nargs="+", default=[256, 1024, 4096, 10000])
    k.add_argument("--budgets", type=int, nargs="*",
                   default=[WORLD_MOVES * w for w in (256, 1024, 4096, 10000)],
                   help="budgets (moves per decision) timed after the world counts")
    k.add_argument("--games", type=int, default=2)
    one = sub.add_parser("_cost_one")
    one.add_argument("worlds", type=int)
    one.add_argument("games", type=int)
    one.add_argument("--budget", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "play":
        return play(args.quick)
    if args.command == "curve":
        return curve(args.log)
    if args.command == "cost":
        return cost(args.worlds, args.games, args.budgets)
    print(json.dumps(_cost_one(args.worlds, args.games, args.budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
