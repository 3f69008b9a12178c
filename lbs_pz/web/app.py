"""The Starlette app of the local web page: `create_app(blueprint=..., search=...)`.

Routes (JSON; every error is {"error": message} with status 400 (naming the field),
403, 404, 409, 413, 503, or 500 when an agent fails):

    GET  /                                  the single-page app (static/index.html)
    GET  /games/{id}                        the same page, opening game {id} (its address:
                                            the id is a random token, known to its creator)
    GET  /static/...                        its js / css / icon
    GET  /favicon.ico                       the icon (static/favicon.svg), where browsers look
    GET  /api/options                       blueprints, searches, default variant, server
                                            defaults, the limits
    POST /api/games                         {"mode", "variant", "seed" (omitted or null: a
                                            random deal), "seats"} -> 201 {"id", "state": SNAPSHOT}
    GET  /api/games                         {"games": the 20 newest (a play game once over)}
    GET  /api/games?ids=A,B                 {"games": those of A, B, ... it holds (a play
                                            game in progress too: its id is its address),
                                            "gone": {id: why} for those it evicted}
    GET  /api/games/{id}?at=K&view=V        SNAPSHOT after K moves seen by V (spectator | seat);
                                            an evicted game: 404 saying why (`GameStore`)
    POST /api/games/{id}/advance            {"moves": n} (-1: play out), optional "seconds"
                                            (a shorter slice than the server's) -> SNAPSHOT
    POST /api/games/{id}/move               {"move", "turn"} (play mode), optional "reply":
                                            false (the agents wait for /advance) -> SNAPSHOT
    POST /api/games/{id}/continue           {"at", "seats"} -> 201 {"id", "state"}: a new
                                            watch game from position "at" of game {id} (its
                                            moves replayed on its deal; 403 for a play game
                                            in progress, 409 for a record without a deal)
    GET  /api/games/{id}/decisions          the search summary: decisions, deviations, fallbacks
    GET  /api/games/{id}/decisions/{k}      DECISION of move k
    GET  /api/games/{id}/conventions        per seat its blueprint and a rule bot's conventions
    GET  /api/games/{id}/export             hanab.live JSON
    POST /api/replays                       {"hanablive"} | {"jsonl_line"} | {"jsonl_text", "index"}

Every POST changes state, so every POST must say Content-Type: application/json (an
empty body then counts as {}), and a request that carries an Origin header must come
from this server's own origin (Origin's host equal to Host): a page of another site can
send neither without the browser asking first, and this server never says yes (403
otherwise). A body over `MAX_BODY_BYTES` is refused with 413 before it is read whole; it
is parsed in a worker thread. A request names blueprints as `lbs_pz.web.games` allows
(py: code only with `allow_code`, files only with `allow_files`, either when it is the
server's own blueprint); the caps on search settings are `games.SEARCH_CAPS`, applied on
every route, and a new game is stored only once its response is ready.

Work (agent moves, loading a net) runs in `Jobs`: daemon threads (a move that never
returns cannot keep the process from exiting), at most `workers` at a time, at most
`queue` requests waiting for one (more: 503 at once), and a request still working after
`request_seconds` answers 503 (its move runs on; the game answers 409 until it ends). A
request plays moves for at most `move_seconds` (a search move has that time budget), then
answers with the position reached: the client asks again. One lock per game: a second
move request while one runs is a 409. The words of a failing loader or blueprint go to
the "lbs_pz.web" logger, never into a response.

Connections (`server_options`, the keyword arguments `lbs-pz serve` gives uvicorn.run):
the HTTP protocol is uvicorn's h11 one with two guards (`GuardedH11`). A request, head
and body, must arrive whole within `read_seconds` (READ_SECONDS) of the connection
being ready for it (opened, or its last response sent), or the connection is closed:
one that never sends, or sends a byte a second, ends then. At most `max_connections`
(MAX_CONNECTIONS, fewer where the open-file limit is low: `connection_cap`) stay open:
one more closes the connection that has waited longest for a request, or, when every
other one has a request in progress, is answered 503 and closed. The listen backlog is
the cap; between requests a connection stays open `idle_seconds` (IDLE_SECONDS, uvicorn's
keep-alive timeout); a request head is at most MAX_HEAD_BYTES (400 beyond, h11's limit);
at most 2 x `max_connections` requests are in progress (uvicorn's limit_concurrency; more:
503).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import os
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Optional, Sequence, TypeVar
from urllib.parse import urlsplit

try:
    import resource
except ImportError:         # not on Windows: no open-file limit to read
    resource = None  # type: ignore[assignment]  # tested before use

from lbs_pz.agents import load_blueprint
from lbs_pz.checks import as_bool, as_int, as_real
from lbs_pz.engine import HanabiConfig
from lbs_pz.optional import require_web
from lbs_pz.search.config import SearchConfig
from lbs_pz.web.games import (BLUEPRINT_EXAMPLES, IDLE_SECONDS, MAX_BODY_BYTES,
                              MAX_CONNECTIONS, MAX_GAMES_KEPT, MAX_HEAD_BYTES, MAX_IDS_ASKED,
                              MAX_PLAY_GAMES, MAX_TEXT, MOVE_SECONDS, QUEUE, READ_SECONDS,
                              REQUEST_SECONDS, SEARCH_CAPS, SEARCHES, WORKERS, ApiError,
                              GameStore, check_strings, loads, log, parse_search, variant_dict)

require_web("the web page (lbs_pz.web.app)")     # one clear error naming the [web] extra
# starlette after the gate:
from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.middleware.trustedhost import TrustedHostMiddleware  # noqa: E402
from starlette.requests import ClientDisconnect, Request  # noqa: E402
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402

Result = TypeVar("Result")      # what a job's function returns

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PLACEHOLDER = ("<!doctype html><html><head><title>lbs_pz</title></head><body><h1>lbs_pz</h1>"
               "<p>The page's files (lbs_pz/web/static/index.html) are missing; the API is at "
               "<a href='/api/options'>/api/options</a>.</p></body></html>")


FILES_KEPT = 32     # file descriptors `connection_cap` leaves to the rest of the process
SERVER_FAILED = "the server failed on this request (its log says why)"   # every 500's words
FULL = json.dumps({"error": "the server has too many connections, each with a request in "
                            "progress; try again later"}).encode("ascii")
FULL_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(FULL), FULL))


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request and a cap on connections
    (module docstring): `read_seconds`, `max_connections` (class attributes; a subclass
    from `server_options` sets them). The deadline runs from when the connection is ready
    for a request until that request's body has arrived whole; data arriving meanwhile
    does not move it. Not armed while the app works on a request."""

    read_seconds: float = READ_SECONDS
    max_connections: int = MAX_CONNECTIONS

    def connection_made(self, transport) -> None:
        self._deadline: Optional[asyncio.TimerHandle] = None
        self._ready = 0.0
        super().connection_made(transport)
        self._arm()
        others = [c for c in self.connections
                  if c is not self and not c.transport.is_closing()]
        if len(others) >= self.max_connections:
            self._make_room(others)

    def _waiting(self) -> bool:
        """Whether a request is still to arrive (none begun, or its body incomplete)."""
        cycle = self.cycle
        return cycle is None or cycle.response_complete or cycle.more_body

    def _arm(self) -> None:
        if self._deadline is None and not self.transport.is_closing():
            self._ready = self.loop.time()
            self._deadline = self.loop.call_later(self.read_seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self._waiting() and not self.transport.is_closing():
            self.transport.close()          # an app reading the body sees a disconnect

    def _make_room(self, others) -> None:
        """Close the connection waiting longest for a request; none waiting: refuse this."""
        idle = [c for c in others if isinstance(c, GuardedH11) and c._waiting()]
        if idle:
            min(idle, key=lambda c: c._ready).transport.close()
        else:
            self.transport.write(FULL_RESPONSE)
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if not self._waiting():             # a whole request: the app's time is not ours
            self._disarm()

    def on_response_complete(self) -> None:
        self._disarm()
        self._arm()                         # the next request's deadline (before a
        super().on_response_complete()      # pipelined one is handled, which disarms it)

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)


