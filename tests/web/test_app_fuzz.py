"""Fuzz of the page's JSON API: Hypothesis draws request bodies and query strings from a mix
of valid values and hostile ones (wrong types, huge and negative numbers, NaN, lone
surrogates, unknown fields, nested junk) for every route. Every answer must be a JSON
object with a status the API documents (never a 5xx), and a refused request stores
nothing."""

import json
import warnings
from urllib.parse import quote

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from lbs_pz.web.app import create_app  # noqa: E402

DOCUMENTED = {200, 201, 400, 403, 404, 409, 413}
JSON = {"Content-Type": "application/json"}

SCALARS = st.one_of(
    st.sampled_from([None, True, False, 0, 1, -1, 2, 5, 7, 2**31, 2**63, -2**63, 10**30,
                     1e308, -0.0, 0.5, "", "x", "16", "strong", "lbs-16", "lbs-1", "sparta",
                     "none", "play", "watch", "lstm:public_lstm_2p", "py:os:system",
                     "lstm:/etc/passwd", "\ud800", "../../etc/passwd", "-1", "999"]),
    st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


def seats():
    seat = st.one_of(
        st.fixed_dictionaries({"blueprint": st.sampled_from(["strong", "weak", "random"])},
                              optional={"search": st.sampled_from(["none", "lbs-1", "lbs-16",
                                                                   "lbs-inf", "sparta"]),
                                        "rollouts": st.one_of(st.integers(1, 8), VALUES)}),
        st.just({"human": True}), VALUES)
    return st.one_of(st.lists(seat, min_size=0, max_size=4), VALUES)


def variants():
    return st.one_of(st.fixed_dictionaries({}, optional={
        "players": st.one_of(st.integers(1, 6), VALUES),
        "colors": st.one_of(st.integers(0, 6), VALUES),
        "ranks": st.one_of(st.integers(0, 6), VALUES),
        "hand_size": st.one_of(st.integers(0, 6), VALUES)}), VALUES)


CREATE = st.one_of(st.fixed_dictionaries({}, optional={
    "mode": st.one_of(st.sampled_from(["watch", "play"]), VALUES),
    "variant": variants(), "seed": st.one_of(st.integers(-2, 2**33), VALUES),
    "seats": seats(), "extra": VALUES}), VALUES)
REPLAY = st.one_of(st.fixed_dictionaries({}, optional={
    "jsonl_line": VALUES, "jsonl_text": st.one_of(st.text(max_size=40), VALUES),
    "index": VALUES, "hanablive": VALUES}), VALUES)
STEP = st.one_of(st.fixed_dictionaries({}, optional={
    "moves": st.one_of(st.integers(-3, 3), VALUES), "move": st.one_of(st.integers(-2, 25), VALUES),
    "turn": st.one_of(st.integers(-1, 3), VALUES)}), VALUES)
QUERY = st.fixed_dictionaries({}, optional={"at": st.one_of(st.integers(-2, 90), SCALARS),
                                            "view": st.one_of(st.integers(-2, 5), SCALARS)})


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # every "move" example opens a play game, and unfinished play games are never
        # evicted for new ones: a budget above the examples (the budgets have tests of their own)
        app = create_app(blueprint="strong", search="none", rollouts=4, move_seconds=0.5,
                         play_cap=1024)
        with TestClient(app, raise_server_exceptions=False) as client:
            client.app_state = app.state
            yield client


def _check(response):
    assert response.status_code in DOCUMENTED, (response.status_code, response.text[:300])
    assert isinstance(response.json(), dict)


def _body(value) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass")


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True, database=None)
@given(route=st.sampled_from(["create", "replay", "advance", "move", "get", "decision",
                              "export"]),
       create=CREATE, replay=REPLAY, step=STEP, query=QUERY, k=SCALARS)
def test_fuzz_web_api(client, route, create, replay, step, query, k):
    games = client.app_state.games.games
    if route in ("create", "replay"):
        before = set(games)
        body = create if route == "create" else replay
        r = client.post("/api/games" if route == "create" else "/api/replays",
                        content=_body(body), headers=JSON)
        _check(r)
        if r.status_code != 201:
            assert set(games) <= before, "a refused request stored a game"
        return
    r = client.post("/api/games", json={"mode": "play" if route == "move" else "watch",
                                        "seats": [{"human": True} if route == "move" else
                                                  {"blueprint": "strong"},
                                                  {"blueprint": "strong"}]})
    assert r.status_code == 201, r.text
    game_id = r.json()["id"]
    if route == "advance" or route == "move":
        r = client.post(f"/api/games/{game_id}/{route}", content=_body(step), headers=JSON)
    elif route == "get":
        r = client.get(f"/api/games/{game_id}?" + "&".join(
            f"{q}={quote(str(v), safe='', errors='surrogatepass')}" for q, v in query.items()))
    elif route == "decision":
        r = client.get(f"/api/games/{game_id}/decisions/"
                       f"{quote(str(k)[:20], safe='', errors='surrogatepass')}")
    else:
        r = client.get(f"/api/games/{game_id}/export")
    _check(r)
