"""Blueprint vs SPARTA vs LBS on the same deals: `lbs-pz compare`.

Each method plays the same games (game i uses the i-th deal of `HanabiBatch(config, n,
seeds=seed)`, as `lbs-pz eval` does); searching seats use the search agent, the others
the blueprint. Reported per method: mean score +- s.e.m., the paired difference to the
blueprint on the same deals with its standard error, perfect-game rate, seconds per game,
rollouts per second, and the fallback and deviation rates; as a markdown table, JSON, and
a plot of score against seconds per game (the LBS paper's Figure 3).

Backends: "inline" (this process), "process" (a local process pool, default all cores)
and "ray" (a Ray cluster, `--address`, or a local Ray). Games are independent and agents
deterministic given their seed, so every backend gives the same numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import time
from typing import Dict, List, Optional, Sequence

import numpy as np

from lbs_pz.search.beliefs import BELIEF_KINDS

METHOD_HELP = ("blueprint | sparta | lbs-K (K blueprint moves, then the shipped centralized "
               "value, e.g. lbs-1, lbs-16) | lbs-inf (rollouts to the end)")


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A method and everything needed to build it in any process."""

    method: str                   # see METHOD_HELP
    blueprint: str = "strong"
    belief: str = "learned+cf"    # for lbs-*: one of lbs_pz.search.beliefs.BELIEF_KINDS
    rollouts: int = 256
    search_seats: tuple = (0,)
    seed: int = 0
    verify: int = 0               # extra worlds re-measuring a proposed deviation
    confidence: float = 2.0       # standard errors a deviation's gain must exceed

    def label(self) -> str:
        seats = "" if self.search_seats == (0,) else \
            f"seats {','.join(str(s) for s in self.search_seats)}"
        if self.method == "blueprint":
            return self.method
        details = [self.belief] if self.method != "sparta" else []
        details += [seats] if seats else []
        return f"{self.method} ({', '.join(details)})" if details else self.method


def parse_method(method: str) -> str:
    m = method.lower()
    if m in ("blueprint", "sparta", "lbs-inf"):
        return m
    if m.startswith("lbs-") and m[4:].isdigit() and int(m[4:]) > 0:
        return m
    raise ValueError(f"unknown method {method!r}; expected {METHOD_HELP}")


_AGENTS: Dict[tuple, tuple] = {}  # (spec, seat) -> agents; per process, reused across games


def make_blueprint(name: str):
    """A blueprint by name: a rule bot ("strong", ...), "sb3:PATH" (a saved
    Stable-Baselines3 / sb3-contrib policy) or "lstm:PATH" (a public-LSTM checkpoint)."""
    if name.startswith("sb3:"):
        from lbs_pz.agents.sb3_policy import SB3Blueprint

        return SB3Blueprint.load(name[4:])
    if name.startswith("lstm:"):
        from lbs_pz.train.blueprint import load_blueprint

        return load_blueprint(name[5:])
    from lbs_pz.agents import RuleBot

    return RuleBot(name)


def build_agent(spec: MethodSpec):
    """(blueprint, searcher or None) for a spec."""
    blueprint = make_blueprint(spec.blueprint)
    if spec.method == "blueprint":
        return blueprint, None
    from lbs_pz.search.agents import LBSAgent, SpartaAgent

    if spec.method == "sparta":
        return blueprint, SpartaAgent(blueprint, rollouts=spec.rollouts, verify=spec.verify,
                                      confidence=spec.confidence, seed=spec.seed)
    from lbs_pz.search.beliefs import make_belief

    is_rule_bot = ":" not in spec.blueprint
    if spec.belief.startswith("learned") and spec.blueprint != "strong":
        raise ValueError(f"the shipped learned belief models the strong rule bot, not "
                         f"{spec.blueprint!r}: use --belief grounded+cf (or grounded, exact)")
    depth = -1 if spec.method == "lbs-inf" else int(spec.method[4:])
    belief = make_belief(spec.belief, blueprint=blueprint)
    value = None   # LBS-k bootstraps with the blueprint's own value when it has one,
    if depth > 0 and is_rule_bot:  # else with the shipped centralized value model
        from lbs_pz.search.value import CentralValue

        if spec.blueprint != "strong":
            raise ValueError(f"the shipped value model was trained for the strong bot, not "
                             f"{spec.blueprint!r}: use lbs-inf (or train a value with "
                             f"lbs-pz train-value)")

        value = CentralValue()
    return blueprint, LBSAgent(blueprint, belief, value=value, rollouts=spec.rollouts,
                               depth=depth, verify=spec.verify, confidence=spec.confidence,
                               seed=spec.seed)


