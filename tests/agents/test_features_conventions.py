"""`convention_features` (the strong conventions' reading of a position, in C) and the
public-LSTM net that reads them: what they may see, that they agree with the bot whose
conventions they read, their argument checks, and the net's round trip through training,
checkpoints and the blueprint."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from tests.helpers.engine import positions, sample_consistent_hand, saved_and_loaded

from lbs_pz.agents import RuleBot, load_blueprint
from lbs_pz.agents.features import (CONVENTION_HINT_PARTS, CONVENTION_SLOT_PARTS,
                                    ConventionReader, convention_feature_size,
                                    convention_features, encode_batch, seat_inputs)
from lbs_pz.agents.public_lstm import PublicLSTMNet
from lbs_pz.agents.rule_bots._bots import _set_params, get_params
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState, game_seeds
from lbs_pz.engine.seeds import EVAL
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.train.distill import DistillConfig, agreement, distill
from lbs_pz.train.games import teacher_games

GAMES = [dict(), dict(players=3), dict(players=2, colors=3, ranks=3, hand_size=3)]


def features(state: HanabiState, seat: int) -> np.ndarray:
    batch = HanabiBatch.from_states([state])
    out = np.zeros((1, convention_feature_size(state.config)), dtype=np.float32)
    convention_features(batch, np.array([seat]), out)
    return out[0]


def layout(config: HanabiConfig):
    """(slot block (P, H, SLOT_PARTS), danger (P - 1,), hint block (hints, HINT_PARTS))
    slices of a row."""
    P, H = config.players, config.hand_size
    hints = (P - 1) * (config.colors + config.ranks)
    a = P * H * CONVENTION_SLOT_PARTS
    assert convention_feature_size(config) == a + (P - 1) + hints * CONVENTION_HINT_PARTS

    def split(row):
        return (row[:a].reshape(P, H, CONVENTION_SLOT_PARTS), row[a:a + P - 1],
                row[a + P - 1:].reshape(hints, CONVENTION_HINT_PARTS))
    return split


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_never_reads_its_own_cards(game):
    """Re-dealing the seat's own hand (consistently with what it knows) changes nothing."""
    config = HanabiConfig(**game)
    rng = random.Random(5)
    checked = 0
    for state in positions(config, 3, seed=2)[:40]:
        if state.is_terminal:
            continue
        seat = state.current_player
        hand = sample_consistent_hand(state, seat, rng)
        if hand is None or list(hand) == list(state.hand(seat)):
            continue
        other = state.clone()
        other.set_hand(seat, hand)
        np.testing.assert_array_equal(features(state, seat), features(other, seat))
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("game", GAMES[:2])
def test_features_agree_with_the_strong_bots_moves(game):
    """Where the strong bot plays a card before the last round, the features say the seat
    knows it is playable; a hint it gives is never untruthful by its conventions and
    touches a card; a card it knows worthless is what it discards first."""
    config = HanabiConfig(**game)
    split = layout(config)
    bot = RuleBot("strong")
    H = config.hand_size
    plays = hints = 0
    for state in positions(config, 6, seed=4, every=1):
        if state.is_terminal:
            continue
        move = bot.act(state)
        slots, _, hint = split(features(state, state.current_player))
        if H <= move < 2 * H and state.deck_size > 0:
            assert slots[0, move - H, 0] == 1.0, (state.move_history, move)
            plays += 1
        elif move >= 2 * H:
            m = move - 2 * H
            assert hint[m, 0] == 0.0, (state.move_history, move)
            assert hint[m].any()
            hints += 1
        elif move < H and slots[0, :, 1].any():
            assert slots[0, move, 1] == 1.0
    assert plays > 50 and hints > 50


