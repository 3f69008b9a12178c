"""A search's own games, recorded for a blueprint to learn from (expert iteration: the net
imitates the moves that search on top of it makes).

Each game is a deal of the TRAINING stream (never an evaluation deal) played by the
blueprint with the search at the spec's seats turned by the game's index: seat s of
`MethodSpec.search_seats` searches at seat (s + game) % players, so a one-seat search
(the default, seat 0) covers every seat's view across games, and `("all",)` searches at
every seat (the strongest teacher: every move of the game is the search's);
a game is one JSON line (`lbs_pz.search.recorded_games`), which records the run (search,
variant, seed) and the blueprint's fingerprint. The file is appended one whole line per
game (`lbs_pz.files.append_line`), so an interrupted run resumes where it stopped
(`record_search_games` skips the games already in it, replays a last game cut short by a
killed run, and refuses a file of another search, variant, seed or blueprint file).

    lbs-pz distill --teacher lstm:NET --init NET --search-games games.jsonl ...
"""

from __future__ import annotations

import json
import time
from typing import Optional

from lbs_pz.agents import blueprint_identity
from lbs_pz.checks import as_choice
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import MAX_GAMES, TRAIN, check_run_seed, deal_seeds
from lbs_pz.eval.backends import BACKENDS
from lbs_pz.files import append_line, check_output_path, open_locked, output_errors, seed_log
from lbs_pz.search.build import built_agents
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import read_search_games, run_key


def searching_seats(spec: MethodSpec, players: int, game: int) -> list:
    """The seats where `spec`'s search plays in recorded game `game`: every seat for
    search_seats ("all",), else each of its seats turned by `game` ((s + game) % players),
    sorted."""
    if spec.search_seats == ("all",):
        return list(range(players))
    return sorted({(int(s) + game) % players for s in spec.search_seats})


def play_search_game(spec: MethodSpec, config_kwargs: dict, game: int, seed: int) -> dict:
    """Play training deal `game` of run `seed` with `spec`'s search at
    `searching_seats(spec, players, game)` (each seat its own searcher) and the blueprint
    at the others; returns the game's JSON record ("seat": the first searching seat,
    "seats": all of them)."""
    config = HanabiConfig(**config_kwargs)
    seats = searching_seats(spec, config.players, game)
    blueprint = built_agents(spec, config, seats[0])[0]
    searchers = {seat: built_agents(spec, config, seat)[1] for seat in seats}
    if searchers[seats[0]] is None:
        raise ValueError(f"{spec.method!r} does not search: give sparta or lbs-K")
    for agent in searchers.values():        # the seats that do not search play the blueprint
        if agent is not None:
            agent.blueprint_seats = frozenset(range(config.players)) - set(seats)
    deal = int(deal_seeds(TRAIN, seed, game, 1)[0])
    state = HanabiState(config, seed=deal)
    searched, deviated = [], []
    while not state.is_terminal:
        searcher = searchers.get(state.current_player)
        if searcher is not None:
            result = searcher.search(state)
            searched.append(state.num_moves_played)
            if result.deviated:
                deviated.append(state.num_moves_played)
            state.apply(result.move)
        else:
            state.apply(blueprint.act(state))
    return {"game": game, "deal": deal, "seat": seats[0], "seats": seats,
            "moves": list(state.move_history), "searched": searched, "deviated": deviated,
            "score": state.score}


def record_search_games(spec: MethodSpec, games: int, out: str, config_kwargs=None,
                        seed: int = 0, first_game: int = 0, workers: int = 1,
                        log=print, option: str = "out", backend: str = "process",
                        address: Optional[str] = None) -> str:
    """Play training deals first_game .. first_game + games - 1 of run `seed` with the
    search `spec` at its seats turned by each game's index (see the module) on `workers`
    processes (`backend` "process"), or on a Ray cluster (`backend` "ray": the one at
    `address`, else a local Ray with `workers` CPUs), appending each game to the JSONL file
    `out` as it ends; games already in `out` are not played again; every backend records
    the same games.
    `out` must be a regular file or not exist yet (`files.check_output_path`; errors name
    it as `option`), locked while the run appends to it; missing, it is made from `out`.gz
    when that exists (a finished log as the repository keeps it: `files.seed_log`). A
    last line cut short (a run killed while writing it) is removed with a warning and its
    game played again; a broken line before it, or games of another search, variant,
    seed or blueprint file,
    are a ValueError. Games are handed to the workers a few at a time, so memory does not
    grow with `games`."""
    check_run_seed(seed)
    if spec.method == "blueprint":
        raise ValueError("the blueprint does not search: give sparta or lbs-K")
    as_choice(backend, "backend", BACKENDS)
    if games < 1 or workers < 1 or first_game < 0:
        raise ValueError("games and workers must be >= 1 and first_game >= 0")
    if first_game + games > MAX_GAMES:
        raise ValueError(f"games {first_game} .. {first_game + games - 1}: a run has games "
                         f"0 .. {MAX_GAMES - 1}")
    config_kwargs = dict(config_kwargs or {})
    check_output_path(out, option)          # a regular file or nothing yet, never a FIFO
    if seed_log(out, option):               # a committed log (OUT.gz): this run continues it
        log(f"{out}: made from its committed copy {out}.gz")
    run = run_key(spec.to_dict(), config_kwargs, seed)
    blueprint = built_agents(spec, HanabiConfig(**config_kwargs))[0]
    fingerprint = blueprint_identity(blueprint)["fingerprint"] or ""
    log_file = open_locked(out, option)     # one run records into a file at a time
    try:
        held = read_search_games(out, log_file, option, repair=True)
        other = [g for g in held if g.get("run") != run]
        if other:
            raise ValueError(f"{out} holds games of another search, variant or seed (game "
                             f"{other[0]['game']}): give a new file to record this one")
        other = [g for g in held if g.get("blueprint_fingerprint", fingerprint) != fingerprint]
        if other:
            raise ValueError(f"{out} holds games of another version of blueprint "
                             f"{spec.blueprint!r} (game {other[0]['game']}: fingerprint "
                             f"{other[0]['blueprint_fingerprint'][:12]}, now {fingerprint[:12]}"
                             f"): give a new file to record this one")
    except BaseException:
        log_file.close()
        raise
    wanted = range(first_game, first_game + games)
    done = {g["game"] for g in held if g["game"] in wanted}
    del held
    count = games - len(done)
    todo = (g for g in wanted if g not in done)     # generated as games end: bounded memory
    log(f"{len(done)} games already in {out}; playing {count}")
    start, deviations, decisions, k = time.perf_counter(), 0, 0, 0
    tasks = ((spec, config_kwargs, g, seed) for g in todo)
    with log_file as f:
        for result in BACKENDS[backend](tasks, workers, address, fn=play_search_game):
            k += 1
            record = dict(result, run=run, blueprint_fingerprint=fingerprint)
            with output_errors(out, option, "the games recorded before are kept: run "
                               "again to play the others"):
                append_line(f, (json.dumps(record) + "\n").encode())
            deviations += len(record["deviated"])
            decisions += len(record["searched"])
            if k % 20 == 0 or k == count:
                log(f"{k}/{count} games, {(time.perf_counter() - start) / k:.2f} s each; "
                    f"the search left the blueprint's move at "
                    f"{deviations / max(decisions, 1):.1%} of {decisions} decisions")
    return out