def play_game(spec: MethodSpec, config_kwargs: dict, game: int, seed: int) -> dict:
    """Play deal `game` of the run seeded `seed` with `spec`; a JSON-ready summary."""
    from lbs_pz.engine import HanabiConfig, HanabiState
    from lbs_pz.engine import game_seeds

    config = HanabiConfig(**config_kwargs)
    searching = () if spec.method == "blueprint" else (
        range(config.players) if spec.search_seats == ("all",) else spec.search_seats)
    # One searcher per searching seat: each follows the game with its own belief.
    keys = [(spec, seat) for seat in searching] or [(spec, None)]
    for key in keys:
        if key not in _AGENTS:
            _AGENTS[key] = build_agent(spec)
    blueprint = _AGENTS[keys[0]][0]
    searchers = {seat: _AGENTS[(spec, seat)][1] for seat in searching}
    state = HanabiState(config, seed=int(game_seeds(seed, game, 1)[0]))
    before = {seat: len(s.history) for seat, s in searchers.items()}
    start = time.perf_counter()
    while not state.is_terminal:
        searcher = searchers.get(state.current_player)
        state.apply(searcher.act(state) if searcher is not None else blueprint.act(state))
    seconds = time.perf_counter() - start
    results = [r for seat, s in searchers.items() for r in s.history[before[seat]:]]
    return {
        "spec": spec, "game": game, "score": state.score, "seconds": seconds,
        "moves": state.num_moves_played, "decisions": len(results), "rollouts": sum(r.rollouts for r in results),
        "fallbacks": sum(r.fallback for r in results),
        "deviations": sum(r.deviated for r in results),
    }


# --- backends -------------------------------------------------------------------------------
# Each yields one result per task, in completion order.

def _inline(tasks, workers, address):
    for task in tasks:
        yield play_game(*task)


def _one_thread():
    """Worker processes use one core each: torch (if a blueprint, belief or value loads
    it) starts with one intra-op thread instead of one per core."""
    os.environ["OMP_NUM_THREADS"] = "1"


def _process_pool(tasks, workers, address):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # "spawn": forking a process that already runs torch's thread pool can deadlock.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count(), mp_context=context,
                             initializer=_one_thread) as pool:
        for future in as_completed([pool.submit(play_game, *t) for t in tasks]):
            yield future.result()