def test_rows_are_zero_past_a_hands_end_and_hold_small_numbers():
    config = HanabiConfig()
    split = layout(config)
    bot = RuleBot("strong")
    for seed in range(20):           # a game that empties the deck and goes on
        state = HanabiState(config, seed=seed)
        while not state.is_terminal and (state.deck_size > 0 or not any(
                len(state.hand(p)) < config.hand_size for p in range(2))):
            state.apply(bot.act(state))
        if not state.is_terminal:
            break
    short = [p for p in range(2) if len(state.hand(p)) < config.hand_size]
    assert short and not state.is_terminal
    for seat in range(2):
        slots, danger, hint = split(features(state, seat))
        for p in short:
            rel = (p - seat) % 2
            assert not slots[rel, len(state.hand(p)):].any()
        assert ((0 <= danger) & (danger <= 1)).all()
        assert np.isfinite(hint).all() and (hint >= 0).all() and hint.max() <= config.hand_size


def test_convention_features_refuse_bad_arguments():
    config = HanabiConfig()
    batch = HanabiBatch(config, 3, seeds=game_seeds(0, 0, 3))
    f = convention_feature_size(config)
    good = np.zeros((3, f), dtype=np.float32)
    seats = np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="shape"):
        convention_features(batch, seats, np.zeros((3, f + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        convention_features(batch, seats, np.zeros((2, f), dtype=np.float32))
    ro = np.zeros((3, f), dtype=np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        convention_features(batch, seats, ro)
    with pytest.raises(ValueError):
        convention_features(batch, seats, np.zeros((3, f), dtype=np.float64))
    with pytest.raises(ValueError):
        convention_features(batch, seats, np.zeros((3, 2 * f), dtype=np.float32)[:, ::2])
    with pytest.raises(ValueError, match="one entry per game"):
        convention_features(batch, np.zeros(2, dtype=np.int64), good)
    with pytest.raises(ValueError, match="not a seat"):
        convention_features(batch, np.array([0, 2, 0]), good)
    with pytest.raises(ValueError, match="not a seat"):
        convention_features(batch, np.array([0, -1, 0]), good)
    with pytest.raises(TypeError, match="integer"):
        convention_features(batch, np.zeros(3), good)
    with pytest.raises(TypeError):
        convention_features(None, seats, good)
    with pytest.raises(ValueError, match="uninitialised"):
        convention_features(HanabiBatch.__new__(HanabiBatch), seats, good)
    # the seats may be any integer array; int32 and int64 give the same rows
    a = convention_features(batch, np.array([0, 1, 0], dtype=np.int32), good.copy())
    b = convention_features(batch, np.array([0, 1, 0], dtype=np.int64), good.copy())
    np.testing.assert_array_equal(a, b)


def test_batch_rows_equal_one_state_at_a_time():
    """The memory fold shared along history prefixes gives every game its own rows."""
    config = HanabiConfig()
    states = positions(config, 2, seed=7, every=2)[:30]
    batch = HanabiBatch.from_states(states)
    seats = np.array([s.current_player for s in states])
    rows = convention_features(batch, seats, np.zeros((len(states),
                                                       convention_feature_size(config)),
                                                      dtype=np.float32))
    for i, state in enumerate(states):
        np.testing.assert_array_equal(rows[i], features(state, int(seats[i])))


def random_moves(batch: HanabiBatch, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal move per running game, -1 in finished ones."""
    legal, done = batch.legal_masks().astype(bool), batch.terminals()
    return np.array([-1 if d else rng.choice(np.flatnonzero(m)) for m, d in zip(legal, done)])


@pytest.mark.parametrize("game", GAMES)
def test_a_reader_follows_its_batch_and_equals_fresh_features(game):
    """The memories a ConventionReader carries from call to call give the same rows as
    folding every history from scratch: on every game, finished or not, for a subset of
    rows, and after games are reset, replaced or rewound behind its back."""
    config = HanabiConfig(**game)
    n, f = 24, convention_feature_size(config)
    rng = np.random.default_rng(3)
    batch = HanabiBatch(config, n, seeds=game_seeds(5, 0, n))
    reader = ConventionReader(batch)
    assert reader.num_games == n
    mine, fresh = np.zeros((n, f), np.float32), np.zeros((n, f), np.float32)
    for step in range(90):
        seats = rng.integers(0, config.players, size=n)
        assert reader.features(batch, seats, mine) is mine
        np.testing.assert_array_equal(mine, convention_features(batch, seats, fresh))
        if step % 7 == 3:       # a subset of rows, in any order, with their own seats
            rows = rng.permutation(n)[: n // 3]
            sub = np.zeros((rows.size, f), np.float32)
            reader.features(batch, seats[rows], sub, rows=rows)
            np.testing.assert_array_equal(sub, fresh[rows])
        if step == 40:          # games changed in place: a new deal, another game's state
            batch.reset_game(2, 99)
            batch.set_state(5, batch.get_state(6))
            earlier = batch.get_state(7)
        if step == 50:          # a game rewound to an earlier position of its own
            batch.set_state(7, earlier)
        if batch.terminals().all():
            break
        batch.step(random_moves(batch, rng))
    assert batch.terminals().any()


def test_a_reader_refolds_when_the_bot_switches_change():
    config = HanabiConfig()
    batch = HanabiBatch(config, 8, seeds=game_seeds(2, 0, 8))
    RuleBot("strong").rollout(batch, max_moves=20)
    reader = ConventionReader(batch)
    seats = np.zeros(8, dtype=np.int64)
    f = convention_feature_size(config)
    before = reader.features(batch, seats, np.zeros((8, f), np.float32))
    saved = get_params("strong")
    try:
        _set_params("strong", delayed=False)
        after = reader.features(batch, seats, np.zeros((8, f), np.float32))
        np.testing.assert_array_equal(
            after, convention_features(batch, seats, np.zeros((8, f), np.float32)))
        assert not np.array_equal(before, after)
    finally:
        _set_params("strong", **saved)


def test_a_reader_refuses_bad_arguments():
    config = HanabiConfig()
    batch = HanabiBatch(config, 3, seeds=game_seeds(0, 0, 3))
    reader = ConventionReader(batch)
    f = convention_feature_size(config)
    good, seats = np.zeros((3, f), dtype=np.float32), np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="follows batches of 3 games"):
        reader.features(HanabiBatch(config, 4, seeds=game_seeds(0, 0, 4)),
                        np.zeros(4, dtype=np.int64), np.zeros((4, f), np.float32))
    small = HanabiConfig(colors=3, ranks=3, hand_size=3)
    with pytest.raises(ValueError, match="follows batches"):
        reader.features(HanabiBatch(small, 3, seeds=game_seeds(0, 0, 3)), seats,
                        np.zeros((3, convention_feature_size(small)), np.float32))
    with pytest.raises(ValueError, match="shape"):
        reader.features(batch, seats, np.zeros((3, f + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        reader.features(batch, seats, np.zeros((2, f), np.float32))
    ro = np.zeros((3, f), dtype=np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        reader.features(batch, seats, ro)
    with pytest.raises(ValueError):
        reader.features(batch, seats, np.zeros((3, f), dtype=np.float64))
    with pytest.raises(ValueError):
        reader.features(batch, seats, np.zeros((3, 2 * f), dtype=np.float32)[:, ::2])
    with pytest.raises(ValueError, match="one entry per row"):
        reader.features(batch, np.zeros(2, dtype=np.int64), good)
    with pytest.raises(ValueError, match="not a seat"):
        reader.features(batch, np.array([0, 2, 0]), good)
    with pytest.raises(TypeError, match="integer"):
        reader.features(batch, np.zeros(3), good)
    with pytest.raises(IndexError, match="not a game"):
        reader.features(batch, np.zeros(1, dtype=np.int64), good[:1], rows=[3])
    with pytest.raises(IndexError, match="not a game"):
        reader.features(batch, np.zeros(1, dtype=np.int64), good[:1], rows=[-1])
    with pytest.raises(TypeError, match="integer"):
        reader.features(batch, seats, good, rows=np.zeros(3))
    with pytest.raises(TypeError):
        reader.features(None, seats, good)
    with pytest.raises(TypeError):
        ConventionReader(None)
    with pytest.raises(ValueError, match="uninitialised"):
        ConventionReader(HanabiBatch.__new__(HanabiBatch))
    with pytest.raises(ValueError, match="uninitialised"):
        reader.features(HanabiBatch.__new__(HanabiBatch), seats, good)
    with pytest.raises(TypeError, match="pickled"):
        import pickle
        pickle.dumps(reader)
    # no rows: nothing to do, and nothing read
    assert reader.features(batch, np.zeros(0, dtype=np.int64),
                           np.zeros((0, f), np.float32), rows=[]).shape == (0, f)


# --- the net that reads them -------------------------------------------------------------


def test_a_net_with_conventions_round_trips_and_acts_the_same_everywhere(tmp_path):
    config = HanabiConfig()
    torch.manual_seed(0)
    net = PublicLSTMNet.for_config(config, 32, card_features=True, conventions=True,
                                   hint_head=True)
    arch = net.arch()
    assert arch["conventions"] == convention_feature_size(config) and arch["hint_head"]
    assert net.input_dim == config.encoding_size + arch["conventions"]
    bp = saved_and_loaded(net, config, tmp_path / "conv.pt")
    batch = HanabiBatch(config, 16, seeds=game_seeds(1, 0, 16))
    RuleBot("strong").rollout(batch, max_moves=11)
    moves = bp.act_batch(batch)
    assert [bp.act(batch.get_state(i)) for i in range(16)] == list(moves)
    # the private stream's input is the canonical vector followed by the features
    x = seat_inputs(batch, conventions=True)
    assert x.shape == (16, net.input_dim)
    np.testing.assert_array_equal(x[:, :config.encoding_size], batch.encode())
    assert encode_batch(batch, True).shape == (16, 2, net.input_dim)
    # value and rollout_value read the same inputs as acting
    values = bp.value(batch)
    assert np.isfinite(values).all()
    copy = HanabiBatch.from_states([batch.get_state(i) for i in range(16)])
    np.testing.assert_allclose(bp.rollout_value(copy, 0), values, atol=1e-5)
    with pytest.raises(ValueError, match="seat inputs of"):
        net.q_seat(torch.zeros(2, 32), torch.zeros(2, config.encoding_size), [0, 1])


def test_a_conventions_rollout_plays_and_values_as_acting_move_by_move(tmp_path):
    """rollout / rollout_value carry each world's convention memory along the rollout
    (a ConventionReader); the moves and values are those of acting one move at a time."""
    config = HanabiConfig()
    torch.manual_seed(1)
    net = PublicLSTMNet.for_config(config, 32, card_features=True, conventions=True,
                                   hint_head=True)
    bp = saved_and_loaded(net, config, tmp_path / "conv.pt")
    start = HanabiBatch(config, 12, seeds=game_seeds(4, 0, 12))
    RuleBot("strong").rollout(start, max_moves=9)
    states = [start.get_state(i) for i in range(12)]
    stepped = HanabiBatch.from_states(states)
    for _ in range(14):
        stepped.step(bp.act_batch(stepped))
    rolled = HanabiBatch.from_states(states)
    bp.clear_cache()
    made = bp.rollout(rolled, max_moves=14)
    assert (made > 0).all()
    for i in range(12):
        assert rolled.get_state(i).public_history_key() == \
            stepped.get_state(i).public_history_key()
    bp.clear_cache()
    values = bp.rollout_value(HanabiBatch.from_states(states), 14)
    np.testing.assert_allclose(values, bp.value(stepped), atol=1e-4)


def test_the_hint_head_moves_only_hint_advantages_and_needs_conventions():
    for game in GAMES + [dict(players=5)]:
        config = HanabiConfig(**game)
        torch.manual_seed(1)
        net = PublicLSTMNet.for_config(config, 16, card_features=True, conventions=True,
                                       hint_head=True)
        first, count = net._hints
        assert first == 2 * config.hand_size and first + count == config.num_moves
        batch = HanabiBatch(config, 6, seeds=game_seeds(2, 0, 6))
        RuleBot("strong").rollout(batch, max_moves=7)
        x = torch.from_numpy(seat_inputs(batch, conventions=True))
        h = torch.randn(6, 16)
        seat = batch.current_players()
        with torch.no_grad():
            with_head = net.q_seat(h, x, seat, value=False)
            torch.nn.init.zeros_(net.hint_w.weight)
            torch.nn.init.zeros_(net.hint_w.bias)
            without = net.q_seat(h, x, seat, value=False)
        moved = (with_head - without).abs() > 1e-6
        # centring moves every column by the same shift; only hint columns differ beyond it
        diff = (with_head - without)
        shift = diff[:, :first].mean(-1, keepdim=True)
        assert torch.allclose(diff[:, :first], shift.expand(-1, first), atol=1e-5)
        assert moved[:, first:first + count].any()
    with pytest.raises(ValueError, match="needs conventions"):
        PublicLSTMNet(533, 658, 2, 20, hidden=8, hint_head=True)
    with pytest.raises(ValueError, match="does not fit"):
        PublicLSTMNet(533, 658, 2, 20, hidden=8, conventions=160, hint_head=True)


def test_distill_with_conventions_learns_the_strong_bot_fast(tmp_path):
    """On the small variant, the conventions' reading makes the strong bot easy to imitate:
    >= 90% held-out agreement in 1,500 updates, ~15 s (a net without them: 78% after
    1,200 updates, and levelling off)."""
    out = str(tmp_path / "d.pt")
    dc = DistillConfig(teacher="strong", out=out, players=2, colors=3, ranks=3, hand_size=3,
                       minutes=0, updates=1500, hidden=64, eval_every=0, eval_games=100,
                       num_actors=64, act_steps=4, buffer_games=1024, arch="conventions")
    distill(dc, log=lambda s: None, progress_bar=False)
    ckpt = load_checkpoint(out, "public_lstm")
    assert ckpt["architecture"]["conventions"] > 0 and ckpt["architecture"]["hint_head"]
    acc = ckpt["info"]["progress"]["evals"][-1][3]
    assert acc >= 0.90, ckpt["info"]["progress"]["evals"]
    bp = load_blueprint(f"lstm:{out}")
    config = HanabiConfig(players=2, colors=3, ranks=3, hand_size=3)
    held = teacher_games(config, RuleBot("strong"), 50, 0, stream=EVAL, conventions=True)
    assert agreement(bp.net, held) >= 0.88


def test_q_learning_from_a_conventions_net_stores_and_reads_the_features(tmp_path):
    """train-blueprint --init of a conventions net: the actors store every seat's features
    next to its vector, and the loss reads them after it."""
    from lbs_pz.train import blueprint as tb
    config = HanabiConfig(players=2, colors=3, ranks=3, hand_size=3)
    actors = tb.Actors(config, 4, seed=0, bot="strong", conventions=True)
    games = []
    while len(games) < 2:
        games += actors.step()
    g = games[0]
    f = convention_feature_size(config)
    assert g["conv"].shape == (len(g["action"]), 2, f) and g["conv"].any()
    replay = tb.GameReplay(8, actors.max_len, config.encoding_size, 2, config.num_moves, f)
    for game in games:
        replay.add(game)
    pub_dim = PublicLSTMNet.for_config(config).pub_dim
    b = tb._tensors(replay.batch(np.arange(2)), "cpu", pub_dim)
    assert b["pub"].shape[-1] == pub_dim
    assert b["obs"].shape[-1] == config.encoding_size + f
    np.testing.assert_array_equal(b["obs"][0, :len(g["action"]), :, config.encoding_size:].numpy(),
                                  g["conv"])
