"""Hardening of the local web page: hidden deals, bounds on every input, a blueprint that
never returns, clean errors, state-changing requests only as same-origin JSON.

Plain 400s go through Starlette's TestClient; whatever could hang or exhaust memory runs
against a real uvicorn in a child process on a free port (`_server`), or `lbs-pz serve`
itself for the signals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # starlette's notice about httpx
    from starlette.testclient import TestClient  # noqa: E402

from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.engine.records import to_hanablive  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.search.methods import MethodSpec  # noqa: E402
from lbs_pz.web import games  # noqa: E402
from lbs_pz.web.app import connection_cap, create_app, server_options  # noqa: E402

from tests.helpers.paths import ROOT  # noqa: E402
from tests.helpers.waiting import HANG_SECONDS, poll_until, wait_for  # noqa: E402

STRONG = {"blueprint": "strong"}
# Slow's move outlasts every wait of a test: an answer that comes is not its end. Held moves
# once the file `release` appears beside bps.py: a request in progress until the test lets it go.
BLUEPRINTS = f"""
import os, time

RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "release")

class Slow:
    name = "slow"
    def act(self, state, seat=None):
        time.sleep({10 * HANG_SECONDS})
        return state.legal_moves()[0]

class Held:
    name = "held"
    def act(self, state, seat=None):
        while not os.path.exists(RELEASE):
            time.sleep(0.02)
        return state.legal_moves()[0]

class Raising:
    name = "raising"
    def act(self, state, seat=None):
        raise RuntimeError("secret detail from /etc/shadow")

class Sleepy:
    name = "sleepy"
    def act(self, state, seat=None):
        time.sleep(2.5)
        return state.legal_moves()[0]
