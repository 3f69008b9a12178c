"""The web page's API (lbs_pz.web.app) through Starlette's TestClient, against real games:
watch mode (rule bot, LBS), decisions, play mode (a whole game, and no response ever holds
the human's cards or the deck order), refused moves, isolation, replays, export, bad input."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # starlette's notice about httpx
    from starlette.testclient import TestClient  # noqa: E402

from tests.helpers.paths import ROOT  # noqa: E402
from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.engine.records import from_hanablive, to_hanablive  # noqa: E402
from lbs_pz.engine.seeds import EVAL, deal_seeds  # noqa: E402
from lbs_pz.web.app import GuardedH11, connection_cap, create_app  # noqa: E402
from lbs_pz.web.games import IDLE_SECONDS, READ_SECONDS  # noqa: E402

STRONG = {"blueprint": "strong"}
LBS = {"blueprint": "strong", "search": "lbs-16", "rollouts": 8}


@pytest.fixture(scope="module")
def app():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_app(blueprint="strong", search="lbs-16", rollouts=8)


@pytest.fixture(scope="module")
def client(app):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # starlette's httpx deprecation notice
        yield TestClient(app)


def _new(client, seats, seed=0, mode="watch", **extra):
    r = client.post("/api/games", json={"seed": seed, "seats": seats, "mode": mode, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def _deal(seed, config=HanabiConfig()):
    return HanabiState(config, seed=int(deal_seeds(EVAL, 0, seed, 1)[0]))


def _names(config, cards):
    return [config.card_name(c) for c in cards]


# --- watch mode ----------------------------------------------------------------------------

def test_options(client):
    o = client.get("/api/options").json()
    assert "strong" in o["blueprints"] and o["searches"][0] == "blueprint"
    assert "lbs-16" in o["searches"] and o["server_blueprint"] == "strong"
    assert o["default_variant"]["players"] == 2 and o["default_variant"]["hand_size"] == 5
    assert o["limits"]["search"]["rollouts"] >= 256 and o["limits"]["body_bytes"] > 0
    assert o["limits"]["allow_code"] is False and o["limits"]["allow_files"] is False


def test_index_is_served(client):
    r = client.get("/")
    assert r.status_code == 200 and "html" in r.headers["content-type"]


def test_watch_strong_forward_and_back(client):
    created = _new(client, [STRONG, STRONG], seed=7)
    gid, snap = created["id"], created["state"]
    assert snap["at"] == 0 and snap["moves_played"] == 0 and snap["mode"] == "watch"
    # The deal is game 7 of the evaluation stream, all cards face up for the spectator.
    state = _deal(7)
    for p in range(2):
        assert [c["card"] for c in snap["seats"][p]["hand"]] == _names(state.config, state.hand(p))
    snap = client.post(f"/api/games/{gid}/advance", json={"moves": 5}).json()
    assert snap["moves_played"] == 5 and snap["at"] == 5 and len(snap["history"]) == 5
    # The same moves as the strong bot on the engine directly.
    bot = load_blueprint("strong")
    states = [state.clone()]
    for _ in range(5):
        state.apply(bot.act(state))
        states.append(state.clone())
    assert [h["move"] for h in snap["history"]] == state.move_history
    back = client.get(f"/api/games/{gid}?at=2").json()
    # an earlier position keeps the whole history (the page marks moves after it as
    # future), and its last move is the one that led to it
    assert back["at"] == 2 and back["moves_played"] == 5 and len(back["history"]) == 5
    assert back["last_move"] == back["history"][1]
    assert back["score"] == states[2].score and back["deck_size"] == states[2].deck_size
    assert back["information_tokens"] == states[2].information_tokens
    assert [c["card"] for c in back["seats"][0]["hand"]] == _names(state.config,
                                                                   states[2].hand(0))
    assert {m["id"] for m in back["legal_moves"]} == set(states[2].legal_moves())
    # A seat's view hides that seat's cards only.
    seat_view = client.get(f"/api/games/{gid}?at=2&view=1").json()
    assert seat_view["view"] == 1
    assert all(c["card"] is None for c in seat_view["seats"][1]["hand"])
    assert all(c["card"] is not None for c in seat_view["seats"][0]["hand"])
    done = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    while not state.is_terminal:
        state.apply(bot.act(state))
    assert done["terminal"] and done["score"] == state.score
    assert done["moves_played"] == state.num_moves_played and done["legal_moves"] == []
    assert client.get(f"/api/games/{gid}/decisions/0").status_code == 404   # no search


def test_watch_lbs_decision(client):
    gid = _new(client, [LBS, STRONG], seed=3)["id"]
    snap = client.post(f"/api/games/{gid}/advance", json={"moves": 3}).json()
    assert snap["decisions"] == [0, 2]
    assert [h["searched"] for h in snap["history"]] == [True, False, True]
    assert snap["seats"][0]["name"] == "strong + lbs-16" and snap["seats"][0]["rollouts"] == 8
    d = client.get(f"/api/games/{gid}/decisions/0").json()
    for key in ("k", "seat", "search", "move", "blueprint_move", "deviated", "fallback",
                "worlds", "rollouts", "seconds", "candidates", "belief"):
        assert key in d, key
    assert d["k"] == 0 and d["seat"] == 0 and d["search"] == "lbs-16"
    assert d["move"] == snap["history"][0]["move"]
    assert d["deviated"] == (d["move"] != d["blueprint_move"])
    state = _deal(3)
    assert sorted(c["id"] for c in d["candidates"]) == state.legal_moves()
    assert d["worlds"] <= 8 and d["rollouts"] >= d["worlds"]
    assert d["verify_gain"] is None        # no verification worlds by default
    for c in d["candidates"]:
        assert set(c) >= {"id", "name", "mean", "sem", "count", "gain", "gain_sem", "pruned"}
        assert 0 <= c["mean"] <= 25 and c["count"] >= 1
    blueprint = [c for c in d["candidates"] if c["id"] == d["blueprint_move"]]
    assert blueprint and blueprint[0]["gain"] == 0
    belief = d["belief"]
    assert belief["colors"] == list("RYGWB") and belief["ranks"] == [1, 2, 3, 4, 5]
    table = np.array(belief["slots"])
    assert table.shape == (5, 5, 5)
    np.testing.assert_allclose(table.sum(axis=(1, 2)), 1.0, atol=1e-2)
    # Nothing is hinted yet: a 5 of any colour has at most one copy, a 1 three.
    assert table[:, :, 0].sum() > table[:, :, 4].sum()
    assert "true_hand" not in d                 # the seat's real cards: once the game is over
    done = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    while not done["over"]:
        done = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    d = client.get(f"/api/games/{gid}/decisions/0").json()
    assert d["true_hand"] == [_names(state.config, [c])[0] for c in state.hand(0)]
    assert client.get(f"/api/games/{gid}/decisions/1").status_code == 404
    assert client.get(f"/api/games/{gid}/decisions/99").status_code == 404


# --- play mode -----------------------------------------------------------------------------

def _walk(value, path=()):
    """Every (path, leaf or container) of a JSON value."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))


