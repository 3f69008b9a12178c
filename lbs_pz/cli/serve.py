"""`lbs-pz serve`: the local web page. Watch games (any blueprint on any seat, optionally
with LBS or SPARTA), step forward and back, open a search decision (every candidate move
with its estimated return +- s.e., pruned moves, the blueprint's move, the belief over the
seat's own hand as a colour x rank heat map); replay a `compare --jsonl` line or a
hanab.live JSON file; export any game to hanab.live JSON; play one seat yourself with any
blueprint or LBS as partner (the page never receives your own cards or the deck order).

Deal N of the page is game N of `lbs-pz eval --seed 0` (the evaluation stream); a watch
game without a deal number gets a random one; a play game without one gets a private deal
from a 128-bit seed drawn from the OS (no one can enumerate them), which the page shows
only once the game is over. A `compare --jsonl` line holds no moves: its game is re-dealt
from the evaluation stream (game and run seed from the line) and its method re-run
(deterministic given its spec); the logged score is shown beside the replayed one. A
hanab.live record replays its own moves. The server binds to 127.0.0.1 by default: the
games run on this machine and anyone who can reach the port can start searches, so bind
elsewhere only on a trusted network. The page names rule bots and shipped models; a py:
blueprint (Python code) only if it is --blueprint's or with --allow-code, a file (sb3:PATH,
lstm:PATH, rllib:DIR, a checkpoint) only if it is --blueprint's or with --allow-files; on
localhost, requests for another host name are refused (DNS rebinding). A search move has
--move-seconds; a request still busy after three times that answers 503. Games live in
memory: the 64 newest watch games and replays, and apart from them 64 play games (a
finished one goes first; one in progress only after 30 minutes without a request; until
then a new play game is refused), so no number of watch games removes a game someone is
playing; a removed game's address says why it is gone. Connections: a request must arrive
whole (head and body) within --read-seconds of the connection being ready for it, else it
is closed (an idle or trickling client holds nothing for long); between requests a
connection stays open 5 s; at most --max-connections are open (100, fewer under a low
open-file limit), and one more closes the one idle longest. Stop the server with Ctrl-C (or
SIGTERM: it exits within about a second, abandoning moves in progress).
Needs the [web] extra: pip install 'lbs_pz[web]' (starlette, uvicorn)."""

from __future__ import annotations

import argparse
import socket
import sys

from lbs_pz.cli.options import (add_blueprint_command, add_blueprint_option,
                                finite_float_at_least, int_at_least)
from lbs_pz.optional import require, require_web
from lbs_pz.search.config import SearchConfig
from lbs_pz.web.games import MAX_CONNECTIONS, MOVE_SECONDS, READ_SECONDS

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
LOCAL_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")   # Host headers answered when local
SHUTDOWN_SECONDS = 0.5      # on Ctrl-C / SIGTERM, requests in progress get this long


def run(args) -> int:
    uvicorn = require("uvicorn", "lbs-pz serve")      # MissingDependency naming [web]
    require_web("lbs-pz serve")
    # Deliberately lazy (allow-listed in tests/repo/test_layers.py): the app imports starlette
    # at its top, and `lbs-pz --help` works without the [web] extra.
    from lbs_pz.web.app import create_app, server_options

    local = args.host in LOCAL_HOSTS
    app = create_app(blueprint=args.blueprint, search=args.search, rollouts=args.rollouts,
                     allowed_hosts=LOCAL_NAMES if local else None, allow_code=args.allow_code,
                     allow_files=args.allow_files, move_seconds=args.move_seconds,
                     request_seconds=3 * args.move_seconds)
    if not local:
        print(f"warning: serving on {args.host}, not localhost: anyone who can reach this "
              f"port can start games and searches on this machine", file=sys.stderr)
    port = args.port
    if port == 0:                       # pick a free port now, so that the URL is right
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        with socket.socket(family) as sock:
            sock.bind((args.host, 0))
            port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"lbs_pz web page: http://{shown}:{port}/  (Ctrl-C stops it)", flush=True)
    uvicorn.run(app, host=args.host, port=port, log_level=args.log_level,
                timeout_graceful_shutdown=SHUTDOWN_SECONDS,
                **server_options(max_connections=args.max_connections,
                                 read_seconds=args.read_seconds))
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    parser = add_blueprint_command(
        subparsers, "serve", __doc__,
        help="a local web page: watch, replay and play games, see what a search weighed")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int_at_least(0), default=8000,
                        help="port (default 8000; 0 picks a free one)")
    add_blueprint_option(parser, what="the page's default blueprint for new seats")
    parser.add_argument("--search", default="lbs-16", metavar="blueprint|lbs-K|lbs-inf|sparta",
                        help="the page's default search for a searching seat (default lbs-16)")
    parser.add_argument("--rollouts", type=int_at_least(1), default=SearchConfig.rollouts,
                        help=f"default sampled worlds per search decision (default "
                             f"{SearchConfig.rollouts})")
    parser.add_argument("--allow-code", action="store_true",
                        help="let the page name any py:FILE.py:CLASS blueprint (Python code run "
                             "on this machine) and any file; by default only --blueprint's "
                             "own")
    parser.add_argument("--allow-files", action="store_true",
                        help="let the page name blueprint and checkpoint files on this machine "
                             "(sb3:PATH, lstm:PATH, rllib:DIR); by default rule bots and shipped "
                             "models by "
                             "name, and --blueprint's own")
    parser.add_argument("--move-seconds", type=finite_float_at_least(0.1),
                        default=MOVE_SECONDS,
                        help=f"time budget of one search move, in seconds (default "
                             f"{MOVE_SECONDS:g}); a request still busy after 3x this answers 503")
    parser.add_argument("--max-connections", type=int_at_least(1), default=None,
                        help=f"connections open at once (default {MAX_CONNECTIONS}, or (open-file "
                             f"limit - 32) / 3 where that is fewer); one more "
                             f"closes the one idle longest, or is refused (503) when every "
                             f"one has a request in progress")
    parser.add_argument("--read-seconds", type=finite_float_at_least(0.1),
                        default=READ_SECONDS,
                        help=f"a request (head and body) must arrive within this many seconds "
                             f"of the connection being ready for it, else the connection is "
                             f"closed (default {READ_SECONDS:g})")
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn's log level (default warning)")
    parser.set_defaults(func=run)
    return parser
