"""Response times of the local web page (`lbs-pz serve`), measured against the real server.

Starts `lbs-pz serve` in a child process on a free port, then measures over HTTP:
  - page load: GET / and every file under lbs_pz/web/static (what a browser fetches),
  - each move's response in play mode (the human's POST .../move until the reply, which
    includes the partner's move) with the strong bot as partner and with the strong bot +
    LBS-16 at 256 worlds as partner. The human seat plays the strong bot's moves (chosen
    here from a local copy of the game: the server never sends them the cards),
  - each one-move `advance` in watch mode with LBS-16 (256 worlds) on both seats.
Prints a table of median and p90 per kind of request.

    python benchmarks/web_latency.py --quick        # ~1 minute
    python benchmarks/web_latency.py --moves 120    # the RESULTS.md figure
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATIC = os.path.join(ROOT, "lbs_pz", "web", "static")


def start_server(threads: int):
    """(process, base URL) of `lbs-pz serve --port 0` started here."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "lbs_pz.cli", "serve", "--port", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    deadline = time.monotonic() + 60
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        found = re.search(r"(http://\S+?)/?\s", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"the server did not start: {line!r}")


def wait_ready(client, url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if client.get(url + "/api/options").status_code == 200:
                return
        except Exception:       # not listening yet
            time.sleep(0.1)
    raise RuntimeError("the server does not answer /api/options")


def static_paths():
    out = []
    for folder, _, files in os.walk(STATIC):
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(folder, name), STATIC).replace(os.sep, "/")
            out.append("/static/" + rel)
    return out


def page_loads(client, url: str, n: int):
    paths = ["/"] + static_paths()
    times, size = [], 0
    for _ in range(n):
        start = time.perf_counter()
        size = 0
        for path in paths:
            r = client.get(url + path)
            r.raise_for_status()
            size += len(r.content)
        times.append(time.perf_counter() - start)
    return times, len(paths), size


def play_moves(client, url: str, partner: dict, moves: int, first_seed: int):
    """Seconds of each human move's response (the partner's reply included), and of
    each new game, over games first_seed, first_seed + 1, ... until `moves` moves."""
    from lbs_pz.agents import load_blueprint
    from lbs_pz.engine import HanabiConfig, HanabiState
    from lbs_pz.engine.seeds import EVAL, deal_seeds

    bot = load_blueprint("strong")
    move_times, create_times, seed = [], [], first_seed
    while len(move_times) < moves:
        start = time.perf_counter()
        r = client.post(url + "/api/games", json={
            "seed": seed, "mode": "play", "seats": [{"human": True}, partner]})
        r.raise_for_status()
        create_times.append(time.perf_counter() - start)
        gid, snap = r.json()["id"], r.json()["state"]
        local = HanabiState(HanabiConfig(), seed=int(deal_seeds(EVAL, 0, seed, 1)[0]))
        while not snap["terminal"] and len(move_times) < moves:
            for past in snap["history"][local.num_moves_played:]:
                local.apply(past["move"])
            move = bot.act(local)
            start = time.perf_counter()
            r = client.post(url + f"/api/games/{gid}/move",
                            json={"move": int(move), "turn": snap["moves_played"]})
            r.raise_for_status()
            move_times.append(time.perf_counter() - start)
            snap = r.json()
        seed += 1
    return move_times, create_times


def watch_steps(client, url: str, seat: dict, moves: int, first_seed: int):
    """Seconds of each `advance` by one move in watch mode where seat 0 (`seat`) moves."""
    times, seed = [], first_seed
    while len(times) < moves:
        r = client.post(url + "/api/games", json={"seed": seed, "seats": [seat, seat]})
        r.raise_for_status()
        gid, snap = r.json()["id"], r.json()["state"]
        while not snap["terminal"] and len(times) < moves:
            start = time.perf_counter()
            r = client.post(url + f"/api/games/{gid}/advance", json={"moves": 1})
            r.raise_for_status()
            times.append(time.perf_counter() - start)
            snap = r.json()
        seed += 1
    return times


def row(name: str, times, note: str = "") -> str:
    ms = np.asarray(times) * 1000
    return (f"| {name} | {len(ms)} | {np.median(ms):,.1f} | {np.percentile(ms, 90):,.1f} | "
            f"{ms.max():,.1f} | {note} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20 moves per partner, 10 loads")
    parser.add_argument("--moves", type=int, default=120, help="human moves per partner")
    parser.add_argument("--loads", type=int, default=30, help="page loads")
    parser.add_argument("--rollouts", type=int, default=256, help="LBS worlds per decision")
    parser.add_argument("--threads", type=int, default=1,
                        help="OMP_NUM_THREADS of the server (default 1: one core, as compare)")
    args = parser.parse_args(argv)
    if args.quick:
        args.moves, args.loads = 20, 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import httpx

    proc, url = start_server(args.threads)
    try:
        with httpx.Client(timeout=600) as client:
            wait_ready(client, url)
            loads, files, size = page_loads(client, url, args.loads)
            strong, strong_new = play_moves(client, url, {"blueprint": "strong"}, args.moves, 0)
            lbs_partner = {"blueprint": "strong", "search": "lbs-16", "rollouts": args.rollouts}
            lbs, lbs_new = play_moves(client, url, lbs_partner, args.moves, 0)
            watch = watch_steps(client, url, lbs_partner, args.moves, 0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"lbs-pz serve at {url} (one process, OMP_NUM_THREADS={args.threads}); "
          f"load average {os.getloadavg()[0]:.2f} after the run\n")
    print("| request | n | median ms | p90 ms | max ms | note |")
    print("|---|---:|---:|---:|---:|---|")
    print(row("page load", loads, f"GET / + {files - 1} static files, {size / 1024:.0f} KiB"))
    print(row("new play game, partner strong", strong_new))
    print(row("move, partner strong", strong, "human move + the bot's reply"))
    print(row("new play game, partner strong + LBS-16", lbs_new,
              "includes loading the belief and value on the first"))
    print(row("move, partner strong + LBS-16", lbs,
              f"human move + the search's reply ({args.rollouts} worlds)"))
    print(row("watch: advance 1 move, both seats strong + LBS-16", watch,
              "one search and its DECISION record"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