def _ray(tasks, workers, address):
    try:
        import ray
    except ImportError as err:
        raise RuntimeError("the ray backend needs Ray: pip install 'lbs_pz[distributed]'") from err
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else workers,
                 log_to_driver=False, include_dashboard=False)
    try:
        remote_play = ray.remote(play_game)
        pending = [remote_play.remote(*t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started_here:
            ray.shutdown()


BACKENDS = {"inline": _inline, "process": _process_pool, "ray": _ray}


def _jsonl_key(spec: MethodSpec, config_kwargs: dict, seed: int) -> str:
    return json.dumps([dataclasses.asdict(spec), config_kwargs, seed], sort_keys=True)


def _read_jsonl(path: str) -> List[dict]:
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def collect(specs: Sequence[MethodSpec], config_kwargs: dict, games: int, seed: int = 0,
            backend: str = "process", workers: Optional[int] = None,
            address: Optional[str] = None, show_progress: bool = True,
            first_game: int = 0, jsonl: Optional[str] = None,
            play: bool = True) -> Dict[str, List[dict]]:
    """Every spec on games first_game .. first_game + games - 1: {method label: per-game
    results, in game order}.

    jsonl: a file to which every finished game is appended as one JSON line; games of the
    same spec, variant and seed already in it are not played again, so an interrupted run
    resumes where it stopped and long runs can be split across calls or machines.
    play: False -> only read the games already in `jsonl` (a report of a partial run)."""
    from tqdm import tqdm

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {backend!r}")
    if games < 1 or first_game < 0:
        raise ValueError(f"need games >= 1 and first_game >= 0, got {games} and {first_game}")
    wanted = range(first_game, first_game + games)
    labels = {spec: spec.label() for spec in specs}
    out: Dict[str, List[dict]] = {spec.label(): [] for spec in specs}
    keys = {_jsonl_key(spec, config_kwargs, seed): spec for spec in specs}
    done = set()
    for line in _read_jsonl(jsonl):
        spec = keys.get(line.get("key"))
        if spec is not None and line["game"] in wanted and (spec, line["game"]) not in done:
            done.add((spec, line["game"]))
            out[labels[spec]].append(line["result"])
    tasks = [(spec, config_kwargs, g, seed) for spec in specs for g in wanted
             if (spec, g) not in done and play]
    log = open(jsonl, "a") if jsonl else None
    try:
        with tqdm(total=len(tasks), desc="compare", unit="game",
                  disable=not show_progress) as bar:
            for result in BACKENDS[backend](tasks, workers, address):
                spec = result.pop("spec")
                out[labels[spec]].append(result)
                if log is not None:
                    log.write(json.dumps({"key": _jsonl_key(spec, config_kwargs, seed),
                                          "method": labels[spec], "game": result["game"],
                                          "result": result}) + "\n")
                    log.flush()
                bar.update(1)
    finally:
        if log is not None:
            log.close()
    for results in out.values():
        results.sort(key=lambda r: r["game"])
    return out


# --- summaries ------------------------------------------------------------------------------

def _mean_sem(x: np.ndarray):
    n = len(x)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


def summarize(results: Dict[str, List[dict]], max_score: int) -> List[dict]:
    """One row per method with games; the paired difference is against "blueprint" on
    the deals both played."""
    base = results.get("blueprint")
    rows = []
    for label, games in results.items():
        if not games:       # e.g. a method not yet in a logged run
            continue
        scores = np.array([g["score"] for g in games], dtype=np.float64)
        seconds = np.array([g["seconds"] for g in games])
        mean, sem = _mean_sem(scores)
        row = {
            "method": label, "games": len(games), "mean": mean, "sem": sem,
            "perfect_rate": float(np.mean(scores == max_score)),
            "seconds_per_game": float(seconds.mean()),
            "rollouts_per_second": float(sum(g["rollouts"] for g in games) / max(seconds.sum(), 1e-9)),
            "decisions": int(sum(g["decisions"] for g in games)),
            "fallback_rate": float(sum(g["fallbacks"] for g in games) / max(1, sum(g["decisions"] for g in games))),
            "deviation_rate": float(sum(g["deviations"] for g in games) / max(1, sum(g["decisions"] for g in games))),
        }
        base_scores = {g["game"]: g["score"] for g in base or []}
        shared = [g for g in games if g["game"] in base_scores]
        if len(shared) > 1:   # paired on the deals both played
            diff = np.array([g["score"] - base_scores[g["game"]] for g in shared], dtype=np.float64)
            row["paired_diff"], row["paired_diff_se"] = _mean_sem(diff)
        rows.append(row)
    return rows


def format_markdown(rows: List[dict]) -> str:
    lines = ["| method | games | mean +- s.e.m. | vs blueprint (paired) | perfect | s/game | "
             "rollouts/s | fallback | deviations |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        paired = (f"{r['paired_diff']:+.3f} +- {r['paired_diff_se']:.3f}"
                  if "paired_diff" in r and r["method"] != "blueprint" else "")
        lines.append(
            f"| {r['method']} | {r['games']} | {r['mean']:.3f} +- {r['sem']:.3f} | {paired} | "
            f"{100 * r['perfect_rate']:.1f}% | {r['seconds_per_game']:.2f} | "
            f"{r['rollouts_per_second']:,.0f} | {100 * r['fallback_rate']:.1f}% | "
            f"{100 * r['deviation_rate']:.1f}% |")
    return "\n".join(lines)


def plot(rows: List[dict], path: str) -> None:
    """Score against seconds per game (log scale), one point per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        ax.errorbar(max(r["seconds_per_game"], 1e-4), r["mean"], yerr=r["sem"], fmt="o", capsize=3)
        ax.annotate(r["method"], (max(r["seconds_per_game"], 1e-4), r["mean"]),
                    textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("seconds per game")
    ax.set_ylabel("mean score")
    ax.set_title("score vs search time")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- command line ---------------------------------------------------------------------------

def cmd_compare(args) -> int:
    """Blueprint vs SPARTA vs LBS-k on the same deals (markdown, JSON, plot)."""
    from lbs_pz.cli import _config_from

    config = _config_from(args)
    if args.report_only and not args.jsonl:
        raise ValueError("--report-only reads the games of --jsonl PATH")
    seats = ("all",) if args.search_seats == "all" else tuple(int(s) for s in args.search_seats.split(","))
    for seat in seats:
        if seat != "all" and not 0 <= seat < config.players:
            raise ValueError(f"--search-seats: seat {seat} is not in [0, {config.players})")
    specs = [MethodSpec(parse_method(m), blueprint=args.blueprint, belief=args.belief,
                        rollouts=args.rollouts, search_seats=seats, seed=args.seed,
                        verify=args.verify, confidence=args.confidence)
             for m in args.methods.split(",")]
    if specs[0].method != "blueprint" and "blueprint" not in [s.method for s in specs]:
        specs.insert(0, MethodSpec("blueprint", blueprint=args.blueprint, seed=args.seed))
    config_kwargs = dataclasses.asdict(config)
    results = collect(specs, config_kwargs, args.games, seed=args.seed, backend=args.backend,
                      workers=args.workers, address=args.address,
                      show_progress=not args.no_progress, first_game=args.first_game,
                      jsonl=args.jsonl, play=not args.report_only)
    rows = summarize(results, config.colors * config.ranks)
    print(format_markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": config_kwargs, "games": args.games, "seed": args.seed,
                       "backend": args.backend, "rows": rows, "per_game": results}, f, indent=1)
    if args.plot:
        plot(rows, args.plot)
    return 0


def add_compare_command(subparsers) -> argparse.ArgumentParser:
    from lbs_pz.cli import _config_args

    parser = subparsers.add_parser(
        "compare", help="blueprint vs SPARTA vs LBS-k on the same deals", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default="blueprint,lbs-inf",
                        help=f"comma-separated methods: {METHOD_HELP} (default blueprint,lbs-inf)")
    parser.add_argument("--blueprint", default="strong",
                        help="a rule bot (default strong), sb3:PATH (a saved SB3 / "
                             "sb3-contrib policy zip) or lstm:PATH (a public-LSTM checkpoint)")
    parser.add_argument("--belief", default="learned+cf", choices=BELIEF_KINDS,
                        help="belief used by LBS (default learned+cf: the learned belief's "
                             "samples filtered counterfactually through the blueprint)")
    parser.add_argument("--rollouts", type=int, default=256, help="sampled worlds per decision")
    parser.add_argument("--verify", type=int, default=0,
                        help="extra worlds on which a proposed deviation is re-measured "
                             "against the blueprint's move (default 0: off)")
    parser.add_argument("--confidence", type=float, default=2.0,
                        help="standard errors of the paired gain a deviation must exceed, "
                             "besides delta = 0.05 (default 2; 0 is the paper's rule)")
    parser.add_argument("--search-seats", default="0",
                        help="seats that search, comma-separated, or 'all' (default 0)")
    parser.add_argument("--games", type=int, default=100, help="games per method (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and searches")
    parser.add_argument("--first-game", type=int, default=0,
                        help="index of the first deal (to split a run; default 0)")
    parser.add_argument("--jsonl", metavar="PATH",
                        help="append every finished game to PATH; games already there "
                             "are reused, so an interrupted run resumes")
    parser.add_argument("--report-only", action="store_true",
                        help="play nothing: report the games of --jsonl PATH in range")
    parser.add_argument("--backend", default="process", choices=sorted(BACKENDS),
                        help="where games run (default: a local process pool)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--address", default=None, help="Ray cluster address (ray backend)")
    parser.add_argument("--json", metavar="PATH", help="write rows and per-game results as JSON")
    parser.add_argument("--plot", metavar="PNG", help="plot score vs seconds per game")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _config_args(parser)
    parser.set_defaults(func=cmd_compare)
    return parser
