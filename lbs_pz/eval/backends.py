"""Where `compare` plays its games: "inline" (this process), "process" (a local process
pool, default all cores) or "ray" (a Ray cluster, `address`, or a local Ray). Games are
independent and agents deterministic given their seed, so every backend gives the same
numbers. `collect` plays every spec on the same deals of the evaluation stream
(`deal_seeds(EVAL, seed, game, 1)`) and can log every game to a JSONL file to resume.
Tasks are generated as games end (a few per worker in flight), so memory does not grow
with the number of games asked for.

The log: a regular file (never a FIFO or a device), locked (`flock`) by the run that
appends to it, so that a second run on it is refused; read a bounded line at a time, and
every line checked against its game variant (`read_log`), so that a result that cannot
be true is an error naming the file and line, never a number in a report. Each line also
holds its spec's `made_with` (`lbs_pz.search.build.made_with`: the digests of the
blueprint and model files the spec resolved to); a game made with other files than the
spec resolves to now is played again, with a warning, so a model shipped or retrained
since never lets older games stand for it (lines without it, from older logs, are reused).
A checkpoint inside the log's folder is keyed by its name there ("<log folder>/NAME"), not
by the path the run was given, so a log copied or moved with its files keeps its games.

Interrupts: a KeyboardInterrupt (Ctrl-C) or any error while games run stops every backend
at once: queued games are cancelled (process pool: workers ignore SIGINT and are
terminated; Ray: pending tasks are cancelled), nothing more is logged, and the exception
propagates. The log holds only complete lines (`files.append_line`: each game's line is
appended unbuffered, cut back if a write fails part way), so running the same call again
plays only the missing games and gives the uninterrupted result. A worker that dies (a
process of the pool killed, a Ray worker, raylet or node lost) stops the run the same
way, as one ValueError naming it (a rerun plays only the games not logged).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import multiprocessing
import os
import signal
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, cast

from tqdm import tqdm

from lbs_pz.checks import as_choice, as_int
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, MAX_GAMES, check_run_seed, deal_seeds
from lbs_pz.files import (append_line, check_input_path, check_output_path, json_lines,
                          open_locked, open_regular, output_errors)
from lbs_pz.host import MACHINE_CHARS, machine
from lbs_pz.optional import ray_lost, ray_session, sigint_deferred, sigint_ignored
from lbs_pz.search.agents import SearchAgent
from lbs_pz.search.build import built_agents, made_with
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.resolve import recommended_for

def play_game(spec: MethodSpec, config_kwargs: dict, game: int, seed: int) -> dict:
    """Play deal `game` of the evaluation stream of run `seed` with `spec`; a JSON-ready
    summary (score, seconds, moves, decisions, rollouts, fallbacks, deviations, depth, and
    the `machine` that timed it)."""
    config = HanabiConfig(**config_kwargs)
    searching = () if spec.method == "blueprint" else (
        range(config.players) if spec.search_seats == ("all",) else spec.search_seats)
    blueprint = built_agents(spec, config, next(iter(searching), None))[0]
    # a search method: every searching seat has its searcher
    searchers = {seat: cast(SearchAgent, built_agents(spec, config, seat)[1])
                 for seat in searching}
    for agent in searchers.values():        # the seats that do not search play the blueprint
        agent.blueprint_seats = frozenset(range(config.players)) - set(searching)
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
        "moves": state.num_moves_played, "decisions": len(results),
        "rollouts": sum(r.rollouts for r in results),
        "fallbacks": sum(r.fallback for r in results),
        "deviations": sum(r.deviated for r in results),
        "depth": None if not searchers else next(iter(searchers.values())).depth,
        "machine": machine(),
    }


# --- backends -------------------------------------------------------------------------------
# Each yields one result per task, fn(*task) (default `play_game`; a module-level function,
# so that workers can import it), in completion order, taking tasks from the iterable as
# games end: at most IN_FLIGHT_PER_WORKER games per worker are queued at a time, so that
# memory does not grow with the number of games.
IN_FLIGHT_PER_WORKER = 4

def _inline(tasks, workers, address, fn=play_game):
    for task in tasks:
        yield fn(*task)


def _worker_init():
    """Worker processes use one core each: torch (if a blueprint, belief or value loads
    it) starts with one intra-op thread instead of one per core. They ignore SIGINT: a
    Ctrl-C in the terminal reaches the whole process group, and the parent decides. They
    exit with their parent (`watch_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    watch_parent()


PARENT_CHECK_SECONDS = 0.5


def watch_parent() -> None:
    """Make this worker process exit within PARENT_CHECK_SECONDS of its parent's death
    (a SIGTERM or SIGKILL of the parent gives its pool no chance to stop the workers),
    instead of playing its queued games for no one: the initializer of every process
    pool of the eval layer."""
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True,
                     name="exit-with-parent").start()


def _exit_with_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if os.getppid() != parent:      # re-parented: the process that started us is gone
            os._exit(1)


def _stop_pool(pool, grace: float = 2.0) -> None:
    """Stop `pool` now: cancel its queued games and terminate its workers (a running game
    is not finished). Bounded: a worker that outlives SIGTERM by `grace` s is killed."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    with sigint_ignored():
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        deadline = time.monotonic() + grace
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1.0)
        # The pool's manager thread closes its wake-up pipe as it notices the dead
        # workers. Left running, it races the interpreter's exit hook, which writes to
        # that pipe (CPython 3.11: "OSError: Bad file descriptor" printed at exit).
        if manager is not None:
            manager.join(grace)


RERUN = ("the games logged before it are kept (compare --jsonl, search-games --out, paper): "
         "run the same command again to play only the others")


def _dead_workers(pool) -> str:
    """Which workers of a broken `pool` died, and how ("process 123 (killed by SIGKILL)"):
    those that ended otherwise than by the SIGTERM with which the pool stops the others."""
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:         # it reaps the workers as the pool breaks
        manager.join(2.0)
    ended = {pid: process.exitcode
             for pid, process in (getattr(pool, "_processes", None) or {}).items()
             if process.exitcode not in (None, 0)}
    culprits = {pid: code for pid, code in ended.items() if code != -signal.SIGTERM} or ended

    def how(code):
        if code >= 0:
            return f"exit status {code}"
        name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
        why = ": kill -9, or the system out of memory" if code == -signal.SIGKILL else ""
        return f"killed by {name}{why}"
    return ", ".join(f"process {pid} ({how(code)})" for pid, code in sorted(culprits.items())) \
        or "a process"


def _process_pool(tasks, workers, address, fn=play_game):
    """A worker that dies (killed, out of memory) stops the pool: one ValueError naming
    it, and saying that a rerun plays only the games not logged."""
    # "spawn": forking a process that already runs torch's thread pool can deadlock.
    context = multiprocessing.get_context("spawn")
    workers = workers or os.cpu_count() or 1
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=_worker_init)
    window = IN_FLIGHT_PER_WORKER * workers
    tasks = iter(tasks)
    try:
        # The first `window` submits start every worker: they start ignoring SIGINT.
        with sigint_ignored():
            pending = {pool.submit(fn, *t) for t in itertools.islice(tasks, window)}
        while pending:
            # wait and submit take the futures' and the pool's locks: a Ctrl-C is held
            # while they run (a quarter second at most) and raised between them
            with sigint_deferred():
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                pending |= {pool.submit(fn, *t) for t in itertools.islice(tasks, len(done))}
            for future in done:
                yield future.result()
    except BrokenProcessPool:       # a worker died: its game, and the pool, are lost
        died = _dead_workers(pool)
        _stop_pool(pool)
        raise ValueError(f"--backend process: a worker of the process pool died while "
                         f"games ran: {died}; the other workers are stopped; "
                         f"{RERUN}") from None
    except BaseException:           # Ctrl-C, a failed game, or the consumer stopped early
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _ray(tasks, workers, address, fn=play_game):
    """A worker, raylet or node the cluster loses is one ValueError (`ray_session`)."""
    with ray_session(address, workers, "--backend ray", rerun=RERUN) as ray:
        remote_fn = ray.remote(fn)
        tasks = iter(tasks)
        window = IN_FLIGHT_PER_WORKER * int(workers or ray.cluster_resources().get("CPU", 1))
        pending = [remote_fn.remote(*t) for t in itertools.islice(tasks, max(window, 1))]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                pending += [remote_fn.remote(*t) for t in itertools.islice(tasks, 1)]
                yield ray.get(done[0])
        except BaseException as err:  # Ctrl-C, a failed game, or the consumer stopped early
            with sigint_ignored():
                for ref in pending:     # queued games are not played on the cluster
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:
                        if not ray_lost(ray, err):  # else the raylet is gone: nothing to cancel
                            raise
            raise


BACKENDS = {"inline": _inline, "process": _process_pool, "ray": _ray}


LOG_FOLDER = "<log folder>"     # how a key names a checkpoint inside the log's folder
_FILE_FIELDS = ("belief_checkpoint", "value_checkpoint")


def _in_folder(spec: dict, folder: Optional[str]) -> dict:
    """`spec` with each checkpoint inside `folder` (the log's, absolute) named
    "<log folder>/NAME": a log moved or copied with the files beside it keeps its keys,
    whatever folder the run starts in. Other paths stay as given."""
    if not folder or not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for name in _FILE_FIELDS:
        path = out.get(name)
        if isinstance(path, str) and path and not path.startswith(LOG_FOLDER):
            inside = os.path.relpath(os.path.abspath(path), folder)
            if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
                out[name] = "/".join((LOG_FOLDER, *inside.split(os.sep)))
    return out


def _key(spec: dict, config_kwargs: dict, seed, folder: Optional[str] = None) -> str:
    """A game's key in a log: the spec (its checkpoints in the log's `folder` named
    relative to it, `_in_folder`), EVERY field of the game variant (so the same game has
    one key whichever fields the caller named: `compare` names all, `paper` only those it
    changes) and the run seed."""
    game = dataclasses.asdict(HanabiConfig(**config_kwargs))
    return json.dumps([_in_folder(spec, folder), game, seed], sort_keys=True)


def _log_folder(jsonl: Optional[str]) -> Optional[str]:
    return os.path.dirname(os.path.abspath(jsonl)) if jsonl else None


def _jsonl_key(spec: MethodSpec, config_kwargs: dict, seed: int,
               folder: Optional[str] = None) -> str:
    return _key(spec.to_dict(), config_kwargs, seed, folder)


def _canonical_key(key: str, cache: Dict[str, str], folder: Optional[str] = None) -> str:
    """`key` of a log line as `_jsonl_key` writes it now: a line whose variant names only
    some fields (written before keys named every field) gets them all, a spec written
    before a search setting existed gets that setting's default (unset), and a checkpoint
    named by its path inside the log's folder is named relative to it. Cached in `cache`
    (a log holds few keys); a key that is not a (spec, variant, seed) triple is kept."""
    if key not in cache:
        try:
            spec, game, seed = json.loads(key)
            if isinstance(spec, dict) and "method" in spec:
                spec = {**SearchConfig().to_dict(), **spec}
            cache[key] = _key(spec, game, seed, folder)
        except (ValueError, TypeError, RecursionError):
            cache[key] = key
    return cache[key]


MADE_WITH_NAMES = {"blueprint": "blueprint file", "recommended": "recommended settings",
                   "speed": "speed settings", "margin_worlds": "margin rule",
                   "deep_worlds": "budget's depth rule",
                   "belief": "belief file", "value": "value file"}
_COUNTS = ("score", "moves", "decisions", "rollouts", "fallbacks", "deviations")


def _variant_limits(key: str, variants: Dict[str, object]):
    """(max score, most moves a game can last) of the variant in a log key, or what is
    wrong with the key; cached in `variants` (a log holds few keys)."""
    if key not in variants:
        try:
            config = HanabiConfig(**json.loads(key)[1])
            variants[key] = (config.colors * config.ranks, config.max_game_length)
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as err:
            variants[key] = f"its 'key' names no game variant ({str(err)[:100]})"
    return variants[key]


def _check_entry(entry, variants: Dict[str, object]) -> str:
    """'' if `entry` (a decoded log line) is a game that its variant can produce, else
    what is wrong with it: every field of the right type, the score in [0, max score],
    the moves at least the score and at most the variant's longest game, decisions at
    most the moves, fallbacks and deviations at most the decisions."""
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    if not isinstance(entry.get("key"), str):
        return "no 'key' string"
    game = entry.get("game")
    if type(game) is not int or not 0 <= game < MAX_GAMES:
        return f"no 'game' index in [0, {MAX_GAMES})"
    result = entry.get("result")
    if not isinstance(result, dict):
        return "no 'result' object"
    missing = [k for k in ("game", "seconds") + _COUNTS if k not in result]
    if missing:
        return f"'result' lacks {', '.join(missing)}"
    wrong = [k for k in ("game",) + _COUNTS if type(result[k]) is not int or result[k] < 0]
    if wrong:
        return f"'result' {', '.join(f'{k}={result[k]!r:.40}' for k in wrong)}: not a count"
    seconds = result["seconds"]
    if type(seconds) not in (int, float) or not 0 <= seconds < float("inf"):
        return f"'result' seconds={seconds!r:.40}: not a finite time >= 0"
    if result["game"] != game:
        return f"'result' is of game {result['game']} but the line says game {game}"
    if not isinstance(entry.get("made_with", {}), dict):
        return "'made_with' is not an object"
    if not isinstance(result.get("machine", ""), str) or len(result.get("machine", "")) > \
            MACHINE_CHARS:
        return f"'result' machine={result['machine']!r:.40}: not a machine's name"
    if result.get("depth") is not None and type(result["depth"]) is not int:
        return f"'result' depth={result['depth']!r:.40}: not an integer"
    limits = _variant_limits(entry["key"], variants)
    if isinstance(limits, str):
        return limits
    max_score, most_moves = limits
    r = result
    if r["score"] > max_score:
        return f"score {r['score']} is not in [0, {max_score}] (this variant's scores)"
    if not max(1, r["score"]) <= r["moves"] <= most_moves:
        return (f"{r['moves']} moves cannot give score {r['score']} in this variant "
                f"(a game lasts 1..{most_moves} moves, at least one per point)")
    if r["decisions"] > r["moves"]:
        return f"{r['decisions']} search decisions in a game of {r['moves']} moves"
    if max(r["fallbacks"], r["deviations"]) > r["decisions"]:
        return (f"{r['fallbacks']} fallbacks and {r['deviations']} deviations out of "
                f"{r['decisions']} decisions")
    return ""


def _read_entries(f, path: str, repair: bool) -> List[dict]:
    """The games of the open log `f` (binary, at its start); see `read_log`."""
    entries: List[dict] = []
    variants: Dict[str, object] = {}
    for number, entry in json_lines(f, path, "game log", "a logged game", repair):
        problem = _check_entry(entry, variants)
        if problem:
            raise ValueError(f"{path}, line {number}: not a game this program can have "
                             f"played ({problem}); remove the line (its game is then played "
                             f"again) or start a new log")
        entries.append(entry)
    return entries


def read_log(path: Optional[str], repair: bool = False) -> List[dict]:
    """The games logged in the JSONL file `path` by `collect` ([] if there is none),
    each checked against its game variant (`_check_entry`): a line with a result that
    cannot be true (a score above the variant's maximum, more moves than a game lasts, a
    field of the wrong type) is a ValueError naming the file and line.

    The log must be a regular file (a FIFO or a device is refused before it is read),
    and is read a line at a time, no line longer than `files.MAX_LINE_BYTES`. A LAST
    line that is not JSON (a run killed while writing it) is ignored with a warning
    naming the file and line; its game is simply played again. With `repair` the file is
    also cut after its last complete line (and a missing final newline added) so that
    lines appended afterwards stay valid. A broken line before the last is a ValueError
    naming the file and line: that is not an interrupted run, and guessing could lose
    games."""
    if not path or not os.path.lexists(path):
        return []
    try:
        fd = open_regular(path, os.O_RDWR if repair else os.O_RDONLY, "game log")
    except OSError as err:
        raise ValueError(f"game log {path!r}: cannot open it ({err.strerror})") from None
    with os.fdopen(fd, "r+b" if repair else "rb", buffering=0) as f:
        return _read_entries(f, path, repair)


def log_contents(path: str, specs: Sequence[MethodSpec] = (),
                 config_kwargs: Optional[dict] = None, seed: Optional[int] = None) -> List[str]:
    """What the log at `path` holds, one line per method, run seed and variant: "METHOD:
    N games (FIRST..LAST), seed S[, variant or settings that differ from the ones asked]"
    (to say why a report finds no games)."""
    groups: Dict[str, List[int]] = {}
    methods: Dict[str, str] = {}
    canonical: Dict[str, str] = {}
    if config_kwargs is not None:
        config_kwargs = dataclasses.asdict(HanabiConfig(**config_kwargs))
    folder = _log_folder(path)
    for entry in read_log(path):
        key = _canonical_key(entry["key"], canonical, folder)
        groups.setdefault(key, []).append(entry["game"])
        methods[key] = entry.get("method", "?")
    # keyed by method; looked up with whatever a log line names
    asked: Dict[Any, dict] = {spec.method: _in_folder(spec.to_dict(), folder) for spec in specs}
    lines = []
    for key, games in groups.items():
        try:
            spec, config, run_seed = json.loads(key)
        except (ValueError, TypeError):
            spec, config, run_seed = {}, {}, "?"
        notes = [f"seed {run_seed}" + (" (asked: {})".format(seed)
                                       if seed is not None and run_seed != seed else "")]
        if config_kwargs is not None and isinstance(config, dict) and config != config_kwargs:
            notes.append("variant " + ", ".join(f"{k}={v}" for k, v in sorted(config.items())
                                                  if config_kwargs.get(k) != v))
        mine = asked.get(spec.get("method")) if isinstance(spec, dict) else None
        if mine is not None:
            other = [f"{k}={spec[k]!r}" for k in sorted(mine) if k in spec and spec[k] != mine[k]
                     and not (isinstance(mine[k], tuple) and list(mine[k]) == spec[k])]
            if other:
                notes.append("settings " + ", ".join(other))
        lines.append(f"{methods[key]}: {len(games)} games ({min(games)}..{max(games)}), "
                     + ", ".join(notes))
    return lines


def check_log_path(path: str, must_exist: bool = False, option: str = "game log") -> None:
    """ValueError (naming `option`) unless `path` can be a game log: a regular file, or
    (unless `must_exist`) nothing yet in an existing folder. Checked from `os.stat`
    alone (`lbs_pz.files`): a FIFO or a device is never opened."""
    if must_exist:
        check_input_path(path, option, "game log: nothing to report")
    else:
        check_output_path(path, option)


def _made_with_of(line: dict, spec: MethodSpec) -> Optional[dict]:
    """A log line's `made_with` (None: the line has none), its recommended settings cut
    to those that apply to the spec's method (`recommended_for`), as `made_with` writes
    them now: older lines hold the settings of every method of the blueprint."""
    if "made_with" not in line:
        return None
    then = dict(line["made_with"])
    if isinstance(then.get("recommended"), dict):
        then["recommended"] = recommended_for(then["recommended"], spec.method)
    return then


def _check_collect(specs: Sequence[MethodSpec], config_kwargs: dict, games: int, seed: int,
                   backend: str, workers: Optional[int], first_game: int,
                   jsonl: Optional[str], play: bool):
    """`collect`'s arguments checked, a bad one a ValueError naming it; returns (seed,
    games, first_game, workers) as ints (workers None stays None)."""
    seed = check_run_seed(seed)
    as_choice(backend, "backend", BACKENDS)
    games = as_int(games, "games", lo=1, error=ValueError)
    first_game = as_int(first_game, "first_game", lo=0, error=ValueError)
    if first_game + games > MAX_GAMES:
        raise ValueError(f"games {first_game} .. {first_game + games - 1}: a run has games "
                         f"0 .. {MAX_GAMES - 1}")
    if workers is not None:
        workers = as_int(workers, "workers", lo=1, error=ValueError)
    HanabiConfig(**config_kwargs)           # a bad variant fails here, not in a worker
    seen = [spec.label() for spec in specs]
    if len(set(seen)) < len(seen):
        twice = sorted({label for label in seen if seen.count(label) > 1})
        raise ValueError(f"method {', '.join(map(repr, twice))} given more than once: its "
                         f"games would count twice as independent games")
    if jsonl:
        check_log_path(jsonl, must_exist=not play)
    elif not play:
        raise ValueError("play=False reports the games of a log: pass jsonl=PATH")
    return seed, games, first_game, workers


class _Collection:
    """The games of one `collect` call: the results gathered per method label (`out`),
    and what the log `jsonl` holds of them: the (spec, game) pairs done, the stale lines
    (spec, game, the `made_with` fields that changed since), the untimed results
    ((spec, game) -> its logged result without a machine, with `timed`) and, once played
    again, the games whose new score differs from the untimed one."""

    def __init__(self, specs: Sequence[MethodSpec], config_kwargs: dict, seed: int,
                 wanted: range, jsonl: Optional[str], timed: bool):
        self.specs, self.config_kwargs, self.seed, self.wanted = specs, config_kwargs, seed, wanted
        self.jsonl, self.timed = jsonl, timed
        self.labels = {spec: spec.label() for spec in specs}
        self.out: Dict[str, List[dict]] = {spec.label(): [] for spec in specs}
        self.folder = _log_folder(jsonl)
        self.keys = {_jsonl_key(spec, config_kwargs, seed, self.folder): spec for spec in specs}
        self.done: Set[Tuple[MethodSpec, int]] = set()
        self.stale: Set[Tuple[MethodSpec, int, Tuple[str, ...]]] = set()
        self.untimed: Dict[tuple, dict] = {}          # (spec, game) -> its result, no machine
        self.made: Dict[MethodSpec, dict] = {}        # made_with, as its JSON reads back
        self.changed_scores: Dict[MethodSpec, List[int]] = {}

    def made_for(self, spec: MethodSpec) -> dict:
        """The spec's `made_with` now, as its JSON reads back (what a log line holds)."""
        if spec not in self.made:
            self.made[spec] = json.loads(json.dumps(made_with(
                spec, HanabiConfig(**self.config_kwargs))))
        return self.made[spec]

    def sort_logged(self, entries: List[dict]) -> None:
        """Each line of the log (`entries`, in order) of a spec asked and a game wanted, a
        game's first such line only: stale if made with other files than the spec
        resolves to now, untimed if `timed` and it has no machine, else done (its result
        reused)."""
        canonical: Dict[str, str] = {}
        for line in entries:
            spec = self.keys.get(_canonical_key(line["key"], canonical, self.folder))
            game = line["game"]
            if spec is None or game not in self.wanted or (spec, game) in self.done:
                continue
            # a line without "made_with" is from a log written before it was recorded
            then = _made_with_of(line, spec)
            if then is not None and then != self.made_for(spec):
                now = self.made_for(spec)
                self.stale.add((spec, game, tuple(sorted(
                    k for k in set(now) | set(then) if now.get(k) != then.get(k)))))
                continue
            if self.timed and "machine" not in line["result"]:
                self.untimed.setdefault((spec, game), line["result"])
                continue
            self.done.add((spec, game))
            self.out[self.labels[spec]].append(line["result"])

    def reuse_untimed(self) -> None:
        """Read-only: the untimed games count as logged (no timed line replaces them)."""
        for (spec, game), result in self.untimed.items():
            if (spec, game) not in self.done:
                self.done.add((spec, game))
                self.out[self.labels[spec]].append(result)

    def warn_stale(self, play: bool) -> None:
        """One warning per spec whose stale games are not otherwise done: how many, and
        which of its files or settings changed (played again, or read-only left out)."""
        for spec in self.specs:
            replaced = {g for s, g, _ in self.stale if s == spec and (s, g) not in self.done}
            if replaced:
                changed = sorted({MADE_WITH_NAMES.get(k, k) for s, g, fields in self.stale
                                  if s == spec and g in replaced for k in fields})
                variant = "".join(f", {k}={v}" for k, v in sorted(self.config_kwargs.items()))
                warnings.warn(f"{self.jsonl}: {len(replaced)} games of {self.labels[spec]} on "
                              f"{spec.blueprint!r}{variant} (seed {self.seed}) were played "
                              f"before its {' / '.join(changed)} changed (a file edited, a "
                              f"model shipped or a default changed since): "
                              + ("played again" if play else "left out"), stacklevel=3)

    def tasks(self) -> Iterator[Tuple[MethodSpec, dict, int, int]]:
        """The games still to play, (spec, config_kwargs, game, seed), generated as the
        backend asks for them: memory does not grow with the number of games."""
        return ((spec, self.config_kwargs, g, self.seed) for spec in self.specs
                for g in self.wanted if (spec, g) not in self.done)

    def record(self, result: dict, log) -> None:
        """A game played: its result gathered, a new score of an untimed game noted, and
        (with the open `log`) its line appended, unbuffered, whole lines only."""
        spec = result.pop("spec")
        self.out[self.labels[spec]].append(result)
        before = self.untimed.get((spec, result["game"]))
        if before is not None and before["score"] != result["score"]:
            self.changed_scores.setdefault(spec, []).append(result["game"])
        if log is not None:     # unbuffered, whole lines only: nothing to flush
            assert self.jsonl is not None           # a log is open: it has a path
            line = json.dumps({"key": _jsonl_key(spec, self.config_kwargs, self.seed,
                                                 self.folder),
                               "method": self.labels[spec], "game": result["game"],
                               "made_with": self.made_for(spec),
                               "result": result}) + "\n"
            with output_errors(self.jsonl, "game log", "the games logged before "
                               "are kept: run again to play the others"):
                append_line(log, line.encode("utf-8"))

    def warn_changed_scores(self) -> None:
        """One warning per spec whose games, played again to time them, scored otherwise
        than logged."""
        for spec, changed in self.changed_scores.items():
            warnings.warn(f"{self.jsonl}: {len(changed)} games of {self.labels[spec]} played "
                          f"again to time them scored otherwise than logged (games "
                          f"{sorted(changed)[:10]}): their play is not reproducible; the new "
                          f"games count", stacklevel=3)


def _play(collection: _Collection, tasks, todo: int, backend: str, workers: Optional[int],
          address: Optional[str], show_progress: bool, log) -> None:
    """Play `tasks` (the collection's missing games, or none) on `backend` (a progress bar
    of `todo` games), each recorded as it ends (`_Collection.record`); the backend is
    stopped when the loop ends, however it ends."""
    stream = BACKENDS[backend](tasks, workers, address)
    try:
        with tqdm(total=todo, desc="compare", unit="game", disable=not show_progress) as bar:
            for result in stream:
                collection.record(result, log)
                bar.update(1)
    finally:
        stream.close()              # stops the backend now if the loop did not finish


def collect(specs: Sequence[MethodSpec], config_kwargs: dict, games: int, seed: int = 0,
            backend: str = "process", workers: Optional[int] = None,
            address: Optional[str] = None, show_progress: bool = True,
            first_game: int = 0, jsonl: Optional[str] = None,
            play: bool = True, timed: bool = False) -> Dict[str, List[dict]]:
    """Every spec on games first_game .. first_game + games - 1 of the evaluation stream
    of run `seed` (0 <= seed < 2**31): {method label: per-game results, in game order}.

    jsonl: a file to which every finished game is appended as one JSON line; games of the
    same spec, variant and seed already in it are not played again, so an interrupted run
    resumes where it stopped and long runs can be split across calls or machines.
    play: False -> only read the games already in `jsonl` (a report of a partial run).
    timed: True -> a logged game with no `machine` (a log written before games recorded
    the machine that timed them) is played again, so that every time returned was taken
    on a named machine; its new line takes its place, and a new score that differs from
    the logged one is warned about (play is deterministic given the deal). Read-only, such
    a game is returned as logged while no timed line replaces it.

    Raises ValueError for bad arguments, a spec given twice (its games would count twice)
    or a log with a broken line before its last (`read_log`; a broken last line, left
    by a killed run, is dropped with a warning and its game played again). A
    KeyboardInterrupt stops the backend at once (see the module's docstring)."""
    seed, games, first_game, workers = _check_collect(
        specs, config_kwargs, games, seed, backend, workers, first_game, jsonl, play)
    collection = _Collection(specs, config_kwargs, seed,
                             range(first_game, first_game + games), jsonl, timed)
    log = open_locked(jsonl, "game log") if jsonl and play else None     # locked until the run ends
    try:
        if log is not None and jsonl:               # open (and locked) to be repaired
            entries = _read_entries(log, jsonl, repair=True)
        else:
            entries = read_log(jsonl)
        collection.sort_logged(entries)
        del entries
        if not play:
            collection.reuse_untimed()
        collection.warn_stale(play)
        tasks = collection.tasks() if play else iter(())
        todo = len(specs) * games - len(collection.done) if play else 0
        _play(collection, tasks, todo, backend, workers, address, show_progress, log)
    finally:
        if log is not None:
            log.close()
    collection.warn_changed_scores()
    for results in collection.out.values():
        results.sort(key=lambda r: r["game"])
    return collection.out