"""


def _app(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_app(**{"search": "none", **kwargs})


def _client(app):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TestClient(app)


@pytest.fixture(scope="module")
def app():
    return _app(blueprint="strong", search="lbs-16", rollouts=8)


@pytest.fixture(scope="module")
def client(app):
    return _client(app)


@pytest.fixture
def bps(tmp_path):
    path = tmp_path / "bps.py"
    path.write_text(BLUEPRINTS)
    return str(path)


def _deal(index, config=HanabiConfig()):
    return HanabiState(config, seed=int(deal_seeds(EVAL, 0, index, 1)[0]))


def _line(**change):
    spec = MethodSpec("lbs-1", blueprint="strong", rollouts=4).to_dict()
    key = change.pop("key", None) or json.dumps([dict(spec, **change.pop("spec", {})),
                                                 {"players": 2}, 0])
    return dict({"key": key, "game": 1, "method": "lbs-1",
                 "result": {"score": 20, "moves": 60}}, **change)


# --- hidden information ----------------------------------------------------------------------

def _play_out(client, gid, snap, rng):
    responses = [snap]
    while not snap["over"]:
        move = int(rng.choice([m["id"] for m in snap["legal_moves"]]))
        r = client.post(f"/api/games/{gid}/move", json={"move": move,
                                                        "turn": snap["moves_played"]})
        assert r.status_code == 200, r.text
        snap = r.json()
        responses.append(snap)
    return responses


def test_a_play_game_gets_a_private_deal_whose_seed_is_secret_until_the_end(app, client):
    body = {"mode": "play", "seats": [{"human": True}, STRONG]}
    first = client.post("/api/games", json=body).json()
    second = client.post("/api/games", json=body).json()
    stored = [app.state.games.get(g["id"]) for g in (first, second)]
    decks = [game.states[0].deck for game in stored]
    assert decks[0] != decks[1], "playing again with the defaults dealt the same cards"
    gid, snap = first["id"], first["state"]
    assert snap["deal"] == "random" and snap["seed"] is None
    assert client.get(f"/api/games/{gid}?at=0&view=spectator").json()["seed"] is None
    responses = _play_out(client, gid, snap, np.random.default_rng(1))
    secret = [r for r in responses if not r["over"]]
    assert secret and all(r["seed"] is None and r["deal"] == "random" for r in secret)
    seed = stored[0].seed
    for text in (str(seed), f"{seed:x}", f"{seed:X}"):      # in no form, anywhere
        assert not any(text in json.dumps(r) for r in secret), text
    # Over: the seed is shown (as text: a JSON number would lose digits), and it deals the
    # same cards again.
    final = client.get(f"/api/games/{gid}").json()
    assert final["over"] and final["deal"] == "random"
    assert isinstance(final["seed"], str) and final["seed"] == f"0x{seed:032x}"
    assert games.private_deal(HanabiConfig(), int(final["seed"], 16)).deck == decks[0]


def test_play_deals_come_from_128_bit_seeds(app, client):
    """The evaluation stream holds 2**32 deals per run seed: anyone can scan them for the
    one that fits a partner's hand. A play game's seed has 128 bits, each of which
    changes the deal."""
    body = {"mode": "play", "seats": [{"human": True}, STRONG]}
    seeds = [app.state.games.get(client.post("/api/games", json=body).json()["id"]).seed
             for _ in range(8)]
    assert all(isinstance(s, int) and 0 <= s < 2**games.PRIVATE_SEED_BITS for s in seeds)
    assert max(seeds).bit_length() > 64, seeds      # all under 2**64: p = 2**-512
    config = HanabiConfig()
    deck = games.private_deal(config, seeds[0]).deck
    assert games.private_deal(config, seeds[0]).deck == deck              # reproducible
    for bit in (0, 63, 64, 127):
        assert games.private_deal(config, seeds[0] ^ (1 << bit)).deck != deck, bit
    for bad in (-1, 2**128, 1.0, True, "1"):
        with pytest.raises(ValueError, match="private seed"):
            games.private_deal(config, bad)
    # Watch games are dealt from the evaluation stream as ever.
    watch = client.post("/api/games", json={"seats": [STRONG, STRONG]}).json()["state"]
    assert app.state.games.get(watch["id"]).states[0].deck == _deal(watch["seed"]).deck


def test_a_chosen_deal_is_marked_chosen(client):
    snap = client.post("/api/games", json={"mode": "play", "seed": 3,
                                           "seats": [{"human": True}, STRONG]}).json()["state"]
    assert snap["deal"] == "chosen" and snap["seed"] == 3
    watch = client.post("/api/games", json={"seats": [STRONG, STRONG]}).json()["state"]
    assert watch["deal"] == "random" and isinstance(watch["seed"], int)   # nothing to hide
    for seed in ("3", 3.0, True, -1, 2**40, [3]):
        r = client.post("/api/games", json={"seed": seed, "seats": [STRONG, STRONG]})
        assert r.status_code == 400 and "seed" in r.json()["error"], seed


def test_search_moves_in_play_mode_end_on_the_padding_quantum(app, client):
    created = client.post("/api/games", json={"mode": "play", "seed": 2, "seats": [
        {"human": True}, {"blueprint": "strong", "search": "lbs-16", "rollouts": 8}]}).json()
    gid, snap = created["id"], created["state"]
    game = app.state.games.get(gid)
    quantum = games.PLAY_PAD_SECONDS
    assert game.pad_seconds == quantum > 0
    for _ in range(3):
        start = time.perf_counter()
        r = client.post(f"/api/games/{gid}/move", json={
            "move": snap["legal_moves"][0]["id"], "turn": snap["moves_played"]})
        took = time.perf_counter() - start
        snap = r.json()
        assert r.status_code == 200, r.text
        # The partner's search took `seconds`; the answer came after the next multiple of
        # the quantum (a search of a few milliseconds: after one quantum).
        searched = game.decisions[snap["moves_played"] - 1]["seconds"]
        assert took >= max(1, math.ceil(searched / quantum)) * quantum - 1e-3, (took, searched)
        if snap["over"]:
            break


# --- bounds ------------------------------------------------------------------------------------

@pytest.mark.parametrize("setting, value", [("rollouts", 10**6), ("verify", 10**6),
                                            ("batch_size", 10**7), ("margin_worlds", 10**9)])
def test_search_caps_apply_on_every_route(app, client, setting, value):
    kept = len(app.state.games.games)
    cap = games.SEARCH_CAPS[setting]
    line = _line(spec={setting: value})
    for body in ({"jsonl_line": line}, {"jsonl_text": json.dumps(line), "index": 0}):
        r = client.post("/api/replays", json=body)
        assert r.status_code == 400, r.text
        assert setting in r.json()["error"] and str(cap) in r.json()["error"]
    if setting == "rollouts":
        r = client.post("/api/games", json={"seats": [
            {"blueprint": "strong", "search": "lbs-1", "rollouts": value}, STRONG]})
        assert r.status_code == 400 and "seats[0].rollouts" in r.json()["error"]
    assert len(app.state.games.games) == kept


def test_every_search_move_has_the_time_budget(app, client):
    created = client.post("/api/games", json={"seats": [
        {"blueprint": "strong", "search": "lbs-1", "rollouts": 8}, STRONG]}).json()
    searcher = app.state.games.get(created["id"]).seats[0].searcher
    assert searcher.config.time_budget == games.MOVE_SECONDS
    r = client.post("/api/replays", json={"jsonl_line": _line(spec={"time_budget": 1e6})})
    assert r.status_code == 201, r.text
    replayed = app.state.games.get(r.json()["id"]).seats[0].searcher
    assert replayed.config.time_budget == games.MOVE_SECONDS


def test_a_request_plays_for_move_seconds_then_answers():
    client = _client(_app(move_seconds=0.05))
    gid = client.post("/api/games", json={"seed": 1, "seats": [
        {"blueprint": "strong", "search": "lbs-1", "rollouts": 16}, STRONG]}).json()["id"]
    snap = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    assert 1 <= snap["moves_played"] and not snap["terminal"]
    for _ in range(200):                                   # the client asks again
        if snap["terminal"]:
            break
        snap = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    assert snap["terminal"]


def test_create_app_refuses_bad_limits():
    for kwargs in ({"move_seconds": 0}, {"move_seconds": math.nan}, {"request_seconds": -1},
                   {"workers": 0}, {"queue": -1}, {"rollouts": 10**6}, {"workers": True},
                   {"cap": 0}, {"play_cap": 0}, {"play_cap": 1.5}):
        with pytest.raises(ValueError):
            _app(**kwargs)


TINY = {"colors": 1, "ranks": 2, "hand_size": 1}       # a game of a few moves


def _finish(client, gid, snap):
    while not snap["over"]:
        snap = client.post(f"/api/games/{gid}/move", json={
            "move": snap["legal_moves"][0]["id"], "turn": snap["moves_played"]}).json()
        assert "error" not in snap, snap
    return snap


def test_watch_games_never_evict_a_game_in_play():
    """Any number of watch games leaves a play game in progress playable; a full watch
    budget evicts its oldest finished game first, and the evicted game's 404 says so."""
    app = _app(cap=3, play_cap=2)
    client = _client(app)
    play = client.post("/api/games", json={"mode": "play", "seats": [{"human": True},
                                                                     STRONG]}).json()
    watch = [client.post("/api/games", json={"seed": i, "seats": [STRONG, STRONG]}).json()["id"]
             for i in range(2)]
    client.post(f"/api/games/{watch[1]}/advance", json={"moves": -1})    # over
    third = client.post("/api/games", json={"seats": [STRONG, STRONG]}).json()["id"]
    fourth = client.post("/api/games", json={"seats": [STRONG, STRONG]}).json()["id"]
    r = client.get(f"/api/games/{watch[1]}")           # finished: gone before the older one
    assert r.status_code == 404 and "gone" in r.json()["error"]
    assert "finished" in r.json()["error"] and "3 watch games" in r.json()["error"]
    assert client.get(f"/api/games/{watch[0]}").status_code == 200
    for i in range(20):                                 # a flood from any client
        assert client.post("/api/games", json={"seats": [STRONG, STRONG]}).status_code == 201
    r = client.get(f"/api/games/{watch[0]}")
    assert r.status_code == 404 and "oldest" in r.json()["error"]
    assert client.get(f"/api/games/{third}").status_code == 404
    assert client.get(f"/api/games/{fourth}").status_code == 404
    snap = play["state"]
    r = client.post(f"/api/games/{play['id']}/move", json={"move": snap["legal_moves"][0]["id"],
                                                           "turn": snap["moves_played"]})
    assert r.status_code == 200 and r.json()["moves_played"] > snap["moves_played"]
    r = client.get("/api/games/nosuchgame")
    assert r.status_code == 404 and "unknown" in r.json()["error"]