def _assert_no_leak(body, game, human, config):
    """No hand position of the human seat holds a card, no field is a deck, and no list of
    card names in the response is a run (3+) of the cards still to be drawn."""
    states = game.states
    for path, value in _walk(body):
        assert not (path and path[-1] in ("deck", "hands")), path
        # A snapshot's seats: the human's hand positions are null.
        if isinstance(value, dict) and "seats" in value and "view" in value:
            assert value["view"] == human
            hand = value["seats"][human]["hand"]
            at = value["at"]
            hidden = _names(config, states[at].hand(human))
            assert len(hand) == len(hidden)
            for slot in hand:
                assert slot["card"] is None
                assert set(slot) <= {"card", "color_hint", "rank_hint", "knowledge",
                                     "colors", "ranks"}
        if isinstance(value, list) and len(value) >= 3 and all(isinstance(v, str) for v in value):
            latest = states[-1]
            to_draw = _names(config, latest.deck[config.deck_size - latest.deck_size:])
            for i in range(len(to_draw) - 2):
                run = to_draw[i:i + 3]
                assert not any(value[j:j + 3] == run for j in range(len(value) - 2)) \
                    or path[-1:] == ("discards",), (path, value)


def test_play_whole_game_never_leaks(app, client):
    rng = np.random.default_rng(0)
    human = 1
    body = {"seed": 11, "mode": "play", "seats": [STRONG, {"human": True}]}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201
    gid = r.json()["id"]
    game = app.state.games.get(gid)
    config = game.config
    responses = [r.json()]
    snap = r.json()["state"]
    assert snap["current_player"] == human and snap["view"] == human
    assert snap["seats"][human]["human"] is True
    illegal_checked = stale_checked = False
    while not snap["terminal"]:
        legal = [m["id"] for m in snap["legal_moves"]]
        assert legal == game.latest.legal_moves() and snap["current_player"] == human
        if not illegal_checked:
            bad = next(m for m in range(config.num_moves) if m not in legal)
            r = client.post(f"/api/games/{gid}/move", json={"move": bad,
                                                          "turn": snap["moves_played"]})
            assert r.status_code == 400 and "legal moves" in r.json()["error"]
            responses.append(r.json())
            illegal_checked = True
        if not stale_checked and snap["moves_played"] > 0:
            r = client.post(f"/api/games/{gid}/move", json={"move": legal[0],
                                                          "turn": snap["moves_played"] - 1})
            assert r.status_code == 409 and "stale" in r.json()["error"]
            responses.append(r.json())
            stale_checked = True
            # Looking back is allowed, still from the human's seat.
            r = client.get(f"/api/games/{gid}?at=0&view=spectator")
            assert r.status_code == 200 and r.json()["view"] == human
            responses.append(r.json())
            r = client.get(f"/api/games/{gid}/decisions/0")
            assert r.status_code == 403
            assert client.get(f"/api/games/{gid}/export").status_code == 403
        before = snap["moves_played"]
        r = client.post(f"/api/games/{gid}/move",
                        json={"move": int(rng.choice(legal)), "turn": before})
        assert r.status_code == 200, r.text
        snap = r.json()
        responses.append(snap)
        responses.append(client.get(f"/api/games/{gid}").json())
        assert snap["moves_played"] > before
    assert illegal_checked and stale_checked
    scanned = 0
    for body in responses:
        snapshot = body.get("state", body)
        if not snapshot.get("over", False):       # before the end: the human's view only
            _assert_no_leak(body, game, human, config)
            scanned += 1
    assert scanned >= len(responses) - 2 > 10
    # The scanner sees a card put back into the human's hand.
    leaked = json.loads(json.dumps(responses[0]))
    state0 = leaked["state"]
    state0["seats"][human]["hand"][0]["card"] = config.card_name(game.states[0].hand(human)[0])
    with pytest.raises(AssertionError):
        _assert_no_leak(leaked, game, human, config)
    # Over: the human's cards are shown, the game exports.
    final = responses[-1]
    assert final["terminal"] and final["legal_moves"] == []
    spectator = client.get(f"/api/games/{gid}?view=spectator").json()
    assert all(c["card"] is not None for c in spectator["seats"][human]["hand"])
    assert client.get(f"/api/games/{gid}/export").status_code == 200
    r = client.post(f"/api/games/{gid}/move", json={"move": 0, "turn": final["moves_played"]})
    assert r.status_code == 409