def connection_cap(files: Optional[int] = None) -> int:
    """MAX_CONNECTIONS, or fewer where the process may open few files: a third of `files`
    (default: this process's open-file limit) less FILES_KEPT. A third: asyncio accepts up
    to a backlog (as many as the cap) of new connections before the cap closes any."""
    if files is None:
        if resource is None:
            return MAX_CONNECTIONS
        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if files == resource.RLIM_INFINITY:
            return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, (files - FILES_KEPT) // 3))


def server_options(max_connections: Optional[int] = None, read_seconds: float = READ_SECONDS,
                   idle_seconds: float = IDLE_SECONDS) -> dict:
    """The keyword arguments of uvicorn.run for the page's connection limits (module
    docstring): the `GuardedH11` protocol with `max_connections` (None: `connection_cap()`)
    and `read_seconds`, a listen backlog of `max_connections`, keep-alive `idle_seconds`,
    head size MAX_HEAD_BYTES, 2 x `max_connections` requests in progress. A bad value is a
    ValueError naming it."""
    if max_connections is None:
        max_connections = connection_cap()
    max_connections = as_int(max_connections, "max_connections", lo=1, error=ValueError)
    for name, value in (("read_seconds", read_seconds), ("idle_seconds", idle_seconds)):
        as_real(value, name, above=0, what="a number of seconds > 0", error=ValueError)
    protocol = type("GuardedH11", (GuardedH11,), {"max_connections": max_connections,
                                                  "read_seconds": float(read_seconds)})
    return {"http": protocol, "backlog": max_connections, "timeout_keep_alive": idle_seconds,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
            "limit_concurrency": 2 * max_connections}


