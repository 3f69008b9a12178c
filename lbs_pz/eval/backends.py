"""Where `compare` plays its games: "inline" (this process), "process" (a local process
pool, default all cores) or "ray" (a Ray cluster, `address`, or a local Ray). Games are
independent and agents deterministic given their seed, so every backend gives the same
numbers. `collect` plays every spec on the same deals of the evaluation stream
(`deal_seeds(EVAL, seed, game, 1)`) and can log every game to a JSONL file to resume.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import warnings
from typing import Dict, List, Optional, Sequence

from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, check_run_seed, deal_seeds
from lbs_pz.eval.specs import MethodSpec, build_agent

_AGENTS: Dict[tuple, tuple] = {}  # (spec, game, seat) -> agents; per process, reused across games


def play_game(spec: MethodSpec, config_kwargs: dict, game: int, seed: int) -> dict:
    """Play deal `game` of the evaluation stream of run `seed` with `spec`; a JSON-ready
    summary (score, seconds, moves, decisions, rollouts, fallbacks, deviations, depth)."""
    config = HanabiConfig(**config_kwargs)
    game_key = json.dumps(config_kwargs, sort_keys=True)
    searching = () if spec.method == "blueprint" else (
        range(config.players) if spec.search_seats == ("all",) else spec.search_seats)
    # One searcher per searching seat: each follows the game with its own belief.
    keys = [(spec, game_key, seat) for seat in searching] or [(spec, game_key, None)]
    for key in keys:
        if key not in _AGENTS:
            with warnings.catch_warnings():    # `specs.describe` reports LBS's defaults
                warnings.simplefilter("ignore")
                _AGENTS[key] = build_agent(spec, config)
    blueprint = _AGENTS[keys[0]][0]
    searchers = {seat: _AGENTS[(spec, game_key, seat)][1] for seat in searching}
    state = HanabiState(config, seed=int(deal_seeds(EVAL, seed, game, 1)[0]))
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
        "depth": None if not searchers else next(iter(searchers.values())).depth,
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
    """Every spec on games first_game .. first_game + games - 1 of the evaluation stream
    of run `seed` (0 <= seed < 2**31): {method label: per-game results, in game order}.

    jsonl: a file to which every finished game is appended as one JSON line; games of the
    same spec, variant and seed already in it are not played again, so an interrupted run
    resumes where it stopped and long runs can be split across calls or machines.
    play: False -> only read the games already in `jsonl` (a report of a partial run)."""
    from tqdm import tqdm

    seed = check_run_seed(seed)
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
