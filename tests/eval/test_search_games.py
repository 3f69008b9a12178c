"""Recording a search's own games on training deals and learning from them: the
`lbs-pz search-games` file, its replay into training games, and `distill --search-games`."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents import RuleBot, blueprint_identity
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, TRAIN, deal_seeds
from lbs_pz.eval.backends import play_game
from lbs_pz.eval.search_games import play_search_game, record_search_games
from lbs_pz.files import MAX_LINE_BYTES, open_locked
from lbs_pz.search.build import built_agents
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import check_recorded_for, read_search_games
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.train.belief import split_search_games, train_belief
from lbs_pz.train.games import (generate_games, replay_games, replayed_teacher_games,
                                teacher_games)
from lbs_pz.train.configs import BeliefTrainConfig
from lbs_pz.train.distill import DistillConfig, agreement, distill

SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)
SPARTA = MethodSpec(method="sparta", blueprint="strong", rollouts=16, seed=0)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("search") / "games.jsonl")
    record_search_games(SPARTA, 6, out, SMALL, workers=1, log=lambda s: None)
    return out


def test_search_games_are_training_deals_played_by_the_search_at_one_seat(recorded):
    """Game i is training deal i, the search plays seat i % 2 and every other move is the
    blueprint's; the moves replay legally to the recorded score."""
    config, blueprint = HanabiConfig(**SMALL), RuleBot("strong")
    games = sorted(read_search_games(recorded), key=lambda g: g["game"])
    assert [g["game"] for g in games] == list(range(6))
    evaluation = set(deal_seeds(EVAL, 0, 0, 1000).tolist())
    for g in games:
        assert g["deal"] == int(deal_seeds(TRAIN, 0, g["game"], 1)[0])
        assert g["deal"] not in evaluation and g["seat"] == g["game"] % 2
        state = HanabiState(config, seed=g["deal"])
        for t, move in enumerate(g["moves"]):
            if state.current_player != g["seat"]:
                assert t not in g["searched"] and move == blueprint.act(state)
            else:
                assert t in g["searched"]
                assert (t in g["deviated"]) == (move != blueprint.act(state))
            state.apply(move)
        assert state.is_terminal and state.score == g["score"]
    assert sum(len(g["deviated"]) for g in games) > 0    # SPARTA does leave the bot's moves


def test_search_seats_turn_with_the_game_and_all_makes_every_move_the_searchs(recorded,
                                                                             tmp_path):
    """("all",): every move searched, "seats" every seat; at 3 players seats (0, 1) of
    game i are i % 3 and (i + 1) % 3. A reader that learns only the moves (distill) takes
    every-seat games of a search over another blueprint; one-seat games, whose other moves
    are the blueprint's, it refuses, as every reader does."""
    every = str(tmp_path / "all.jsonl")
    record_search_games(dataclasses.replace(SPARTA, search_seats=("all",)), 3, every, SMALL,
                        log=lambda s: None)
    games = read_search_games(every)
    assert all(g["seats"] == [0, 1] and len(g["searched"]) == len(g["moves"]) for g in games)
    three = str(tmp_path / "three.jsonl")
    record_search_games(dataclasses.replace(SPARTA, search_seats=(0, 1), rollouts=4), 3, three,
                        dict(SMALL, players=3), log=lambda s: None)
    for g in read_search_games(three):
        seats = sorted({g["game"] % 3, (g["game"] + 1) % 3})
        assert g["seats"] == seats and g["seat"] == seats[0]
        state = HanabiState(HanabiConfig(**dict(SMALL, players=3)), seed=g["deal"])
        for t, move in enumerate(g["moves"]):
            assert (t in g["searched"]) == (state.current_player in seats)
            state.apply(move)
    simple = blueprint_identity(RuleBot("simple"))
    check_recorded_for(every, games, HanabiConfig(**SMALL), simple, moves_only=True)
    with pytest.raises(ValueError, match="recorded with blueprint 'strong'"):
        check_recorded_for(every, games, HanabiConfig(**SMALL), simple)
    with pytest.raises(ValueError, match="recorded with blueprint 'strong'"):
        check_recorded_for(recorded, read_search_games(recorded), HanabiConfig(**SMALL), simple,
                           moves_only=True)


def test_searchers_know_that_the_seats_that_do_not_search_play_the_blueprint():
    """An evaluation's game and a recorded game tell each searcher the seats that play the
    blueprint (its belief then holds their moves as evidence): at 3 players with seats
    0 and 1 searching, seat 2; a recorded game i turns the seats, so game 1's are 1 and
    2, and seat 0 plays the blueprint."""
    spec = dataclasses.replace(SPARTA, search_seats=(0, 1), rollouts=4)
    kwargs = dict(SMALL, players=3)
    config = HanabiConfig(**kwargs)
    play_game(spec, kwargs, 0, 0)
    assert [built_agents(spec, config, s)[1].blueprint_seats for s in (0, 1)] == \
        [frozenset({2})] * 2
    play_search_game(spec, kwargs, 1, 0)
    assert [built_agents(spec, config, s)[1].blueprint_seats for s in (1, 2)] == \
        [frozenset({0})] * 2