def test_play_with_lbs_partner_and_busy_game(app, client):
    created = _new(client, [{"human": True}, LBS], seed=2, mode="play")
    gid, snap = created["id"], created["state"]
    assert snap["current_player"] == 0 and snap["moves_played"] == 0
    game = app.state.games.get(gid)
    with game.lock:     # a move already running: a second request is refused, not queued
        r = client.post(f"/api/games/{gid}/move",
                        json={"move": snap["legal_moves"][0]["id"], "turn": 0})
        assert r.status_code == 409 and "busy" in r.json()["error"]
    hint = next(m for m in snap["legal_moves"] if m["kind"].startswith("reveal"))
    snap = client.post(f"/api/games/{gid}/move", json={"move": hint["id"], "turn": 0}).json()
    assert snap["moves_played"] == 2 and snap["current_player"] == 0
    assert snap["history"][1]["searched"] is True and snap["decisions"] == [1]
    # Whether the search deviated depends on rollouts through the human's real hand.
    assert snap["history"][1]["deviated"] is None
    assert client.get(f"/api/games/{gid}/decisions/1").status_code == 403
    assert all(c["card"] is None for c in snap["seats"][0]["hand"])


def test_two_games_are_isolated(client):
    body = {"seed": 5, "mode": "play", "seats": [{"human": True}, STRONG]}
    a = client.post("/api/games", json=body).json()
    b = client.post("/api/games", json=body).json()
    assert a["id"] != b["id"]
    move = a["state"]["legal_moves"][0]["id"]
    after = client.post(f"/api/games/{a['id']}/move", json={"move": move, "turn": 0}).json()
    assert after["moves_played"] == 2
    other = client.get(f"/api/games/{b['id']}").json()
    assert other["moves_played"] == 0 and other["history"] == []
    r = client.post(f"/api/games/{b['id']}/move", json={"move": move, "turn": 0})
    assert r.status_code == 200 and r.json()["history"][0]["move"] == move