class Json(JSONResponse):
    """JSON with every non-ASCII character escaped: no string can fail to encode."""

    def render(self, content) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, indent=None,
                          separators=(",", ":")).encode("ascii")


def _error(status: int, message: str) -> JSONResponse:
    return Json({"error": message}, status_code=status)


def _check_origin(request: Request) -> None:
    """403 for a request whose Origin header (when it has one) is not this server's."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    host = request.headers.get("host", "").strip().lower()
    try:
        theirs = urlsplit(origin.strip()).netloc.lower()
    except ValueError:
        theirs = ""
    if not theirs or theirs != host:
        raise ApiError(403, "a request from another site's page (its Origin is not this "
                            "server) is refused")


def _parse(raw: bytes) -> dict:
    """The JSON object of a request body (in a worker thread: a large body takes a while)."""
    try:
        body = loads(raw)
    except (ValueError, RecursionError) as err:
        raise ApiError(400, f"the body is not JSON: {str(err)[:200]}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    check_strings(body)
    return body


async def _body(request: Request) -> dict:
    """The body of a state-changing request, checked: its origin, its content type (JSON
    only: a page of another site can send a form or text/plain without asking, not
    application/json), its size (413 over MAX_BODY_BYTES, before it is read whole)."""
    _check_origin(request)
    if request.headers.get("content-type", "").split(";")[0].strip().lower() \
            != "application/json":
        raise ApiError(400, "send the body as JSON with Content-Type: application/json")
    too_big = ApiError(413, f"the body is over {MAX_BODY_BYTES} bytes")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.strip().isdigit():
            raise ApiError(400, "Content-Length is not a number of bytes")
        if int(length) > MAX_BODY_BYTES:
            raise too_big
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise too_big
            chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError(400, "the client went away before sending the body") from None
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    return await run_in_threadpool(_parse, raw)


class Jobs:
    """Blocking work off the event loop, bounded (module docstring): `await run(fn)` runs
    `fn()` in a new daemon thread once fewer than `workers` jobs run, waits among at most
    `queue` others for that, and raises ApiError(503) when no slot is free and the queue
    is full, or once `deadline` seconds have passed (the job runs on, still counted)."""

    def __init__(self, workers: int = WORKERS, queue: int = QUEUE,
                 deadline: float = REQUEST_SECONDS):
        self.workers, self.queue, self.deadline = workers, queue, deadline
        self.running = self.waiting = 0
        self._lock = threading.Lock()

    def _start(self) -> bool:
        with self._lock:
            if self.running < self.workers:
                self.running += 1
                return True
            return False

    def _done(self) -> None:
        with self._lock:
            self.running -= 1

    def _busy(self) -> ApiError:
        return ApiError(503, f"the server is busy ({self.running} moves running, "
                             f"{self.waiting} waiting); try again later")

    async def run(self, fn: Callable[[], Result]) -> Result:
        start = time.monotonic()
        if not self._start():
            with self._lock:
                if self.waiting >= self.queue:
                    raise self._busy()
                self.waiting += 1
            try:
                while not self._start():
                    if time.monotonic() - start >= self.deadline:
                        raise self._busy()
                    await asyncio.sleep(0.02)
            finally:
                with self._lock:
                    self.waiting -= 1
        future: concurrent.futures.Future = concurrent.futures.Future()

        def work():
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn()
                    except BaseException as err:   # noqa: BLE001 - handed to the request
                        future.set_exception(err)
                    else:
                        future.set_result(result)
            finally:
                self._done()

        try:
            threading.Thread(target=work, name="lbs_pz web job", daemon=True).start()
        except RuntimeError:            # no thread to be had
            self._done()
            raise self._busy() from None
        waiting = asyncio.wrap_future(future)
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())   # never unread
        left = max(0.0, self.deadline - (time.monotonic() - start))
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), left)
        except asyncio.TimeoutError:
            raise ApiError(503, f"the request did not finish within {self.deadline:g} s; its "
                                f"move goes on on the server, and the game is busy (409) "
                                f"until it ends") from None
        except ApiError:
            raise
        except Exception as err:   # noqa: BLE001 - said in the log, not in the response
            log.error("a request's work failed", exc_info=err)
            raise ApiError(500, SERVER_FAILED) from None


def _answered(handler: Callable) -> Callable:
    """`handler` with an unexpected exception answered here as a 500 (its words in the log):
    Starlette's last-resort handler would re-raise it, and uvicorn then drops the
    connection."""
    @functools.wraps(handler)
    async def run(request: Request):
        try:
            return await handler(request)
        except (ApiError, HTTPException):
            raise
        except Exception as err:   # noqa: BLE001 - said in the log, not in the response
            log.error("%s %s failed", request.method, request.url.path, exc_info=err)
            return _error(500, SERVER_FAILED)
    return run


def _locked(game, change: Callable) -> Callable:
    """A job: `change()` then the game's snapshot, holding the game's lock: a second
    request meanwhile is refused with 409 rather than queued behind it."""
    def run():
        if not game.lock.acquire(blocking=False):
            raise ApiError(409, "the game is busy with another request")
        try:
            change()
            return game.snapshot()
        finally:
            game.lock.release()
    return run


def _check_settings(blueprint: str, search: str, rollouts: int, move_seconds: float,
                    request_seconds: float, workers: int, queue: int, cap: int,
                    play_cap: int) -> str:
    """`create_app`'s settings checked, a bad one a ValueError naming it (the blueprint
    spec: `load_blueprint`'s BlueprintError); returns the search parsed (`parse_search`)."""
    load_blueprint(blueprint)                       # BlueprintError (ValueError) if bad
    try:
        search = parse_search(search)
    except ApiError as err:
        raise ValueError(err.message) from None
    as_int(rollouts, "rollouts", 1, SEARCH_CAPS["rollouts"], error=ValueError)
    for name, value in (("move_seconds", move_seconds), ("request_seconds", request_seconds)):
        as_real(value, name, above=0, what="a number of seconds > 0", error=ValueError)
    for name, value, least in (("workers", workers, 1), ("queue", queue, 0), ("cap", cap, 1),
                               ("play_cap", play_cap, 1)):
        as_int(value, name, lo=least, error=ValueError)
    return search


