"""Engine throughput: lbs_pz's Cython engine against the Hanabi Learning Environment (HLE).

Four figures, measured side by side in one process pinned to one core, each against
its HLE counterpart:

1. Batched random-legal self-play in C: `HanabiBatch.reset` + `play_random` (moves/s),
   vs HLE's own C++ core playing random legal moves. For that we build a small driver of
   our own (benchmarks/hle_random_play.cc) against HLE 0.0.4's `hanabi_lib/*.cc`,
   fetched with `pip download` into a cache directory and compiled with g++ -O3 once.
2. Single-state Python API: a loop that per step calls `legal_mask()`, `encode()` (the
   current player's canonical vector) and `apply()` of a uniformly random legal move
   (steps/s), vs HLE's `rl_env.HanabiEnv.step` with random `legal_moves_as_int`, over
   the same number of games.
3. `HanabiState.clone()` (clones/s), vs HLE's `HanabiState.copy()`.
4. Batched canonical encoding: `HanabiBatch.encode` of mid-game states into a
   preallocated (N, 658) float32 array (vectors/s), vs HLE's
   `ObservationEncoder.encode` of one precomputed observation at a time.

Every measurement warms up first, then times `repeats` runs with `time.perf_counter`
(garbage collector off, as `timeit` does) and reports the median rate. `run()` returns
everything as a JSON-ready dict; `format_table()` renders the markdown table.
"""

from __future__ import annotations

from _common import THREAD_ENV_VARS, limit_threads, pin_to_one_core, timed_rates

limit_threads()   # one OpenMP/BLAS thread: before numpy is first imported

import argparse
import hashlib
import itertools
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from lbs_pz.host import machine


HLE_PACKAGE = "hanabi-learning-environment"
HLE_VERSION = "0.0.4"
CXX_FLAGS = ("-O3", "-std=c++11", "-DNDEBUG")

# Figure keys, in table order, with their targets.
FIGURES = ("batched_random", "single_state", "clone", "batched_encode")
TARGETS = {
    "batched_random": {"kind": "rate", "value": 2_000_000},
    "single_state": {"kind": "ratio", "value": 30.0},
    "clone": {"kind": "rate", "value": 1_000_000},
    "batched_encode": {"kind": "rate", "value": 500_000},
}

# Workload sizes: the default run and --quick.
SIZES = {
    "full": dict(batch_size=4096, batch_rounds=16, cpp_games=40_000, games=1000,
                 clone_n=200_000, hle_copy_n=30_000, encode_batch=4096, encode_rounds=25,
                 hle_encode_n=1000, repeats=5, single_repeats=5),
    "quick": dict(batch_size=1024, batch_rounds=8, cpp_games=5000, games=100,
                  clone_n=50_000, hle_copy_n=5000, encode_batch=1024, encode_rounds=10,
                  hle_encode_n=200, repeats=3, single_repeats=3),
}

LogFn = Callable[[str], None]


class HleUnavailable(RuntimeError):
    """HLE (its Python package or its C++ core) cannot be measured here; str() says why."""


def _log_stderr(msg: str) -> None:
    print(f"[engine_throughput] {msg}", file=sys.stderr, flush=True)


def _quiet(msg: str) -> None:
    pass


# --- environment --------------------------------------------------------------------------

def default_cache_dir() -> Path:
    """Where HLE's sources and the compiled driver are cached: $LBS_PZ_CACHE_DIR, else
    $XDG_CACHE_HOME/lbs_pz (default ~/.cache/lbs_pz), in a subfolder hle-<version>."""
    root = os.environ.get("LBS_PZ_CACHE_DIR")
    if root is None:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lbs_pz"
    return Path(root) / f"hle-{HLE_VERSION}"


def default_driver_source() -> Path:
    """The C++ driver beside this script."""
    return Path(__file__).resolve().with_name("hle_random_play.cc")


def _package_version(name: str) -> Optional[str]:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


# --- timing -------------------------------------------------------------------------------

def _summary(rates: list, unit: str, what: str, **extra) -> dict:
    return {"rate": statistics.median(rates), "unit": unit, "what": what,
            "samples": [round(r, 1) for r in rates], **extra}


def _config(config):
    from lbs_pz.engine import HanabiConfig
    return HanabiConfig(players=2) if config is None else config


# --- lbs_pz -------------------------------------------------------------------------------