def test_a_full_play_budget_evicts_a_finished_or_abandoned_game_never_one_in_play():
    app = _app(play_cap=2, cap=1)
    client = _client(app)
    body = {"mode": "play", "variant": TINY, "seats": [{"human": True}, STRONG]}
    active = client.post("/api/games", json=body).json()
    done = client.post("/api/games", json=body).json()
    _finish(client, done["id"], done["state"])
    third = client.post("/api/games", json=body).json()       # takes the finished one's place
    r = client.get(f"/api/games/{done['id']}")
    assert r.status_code == 404 and "it was over" in r.json()["error"]
    # Two games in progress, both recent: a new play game is refused; neither is evicted.
    r = client.post("/api/games", json=body)
    assert r.status_code == 503 and "in progress" in r.json()["error"]
    assert len(app.state.games.games) == 2
    for game in (active, third):
        assert client.get(f"/api/games/{game['id']}").status_code == 200
    # One abandoned (no request for longer than the play idle time): it makes room.
    app.state.games.games[active["id"]].seen -= games.PLAY_IDLE_SECONDS + 60
    fourth = client.post("/api/games", json=body)
    assert fourth.status_code == 201, fourth.text
    r = client.get(f"/api/games/{active['id']}")
    assert r.status_code == 404 and "no request named it" in r.json()["error"]
    assert client.get(f"/api/games/{third['id']}").status_code == 200
    # Watch games have their own budget (here: 1): creating them evicts no play game.
    for _ in range(3):
        assert client.post("/api/games", json={"seats": [STRONG, STRONG]}).status_code == 201
    assert client.get(f"/api/games/{third['id']}").status_code == 200