def test_the_log_names_seats_absolutely_and_the_touched_slots(client):
    """Every history entry says the move in words with absolute seats; a clue also names
    its receiver and the slots it touched (those the engine's record reveals)."""
    game = _new(client, [STRONG, STRONG], seed=3)
    snap = client.post(f"/api/games/{game['id']}/advance", json={"moves": 12}).json()
    state = HanabiState(HanabiConfig(), seed=int(deal_seeds(EVAL, 0, 3, 1)[0]))
    clues = 0
    records = _records_of(state, [h["move"] for h in snap["history"]])
    for entry, rec in zip(snap["history"], records):
        if entry["kind"].startswith("reveal"):
            clues += 1
            touched = [i for i in range(5) if (rec["reveal"] >> i) & 1]
            assert entry["touched"] == touched and entry["target"] == 1 - entry["seat"]
            assert entry["text"].startswith(f"seat {entry['seat']} -> seat {entry['target']}: ")
            assert entry["text"].endswith(" and ".join([", ".join(map(str, touched[:-1])),
                                                         str(touched[-1])])
                                          if len(touched) > 1 else f"slot {touched[0]}")
        else:
            verb = "plays" if entry["kind"] == "play" else "discards"
            assert entry["text"].startswith(f"seat {entry['seat']} {verb} {entry['card']} from")
            assert entry["text"].endswith("(misplay)") == (entry["kind"] == "play"
                                                           and not entry["scored"])
    assert clues >= 2


def _records_of(state, moves):
    for move in moves:
        state.apply(move)
    return state.move_records()


def test_a_seat_says_what_its_search_runs_as_and_why(client):
    """lbs-16 on a blueprint with no value for the game runs as lbs-inf: the seat says so,
    with what the defaults chose; the strong bot at 3 players finds its shipped models."""
    game = _new(client, [{"blueprint": "medium", "search": "lbs-16", "rollouts": 8}, STRONG,
                         {"blueprint": "strong", "search": "lbs-16", "rollouts": 8}],
                variant={"players": 3})
    medium, _, strong = game["state"]["seats"]
    assert medium["name"] == "medium + lbs-inf"
    assert medium["notes"][0].startswith("lbs-16 runs as lbs-inf: no value for medium")
    assert any(n.startswith("belief: grounded+cf") for n in medium["notes"])
    assert strong["name"] == "strong + lbs-16"
    assert any("belief_strong_3p" in n for n in strong["notes"])
    assert any("value_strong_3p" in n for n in strong["notes"])