def _midgame_states(config, n: int, seed: int) -> list:
    """n HanabiStates, each halfway through a uniformly random legal game."""
    from lbs_pz.engine import HanabiState
    rng = random.Random(seed)
    states = []
    for i in range(n):
        state = HanabiState(config, seed=seed + i)
        probe, moves = state.clone(), []
        while not probe.is_terminal:
            legal = probe.legal_moves()
            move = legal[int(rng.random() * len(legal))]
            probe.apply(move)
            moves.append(move)
        for move in moves[:len(moves) // 2]:
            state.apply(move)
        states.append(state)
    return states


def measure_batched_random(config=None, batch_size: int = 4096, rounds: int = 16,
                           repeats: int = 5, seed: int = 0) -> dict:
    """Random-legal self-play of whole games in C: per run, `rounds` times
    `HanabiBatch.reset(new seed)` + `play_random()` on `batch_size` games. Dealing is
    timed too, as in the HLE driver. Rate: moves (player moves, not deals) per second."""
    from lbs_pz.engine import HanabiBatch
    config = _config(config)
    batch = HanabiBatch(config, batch_size)
    seeds = itertools.count(seed)
    last = {}

    def once():
        total = 0
        for _ in range(rounds):
            batch.reset(next(seeds))
            total += batch.play_random()
        last["moves"] = total
        return total

    rates = timed_rates(once, repeats)
    games = rounds * batch_size
    return _summary(rates, "moves/s", "HanabiBatch.reset + play_random",
                    games_per_run=games, moves_per_game=last["moves"] / games,
                    batch_size=batch_size)


def measure_single_state(config=None, games: int = 1000, repeats: int = 3,
                         seed: int = 0) -> dict:
    """The single-state Python API in a loop: per step `legal_mask()`, `encode()` of the
    current player and `apply()` of a uniformly random legal move (drawn from the mask),
    over `games` whole games (creating each state is timed). Rate: steps per second."""
    from lbs_pz.engine import HanabiState
    config = _config(config)
    last = {}

    def play(num_games):
        rng = random.Random(seed)
        steps = 0
        for g in range(num_games):
            state = HanabiState(config, seed=seed + g)
            while not state.is_terminal:
                mask = state.legal_mask()
                state.encode()
                legal = mask.nonzero()[0].tolist()
                state.apply(legal[int(rng.random() * len(legal))])
                steps += 1
        last["steps"] = steps
        return steps

    rates = timed_rates(lambda: play(games), repeats, warmup=lambda: play(max(1, games // 5)))
    return _summary(rates, "steps/s", "legal_mask + encode + apply (random legal)",
                    games_per_run=games, steps_per_game=last["steps"] / games)


def measure_clone(config=None, n: int = 200_000, repeats: int = 5, seed: int = 0) -> dict:
    """`HanabiState.clone()` of a mid-game state, n times per run. Rate: clones/s."""
    config = _config(config)
    clone = _midgame_states(config, 1, seed)[0].clone

    def once():
        for _ in itertools.repeat(None, n):
            clone()
        return n

    return _summary(timed_rates(once, repeats), "clones/s", "HanabiState.clone()",
                    per_run=n)


def measure_batched_encode(config=None, batch_size: int = 4096, rounds: int = 25,
                           repeats: int = 5, seed: int = 0) -> dict:
    """`HanabiBatch.encode(out)` of `batch_size` mid-game states (each seen by its current
    player) into a preallocated (N, encoding_size) float32 array, `rounds` times per run.
    Rate: vectors per second."""
    import numpy as np
    from lbs_pz.engine import HanabiBatch
    config = _config(config)
    batch = HanabiBatch.from_states(_midgame_states(config, batch_size, seed))
    out = np.empty((batch_size, config.encoding_size), dtype=np.float32)

    def once():
        for _ in range(rounds):
            batch.encode(out)
        return rounds * batch_size

    return _summary(timed_rates(once, repeats), "vectors/s",
                    f"HanabiBatch.encode into ({batch_size}, {config.encoding_size}) float32",
                    per_run=rounds * batch_size)


# --- HLE, Python package ------------------------------------------------------------------

def _import_hle():
    try:
        from hanabi_learning_environment import pyhanabi, rl_env
    except Exception as exc:  # ImportError, or cffi failing to load libpyhanabi
        raise HleUnavailable(f"cannot import hanabi_learning_environment: {exc}") from exc
    if not pyhanabi.cdef_loaded() or not pyhanabi.lib_loaded():
        raise HleUnavailable("hanabi_learning_environment's libpyhanabi did not load")
    return pyhanabi, rl_env


def _hle_deal(pyhanabi, state) -> None:
    while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
        state.deal_random_card()


def _hle_midgame_states(config, n: int, seed: int) -> tuple:
    """(n pyhanabi states, each halfway through a uniformly random legal game; their game)."""
    pyhanabi, _ = _import_hle()
    game = pyhanabi.HanabiGame(config.hle_params(seed=seed))
    rng = random.Random(seed)
    states = []
    for _ in range(n):
        state = game.new_initial_state()
        _hle_deal(pyhanabi, state)
        snapshots = []
        while not state.is_terminal():
            snapshots.append(state.copy())
            legal = state.legal_moves()
            state.apply_move(legal[int(rng.random() * len(legal))])
            _hle_deal(pyhanabi, state)
        states.append(snapshots[len(snapshots) // 2])
    return states, game


def measure_hle_single_state(config=None, games: int = 1000, repeats: int = 3,
                             seed: int = 0) -> dict:
    """HLE's `rl_env.HanabiEnv` (the 'Hanabi-Full' configuration, seeded) stepping a
    uniformly random move of `legal_moves_as_int` of the current player, over `games`
    whole games (each `reset()` is timed). Rate: steps per second."""
    _, rl_env = _import_hle()
    config = _config(config)
    env = rl_env.HanabiEnv(config.hle_params(seed=seed))
    last = {}

    def play(num_games):
        rng = random.Random(seed)
        steps = 0
        for _ in range(num_games):
            obs = env.reset()
            done = False
            while not done:
                legal = obs["player_observations"][obs["current_player"]]["legal_moves_as_int"]
                obs, _, done, _ = env.step(legal[int(rng.random() * len(legal))])
                steps += 1
        last["steps"] = steps
        return steps

    rates = timed_rates(lambda: play(games), repeats, warmup=lambda: play(max(1, games // 20)))
    return _summary(rates, "steps/s", "rl_env.HanabiEnv.step (random legal_moves_as_int)",
                    games_per_run=games, steps_per_game=last["steps"] / games)


def measure_hle_copy(config=None, n: int = 30_000, repeats: int = 5, seed: int = 0) -> dict:
    """HLE's `pyhanabi.HanabiState.copy()` of a mid-game state. Rate: copies/s."""
    config = _config(config)
    states, _ = _hle_midgame_states(config, 1, seed)
    copy = states[0].copy

    def once():
        for _ in itertools.repeat(None, n):
            copy()
        return n

    return _summary(timed_rates(once, repeats), "copies/s", "pyhanabi HanabiState.copy()",
                    per_run=n)


def measure_hle_encode(config=None, n: int = 1000, repeats: int = 5, seed: int = 0) -> dict:
    """HLE's canonical `ObservationEncoder.encode` of n mid-game observations (current
    player's, built beforehand and not timed), one call per vector. Rate: vectors/s."""
    pyhanabi, _ = _import_hle()
    config = _config(config)
    states, game = _hle_midgame_states(config, n, seed)
    encoder = pyhanabi.ObservationEncoder(game, pyhanabi.ObservationEncoderType.CANONICAL)
    observations = [s.observation(s.cur_player()) for s in states]
    size = encoder.shape()[0]
    if size != config.encoding_size:
        raise HleUnavailable(f"HLE encodes {size} values, lbs_pz {config.encoding_size}")
    encode = encoder.encode

    def once():
        for obs in observations:
            encode(obs)
        return n

    return _summary(timed_rates(once, repeats), "vectors/s",
                    "ObservationEncoder.encode (observation prebuilt)", per_run=n)


# --- HLE, C++ core ------------------------------------------------------------------------

def _safe_extract(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        try:
            tar.extractall(dest, filter="data")
        except TypeError:  # Python without extraction filters
            root = dest.resolve()
            for member in tar.getmembers():
                target = (dest / member.name).resolve()
                if root not in target.parents and target != root:
                    raise HleUnavailable(f"unsafe path {member.name!r} in {archive.name}")
                if member.issym() or member.islnk() or member.isdev():
                    raise HleUnavailable(f"unexpected link/device {member.name!r} in {archive.name}")
            tar.extractall(dest)


def _find_hanabi_lib(root: Path) -> Optional[Path]:
    for candidate in (root, root / "hanabi_lib",
                      root / "hanabi_learning_environment" / "hanabi_lib"):
        if (candidate / "hanabi_state.cc").is_file():
            return candidate
    for found in sorted(root.rglob("hanabi_state.cc")):
        return found.parent
    return None


def _pip_download_sdist(dest: Path, log: LogFn, timeout: float) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", HLE_PACKAGE,
           "--disable-pip-version-check", "-d", str(dest), f"{HLE_PACKAGE}=={HLE_VERSION}"]
    log(f"downloading HLE {HLE_VERSION} sources: {' '.join(cmd[2:])}")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise HleUnavailable(f"pip download timed out after {timeout:.0f} s") from None
    archives = sorted(dest.glob("hanabi_learning_environment-*.tar.gz"))
    if proc.returncode != 0 or not archives:
        lines = [l for l in (proc.stderr or proc.stdout or "").splitlines() if l.strip()]
        reason = lines[-1].strip() if lines else f"exit status {proc.returncode}"
        raise HleUnavailable(f"pip download failed: {reason}")
    return archives[-1]


def fetch_hle_sources(cache_dir: Optional[Path] = None, hle_src: Optional[Path] = None,
                      log: LogFn = _quiet, download_timeout: float = 150.0) -> Path:
    """The directory holding HLE's hanabi_lib/*.cc and headers.

    `hle_src` may be an HLE source tree (any folder containing hanabi_lib) or an sdist
    .tar.gz; otherwise the sdist is fetched once with `pip download` into
    `cache_dir`/download and extracted into `cache_dir`/src."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if hle_src is not None:
        hle_src = Path(hle_src).expanduser()
        if hle_src.is_dir():
            lib = _find_hanabi_lib(hle_src)
            if lib is None:
                raise HleUnavailable(f"no hanabi_lib/hanabi_state.cc under {hle_src}")
            return lib
        if not hle_src.is_file():
            raise HleUnavailable(f"--hle-src {hle_src} does not exist")
        archive = hle_src
    else:
        src = cache / "src"
        lib = _find_hanabi_lib(src) if src.is_dir() else None
        if lib is not None:
            return lib
        existing = sorted((cache / "download").glob("hanabi_learning_environment-*.tar.gz"))
        archive = existing[-1] if existing else _pip_download_sdist(cache / "download", log,
                                                                    download_timeout)
    src = cache / "src"
    src.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="src-", dir=src.parent))
    try:
        _safe_extract(archive, tmp)
        if _find_hanabi_lib(tmp) is None:
            raise HleUnavailable(f"{archive.name} holds no hanabi_lib/hanabi_state.cc")
        shutil.rmtree(src, ignore_errors=True)
        os.replace(tmp, src)
    except (tarfile.TarError, OSError) as exc:
        raise HleUnavailable(f"cannot extract {archive}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _find_hanabi_lib(src)


def build_hle_driver(cache_dir: Optional[Path] = None, hle_src: Optional[Path] = None,
                     driver_src: Optional[Path] = None, log: LogFn = _quiet,
                     compile_timeout: float = 300.0) -> tuple:
    """Compile benchmarks/hle_random_play.cc with HLE's hanabi_lib/*.cc (g++ -O3
    -std=c++11 -DNDEBUG), caching the binary under `cache_dir`/bin keyed by the driver's
    content and the flags. Returns (binary path, "cached" or "built")."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    driver = Path(driver_src) if driver_src is not None else default_driver_source()
    if not driver.is_file():
        raise HleUnavailable(f"driver source {driver} not found")
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise HleUnavailable("no C++ compiler (g++) on PATH")
    key = hashlib.sha256(driver.read_bytes() + " ".join((cxx,) + CXX_FLAGS).encode()
                         + HLE_VERSION.encode()).hexdigest()[:12]
    binary = cache / "bin" / f"hle_random_play-{key}"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary, "cached"
    lib = fetch_hle_sources(cache, hle_src, log)
    sources = sorted(str(p) for p in lib.glob("*.cc"))
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name(binary.name + f".tmp{os.getpid()}")
    cmd = [cxx, *CXX_FLAGS, "-I", str(lib), *sources, str(driver), "-o", str(tmp)]
    log(f"compiling HLE's C++ core + driver ({len(sources)} files) with {Path(cxx).name} "
        f"{' '.join(CXX_FLAGS)}")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=compile_timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        raise HleUnavailable(f"compile timed out after {compile_timeout:.0f} s") from None
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        errors = [l for l in proc.stderr.splitlines() if "error" in l] or proc.stderr.splitlines()
        raise HleUnavailable(f"compile failed: {errors[0].strip() if errors else proc.returncode}")
    os.replace(tmp, binary)
    return binary, "built"


def measure_hle_cpp_random(binary: Path, games: int = 40_000, repeats: int = 5,
                           seed: int = 12345, timeout: float = 300.0) -> dict:
    """Run the compiled HLE driver: `games` random-legal games per timed repeat (after
    its own warm-up), timed inside the driver. Rate: player moves per second."""
    try:
        proc = subprocess.run([str(binary), str(games), str(repeats), str(seed)],
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise HleUnavailable(f"driver timed out after {timeout:.0f} s") from None
    except OSError as exc:
        raise HleUnavailable(f"cannot run driver: {exc}") from exc
    rows = re.findall(r"moves=(\d+) games=(\d+) seconds=([\d.]+) moves_per_s=([\d.]+)",
                      proc.stdout)
    if proc.returncode != 0 or len(rows) != repeats:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        raise HleUnavailable(f"driver failed (status {proc.returncode})"
                             + (f": {tail[-1]}" if tail else ""))
    rates = [float(r[3]) for r in rows]
    moves = int(rows[-1][0])
    return _summary(rates, "moves/s", "HLE C++ HanabiState: ApplyRandomChance + random "
                    "LegalMoves", games_per_run=games, moves_per_game=moves / games)


# --- the whole benchmark --------------------------------------------------------------------

def _attempt(fn: Callable[[], dict], log: LogFn, label: str) -> dict:
    log(f"measuring {label} ...")
    try:
        result = fn()
    except HleUnavailable as exc:
        log(f"  {label}: unavailable ({exc})")
        return {"error": str(exc)}
    log(f"  {label}: {result['rate']:,.0f} {result['unit']}")
    return result


def _figure(key: str, ours: dict, hle: dict) -> dict:
    target = TARGETS[key]
    ratio = ours["rate"] / hle["rate"] if "rate" in hle else None
    if target["kind"] == "rate":
        passed = ours["rate"] >= target["value"]
    else:
        passed = None if ratio is None else ratio >= target["value"]
    return {"lbs_pz": ours, "hle": hle, "ratio": ratio, "target": target, "passed": passed}


def run(games: Optional[int] = None, quick: bool = False, repeats: Optional[int] = None,
        hle_cpp: bool = True, hle_src: Optional[Path] = None, cache_dir: Optional[Path] = None,
        driver_src: Optional[Path] = None, seed: int = 0, core: Optional[int] = None,
        pin: bool = True, log: Optional[LogFn] = _log_stderr) -> dict:
    """Measure the four figures (see the module docstring) and return a JSON-ready dict:
    {"meta": {...}, "figures": {key: {"lbs_pz", "hle", "ratio", "target", "passed"}}}.

    games: games per run of the single-state comparison (both sides); quick: small
    workloads; repeats: timed runs per measurement (median reported); hle_cpp=False
    skips building/running HLE's C++ core; hle_src: a local HLE source tree or sdist
    instead of `pip download`; cache_dir: default ~/.cache/lbs_pz/hle-0.0.4."""
    log = log or _quiet
    t_start = time.perf_counter()
    sizes = dict(SIZES["quick" if quick else "full"])
    if games is not None:
        if games < 1:
            raise ValueError(f"games must be >= 1, got {games}")
        sizes["games"] = games
    if repeats is not None:
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {repeats}")
        sizes["repeats"] = sizes["single_repeats"] = repeats
    limit_threads()
    config = _config(None)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()

    # Build HLE's C++ driver before pinning (the compiler may use every core).
    driver_status, binary, cpp_error = "skipped", None, "skipped (--no-hle-cpp)"
    if hle_cpp:
        log(f"HLE C++ driver: cache {cache}")
        t0 = time.perf_counter()
        try:
            binary, driver_status = build_hle_driver(cache, hle_src, driver_src, log)
            cpp_error = None
            log(f"  driver {driver_status} in {time.perf_counter() - t0:.1f} s: {binary}")
        except HleUnavailable as exc:
            driver_status, cpp_error = "unavailable", str(exc)
            log(f"  HLE C++ driver unavailable: {exc}")
    pinned = pin_to_one_core(core) if pin else None
    log(f"pinned to core {pinned}" if pinned is not None else "not pinned to a core")

    r, s = sizes["repeats"], seed
    figures = {}

    ours = _attempt(lambda: measure_batched_random(
        config, sizes["batch_size"], sizes["batch_rounds"], r, s), log,
        "lbs_pz batched random play")
    if binary is not None:
        hle = _attempt(lambda: measure_hle_cpp_random(binary, sizes["cpp_games"], r, 12345 + s),
                       log, "HLE C++ random play")
    else:
        hle = {"error": cpp_error}
    figures["batched_random"] = _figure("batched_random", ours, hle)

    ours = _attempt(lambda: measure_single_state(config, sizes["games"],
                                                 sizes["single_repeats"], s), log,
                    f"lbs_pz single-state loop ({sizes['games']} games)")
    hle = _attempt(lambda: measure_hle_single_state(config, sizes["games"],
                                                    sizes["single_repeats"], s), log,
                   f"HLE rl_env ({sizes['games']} games)")
    figures["single_state"] = _figure("single_state", ours, hle)

    ours = _attempt(lambda: measure_clone(config, sizes["clone_n"], r, s), log, "lbs_pz clone()")
    hle = _attempt(lambda: measure_hle_copy(config, sizes["hle_copy_n"], r, s), log,
                   "HLE state.copy()")
    figures["clone"] = _figure("clone", ours, hle)

    ours = _attempt(lambda: measure_batched_encode(
        config, sizes["encode_batch"], sizes["encode_rounds"], r, s), log,
        "lbs_pz batched encode")
    hle = _attempt(lambda: measure_hle_encode(config, sizes["hle_encode_n"], r, s), log,
                   "HLE ObservationEncoder.encode")
    figures["batched_encode"] = _figure("batched_encode", ours, hle)

    import numpy
    import lbs_pz
    meta = {
        "benchmark": "engine_throughput",
        "mode": "quick" if quick else "full",
        "sizes": sizes,
        "seed": seed,
        "config": {"players": config.players, "colors": config.colors, "ranks": config.ranks,
                   "hand_size": config.hand_size, "observation_type": config.observation_type,
                   "encoding_size": config.encoding_size},
        "pinned_core": pinned,
        "threads_env": {v: os.environ.get(v) for v in THREAD_ENV_VARS},
        "cpu": machine(),
        "logical_cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "lbs_pz": lbs_pz.__version__,
        "hle_package": _package_version(HLE_PACKAGE),
        "hle_cpp": {"version": HLE_VERSION, "status": driver_status,
                    "binary": str(binary) if binary else None, "error": cpp_error,
                    "flags": list(CXX_FLAGS)},
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    meta["wall_s"] = round(time.perf_counter() - t_start, 2)
    log(f"done in {meta['wall_s']:.1f} s")
    return {"meta": meta, "figures": figures}


# --- output -----------------------------------------------------------------------------

_ROW_LABELS = {
    "batched_random": ("Batched random-legal self-play (moves/s)",
                       "HanabiBatch.play_random", "C++ core, g++ -O3"),
    "single_state": ("Single-state Python loop (steps/s)",
                     "legal_mask+encode+apply", "rl_env.HanabiEnv.step"),
    "clone": ("Clone a state (clones/s)", "HanabiState.clone()", "HanabiState.copy()"),
    "batched_encode": ("Canonical encoding (vectors/s)",
                       "HanabiBatch.encode, preallocated", "ObservationEncoder.encode"),
}


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def _fmt_target(target: dict) -> str:
    if target["kind"] == "ratio":
        return f"ratio >= {target['value']:g}x"
    return f"lbs_pz >= {target['value']:,}"


def format_table(results: dict) -> str:
    """The markdown table (figure | lbs_pz | HLE | ratio | target | pass/fail) plus a few
    lines saying what was measured and how."""
    lines = ["| figure | lbs_pz | HLE | ratio | target | pass/fail |",
             "|---|---:|---:|---:|---|---|"]
    for key in FIGURES:
        fig = results["figures"][key]
        label, ours_what, hle_what = _ROW_LABELS[key]
        ours, hle = fig["lbs_pz"], fig["hle"]
        ours_cell = (f"{_fmt_rate(ours['rate'])} ({ours_what})" if "rate" in ours
                     else f"unavailable ({ours['error']})")
        if "rate" in hle:
            hle_cell = f"{_fmt_rate(hle['rate'])} ({hle_what})"
        elif hle["error"].startswith("skipped"):
            hle_cell = hle["error"]
        else:
            hle_cell = f"unavailable ({hle['error']})"
        ratio = f"{fig['ratio']:,.1f}x" if fig["ratio"] is not None else "n/a"
        verdict = {True: "PASS", False: "FAIL", None: "n/a"}[fig["passed"]]
        lines.append(f"| {label} | {ours_cell} | {hle_cell} | {ratio} | "
                     f"{_fmt_target(fig['target'])} | {verdict} |")
    meta = results["meta"]
    sizes = meta["sizes"]
    figs = results["figures"]
    notes = [
        "",
        f"Median of {sizes['repeats']} timed runs after a warm-up"
        + (f" ({sizes['single_repeats']} for the single-state loop)"
           if sizes["single_repeats"] != sizes["repeats"] else "")
        + ("; one process, not pinned" if meta["pinned_core"] is None
           else f"; one process pinned to core {meta['pinned_core']}")
        + f"; {meta['cpu']}; Python {meta['python']}, numpy "
        f"{meta['numpy']}, lbs_pz {meta['lbs_pz']}, hanabi-learning-environment "
        f"{meta['hle_package']}; 2-player standard game ({meta['config']['encoding_size']}-"
        f"value canonical encoding); {meta['mode']} run, {meta['wall_s']:.1f} s.",
    ]
    br = figs["batched_random"]
    if "rate" in br["lbs_pz"]:
        notes.append(f"- Random play: {sizes['batch_rounds']} x reset+play_random of "
                     f"{sizes['batch_size']} games per run "
                     f"({br['lbs_pz']['moves_per_game']:.1f} moves/game)"
                     + (f"; HLE C++: {sizes['cpp_games']:,} games per run "
                        f"({br['hle']['moves_per_game']:.1f} moves/game), driver "
                        f"{meta['hle_cpp']['status']}, {' '.join(meta['hle_cpp']['flags'])}"
                        if "rate" in br["hle"] else "") + ".")
    ss = figs["single_state"]
    if "rate" in ss["lbs_pz"]:
        notes.append(f"- Single-state: {sizes['games']} games per run on each side "
                     f"({ss['lbs_pz']['steps_per_game']:.1f} steps/game"
                     + (f"; HLE {ss['hle']['steps_per_game']:.1f}" if "rate" in ss["hle"] else "")
                     + "); HLE's step also builds every player's observation dict and vector.")
    notes.append(f"- Encoding: {sizes['encode_batch']} mid-game states x "
                 f"{sizes['encode_rounds']} per run; HLE: {sizes['hle_encode_n']} prebuilt "
                 f"mid-game observations, one encode() call each.")
    return "\n".join(lines + notes)


def write_json(results: dict, path) -> None:
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=2, default=str)
        f.write("\n")


# --- command line -----------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],  # the module docstring's first paragraph
        epilog="The default run takes about a minute (plus a one-time download and "
               "compile of HLE's C++ core, ~20 s); --quick takes a few seconds.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small workloads (smoke test; numbers are noisier)")
    parser.add_argument("--games", type=int, metavar="N", default=None,
                        help="games per timed run of the single-state comparison, on both "
                             "sides (default 1000, or 100 with --quick)")
    parser.add_argument("--repeats", type=int, metavar="R", default=None,
                        help="timed runs per measurement; the median is reported "
                             "(default 5; 3 with --quick)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write all numbers (medians, samples, settings) as JSON")
    parser.add_argument("--no-hle-cpp", action="store_true",
                        help="do not download/compile/run HLE's C++ core")
    parser.add_argument("--hle-src", metavar="PATH", default=None,
                        help="a local HLE source tree or sdist .tar.gz to compile instead "
                             "of downloading one")
    parser.add_argument("--cache-dir", metavar="DIR", default=None,
                        help=f"cache for HLE's sources and the driver binary (default "
                             f"{default_cache_dir()})")
    parser.add_argument("--core", type=int, default=None,
                        help="CPU core to pin to (default: the lowest allowed one)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one core")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(
        games=args.games, quick=args.quick, repeats=args.repeats,
        hle_cpp=not args.no_hle_cpp, hle_src=args.hle_src, cache_dir=args.cache_dir,
        seed=args.seed, core=args.core,
        pin=not args.no_pin)
    print(format_table(results))
    if args.json:
        write_json(results, args.json)
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
