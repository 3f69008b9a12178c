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
from lbs_pz.web.app import create_app  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRONG = {"blueprint": "strong"}
BLUEPRINTS = """
import time

class Slow:
    name = "slow"
    def act(self, state, seat=None):
        time.sleep(20)
        return state.legal_moves()[0]

class Raising:
    name = "raising"
    def act(self, state, seat=None):
        raise RuntimeError("secret detail from /etc/shadow")
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


def test_a_play_game_gets_a_random_deal_whose_number_is_secret_until_the_end(app, client):
    body = {"mode": "play", "seats": [{"human": True}, STRONG]}
    first = client.post("/api/games", json=body).json()
    second = client.post("/api/games", json=body).json()
    decks = [app.state.games.get(g["id"]).states[0].deck for g in (first, second)]
    assert decks[0] != decks[1], "playing again with the defaults dealt the same cards"
    gid, snap = first["id"], first["state"]
    assert snap["deal"] == "random" and snap["seed"] is None
    assert client.get(f"/api/games/{gid}?at=0&view=spectator").json()["seed"] is None
    responses = _play_out(client, gid, snap, np.random.default_rng(1))
    secret = [r for r in responses if not r["over"]]
    assert secret and all(r["seed"] is None and r["deal"] == "random" for r in secret)
    # Over: the number is shown, and it is that deal of the evaluation stream.
    final = client.get(f"/api/games/{gid}").json()
    assert final["over"] and isinstance(final["seed"], int) and final["deal"] == "random"
    assert _deal(final["seed"]).deck == decks[0]


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
                   {"workers": 0}, {"queue": -1}, {"rollouts": 10**6}, {"workers": True}):
        with pytest.raises(ValueError):
            _app(**kwargs)


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


def _wait_up(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read()[-2000:]}")
        try:
            if httpx.get(url + "/api/options", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the server did not answer")


@contextlib.contextmanager
def _server(**kwargs):
    """A real uvicorn serving create_app(**kwargs) in a child process: (url, proc)."""
    port = _free_port()
    code = textwrap.dedent(f"""
        import warnings
        warnings.simplefilter("ignore")
        import uvicorn
        from lbs_pz.web.app import create_app
        app = create_app(**{kwargs!r})
        uvicorn.run(app, host="127.0.0.1", port={port}, log_level="critical",
                    timeout_graceful_shutdown=0.5)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url, proc)
        yield url, proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _raw_response(url: str, head: bytes, body_chunks=()) -> bytes:
    """Send `head`, then `body_chunks` until the server answers, on a raw socket; the
    answer's first bytes (b"" if none came within 10 s)."""
    host, port = url.rsplit("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
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
        assert httpx.get(url + "/api/options", timeout=5).status_code == 200


def test_a_blueprint_that_never_returns_cannot_hold_the_server(bps):
    with _server(search="none", allow_code=True, request_seconds=1.0, workers=2,
                 queue=1) as (url, proc):
        slow = {"blueprint": f"py:{bps}:Slow"}
        with httpx.Client(base_url=url, timeout=10) as http:
            ids = [http.post("/api/games", json={"seats": [slow, STRONG]}).json()["id"]
                   for _ in range(3)]
            start = time.monotonic()
            r = http.post(f"/api/games/{ids[0]}/advance", json={"moves": 1})
            assert r.status_code == 503 and time.monotonic() - start < 3
            r = http.post(f"/api/games/{ids[0]}/advance", json={"moves": 1})
            assert r.status_code == 409                          # its move goes on
            assert http.post(f"/api/games/{ids[1]}/advance", json={"moves": 1}).status_code \
                == 503
            # Both workers hold a move that never returns: work is refused at once or
            # after the deadline, and everything else still answers.
            results = []

            def post(path, body):
                with httpx.Client(base_url=url, timeout=10) as own:
                    t = time.monotonic()
                    results.append((own.post(path, json=body).status_code,
                                    time.monotonic() - t))
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
                t.join(10)
            assert sorted(s for s, _ in results) == [503, 503, 503]
            assert all(seconds < 3 for _, seconds in results), results


def test_a_500_keeps_the_connection_and_says_nothing_of_the_error(bps):
    with _server(search="none", allow_code=True) as (url, proc):
        with httpx.Client(base_url=url, timeout=10) as http:
            gid = http.post("/api/games", json={"seats": [{"blueprint": f"py:{bps}:Raising"},
                                                          STRONG]}).json()["id"]
            r = http.post(f"/api/games/{gid}/advance", json={"moves": 1})
            assert r.status_code == 500 and "secret" not in r.text
            assert r.headers.get("connection", "").lower() != "close"
            assert http.get("/api/options").status_code == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_stops_on_a_signal_while_a_move_hangs(bps, sig):
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
                                                             STRONG]}, timeout=10).json()["id"]
        hung = threading.Thread(target=lambda: _swallow(
            lambda: httpx.post(f"{url}/api/games/{gid}/advance", json={"moves": 1},
                               timeout=30)), daemon=True)
        hung.start()
        time.sleep(0.5)                         # the move is in flight, and never returns
        start = time.monotonic()
        proc.send_signal(sig)
        proc.wait(timeout=10)
        assert time.monotonic() - start < 2.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _swallow(fn):
    try:
        fn()
    except httpx.HTTPError:
        pass
