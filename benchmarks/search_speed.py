#!/usr/bin/env python
"""Seconds per game of search on the strong rule bot, with a per-decision breakdown.

Plays deals of the evaluation stream (`deal_seeds(EVAL, seed, i, 1)`), seat 0 searching,
seat 1 the blueprint, on one core (torch and BLAS limited to one thread), and prints per
method: seconds per game (wall clock, and this process's CPU time, the fairer figure on a
busy machine), mean score, and per search decision the seconds spent in the
belief (following the game and sampling hands), in the value and in the rest (building
and rolling out the worlds, choosing the move).

    python benchmarks/search_speed.py --games 5 --rollouts 256 --methods lbs-16
    python benchmarks/search_speed.py --games 2 --rollouts 10000 --methods lbs-16   # paper scale

The script uses only APIs that older revisions also have, so the same file measures a
before/after pair: `git worktree add /tmp/before REV`, build it there
(`python setup.py build_ext --inplace`), then run this script once with
`PYTHONPATH=/tmp/before` and once without, alternating games with `--first`.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from lbs_pz.agents import RuleBot  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402


class Timed:
    """Wraps a callable and adds its run time to `self.seconds`."""

    def __init__(self, fn):
        self.fn, self.seconds, self.calls = fn, 0.0, 0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def make_searcher(method: str, blueprint, belief: str, rollouts: int, seed: int):
    """(agent, timers) for method 'sparta', 'lbs-K' or 'lbs-inf'; None for 'blueprint'."""
    if method == "blueprint":
        return None, {}
    from lbs_pz.search.agents import LBSAgent, SpartaAgent
    from lbs_pz.search.beliefs import make_belief

    if method == "sparta":
        agent = SpartaAgent(blueprint, rollouts=rollouts, seed=seed)
    else:
        depth = -1 if method == "lbs-inf" else int(method[4:])
        value = None
        if depth > 0:
            from lbs_pz.search.value import CentralValue

            value = CentralValue()
        agent = LBSAgent(blueprint, make_belief(belief, blueprint=blueprint), value=value,
                         rollouts=rollouts, depth=depth, seed=seed)
    timers = {}
    for name in ("reset", "observe", "sample"):
        timers[name] = Timed(getattr(agent.belief, name))
        setattr(agent.belief, name, timers[name])
    if agent.value is not None:
        timers["value"] = agent.value = Timed(agent.value)
    return agent, timers


def play(method: str, game: int, args) -> dict:
    config = HanabiConfig()
    blueprint = RuleBot(args.blueprint)
    agent, timers = make_searcher(method, blueprint, args.belief, args.rollouts, args.seed)
    state = HanabiState(config, seed=int(deal_seeds(EVAL, args.seed, game, 1)[0]))
    search_seconds = 0.0
    start, cpu_start = time.perf_counter(), time.process_time()
    while not state.is_terminal:
        if agent is not None and state.current_player == 0:
            t = time.perf_counter()
            move = agent.act(state)
            search_seconds += time.perf_counter() - t
        else:
            move = blueprint.act(state)
        state.apply(move)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    decisions = agent.decisions if agent is not None else 0
    belief = sum(timers[k].seconds for k in ("reset", "observe", "sample") if k in timers)
    value = timers["value"].seconds if "value" in timers else 0.0
    return {"method": method, "game": game, "score": state.score, "seconds": seconds,
            "cpu_s": cpu,
            "decisions": decisions, "deviations": agent.deviations if agent else 0,
            "belief_s": belief, "value_s": value,
            "rollouts_s": search_seconds - belief - value}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="lbs-16",
                        help="comma-separated: blueprint, sparta, lbs-K, lbs-inf")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--first", type=int, default=0, help="first evaluation deal")
    parser.add_argument("--rollouts", type=int, default=256)
    parser.add_argument("--belief", default="learned+cf")
    parser.add_argument("--blueprint", default="strong")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="", help="printed on every line (e.g. before/after)")
    parser.add_argument("--json", help="append one JSON line per game to this file")
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    for method in args.methods.split(","):
        rows = []
        for game in range(args.first, args.first + args.games):
            row = play(method.strip(), game, args)
            row.update(rollouts=args.rollouts, label=args.label)
            rows.append(row)
            per = max(row["decisions"], 1)
            print(f"{args.label:8s} {method:8s} game {game:3d}  score {row['score']:2d}  "
                  f"{row['seconds']:7.2f} s (cpu {row['cpu_s']:6.2f} s)  decisions {row['decisions']:2d}  per decision: "
                  f"belief {row['belief_s'] / per * 1e3:7.1f} ms  rollouts "
                  f"{row['rollouts_s'] / per * 1e3:7.1f} ms  value "
                  f"{row['value_s'] / per * 1e3:6.1f} ms", flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
        secs = np.array([r["seconds"] for r in rows])
        cpus = np.array([r["cpu_s"] for r in rows])
        scores = np.array([r["score"] for r in rows])
        print(f"{args.label:8s} {method:8s} {args.rollouts} rollouts: {secs.mean():.2f} s/game "
              f"(+- {secs.std(ddof=1) / np.sqrt(len(secs)) if len(secs) > 1 else 0:.2f}; "
              f"cpu {cpus.mean():.2f} s/game), "
              f"score {scores.mean():.2f} over {len(rows)} games; load {os.getloadavg()[0]:.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
