"""The Starlette app of the local web page: `create_app(blueprint=..., search=...)`.

Routes (JSON; every error is {"error": message} with status 400 (naming the field),
403, 404, 409, 413, 503, or 500 when an agent fails):

    GET  /                                  the single-page app (static/index.html)
    GET  /games/{id}                        the same page, opening game {id} (its address:
                                            the id is a random token, known to its creator)
    GET  /static/...                        its js / css
    GET  /api/options                       blueprints, searches, default variant, server
                                            defaults, the limits
    POST /api/games                         {"mode", "variant", "seed" (omitted or null: a
                                            random deal), "seats"} -> 201 {"id", "state": SNAPSHOT}
    GET  /api/games                         {"games": the 20 newest (a play game once over)}
    GET  /api/games/{id}?at=K&view=V        SNAPSHOT after K moves seen by V (spectator | seat)
    POST /api/games/{id}/advance            {"moves": n} (-1: play out) -> SNAPSHOT
    POST /api/games/{id}/move               {"move", "turn"} (play mode) -> SNAPSHOT
    GET  /api/games/{id}/decisions/{k}      DECISION of move k
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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import os
import threading
import time
from typing import Callable, Optional, Sequence
from urllib.parse import urlsplit

from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig
from lbs_pz.optional import require_web
from lbs_pz.search.config import SearchConfig
from lbs_pz.web.games import (BLUEPRINT_EXAMPLES, MAX_BODY_BYTES, MAX_GAMES_KEPT, MOVE_SECONDS,
                              QUEUE, REQUEST_SECONDS, SEARCH_CAPS, SEARCHES, WORKERS, ApiError,
                              GameStore, check_strings, loads, log, parse_search,
                              variant_dict)

require_web("the web page (lbs_pz.web.app)")     # one clear error naming the [web] extra
# starlette after the gate:
from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.middleware.trustedhost import TrustedHostMiddleware  # noqa: E402
from starlette.requests import ClientDisconnect, Request  # noqa: E402
from starlette.responses import FileResponse, HTMLResponse, JSONResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PLACEHOLDER = ("<!doctype html><html><head><title>lbs_pz</title></head><body><h1>lbs_pz</h1>"
               "<p>The page's files (lbs_pz/web/static/index.html) are missing; the API is at "
               "<a href='/api/options'>/api/options</a>.</p></body></html>")


SERVER_FAILED = "the server failed on this request (its log says why)"   # every 500's words


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

    async def run(self, fn: Callable):
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


def create_app(blueprint: str = "strong", search: str = "lbs-16",
               rollouts: int = SearchConfig.rollouts,
               cap: int = MAX_GAMES_KEPT, allowed_hosts: Optional[Sequence[str]] = None,
               allow_code: bool = False, allow_files: bool = False,
               move_seconds: float = MOVE_SECONDS, request_seconds: float = REQUEST_SECONDS,
               workers: int = WORKERS, queue: int = QUEUE) -> Starlette:
    """The app. `blueprint`, `search`, `rollouts`: the page's defaults for new seats
    (checked here: a bad spec is a ValueError); `cap`: games kept in memory.
    `allowed_hosts`: the Host headers answered (None: any; `lbs-pz serve` on localhost
    passes the local names, which stops DNS-rebinding pages). `allow_code`: requests may
    name any py: blueprint (Python code run here) and any file; `allow_files`: any
    sb3:PATH / lstm:PATH / rllib:DIR blueprint and checkpoint path; otherwise only
    `blueprint` itself beside the names. `move_seconds`: a search move's time budget and
    a request's time for moves; `request_seconds`: when a request still working answers
    503; `workers`, `queue`: jobs at a time and requests waiting for one (module docstring)."""
    load_blueprint(blueprint)                       # BlueprintError (ValueError) if bad
    try:
        search = parse_search(search)
    except ApiError as err:
        raise ValueError(err.message) from None
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) \
            or not 1 <= rollouts <= SEARCH_CAPS["rollouts"]:
        raise ValueError(f"rollouts must be an integer in [1, {SEARCH_CAPS['rollouts']}], "
                         f"got {rollouts!r}")
    for name, value in (("move_seconds", move_seconds), ("request_seconds", request_seconds)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
                or value == float("inf"):
            raise ValueError(f"{name} must be a number of seconds > 0, got {value!r}")
    for name, value in (("workers", workers), ("queue", queue)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (name == "workers"):
            raise ValueError(f"{name} must be an integer >= {int(name == 'workers')}, "
                             f"got {value!r}")
    store = GameStore(default_rollouts=rollouts, cap=cap, own_specs=(blueprint,),
                      allow_code=allow_code, allow_files=allow_files,
                      move_seconds=float(move_seconds))
    jobs = Jobs(workers, queue, float(request_seconds))
    slice_seconds = float(move_seconds)

    async def index(request: Request):
        path = os.path.join(STATIC_DIR, "index.html")
        if os.path.isfile(path):
            return FileResponse(path, media_type="text/html")
        return HTMLResponse(PLACEHOLDER)

    async def options(request: Request):
        blueprints = list(BLUEPRINT_EXAMPLES)
        if blueprint not in blueprints:
            blueprints.insert(0, blueprint)
        return Json({"blueprints": blueprints, "searches": list(SEARCHES),
                     "default_variant": variant_dict(HanabiConfig()),
                     "server_blueprint": blueprint, "server_search": search,
                     "server_rollouts": rollouts,
                     "limits": {"search": dict(SEARCH_CAPS), "body_bytes": MAX_BODY_BYTES,
                                "move_seconds": move_seconds,
                                "request_seconds": request_seconds,
                                "allow_code": allow_code,
                                "allow_files": allow_files or allow_code}})

    async def create_game(request: Request):
        body = await _body(request)

        def build():            # loading a net takes a while; play: agents move first
            game = store.create(body)
            if game.mode == "play":
                game.advance(-1, slice_seconds)
            return game, game.snapshot()
        game, state = await jobs.run(build)
        response = Json({"id": game.id, "state": state}, status_code=201)
        store.add(game)         # once the response is ready: a failed request stores nothing
        return response

    async def recent_games(request: Request):
        return Json({"games": store.recent()})

    async def get_game(request: Request):
        game = store.get(request.path_params["id"])
        q = request.query_params
        return Json(game.snapshot(q.get("at"), q.get("view")))

    async def advance(request: Request):
        body = await _body(request)
        game = store.get(request.path_params["id"])
        n = body.get("moves", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < -1:
            raise ApiError(400, f"moves must be a number of moves >= 1, or -1 (play out), "
                                f"got {str(n)[:40]!r}")
        return Json(await jobs.run(_locked(game, lambda: game.advance(n, slice_seconds))))

    async def move(request: Request):
        body = await _body(request)
        game = store.get(request.path_params["id"])
        if "move" not in body or "turn" not in body:
            raise ApiError(400, "a move body is {\"move\": id, \"turn\": moves played}")
        return Json(await jobs.run(_locked(
            game, lambda: game.human_move(body["move"], body["turn"], slice_seconds))))

    async def decision(request: Request):
        game = store.get(request.path_params["id"])
        try:
            k = int(request.path_params["k"])
        except ValueError:
            raise ApiError(404, f"no move {request.path_params['k'][:40]!r}") from None
        return Json(game.decision(k))

    async def export(request: Request):
        game = store.get(request.path_params["id"])
        return Json(game.export())

    async def replay(request: Request):
        body = await _body(request)

        def build():
            game = store.replay(body)
            return game, game.snapshot()
        game, state = await jobs.run(build)
        response = Json({"id": game.id, "state": state}, status_code=201)
        store.add(game)
        return response

    async def api_error(request: Request, exc: ApiError):
        return _error(exc.status, exc.message)

    async def http_error(request: Request, exc: HTTPException):
        return _error(exc.status_code, exc.detail or "error")

    async def server_error(request: Request, exc: Exception):
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(500, SERVER_FAILED)

    routes = [
        Route("/", index),
        Route("/games/{id}", index),        # a game's own address: the page opens it
        Route("/api/options", _answered(options)),
        Route("/api/games", _answered(create_game), methods=["POST"]),
        Route("/api/games", _answered(recent_games), methods=["GET"]),
        Route("/api/games/{id}", _answered(get_game)),
        Route("/api/games/{id}/advance", _answered(advance), methods=["POST"]),
        Route("/api/games/{id}/move", _answered(move), methods=["POST"]),
        Route("/api/games/{id}/decisions/{k}", _answered(decision)),
        Route("/api/games/{id}/export", _answered(export)),
        Route("/api/replays", _answered(replay), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
    ]
    middleware = [] if allowed_hosts is None else [
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={ApiError: api_error,
                                                        HTTPException: http_error,
                                                        Exception: server_error})
    app.state.games = store
    app.state.jobs = jobs
    return app
