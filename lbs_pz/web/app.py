"""The Starlette app of the local web page: `create_app(blueprint=..., search=...)`.

Routes (JSON; every error is {"error": message} with status 400, 403, 404 or 409; 500
with the exception's text if an agent fails). A POST body must be sent as
application/json; a py: blueprint (code) is accepted only with `allow_code` or when it is
the server's own blueprint:

    GET  /                                  the single-page app (static/index.html)
    GET  /static/...                        its js / css
    GET  /api/options                       blueprints, searches, default variant, server defaults
    POST /api/games                         new game -> 201 {"id", "state": SNAPSHOT}
    GET  /api/games/{id}?at=K&view=V        SNAPSHOT after K moves seen by V (spectator | seat)
    POST /api/games/{id}/advance            {"moves": n} (-1: play out) -> SNAPSHOT
    POST /api/games/{id}/move               {"move", "turn"} (play mode) -> SNAPSHOT
    GET  /api/games/{id}/decisions/{k}      DECISION of move k
    GET  /api/games/{id}/export             hanab.live JSON
    POST /api/replays                       {"hanablive"} | {"jsonl_line"} | {"jsonl_text", "index"}

Agent moves (search takes seconds) run in a worker thread (`run_in_threadpool`) so the
server keeps answering; one lock per game: a second move request while one runs is a 409.
"""

from __future__ import annotations

import json
import os
from typing import Optional, Sequence

from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig
from lbs_pz.optional import require_web
from lbs_pz.search.config import SearchConfig
from lbs_pz.web.games import (BLUEPRINT_EXAMPLES, SEARCHES, ApiError, GameStore, parse_search,
                              variant_dict)

require_web("the web page (lbs_pz.web.app)")     # one clear error naming the [web] extra
# starlette after the gate:
from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.middleware.trustedhost import TrustedHostMiddleware  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import FileResponse, HTMLResponse, JSONResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PLACEHOLDER = ("<!doctype html><html><head><title>lbs_pz</title></head><body><h1>lbs_pz</h1>"
               "<p>The page's files (lbs_pz/web/static/index.html) are missing; the API is at "
               "<a href='/api/options'>/api/options</a>.</p></body></html>")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict:
    raw = await request.body()
    if not raw.strip():
        return {}
    # JSON only: a page of another site can send a form or text/plain without asking, but
    # not application/json (the browser asks first, and this server never says yes).
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise ApiError(400, "send the body as JSON with Content-Type: application/json")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise ApiError(400, f"the body is not JSON: {err}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body


async def _while_holding(game, change):
    """Run `change()` then snapshot the game, in a worker thread (searches take a while and
    the server must keep answering), holding the game's lock: a second request meanwhile
    is refused with 409 rather than queued behind it."""
    def run():
        if not game.lock.acquire(blocking=False):
            raise ApiError(409, "the game is busy with another request")
        try:
            change()
            return game.snapshot()
        finally:
            game.lock.release()
    return await run_in_threadpool(run)


def create_app(blueprint: str = "strong", search: str = "lbs-16",
               rollouts: int = SearchConfig.rollouts,
               cap: int = 64, allowed_hosts: Optional[Sequence[str]] = None,
               allow_code: bool = False) -> Starlette:
    """The app. `blueprint`, `search`, `rollouts`: the page's defaults for new seats
    (checked here: a bad spec is a ValueError); `cap`: games kept in memory.
    `allowed_hosts`: the Host headers answered (None: any; `lbs-pz serve` on localhost
    passes the local names, which stops DNS-rebinding pages). `allow_code`: requests may
    name any py: blueprint (Python code run here); otherwise only `blueprint` itself."""
    load_blueprint(blueprint)                       # BlueprintError (ValueError) if bad
    try:
        search = parse_search(search)
    except ApiError as err:
        raise ValueError(err.message) from None
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
        raise ValueError(f"rollouts must be an integer >= 1, got {rollouts!r}")
    store = GameStore(default_rollouts=rollouts, cap=cap, allowed_code=(blueprint,),
                      allow_code=allow_code)

    async def index(request: Request):
        path = os.path.join(STATIC_DIR, "index.html")
        if os.path.isfile(path):
            return FileResponse(path, media_type="text/html")
        return HTMLResponse(PLACEHOLDER)

    async def options(request: Request):
        blueprints = list(BLUEPRINT_EXAMPLES)
        if blueprint not in blueprints:
            blueprints.insert(0, blueprint)
        return JSONResponse({"blueprints": blueprints, "searches": list(SEARCHES),
                             "default_variant": variant_dict(HanabiConfig()),
                             "server_blueprint": blueprint, "server_search": search,
                             "server_rollouts": rollouts})

    async def create_game(request: Request):
        body = await _body(request)
        game = await run_in_threadpool(store.create, body)   # loading a net takes a while

        def start():
            with game.lock:
                if game.mode == "play":         # the agents move up to the human's turn
                    game.advance(-1)
                return game.snapshot()
        state = await run_in_threadpool(start)
        return JSONResponse({"id": game.id, "state": state}, status_code=201)

    async def get_game(request: Request):
        game = store.get(request.path_params["id"])
        q = request.query_params
        return JSONResponse(game.snapshot(q.get("at"), q.get("view")))

    async def advance(request: Request):
        game = store.get(request.path_params["id"])
        body = await _body(request)
        n = body.get("moves", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < -1:
            raise ApiError(400, f"moves must be a number of moves >= 1, or -1 (play out), "
                                f"got {n!r}")

        return JSONResponse(await _while_holding(game, lambda: game.advance(n)))

    async def move(request: Request):
        game = store.get(request.path_params["id"])
        body = await _body(request)
        if "move" not in body or "turn" not in body:
            raise ApiError(400, "a move body is {\"move\": id, \"turn\": moves played}")

        return JSONResponse(await _while_holding(
            game, lambda: game.human_move(body["move"], body["turn"])))

    async def decision(request: Request):
        game = store.get(request.path_params["id"])
        try:
            k = int(request.path_params["k"])
        except ValueError:
            raise ApiError(404, f"no move {request.path_params['k']!r}") from None
        return JSONResponse(game.decision(k))

    async def export(request: Request):
        game = store.get(request.path_params["id"])
        return JSONResponse(game.export())

    async def replay(request: Request):
        body = await _body(request)
        game = await run_in_threadpool(store.replay, body)
        return JSONResponse({"id": game.id, "state": game.snapshot()}, status_code=201)

    async def api_error(request: Request, exc: ApiError):
        return _error(exc.status, exc.message)

    async def http_error(request: Request, exc: HTTPException):
        return _error(exc.status_code, exc.detail or "error")

    async def server_error(request: Request, exc: Exception):
        # e.g. a user's blueprint that raised: say so instead of a bare 500 page
        return _error(500, f"{type(exc).__name__}: {exc}")

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/games", create_game, methods=["POST"]),
        Route("/api/games/{id}", get_game),
        Route("/api/games/{id}/advance", advance, methods=["POST"]),
        Route("/api/games/{id}/move", move, methods=["POST"]),
        Route("/api/games/{id}/decisions/{k}", decision),
        Route("/api/games/{id}/export", export),
        Route("/api/replays", replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
    ]
    middleware = [] if allowed_hosts is None else [
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={ApiError: api_error,
                                                        HTTPException: http_error,
                                                        Exception: server_error})
    app.state.games = store
    return app