# --- clean errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("line, field", [
    (_line(spec={"rollouts": "16"}), "rollouts"),
    (_line(spec={"method": 5}), "method"),
    (_line(spec={"search_seats": [7]}), "search_seats"),
    (_line(spec={"search_seats": 5}), "search_seats"),
    (_line(spec={"delta": "a"}), "delta"),
    (_line(method=5), "jsonl_line.method"),
    (_line(method="x" * 5000), "jsonl_line.method"),
    (_line(game="1"), "jsonl_line.game"),
    (_line(game=True), "jsonl_line.game"),
    (_line(result=[1]), "jsonl_line.result"),
    (_line(result={"score": "x"}), "jsonl_line.result.score"),
    (_line(key="[1, 2]"), "jsonl_line.key"),
    (_line(key="{nope"), "jsonl_line.key"),
    (_line(key='[{"method": "lbs-1"}, {"players": "2"}, 0]'), "key[1]"),
    (_line(key='[{"method": "lbs-1"}, {}, "0"]'), "key[2]"),
])
def test_a_bad_jsonl_line_is_a_400_naming_the_field(app, client, line, field):
    kept = len(app.state.games.games)
    r = client.post("/api/replays", json={"jsonl_line": line})
    assert r.status_code == 400, r.text
    assert field in r.json()["error"]
    assert len(app.state.games.games) == kept


def test_nan_and_surrogates_are_400s_and_nothing_is_stored(app, client):
    kept = len(app.state.games.games)
    headers = {"content-type": "application/json"}
    # JSON's NaN / Infinity (Python's json reads them) cannot be echoed back.
    for text in ('{"jsonl_line": %s}' % json.dumps(_line()).replace('"score": 20', '"score": NaN'),
                 '{"jsonl_line": %s}' % json.dumps(_line()).replace('"lbs-1",', 'Infinity,', 1)):
        r = client.post("/api/replays", content=text, headers=headers)
        assert r.status_code == 400, r.text
    # A lone surrogate (JSON "\ud800") in a hanab.live player's name, a spec, a key.
    state = HanabiState(HanabiConfig(), seed=1)
    record = to_hanablive(state, ["alice", "b\ud800b"])
    r = client.post("/api/replays", content=json.dumps({"hanablive": record}), headers=headers)
    assert r.status_code == 400 and "players[1]" in r.json()["error"]
    r = client.post("/api/games", content=json.dumps({"seats": [
        {"blueprint": "strong\udfff"}, STRONG]}), headers=headers)
    assert r.status_code == 400 and "seats[0].blueprint" in r.json()["error"]
    assert len(app.state.games.games) == kept
    # Any other character round-trips.
    record = to_hanablive(state, ["\u00e9l\u00e8ve", "\U0001f600"])
    r = client.post("/api/replays", json={"hanablive": record})
    assert r.status_code == 201 and r.json()["state"]["seats"][1]["name"] == "\U0001f600"


def test_file_blueprints_are_refused_without_a_word_about_the_file(tmp_path):
    strict = _client(_app())
    missing, existing = str(tmp_path / "no-such.pt"), str(tmp_path / "there.pt")
    with open(existing, "wb") as f:
        f.write(b"v" + bytes(range(256)))            # torch: "Unsupported operand 118"
    answers = []
    for spec in (f"lstm:{missing}", f"lstm:{existing}", f"sb3:{existing}", "lstm:/etc/passwd",
                 f"rllib:{tmp_path}"):
        r = strict.post("/api/games", json={"seats": [{"blueprint": spec}, STRONG]})
        assert r.status_code == 403, r.text
        answers.append(r.json()["error"])
    assert len(set(answers)) == 1 and "--allow-files" in answers[0]
    r = strict.post("/api/replays", json={"jsonl_line": _line(spec={
        "belief": "learned+cf", "belief_checkpoint": existing})})
    assert r.status_code == 403 and "belief_checkpoint" in r.json()["error"]
    # Allowed: the page still only says that it could not be loaded.
    free = _client(_app(allow_files=True))
    answers = []
    for path in (missing, existing, "/etc/passwd"):
        r = free.post("/api/games", json={"seats": [{"blueprint": f"lstm:{path}"}, STRONG]})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert "could not be loaded" in error
        head, tail = error.split("could not be loaded", 1)
        echoed = head.split("blueprint ", 1)[1].strip().strip("'").rstrip(".")
        assert f"lstm:{path}".startswith(echoed), (echoed, path)   # the spec as sent, at most
        for word in ("exist", "118", "operand", "Unsupported", "root", "readable"):
            assert word not in tail, (word, error)
        answers.append(tail)
    assert len(set(answers)) == 1