def test_recording_again_plays_only_missing_games_and_refuses_another_search(recorded, tmp_path):
    before = open(recorded).read()
    record_search_games(SPARTA, 6, recorded, SMALL, workers=1, log=lambda s: None)
    assert open(recorded).read() == before
    other = dataclasses.replace(SPARTA, rollouts=8)
    with pytest.raises(ValueError, match="another search"):
        record_search_games(other, 6, recorded, SMALL, log=lambda s: None)
    with pytest.raises(ValueError, match="does not search"):
        record_search_games(MethodSpec(method="blueprint"), 1, str(tmp_path / "b.jsonl"))
    with pytest.raises(ValueError, match="does not exist"):
        record_search_games(SPARTA, 1, str(tmp_path / "no" / "g.jsonl"), SMALL)


def test_replayed_games_carry_the_recorded_moves_as_labels(recorded):
    config = HanabiConfig(**SMALL)
    records = read_search_games(recorded)
    games = replayed_teacher_games(records, config)
    for record, game in zip(records, games):
        assert (game["action"] == record["moves"]).all()
        assert (game["taken"] == record["moves"]).all()
        assert game["final"] == record["score"]
        assert game["value_from"] == len(record["moves"])     # no value targets
        state = HanabiState(config, seed=record["deal"])
        for t, move in enumerate(record["moves"]):
            for p in range(2):
                assert (game["seat_obs"][t, p] == state.encode(p)).all()
            assert game["cur"][t] == state.current_player
            state.apply(move)


def test_deviation_weight_weighs_the_searchs_own_moves_in_the_loss(recorded):
    """replayed_teacher_games gives the moves where the search left the blueprint's the weight
    `deviation_weight` (others 1); a collated batch mixing them with teacher games (weight
    1) weighs the cross-entropy move by move with exactly those weights."""
    import torch

    from lbs_pz.agents.public_lstm import PublicLSTMNet
    from lbs_pz.train.distill import collate, imitation_loss, mover_logits
    config = HanabiConfig(**SMALL)
    records = read_search_games(recorded)
    games = replayed_teacher_games(records, config, deviation_weight=7.0)
    for record, game in zip(records, games):
        expected = np.ones(len(record["moves"]), dtype=np.float32)
        expected[record["deviated"]] = 7.0
        assert (game["weight"] == expected).all()
    teachers = teacher_games(config, RuleBot("strong"), 2, seed=1)
    deviating = [g for g, r in zip(games, records) if r["deviated"]][:2]
    b = collate(teachers + deviating, "cpu")
    net = PublicLSTMNet.for_config(config, 16)
    loss, _, _, _ = imitation_loss(net, b)
    logits = mover_logits(net, b)
    valid = b["valid"]
    ce = torch.nn.functional.cross_entropy(logits[valid], b["action"][valid], reduction="none")
    w = b["weight"][valid]
    assert (b["weight"][:2][b["valid"][:2]] == 1).all()
    assert (w == 7).any()
    assert torch.allclose(loss, (ce * w).sum() / w.sum())
    assert not torch.allclose(loss, ce.mean())
    # recorded games carry no value targets: with the value term on, a batch of them
    # alone gives a zero value term, not NaN
    only_recorded = collate(deviating, "cpu", seats=2)
    loss, _, _, value = imitation_loss(net, only_recorded, value_weight=0.05)
    assert value == 0.0 and torch.isfinite(loss)
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)


def test_bad_records_are_errors_not_wrong_games(recorded, tmp_path):
    config = HanabiConfig(**SMALL)
    record = read_search_games(recorded)[0]
    illegal = dict(record, moves=[999] + record["moves"][1:])
    with pytest.raises(ValueError, match="not a legal game"):
        replayed_teacher_games([illegal], config)
    with pytest.raises(ValueError, match="ends before or after"):
        replayed_teacher_games([dict(record, moves=record["moves"][:-3])], config)
    for bad in ("{not json", json.dumps(dict(record, deviated=[10**6])),
                json.dumps(dict(record, searched=[-1])),
                json.dumps({k: v for k, v in record.items() if k != "deal"})):
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(record) + "\n" + bad + "\n")
        with pytest.raises(ValueError, match="line 2"):
            read_search_games(str(path))


def test_distill_learns_the_recorded_moves(tmp_path):
    """With --search-games at fraction 1, the net learns the recorded games' moves, not
    the teacher's: recorded games of the simple bot make a net that agrees with the
    simple bot far more than with the strong teacher."""
    config = HanabiConfig(**SMALL)
    simple = RuleBot("simple")
    batch_games = teacher_games(config, simple, 200, seed=3, stream=TRAIN)
    path = tmp_path / "simple.jsonl"
    with open(path, "w") as f:
        for i, g in enumerate(batch_games):
            f.write(json.dumps({"game": i, "deal": g["deal"], "seat": 0,
                                "moves": g["taken"].tolist(),
                                "searched": list(range(len(g["taken"]))), "deviated": [],
                                "score": g["final"]}) + "\n")
    out = str(tmp_path / "d.pt")
    dc = DistillConfig(teacher="strong", out=out, threads=1, eval_games=50, updates=250,
                       minutes=0, eval_every=0, lr=3e-3, search_games=str(path),
                       search_fraction=1.0, **SMALL)
    distill(dc, log=lambda s: None, progress_bar=False)
    import torch

    from lbs_pz.agents import load_blueprint
    net = load_blueprint(f"lstm:{out}")._net
    assert all(torch.isfinite(p).all() for p in net.parameters())
    held_simple = teacher_games(config, simple, 50, seed=3, stream=EVAL)
    held_strong = teacher_games(config, RuleBot("strong"), 50, seed=3, stream=EVAL)
    on_simple, on_strong = agreement(net, held_simple), agreement(net, held_strong)
    assert on_simple > 0.85 and on_simple > on_strong + 0.1, (on_simple, on_strong)