def test_recent_games_list_a_play_game_only_once_it_is_over():
    """GET /api/games: the newest games first, each with its mode, seats and progress; a
    play game's id (the address that lets one move for its person) only once it is over."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = TestClient(create_app())
    watch = _new(fresh, [STRONG, STRONG], seed=1)
    tiny = {"colors": 1, "ranks": 2, "hand_size": 1}
    play = _new(fresh, [{"human": True}, STRONG], mode="play", variant=tiny)
    assert [g["id"] for g in fresh.get("/api/games").json()["games"]] == [watch["id"]]
    snap = play["state"]
    while not snap["over"]:
        move = snap["legal_moves"][0]["id"]
        snap = fresh.post(f"/api/games/{play['id']}/move",
                          json={"move": move, "turn": snap["moves_played"]}).json()
        assert "error" not in snap, snap
    games = fresh.get("/api/games").json()["games"]
    assert [g["id"] for g in games] == [play["id"], watch["id"]]
    assert games[0]["mode"] == "play" and games[0]["over"] and games[0]["players"] == 2
    assert games[0]["moves_played"] == snap["moves_played"] and len(games[0]["seats"]) == 2


def test_games_are_capped():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = TestClient(create_app(cap=2))
    ids = [_new(small, [STRONG, STRONG], seed=i)["id"] for i in range(3)]
    assert small.get(f"/api/games/{ids[0]}").status_code == 404
    assert small.get(f"/api/games/{ids[2]}").status_code == 200


# --- replays and export ----------------------------------------------------------------------

def test_hanablive_replay_and_export_round_trip(client):
    state = _deal(4)
    bot = load_blueprint("medium")
    while not state.is_terminal:
        state.apply(bot.act(state))
    record = to_hanablive(state, ["alice", "bob"])
    r = client.post("/api/replays", json={"hanablive": record})
    assert r.status_code == 201, r.text
    gid, snap = r.json()["id"], r.json()["state"]
    assert snap["mode"] == "replay" and snap["at"] == 0
    assert [s["name"] for s in snap["seats"]] == ["alice", "bob"]
    assert snap["record"]["score"] == state.score
    done = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
    assert done["moves_played"] == state.num_moves_played and done["score"] == state.score
    assert [h["move"] for h in done["history"]] == state.move_history
    # Cannot go beyond the record.
    again = client.post(f"/api/games/{gid}/advance", json={"moves": 5}).json()
    assert again["moves_played"] == state.num_moves_played
    exported = client.get(f"/api/games/{gid}/export").json()
    back = from_hanablive(json.dumps(exported))
    assert back.deck == state.deck and back.move_history == state.move_history
    assert back.score == state.score


def test_watch_game_export_round_trip(client):
    gid = _new(client, [STRONG, STRONG], seed=9)["id"]
    snap = client.post(f"/api/games/{gid}/advance", json={"moves": 12}).json()
    exported = client.get(f"/api/games/{gid}/export").json()
    back = from_hanablive(exported)
    assert back.move_history == [h["move"] for h in snap["history"]]
    assert back.deck == _deal(9).deck and exported["players"][0] == "strong"


def test_jsonl_replay_reruns_the_method(client, tmp_path):
    from lbs_pz.eval.backends import collect
    from lbs_pz.search.methods import MethodSpec

    log = tmp_path / "games.jsonl"
    specs = [MethodSpec("blueprint", blueprint="weak"),
             MethodSpec("lbs-1", blueprint="strong", rollouts=4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect(specs, {"players": 2}, games=1, seed=3, first_game=6, backend="inline",
                show_progress=False, jsonl=str(log))
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    for index, line in enumerate(lines):
        entry = json.loads(line)
        body = ({"jsonl_line": entry} if index == 0
                else {"jsonl_text": "\n".join(lines), "index": index})
        r = client.post("/api/replays", json=body)
        assert r.status_code == 201, r.text
        gid, snap = r.json()["id"], r.json()["state"]
        assert snap["record"]["kind"] == "jsonl" and snap["seed"] == 6
        assert snap["record"]["score"] == entry["result"]["score"]
        done = client.post(f"/api/games/{gid}/advance", json={"moves": -1}).json()
        assert done["terminal"] and done["score"] == entry["result"]["score"]
        assert done["moves_played"] == entry["result"]["moves"]
        assert len(done["decisions"]) == entry["result"]["decisions"]


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("body, words", [
    ({"seats": [{"blueprint": "nosuchbot"}, STRONG]}, "nosuchbot"),
    ({"seats": [STRONG]}, "one entry per player"),
    ({"seats": [STRONG, STRONG, STRONG]}, "one entry per player"),
    ({"seats": [STRONG, STRONG], "seed": -1}, "seed"),
    ({"seats": [STRONG, STRONG], "seed": "x"}, "seed"),
    ({"seats": [STRONG, STRONG], "seed": True}, "seed"),
    ({"seats": [STRONG, STRONG], "seed": 2**40}, "seed"),
    ({"seats": [{"blueprint": "strong", "search": "lbs-x"}, STRONG]}, "search"),
    ({"seats": [{"blueprint": "strong", "search": "lbs-1", "rollouts": 0}, STRONG]}, "rollouts"),
    ({"seats": [STRONG, STRONG], "variant": {"players": 9}}, "players"),
    ({"seats": [STRONG, STRONG], "variant": {"deck": 3}}, "deck"),
    ({"seats": [STRONG, STRONG], "mode": "play"}, "human"),
    ({"seats": [{"human": True}, STRONG]}, "watch mode"),
    ({"seats": [STRONG, STRONG], "mode": "fly"}, "mode"),
])
def test_bad_game_requests(client, body, words):
    r = client.post("/api/games", json=body)
    assert r.status_code == 400
    assert words in r.json()["error"]


def test_bad_requests_elsewhere(client):
    headers = {"content-type": "application/json"}
    assert client.post("/api/games", content=b"{not json", headers=headers).status_code == 400
    # A body that is not declared JSON (what another site's page may send unasked).
    r = client.post("/api/games", content=json.dumps({"seats": [STRONG, STRONG]}),
                    headers={"content-type": "text/plain"})
    assert r.status_code == 400 and "application/json" in r.json()["error"]
    assert client.post("/api/games", json=[1, 2]).status_code == 400
    assert client.get("/api/games/nope").status_code == 404
    assert "error" in client.get("/api/games/nope").json()
    gid = _new(client, [STRONG, STRONG])["id"]
    assert client.get(f"/api/games/{gid}?at=5").status_code == 400
    assert client.get(f"/api/games/{gid}?at=x").status_code == 400
    assert client.get(f"/api/games/{gid}?view=7").status_code == 400
    assert client.get(f"/api/games/{gid}?view=me").status_code == 400
    assert client.post(f"/api/games/{gid}/advance", json={"moves": "2"}).status_code == 400
    r = client.post(f"/api/games/{gid}/move", json={"move": 0, "turn": 0})
    assert r.status_code == 400 and "play mode" in r.json()["error"]
    assert client.post("/api/replays", json={"hanablive": {"players": []}}).status_code == 400
    assert client.post("/api/replays", json={"jsonl_line": {"key": "[1]"}}).status_code == 400
    assert client.post("/api/replays", json={"other": 1}).status_code == 400
    assert client.get("/api/nothing").status_code == 404


def test_create_app_refuses_bad_defaults():
    with pytest.raises(ValueError, match="nosuch"):
        create_app(blueprint="nosuch")
    with pytest.raises(ValueError, match="search"):
        create_app(search="mcts")


# --- the command -----------------------------------------------------------------------------

def test_serve_command(monkeypatch, capsys):
    import uvicorn

    from lbs_pz.cli import main

    assert main(["serve", "--blueprint", "nosuchbot"]) == 2
    assert "nosuchbot" in capsys.readouterr().err
    assert main(["serve", "--search", "mcts"]) == 2
    assert "search" in capsys.readouterr().err
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    assert main(["serve", "--port", "0", "--search", "none"]) == 0
    out = capsys.readouterr()
    app, kw = calls[-1]
    assert kw["host"] == "127.0.0.1" and kw["port"] > 0
    assert f"http://127.0.0.1:{kw['port']}/" in out.out and "warning" not in out.err
    local = TestClient(app, base_url="http://127.0.0.1:8000")
    # --search "none" is the older name of "blueprint"
    assert local.get("/api/options").json()["server_search"] == "blueprint"
    # On localhost, a request naming another host (a DNS-rebinding page) is refused.
    assert TestClient(app, base_url="http://evil.example").get("/api/options").status_code == 400
    assert main(["serve", "--host", "0.0.0.0", "--port", "8123"]) == 0
    assert "warning" in capsys.readouterr().err and calls[-1][1]["port"] == 8123
    # The connection limits: the guarded protocol, the default cap for this process.
    assert issubclass(kw["http"], GuardedH11) and kw["http"].max_connections == connection_cap()
    assert kw["http"].read_seconds == READ_SECONDS and kw["backlog"] == connection_cap()
    assert main(["serve", "--port", "0", "--max-connections", "7", "--read-seconds", "2.5"]) == 0
    kw = calls[-1][1]
    assert kw["http"].max_connections == 7 and kw["http"].read_seconds == 2.5
    assert kw["limit_concurrency"] == 14 and kw["timeout_keep_alive"] == IDLE_SECONDS
    for bad in (["--max-connections", "0"], ["--read-seconds", "0"], ["--read-seconds", "inf"]):
        with pytest.raises(SystemExit):
            main(["serve", "--port", "0", *bad])
        assert bad[0] in capsys.readouterr().err


# A user's class whose batched moves (what the search's filter of a partner's move asks)
# fail, and whose own move (what the page asks for the blueprint's move) does not.
BATCH_FAILS = """
class BatchFails:
    name = "batch-fails"
    def act(self, state, seat=None):
        return state.legal_moves()[0]
    def act_batch(self, batch):
        raise RuntimeError("no batched moves here")