def test_a_failing_blueprint_is_a_500_without_its_words(bps):
    client = _client(_app(allow_code=True))
    gid = client.post("/api/games", json={"seats": [{"blueprint": f"py:{bps}:Raising"},
                                                    STRONG]}).json()["id"]
    r = client.post(f"/api/games/{gid}/advance", json={"moves": 1})
    assert r.status_code == 500
    assert "seat 0" in r.json()["error"] and "secret" not in r.json()["error"]


def test_an_unexpected_error_is_answered_not_raised(monkeypatch):
    client = _client(_app())     # raises what the app lets escape (uvicorn: a dropped link)
    gid = client.post("/api/games", json={"seed": 1, "seats": [STRONG, STRONG]}).json()["id"]

    def broken(self):
        raise RuntimeError("secret detail")
    monkeypatch.setattr(games.Game, "export", broken)
    r = client.get(f"/api/games/{gid}/export")
    assert r.status_code == 500 and "secret" not in r.text


def test_state_changing_requests_are_same_origin_json(client):
    gid = client.post("/api/games", json={"seed": 0, "seats": [STRONG, STRONG]}).json()["id"]
    url = f"/api/games/{gid}/advance"
    for headers, content in (({}, b""), ({"content-type": "text/plain"}, b""),
                             ({"content-type": "application/x-www-form-urlencoded"}, b""),
                             ({"content-type": "multipart/form-data; boundary=x"}, b""),
                             ({"content-type": "text/plain"}, b'{"moves": 3}')):
        r = client.post(url, content=content, headers=headers)
        assert r.status_code == 400 and "application/json" in r.json()["error"], headers
    for origin in ("http://evil.example", "null", "http://testserver.evil.example"):
        r = client.post(url, json={"moves": 1}, headers={"origin": origin})
        assert r.status_code == 403, origin
    assert client.get(f"/api/games/{gid}").json()["moves_played"] == 0   # never advanced
    r = client.post(url, json={"moves": 1}, headers={"origin": "http://testserver"})
    assert r.status_code == 200 and r.json()["moves_played"] == 1
    r = client.post(url, content=b"", headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["moves_played"] == 2          # {}: one move


def test_a_body_over_the_cap_is_413(client):
    big = b" " * (games.MAX_BODY_BYTES + 1)
    r = client.post("/api/replays", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413

    def chunks():               # no Content-Length: counted while it streams
        for _ in range(games.MAX_BODY_BYTES // 2**16 + 2):
            yield b" " * 2**16
    r = client.post("/api/replays", content=chunks(),
                    headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_a_body_is_parsed_off_the_event_loop(client, monkeypatch):
    from lbs_pz.web import app as app_module

    threads = []
    parse = app_module._parse

    def watched(raw):
        try:
            asyncio.get_running_loop()
            threads.append("event loop")
        except RuntimeError:
            threads.append("worker")
        return parse(raw)
    monkeypatch.setattr(app_module, "_parse", watched)
    line = json.dumps(_line())
    text = "\n".join([line] * (games.MAX_BODY_BYTES // 2 // (len(line) + 1)))   # MBs
    r = client.post("/api/replays", json={"jsonl_text": text, "index": 3})
    assert r.status_code == 201, r.text[:300]
    assert threads == ["worker"]


# --- a real server -----------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_up(url: str, proc: subprocess.Popen, timeout: float = HANG_SECONDS, log=None) -> None:
    """Wait until the server at `url` answers; its stderr is `log` (a file) or a pipe."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            if log is not None:
                log.seek(0)
            raise RuntimeError(f"the server exited: "
                               f"{(proc.stderr if log is None else log).read()[-2000:]}")
        try:
            if httpx.get(url + "/api/options", timeout=HANG_SECONDS).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the server did not answer")


@contextlib.contextmanager
def _server(connections=None, files=None, **kwargs):
    """A real uvicorn serving create_app(**kwargs) in a child process, with the connection
    limits of `lbs-pz serve` (server_options(**connections)) and at most `files` open file
    descriptors (None: the system's): (url, proc)."""
    port = _free_port()
    code = textwrap.dedent(f"""
        import resource, warnings
        warnings.simplefilter("ignore")
        import uvicorn
        from lbs_pz.web.app import create_app, server_options
        app = create_app(**{kwargs!r})
        if {files!r} is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, ({files!r}, {files!r}))
        uvicorn.run(app, host="127.0.0.1", port={port}, log_level="critical",
                    timeout_graceful_shutdown=0.5, **server_options(**{connections or {}!r}))
    """)
    log = tempfile.TemporaryFile("w+")     # a pipe nobody reads would block its logging
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=log, text=True, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url, proc, log=log)
        yield url, proc
    finally:
        proc.kill()
        proc.wait(timeout=HANG_SECONDS)
        log.close()


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _raw_response(url: str, head: bytes, body_chunks=()) -> bytes:
    """Send `head`, then `body_chunks` until the server answers, on a raw socket; the
    answer's first bytes (b"" if none came within HANG_SECONDS)."""
    host, port = url.rsplit("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=HANG_SECONDS) as sock:
        sock.sendall(head)
        for chunk in body_chunks:
            if select.select([sock], [], [], 0)[0]:
                break                                   # it answered already
            try:
                sock.sendall(chunk)
            except OSError:
                break
        answer = b""
        while b"\r\n\r\n" not in answer:
            try:
                data = sock.recv(4096)
            except OSError:
                break
            if not data:
                break
            answer += data
        return answer


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_huge_body_is_refused_before_it_is_read():
    with _server(search="none") as (url, proc):
        before = _peak_rss_mb(proc.pid)
        size = 32 * 2**20
        head = (f"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                f"application/json\r\nContent-Length: {size}\r\n\r\n").encode()
        assert _raw_response(url, head).startswith(b"HTTP/1.1 413")
        head = (b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (2**20, b" " * 2**20)
        chunks = [chunk] * (games.MAX_BODY_BYTES // 2**20 + 2)    # then it waits for more
        assert _raw_response(url, head, chunks).startswith(b"HTTP/1.1 413")
        assert _peak_rss_mb(proc.pid) - before < 64
        assert httpx.get(url + "/api/options", timeout=HANG_SECONDS).status_code == 200


def test_a_blueprint_that_never_returns_cannot_hold_the_server(bps):
    """A move that never returns (Slow): its request is answered 503 at its deadline (1 s),
    the game is busy (409) while the move goes on, and once both workers hold such a move,
    more work is refused as busy (at once, or when its wait for a worker reaches the
    deadline) while everything else still answers. Slow outlasts every wait of the test:
    each answer came from the server's own limits, however loaded the machine."""
    with _server(search="none", allow_code=True, request_seconds=1.0, workers=2,
                 queue=1) as (url, proc):
        slow = {"blueprint": f"py:{bps}:Slow"}
        with httpx.Client(base_url=url, timeout=HANG_SECONDS) as http:
            ids = [http.post("/api/games", json={"seats": [slow, STRONG]}).json()["id"]
                   for _ in range(3)]
            r = http.post(f"/api/games/{ids[0]}/advance", json={"moves": 1})
            assert r.status_code == 503, r.text                 # the deadline, not the move
            assert "did not finish within 1 s" in r.json()["error"], r.text
            r = http.post(f"/api/games/{ids[0]}/advance", json={"moves": 1})
            assert r.status_code == 409                          # its move goes on
            assert http.post(f"/api/games/{ids[1]}/advance", json={"moves": 1}).status_code \
                == 503
            # Both workers hold a move that never returns: work is refused at once or
            # after the deadline, and everything else still answers.
            results = []

            def post(path, body):
                with httpx.Client(base_url=url, timeout=HANG_SECONDS) as own:
                    answer = own.post(path, json=body)
                    results.append((answer.status_code, answer.json().get("error", "")))
            threads = [threading.Thread(target=post, args=(path, body)) for path, body in (
                (f"/api/games/{ids[2]}/advance", {"moves": 1}),
                ("/api/games", {"seats": [STRONG, STRONG]}),
                ("/api/games", {"seats": [STRONG, STRONG]}))]
            for t in threads:
                t.start()
            time.sleep(0.2)
            assert http.get("/api/options").status_code == 200
            assert http.get(f"/api/games/{ids[0]}").status_code == 200
            for t in threads:
                t.join(HANG_SECONDS)
            assert sorted(s for s, _ in results) == [503, 503, 503], results
            assert all("the server is busy" in error for _, error in results), results


def test_a_500_keeps_the_connection_and_says_nothing_of_the_error(bps):
    with _server(search="none", allow_code=True) as (url, proc):
        with httpx.Client(base_url=url, timeout=HANG_SECONDS) as http:
            gid = http.post("/api/games", json={"seats": [{"blueprint": f"py:{bps}:Raising"},
                                                          STRONG]}).json()["id"]
            r = http.post(f"/api/games/{gid}/advance", json={"moves": 1})
            assert r.status_code == 500 and "secret" not in r.text
            assert r.headers.get("connection", "").lower() != "close"
            assert http.get("/api/options").status_code == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_stops_on_a_signal_while_a_move_hangs(bps, sig):
    """`lbs-pz serve` with a move in progress that outlasts every wait of the test (Slow;
    in progress: a second request on its game is refused as busy) exits on the signal: it
    did not wait for the move."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lbs_pz.cli", "serve", "--port", "0", "--search", "none",
         "--blueprint", f"py:{bps}:Slow"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline()
        url = line.split("http://", 1)[1].split("/", 1)[0]
        url = "http://" + url
        _wait_up(url, proc)
        gid = httpx.post(url + "/api/games", json={"seats": [{"blueprint": f"py:{bps}:Slow"},
                                                             STRONG]},
                         timeout=HANG_SECONDS).json()["id"]
        hung = threading.Thread(target=lambda: _swallow(
            lambda: httpx.post(f"{url}/api/games/{gid}/advance", json={"moves": 1},
                               timeout=HANG_SECONDS)), daemon=True)
        hung.start()

        def in_flight():            # a move request on the game: 409 busy while the move runs
            r = httpx.post(f"{url}/api/games/{gid}/move", json={"move": 0, "turn": 0},
                           timeout=HANG_SECONDS)
            return r.status_code == 409 and "busy with another request" in r.text
        wait_for(in_flight, "the move in progress", proc, every=0.1)
        proc.send_signal(sig)
        proc.wait(timeout=HANG_SECONDS)         # shorter than the move: it did not wait for it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _swallow(fn):
    try:
        fn()
    except httpx.HTTPError:
        pass


# --- connections: idle and trickling clients hold nothing for long -------------------------

def _socket_count(pid: int) -> int:
    """The sockets process `pid` holds open."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:         # closed meanwhile
            pass
    return count


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (what it sent before is read and dropped)."""
    while select.select([sock], [], [], 0)[0]:
        try:
            if not sock.recv(65536):
                return True
        except OSError:
            return True
    return False


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc")
def test_idle_connections_are_capped_and_a_new_request_still_answers():
    """150 idle sockets at a server with 128 file descriptors: it keeps the newest (its
    default cap, for that limit), closes the longest idle, and answers a new request. The
    read deadline is far off: only the cap closes them."""
    cap, opened = connection_cap(128), 150
    assert opened > cap
    with _server(search="none", files=128, connections={"read_seconds": 600}) as (url, proc):
        host, port = url.rsplit("//", 1)[1].split(":")
        baseline = _socket_count(proc.pid)
        idle = [socket.create_connection((host, int(port)), timeout=HANG_SECONDS)
                for _ in range(opened)]
        try:
            assert httpx.get(url + "/api/options", timeout=HANG_SECONDS).status_code == 200
            closed = set()

            def enough():
                closed.update(i for i, sock in enumerate(idle) if i not in closed
                              and _closed(sock))
                return len(closed) >= opened - cap
            assert poll_until(enough, every=0.1), f"{len(closed)} of {opened} idle sockets closed"
            time.sleep(0.5)
            enough()
            # The newest are still open: a cap closed the others, not a timeout.
            assert opened - len(closed) >= cap - 2, len(closed)
            assert all(i in closed for i in range(opened - cap))     # the longest idle first
            assert poll_until(lambda: _socket_count(proc.pid) - baseline <= cap, every=0.1)
            assert httpx.get(url + "/api/options", timeout=HANG_SECONDS).status_code == 200
        finally:
            for sock in idle:
                sock.close()


def test_idle_and_trickling_connections_are_closed(bps):
    """With read_seconds=1: a socket that sends nothing, a request head sent a byte at a
    time, a body sent a byte at a time, and a kept-alive connection that then trickles are
    all closed by the server; a request whose work takes longer than that is answered."""
    with _server(search="none", allow_code=True, connections={"read_seconds": 1.0}) \
            as (url, proc):
        host, port = url.rsplit("//", 1)[1].split(":")

        def connect():
            return socket.create_connection((host, int(port)), timeout=HANG_SECONDS)
        idle, head, body, kept = (connect() for _ in range(4))
        head.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        body.sendall(b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 100000\r\n\r\n")
        kept.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while b"}" not in answer:                      # the whole (small) JSON answer
            answer += kept.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /api/options HTTP/1.1\r\n")    # then trickles the rest
        sockets = {"idle": (idle, None), "head": (head, b"a"), "body": (body, b" "),
                   "kept": (kept, b"b")}
        sent = dict.fromkeys(sockets, 0)
        closed = set()

        def all_closed():
            for name, (sock, trickle) in sockets.items():
                if name in closed:
                    continue
                if _closed(sock):
                    closed.add(name)
                elif trickle is not None:
                    try:
                        sock.send(trickle)
                        sent[name] += 1
                    except OSError:
                        closed.add(name)
            return len(closed) == len(sockets)
        try:
            assert poll_until(all_closed, every=0.25), (sorted(set(sockets) - closed), sent)
        finally:
            for sock, _ in sockets.values():
                sock.close()
        # The deadline covers the request's arrival, not the app's work on it (Sleepy: 2.5 s).
        with httpx.Client(base_url=url, timeout=HANG_SECONDS) as http:
            gid = http.post("/api/games", json={"seats": [{"blueprint": f"py:{bps}:Sleepy"},
                                                          STRONG]}).json()["id"]
            r = http.post(f"/api/games/{gid}/advance", json={"moves": 1})
            assert r.status_code == 200 and r.json()["moves_played"] == 1


def test_a_connection_over_the_cap_is_refused_while_every_other_one_is_busy(bps):
    """Two connections (the cap) with a request in progress each (a move Held until the test
    lets it go): a third is answered 503 and closed (none is idle to close instead); once
    they are answered, a new one is served."""
    release = os.path.join(os.path.dirname(bps), "release")
    with _server(search="none", allow_code=True, request_seconds=HANG_SECONDS,
                 connections={"max_connections": 2}) as (url, proc):
        held = {"blueprint": f"py:{bps}:Held"}
        with httpx.Client(base_url=url, timeout=HANG_SECONDS) as http:
            ids = [http.post("/api/games", json={"seats": [held, STRONG]}).json()["id"]
                   for _ in range(2)]
        base = []                           # the server's sockets without a connection

        def settled():
            base.append(_socket_count(proc.pid))
            return len(base) >= 5 and base[-1] == base[-5]
        assert poll_until(settled, every=0.1)
        statuses = []

        def advance(gid):
            with httpx.Client(base_url=url, timeout=HANG_SECONDS) as own:
                statuses.append(own.post(f"/api/games/{gid}/advance",
                                         json={"moves": 1}).status_code)
        threads = [threading.Thread(target=advance, args=(gid,)) for gid in ids]
        for t in threads:
            t.start()
        try:
            assert poll_until(lambda: _socket_count(proc.pid) >= base[-1] + 2,   # both in
                              every=0.1)
            host, port = url.rsplit("//", 1)[1].split(":")
            answers = []

            def refused():
                with socket.create_connection((host, int(port)), timeout=HANG_SECONDS) as sock:
                    sock.settimeout(10)     # accepted instead (not yet counted): try again
                    answer = b""
                    try:
                        while True:
                            data = sock.recv(65536)
                            if not data:
                                break
                            answer += data
                    except socket.timeout:
                        return False
                answers.append(answer)
                return bool(answer)
            assert poll_until(refused, every=0.1), "a third connection was never refused"
            assert statuses == [], statuses                 # the two were still in progress
        finally:
            open(release, "w").close()                      # the held moves end
        assert answers[0].startswith(b"HTTP/1.1 503") and b"too many connections" in answers[0]
        for t in threads:
            t.join(HANG_SECONDS)
        assert statuses == [200, 200]                   # answered once their moves ended
        assert httpx.get(url + "/api/options", timeout=HANG_SECONDS).status_code == 200


def test_server_options_refuse_bad_limits():
    for kwargs in ({"max_connections": 0}, {"max_connections": 2.5}, {"max_connections": True},
                   {"read_seconds": 0}, {"read_seconds": math.inf}, {"idle_seconds": -1}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            server_options(**kwargs)
    options = server_options(max_connections=7, read_seconds=3)
    assert options["http"].max_connections == 7 and options["http"].read_seconds == 3.0
    assert options["limit_concurrency"] == 14
    assert options["timeout_keep_alive"] == games.IDLE_SECONDS