def test_cli_records_and_checks_its_input(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = tmp_path / "g.jsonl"

    def run(*a):
        return subprocess.run([sys.executable, "-m", "lbs_pz.cli", "search-games", *a],
                              capture_output=True, text=True, env=env, timeout=HANG_SECONDS)

    r = run("--method", "sparta", "--blueprint", "strong", "--rollouts", "8", "--games", "2",
            "--players", "2", "--colors", "3", "--ranks", "3", "--hand-size", "3",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert len(read_search_games(str(out))) == 2
    r = run("--method", "blueprint", "--out", str(out))
    assert r.returncode == 2 and "must be a search" in r.stderr
    r = run("--method", "lbs-1", "--blueprint", "nonsense", "--out", str(out))
    assert r.returncode == 2 and "unknown blueprint" in r.stderr
    r = run("--method", "lbs-1", "--search-seats", "2", "--out", str(out))
    assert r.returncode == 2 and "--search-seats: seat 2 is not in [0, 2)" in r.stderr
    r = subprocess.run([sys.executable, "-m", "lbs_pz.cli", "distill", "--search-games",
                        str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "x.pt")],
                       capture_output=True, text=True, env=env,
                       timeout=HANG_SECONDS)
    assert r.returncode == 2 and "missing.jsonl" in r.stderr


def test_a_file_another_run_records_into_is_refused(recorded, tmp_path):
    """While one run holds the recorded-games file, a second is refused at once, naming
    the file, and the file is left as it was."""
    out = tmp_path / "games.jsonl"
    out.write_bytes(open(recorded, "rb").read())
    before = out.read_bytes()
    with open_locked(str(out), "--out"):
        with pytest.raises(ValueError, match="is in use: another run holds its lock"):
            record_search_games(SPARTA, 8, str(out), SMALL, workers=1, log=lambda s: None)
    assert out.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_reading_recorded_games_is_bounded(tmp_path):
    """A FIFO is refused without blocking, and an endless line stops at MAX_LINE_BYTES,
    naming the file and the line."""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        read_search_games(str(fifo))
    long = tmp_path / "long.jsonl"
    long.write_bytes(b"[" * (MAX_LINE_BYTES + 10))
    with pytest.raises(ValueError, match="line 1: longer than"):
        read_search_games(str(long))


def test_a_belief_learns_from_replayed_search_games(recorded, tmp_path):
    config = HanabiConfig(**SMALL)
    records = read_search_games(recorded)
    # a record of the blueprint's own moves replays into exactly its self-play sequences
    bot = RuleBot("strong")
    own = generate_games(config, bot, 2, seed=0)
    selfplay = []
    for game in range(2):
        state = HanabiState(config, seed=int(deal_seeds(TRAIN, 0, game, 1)[0]))
        while not state.is_terminal:
            state.apply(bot.act(state))
        selfplay.append(dict(records[0], deal=int(deal_seeds(TRAIN, 0, game, 1)[0]),
                             moves=list(state.move_history), score=state.score))
    again = replay_games(config, selfplay)
    for key in ("obs", "hands", "lengths", "scores"):
        assert np.array_equal(own[key], again[key]), key
    searched = replay_games(config, records)
    assert searched["scores"].tolist() == [r["score"] for r in records]
    assert searched["obs"].shape[0] == len(records) * config.players
    with pytest.raises(ValueError, match="not a legal game"):     # another variant's record
        replay_games(HanabiConfig(**dict(SMALL, hand_size=2)), records)
    # train-belief with half of each step replayed from them, the last tenth held out
    out = str(tmp_path / "belief.pt")
    tc = BeliefTrainConfig(**SMALL, steps=2, minutes=0.0, games_per_step=4, val_games=8,
                           val_every=1, embed=16, hidden=16, decoder=8, threads=1,
                           search_games=recorded, out=out, curve="", progress=False)
    model, history = train_belief(tc, log=lambda s: None)
    info = load_checkpoint(out)["info"]
    assert info["search_games"] == {"path": recorded, "train": len(records) - 1, "per_step": 2}
    header = open(str(tmp_path / "belief.curve.csv")).readline()
    assert "val_search_loss" in header and len(history) == 3
    with pytest.raises(ValueError, match="at least 2"):
        split_search_games(_one_game(recorded, tmp_path), 8)


def _one_game(recorded, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(open(recorded).readline())
    return str(path)