"""


def test_a_failed_search_plays_the_blueprint_and_says_why(tmp_path):
    (tmp_path / "bps.py").write_text(BATCH_FAILS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app(allow_code=True))
    seats = [{"blueprint": f"py:{tmp_path / 'bps.py'}:BatchFails", "search": "lbs-16",
              "rollouts": 4}, STRONG]
    gid = _new(client, seats, seed=1)["id"]
    snap = client.post(f"/api/games/{gid}/advance", json={"moves": 3}).json()
    assert snap["moves_played"] == 3 and snap["decisions"] == [0, 2]
    # move 2 filters seat 0's sampled hands by its partner's move 1, a batched question
    d = client.get(f"/api/games/{gid}/decisions/2").json()
    assert d["fallback"] and d["move"] == d["blueprint_move"] and d["candidates"] == []
    assert "no batched moves here" in d["error"] and "no batched moves here" in d["why"]
    assert snap["history"][2]["move"] == d["move"]


def test_python_blueprints_only_when_allowed(client):
    example = os.path.join(ROOT, "examples", "my_blueprint.py")
    spec = f"py:{example}:HintPlayDiscard"
    r = client.post("/api/games", json={"seats": [{"blueprint": spec}, STRONG]})
    assert r.status_code == 403 and "--allow-code" in r.json()["error"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = TestClient(create_app(blueprint=spec, search="none"))
        free = TestClient(create_app(allow_code=True))
    for c in (own, free):
        snap = _new(c, [{"blueprint": spec}, STRONG])["state"]
        assert snap["seats"][0]["name"].endswith("HintPlayDiscard")
    r = free.post("/api/games", json={"seats": [{"blueprint": "py:missing.py:X"}, STRONG]})
    assert r.status_code == 400 and "missing.py" in r.json()["error"]
    r = own.post("/api/games", json={"seats": [{"blueprint": "py:missing.py:X"}, STRONG]})
    assert r.status_code == 403