async def index(request: Request) -> Response:
    """The single-page app (a placeholder page when its file is missing)."""
    path = os.path.join(STATIC_DIR, "index.html")
    if os.path.isfile(path):
        return FileResponse(path, media_type="text/html")
    return HTMLResponse(PLACEHOLDER)


async def favicon(request: Request) -> Response:
    """The page's icon at the address browsers ask for by default."""
    return FileResponse(os.path.join(STATIC_DIR, "favicon.svg"), media_type="image/svg+xml")


async def _api_error(request: Request, exc: ApiError):
    return _error(exc.status, exc.message)


async def _http_error(request: Request, exc: HTTPException):
    return _error(exc.status_code, exc.detail or "error")


async def _server_error(request: Request, exc: Exception):
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return _error(500, SERVER_FAILED)


class _Api:
    """The API's routes (module docstring) over one app's state: its games (`GameStore`),
    its jobs (`Jobs`), the defaults it offers for new seats and the limits it states.
    move_seconds: a request's time for moves (a search move's time budget)."""

    def __init__(self, store: GameStore, jobs: Jobs, blueprint: str, search: str,
                 rollouts: int, move_seconds: float, request_seconds: float, cap: int,
                 play_cap: int, allow_code: bool, allow_files: bool):
        self.store, self.jobs = store, jobs
        self.blueprint, self.search, self.rollouts = blueprint, search, rollouts
        self.move_seconds, self.request_seconds = move_seconds, request_seconds
        self.cap, self.play_cap = cap, play_cap
        self.allow_code, self.allow_files = allow_code, allow_files
        self.slice_seconds = float(move_seconds)

    async def options(self, request: Request) -> Response:
        """GET /api/options: the blueprints and searches offered, the defaults, the limits."""
        blueprints = list(BLUEPRINT_EXAMPLES)
        if self.blueprint not in blueprints:
            blueprints.insert(0, self.blueprint)
        return Json({"blueprints": blueprints, "searches": list(SEARCHES),
                     "default_variant": variant_dict(HanabiConfig()),
                     "server_blueprint": self.blueprint, "server_search": self.search,
                     "server_rollouts": self.rollouts,
                     "limits": {"search": dict(SEARCH_CAPS), "body_bytes": MAX_BODY_BYTES,
                                "games": self.cap, "play_games": self.play_cap,
                                "move_seconds": self.move_seconds,
                                "request_seconds": self.request_seconds,
                                "allow_code": self.allow_code,
                                "allow_files": self.allow_files or self.allow_code}})

    async def _created(self, build: Callable):
        """201 {"id", "state"} of the game `build()` makes in a job (returning (game, its
        snapshot)); the game is stored once the response is ready, so a failed request
        stores nothing."""
        game, state = await self.jobs.run(build)
        response = Json({"id": game.id, "state": state}, status_code=201)
        self.store.add(game)
        return response

    async def create_game(self, request: Request) -> Response:
        """POST /api/games: a new game (play mode: the agents move first)."""
        body = await _body(request)
        self.store.check_room(body.get("mode", "watch"))  # a full play budget: 503 before work

        def build():            # loading a net takes a while; play: agents move first
            game = self.store.create(body)
            if game.mode == "play":
                game.advance(-1, self.slice_seconds)
            return game, game.snapshot()
        return await self._created(build)

    async def replay(self, request: Request) -> Response:
        """POST /api/replays: a game replayed from a hanab.live or JSONL record."""
        body = await _body(request)

        def build():
            game = self.store.replay(body)
            return game, game.snapshot()
        return await self._created(build)

    async def continue_game(self, request: Request) -> Response:
        """POST /api/games/{id}/continue {"at", "seats"}: a new watch game from position
        "at" of game {id}, its record's moves replayed on its deal (`GameStore.continued`)."""
        body = await _body(request)
        source = self.store.get(request.path_params["id"])
        self.store.check_room("watch")

        def build():
            game = self.store.continued(source, body)
            return game, game.snapshot()
        return await self._created(build)

    async def recent_games(self, request: Request) -> Response:
        """GET /api/games: the newest games; with ?ids=A,B,...: those games (at most
        MAX_IDS_ASKED ids, each of at most MAX_TEXT characters; 400 otherwise)."""
        asked = request.query_params.get("ids")
        if asked is None:
            return Json({"games": self.store.recent()})
        ids = [i for i in asked.split(",") if i]
        if len(ids) > MAX_IDS_ASKED or any(len(i) > MAX_TEXT for i in ids):
            raise ApiError(400, f"ids: at most {MAX_IDS_ASKED} game ids, each of at most "
                                f"{MAX_TEXT} characters")
        return Json(self.store.named(ids))

    async def get_game(self, request: Request) -> Response:
        """GET /api/games/{id}?at=K&view=V: a snapshot."""
        game = self.store.get(request.path_params["id"])
        q = request.query_params
        return Json(game.snapshot(q.get("at"), q.get("view")))

    async def advance(self, request: Request) -> Response:
        """POST /api/games/{id}/advance {"moves": n}: the agents play n moves (-1: out)."""
        body = await _body(request)
        game = self.store.get(request.path_params["id"])
        n = as_int(body.get("moves", 1), "moves", lo=-1,
                   what="a number of moves >= 1, or -1 (play out)",
                   error=lambda message: ApiError(400, message))
        seconds = self.slice_seconds
        if body.get("seconds") is not None:
            asked = as_real(body["seconds"], "seconds", above=0,
                            error=lambda message: ApiError(400, message))
            seconds = min(asked, seconds)
        return Json(await self.jobs.run(_locked(game, lambda: game.advance(n, seconds))))

    async def move(self, request: Request) -> Response:
        """POST /api/games/{id}/move {"move", "turn"}: the human's move (play mode)."""
        body = await _body(request)
        game = self.store.get(request.path_params["id"])
        if "move" not in body or "turn" not in body:
            raise ApiError(400, "a move body is {\"move\": id, \"turn\": moves played}")
        reply = as_bool(body.get("reply", True), "reply",
                        what="true (the agents answer) or false",
                        error=lambda message: ApiError(400, message))
        return Json(await self.jobs.run(_locked(game, lambda: game.human_move(
            body["move"], body["turn"], self.slice_seconds, reply=reply))))

    async def search_summary(self, request: Request) -> Response:
        """GET /api/games/{id}/decisions: the game's search decisions in short."""
        return Json(self.store.get(request.path_params["id"]).search_summary())

    async def conventions(self, request: Request) -> Response:
        """GET /api/games/{id}/conventions: the seats' blueprints and their conventions."""
        return Json(self.store.get(request.path_params["id"]).conventions())

    async def decision(self, request: Request) -> Response:
        """GET /api/games/{id}/decisions/{k}: the decision of move k."""
        game = self.store.get(request.path_params["id"])
        try:
            k = int(request.path_params["k"])
        except ValueError:
            raise ApiError(404, f"no move {request.path_params['k'][:40]!r}") from None
        return Json(game.decision(k))

    async def export(self, request: Request) -> Response:
        """GET /api/games/{id}/export: the game as hanab.live JSON."""
        game = self.store.get(request.path_params["id"])
        return Json(game.export())

    def routes(self) -> list:
        """The app's routes: the page, the API (each handler `_answered`), the static files."""
        return [
            Route("/", index),
            Route("/games/{id}", index),        # a game's own address: the page opens it
            Route("/favicon.ico", favicon),
            Route("/api/options", _answered(self.options)),
            Route("/api/games", _answered(self.create_game), methods=["POST"]),
            Route("/api/games", _answered(self.recent_games), methods=["GET"]),
            Route("/api/games/{id}", _answered(self.get_game)),
            Route("/api/games/{id}/advance", _answered(self.advance), methods=["POST"]),
            Route("/api/games/{id}/move", _answered(self.move), methods=["POST"]),
            Route("/api/games/{id}/continue", _answered(self.continue_game),
                  methods=["POST"]),
            Route("/api/games/{id}/decisions", _answered(self.search_summary)),
            Route("/api/games/{id}/decisions/{k}", _answered(self.decision)),
            Route("/api/games/{id}/conventions", _answered(self.conventions)),
            Route("/api/games/{id}/export", _answered(self.export)),
            Route("/api/replays", _answered(self.replay), methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
        ]


def create_app(blueprint: str = "strong", search: str = "lbs-16",
               rollouts: int = SearchConfig.rollouts,
               cap: int = MAX_GAMES_KEPT, allowed_hosts: Optional[Sequence[str]] = None,
               allow_code: bool = False, allow_files: bool = False,
               move_seconds: float = MOVE_SECONDS, request_seconds: float = REQUEST_SECONDS,
               workers: int = WORKERS, queue: int = QUEUE,
               play_cap: int = MAX_PLAY_GAMES) -> Starlette:
    """The app. `blueprint`, `search`, `rollouts`: the page's defaults for new seats
    (checked here: a bad spec is a ValueError); `cap`, `play_cap`: watch games (and
    replays) and play games kept in memory, two budgets (`GameStore`).
    `allowed_hosts`: the Host headers answered (None: any; `lbs-pz serve` on localhost
    passes the local names, which stops DNS-rebinding pages). `allow_code`: requests may
    name any py: blueprint (Python code run here) and any file; `allow_files`: any
    sb3:PATH / lstm:PATH / rllib:DIR blueprint and checkpoint path; otherwise only
    `blueprint` itself beside the names. `move_seconds`: a search move's time budget and
    a request's time for moves; `request_seconds`: when a request still working answers
    503; `workers`, `queue`: jobs at a time and requests waiting for one (module docstring)."""
    search = _check_settings(blueprint, search, rollouts, move_seconds, request_seconds,
                             workers, queue, cap, play_cap)
    store = GameStore(default_rollouts=rollouts, cap=cap, own_specs=(blueprint,),
                      allow_code=allow_code, allow_files=allow_files,
                      move_seconds=float(move_seconds), play_cap=play_cap)
    jobs = Jobs(workers, queue, float(request_seconds))
    api = _Api(store, jobs, blueprint, search, rollouts, move_seconds, request_seconds, cap,
               play_cap, allow_code, allow_files)
    middleware = [] if allowed_hosts is None else [
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    # each handler takes the exception class it is registered for
    handlers: Dict[Any, Callable[..., Awaitable[Response]]] = {
        ApiError: _api_error, HTTPException: _http_error, Exception: _server_error}
    app = Starlette(routes=api.routes(), middleware=middleware, exception_handlers=handlers)
    app.state.games = store
    app.state.jobs = jobs
    return app
