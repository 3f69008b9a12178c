"""The engine's public API: derived sizes and move ids (checked against HLE), the
hidden-information-free PlayerView, text rendering, and HanabiBatch bookkeeping."""

from __future__ import annotations

import collections
import itertools
import random

import numpy as np
import pytest

from tests.helpers.engine import deck_size_of, play_random
from lbs_pz.engine import (
    MOVE_KINDS, HanabiBatch, HanabiConfig, HanabiState, Move, decode_move, encode_move,
    move_name,
)
from lbs_pz.engine.config import COLOR_CHARS

pyhanabi = pytest.importorskip("hanabi_learning_environment.pyhanabi")

HLE_KIND = {
    "discard": pyhanabi.HanabiMoveType.DISCARD,
    "play": pyhanabi.HanabiMoveType.PLAY,
    "reveal_color": pyhanabi.HanabiMoveType.REVEAL_COLOR,
    "reveal_rank": pyhanabi.HanabiMoveType.REVEAL_RANK,
}


def _grid_configs():
    """A spread of variants over every parameter, each valid for HLE and for us."""
    out = []
    for players, colors, ranks in itertools.product((2, 3, 4, 5), (1, 2, 5), (1, 3, 5)):
        biggest = min(8, deck_size_of(colors, ranks) // players)
        if biggest < 1:          # e.g. 5 players and a 3-card deck
            continue
        for hand in sorted({1, biggest}):
            for obs, info, life in (("minimal", 8, 3), ("card_knowledge", 1, 1), ("seer", 16, 8)):
                out.append(HanabiConfig(players=players, colors=colors, ranks=ranks,
                                        hand_size=hand, max_information_tokens=info,
                                        max_life_tokens=life, observation_type=obs))
    return out


GRID = _grid_configs()
MOVE_CONFIGS = [HanabiConfig(players=p) for p in (2, 3, 4, 5)] + [
    HanabiConfig(players=3, colors=2, ranks=3, hand_size=2),
    HanabiConfig(players=5, colors=1, ranks=5, hand_size=1),
    HanabiConfig(players=2, hand_size=8, colors=4, ranks=2),
]


def hle_game(config):
    return pyhanabi.HanabiGame(config.hle_params(seed=1))


# --- configuration ---------------------------------------------------------------------

def test_standard_two_player_sizes():
    # Known HLE numbers for the standard 2-player game.
    config = HanabiConfig(players=2)
    assert ((config.hand_size, config.num_moves, config.deck_size, config.encoding_size)
            == (5, 20, 50, 658))
    assert HanabiConfig(players=4).hand_size == 4 and HanabiConfig(players=3).hand_size == 5


def test_observation_type_accepts_hle_codes():
    for code, name in enumerate(("minimal", "card_knowledge", "seer")):
        config = HanabiConfig(observation_type=code)
        assert config.observation_type == name and config.observation_type_id == code
        assert config == HanabiConfig(observation_type=name)


def test_sizes_match_hle():
    for config in GRID:
        game = hle_game(config)
        where = str(config)
        assert config.num_moves == game.max_moves(), where
        assert config.encoding_size == pyhanabi.ObservationEncoder(game).shape()[0], where
        assert config.num_card_types == game.num_colors() * game.num_ranks(), where
        counts = [game.num_cards(c, r) for c in range(config.colors) for r in range(config.ranks)]
        assert [config.card_count(k) for k in range(config.num_card_types)] == counts, where
        assert config.deck_size == sum(counts), where
        # hle_params carries every parameter across.
        assert (game.num_players(), game.hand_size(), game.max_information_tokens(),
                game.max_life_tokens(), int(game.observation_type())) == (
            config.players, config.hand_size, config.max_information_tokens,
            config.max_life_tokens, config.observation_type_id), where


def test_state_encoding_has_the_advertised_size():
    for config in GRID[::7]:
        state = HanabiState(config, seed=0)
        enc = state.encode()
        assert enc.shape == (config.encoding_size,) and enc.dtype == np.float32
        assert set(np.unique(enc)) <= {0.0, 1.0}


def test_card_names_match_hle():
    config = HanabiConfig()
    for card in range(config.num_card_types):
        color, rank = divmod(card, config.ranks)
        assert config.card_name(card) == str(pyhanabi.HanabiCard(color, rank))
    assert COLOR_CHARS == "".join(pyhanabi.color_idx_to_char(c) for c in range(5))


# --- move ids -----------------------------------------------------------------------------

@pytest.mark.parametrize("config", MOVE_CONFIGS, ids=str)
def test_moves_round_trip_and_match_hle(config):
    game = hle_game(config)
    kinds = collections.Counter()
    for uid in range(config.num_moves):
        move = decode_move(config, uid)
        assert isinstance(move, Move) and move.kind in MOVE_KINDS
        assert encode_move(config, move) == uid
        assert decode_move(config, np.int64(uid)) == move
        hle = game.get_move(uid)
        assert hle.type() == HLE_KIND[move.kind], uid
        # HLE reports -1 for the fields a move does not have; we report None.
        ours = [move.card_index, move.target_offset, move.color, move.rank]
        theirs = [hle.card_index(), hle.target_offset(), hle.color(), hle.rank()]
        assert [-1 if v is None else v for v in ours] == theirs, uid
        assert game.get_move_uid(hle) == uid
        assert move_name(config, uid) == str(hle)
        kinds[move.kind] += 1
    assert kinds == {"discard": config.hand_size, "play": config.hand_size,
                     "reveal_color": (config.players - 1) * config.colors,
                     "reveal_rank": (config.players - 1) * config.ranks}


def test_move_ids_out_of_range_are_rejected():
    config = HanabiConfig()
    for bad in (-1, config.num_moves, True):
        with pytest.raises(ValueError):
            decode_move(config, bad)
    with pytest.raises(ValueError):
        encode_move(config, Move("pass"))


# --- PlayerView ---------------------------------------------------------------------------

def _mid_game(config, seed, moves=25):
    return play_random(HanabiState(config, seed=seed), moves, random.Random(seed))


VIEW_CONFIGS = [HanabiConfig(players=2), HanabiConfig(players=4),
                HanabiConfig(players=3, observation_type="minimal"),
                HanabiConfig(players=3, observation_type="seer")]


@pytest.mark.parametrize("config", VIEW_CONFIGS, ids=str)
@pytest.mark.parametrize("seed", range(6))
def test_player_view_hides_own_cards_only(config, seed):
    state = _mid_game(config, seed, moves=5 + 4 * seed)
    seer = config.observation_type == "seer"
    records = state.move_records()
    for p in range(config.players):
        view = state.view(p)
        assert view.player == p and view.num_players == config.players
        for q, hand in enumerate(state.hands):
            if q == p and not seer:
                assert view.hands[q] == (None,) * len(hand)
            else:
                assert view.hands[q] == tuple(hand)
        # Public facts are copied as they are.
        assert (view.current_player, view.fireworks, view.information_tokens, view.life_tokens,
                view.deck_size, view.discard_pile, view.score, view.is_terminal) == (
            state.current_player, state.fireworks, state.information_tokens, state.life_tokens,
            state.deck_size, tuple(state.discard_pile), state.score, state.is_terminal)
        # The full history, with the viewer's own draws hidden (it cannot see them).
        assert [m.move_id for m in view.history] == state.move_history
        for past, rec in zip(view.history, records):
            assert past.player == rec["player"]
            hidden = rec["player"] == p and not seer
            assert past.drawn == (None if hidden or rec["drawn"] < 0 else rec["drawn"])
            assert past.card == (None if rec["card"] < 0 else rec["card"])
        # Knowledge: what hints said, except in "minimal" where nobody remembers hints.
        for q in range(config.players):
            for know, (colors, ranks, hc, hr) in zip(view.knowledge[q], state.card_knowledge(q)):
                if config.observation_type == "minimal":
                    assert (know.colors, know.ranks) == (tuple(range(config.colors)),
                                                         tuple(range(config.ranks)))
                else:
                    assert (know.colors, know.ranks) == (colors, ranks)
                    assert know.hinted_color == (None if hc < 0 else hc)
                    assert know.hinted_rank == (None if hr < 0 else hr)
        # Legal moves are given to the seat to move only.
        if p == state.current_player:
            assert view.legal_moves == tuple(state.legal_moves())
        else:
            assert view.legal_moves == ()


@pytest.mark.parametrize("seed", range(8))
def test_last_moves_go_back_to_the_viewers_own_move(seed):
    config = HanabiConfig(players=4)
    state = _mid_game(config, seed, moves=seed + 1)
    for p in range(config.players):
        last = state.view(p).last_moves
        history = state.view(p).history
        assert last == history[len(history) - len(last):]
        own = [i for i, m in enumerate(history) if m.player == p]
        if own:
            # Starts at the viewer's most recent move; no earlier move of the viewer.
            assert len(last) == len(history) - own[-1]
            assert last[0].player == p and all(m.player != p for m in last[1:])
        else:
            assert last == history


def test_view_does_not_depend_on_hidden_cards():
    """Changing what the viewer cannot see (its own hand, consistently with its knowledge,
    and the order of the undrawn deck) leaves its view unchanged."""
    config = HanabiConfig(players=3)
    state = _mid_game(config, 11, moves=12)
    p = state.current_player
    before = state.view(p)
    other = state.clone()
    other.shuffle_deck(seed=123)
    assert other.deck != state.deck and other.view(p) == before
    # Swap two of p's unhinted cards of different types (allowed by its knowledge).
    hand, know = state.hand(p), state.card_knowledge(p)
    free = [i for i, k in enumerate(know) if k[2] < 0 and k[3] < 0]
    pairs = [(i, j) for i in free for j in free if hand[i] != hand[j]]
    assert pairs, "test setup: need two unhinted different cards"
    i, j = pairs[0]
    hand[i], hand[j] = hand[j], hand[i]
    other.set_hand(p, hand)
    assert other.hand(p) != state.hand(p) and other.view(p) == before


# --- rendering -----------------------------------------------------------------------------

def _hand_line(text, player):
    line = next(row for row in text.splitlines() if row.lstrip("* ").startswith(f"P{player}"))
    return line.split("knows:")[0]


@pytest.mark.parametrize("seed", range(4))
def test_render_shows_fireworks_and_hides_the_viewers_cards(seed):
    config = HanabiConfig(players=3)
    state = HanabiState(config, seed=seed)
    # Play greedily from a peek at the hands so that fireworks are not all zero.
    rng = random.Random(seed)
    for _ in range(30):
        if state.is_terminal:
            break
        hand = state.hand(state.current_player)
        good = [i for i, c in enumerate(hand)
                if state.fireworks[c // config.ranks] == c % config.ranks]
        state.apply(config.hand_size + good[0] if good else rng.choice(state.legal_moves()))
    assert sum(state.fireworks) > 0
    expected = " ".join(f"{COLOR_CHARS[c]}{n}" for c, n in enumerate(state.fireworks))
    for viewer in (None, 0, 1, 2):
        text = state.render(viewer)
        assert isinstance(text, str) and expected in text
        for p, hand in enumerate(state.hands):
            line = _hand_line(text, p)
            names = [config.card_name(c) for c in hand]
            if p == viewer:
                assert line.count("??") == len(hand)
                assert not any(name in line for name in names)
            else:
                assert all(name in line for name in names) and "??" not in line
    assert str(state) == state.render()


def test_render_in_seer_mode_shows_the_viewers_cards():
    config = HanabiConfig(players=2, observation_type="seer")
    state = HanabiState(config, seed=2)
    line = _hand_line(state.render(0), 0)
    assert all(config.card_name(c) in line for c in state.hand(0))


# --- HanabiBatch -----------------------------------------------------------------------------

def _batch_states(batch):
    return [batch.get_state(i) for i in range(batch.num_games)]


def test_batch_reset_is_deterministic():
    config = HanabiConfig(players=3)
    a, b = HanabiBatch(config, 6, seeds=42), HanabiBatch(config, 6, seeds=42)
    decks = [s.deck for s in _batch_states(a)]
    assert decks == [s.deck for s in _batch_states(b)]
    assert len({tuple(d) for d in decks}) == 6          # games get different seeds
    # Resetting after play restarts the very same games.
    a.play_random()
    a.reset(42)
    assert [s.deck for s in _batch_states(a)] == decks
    assert not a.terminals().any() and all(s.num_moves_played == 0 for s in _batch_states(a))
    # A list of seeds: game i is HanabiState(seed=seeds[i]); int and list disagree.
    seeds = [5, 6, 7, 8, 9, 10]
    a.reset(seeds)
    assert [s.deck for s in _batch_states(a)] == [HanabiState(config, seed=x).deck for x in seeds]
    a.reset_game(2, 99)
    assert a.get_state(2).deck == HanabiState(config, seed=99).deck
    assert a.get_state(3).deck == HanabiState(config, seed=8).deck


def _deck_starting_with(config, first):
    """A legal deck whose first cards are `first` (the opening deal), the rest sorted."""
    rest = collections.Counter({c: config.card_count(c) for c in range(config.num_card_types)})
    rest.subtract(first)
    assert min(rest.values()) >= 0
    return list(first) + sorted(rest.elements())


def test_step_rewards_losing_the_last_life_costs_the_score():
    config = HanabiConfig(players=2, max_life_tokens=1)
    R = config.ranks
    r1, r2, r3, y2 = 0, 1, 2, R + 1
    # Player 0 holds R1 R3 ..., player 1 holds R2 Y2 ...: three good plays, then a bomb.
    deck = _deck_starting_with(config, [r1, r3, 5, 6, 7, r2, y2, 10, 11, 12])
    batch = HanabiBatch.from_states([HanabiState(config, deck=deck, start_player=0)] * 2)
    play0 = config.hand_size
    rewards = [batch.step([play0, play0]).tolist() for _ in range(4)]
    assert rewards == [[1, 1], [1, 1], [1, 1], [-3, -3]]
    assert batch.terminals().all() and batch.scores().tolist() == [0, 0]
    state = batch.get_state(0)
    assert state.life_tokens == 0 and state.fireworks[0] == 3


def test_batch_bookkeeping_agrees_with_get_state():
    config = HanabiConfig(players=4)
    batch = HanabiBatch(config, 16, seeds=3)
    rng = np.random.default_rng(0)
    while not batch.terminals().all():
        states = _batch_states(batch)
        scores, terminals, players = batch.scores(), batch.terminals(), batch.current_players()
        masks, enc = batch.legal_masks(), batch.encode()
        assert (scores.dtype == np.int32 and terminals.dtype == np.bool_
                and players.dtype == np.int32)
        for i, s in enumerate(states):
            assert ((scores[i], terminals[i], players[i])
                    == (s.score, s.is_terminal, s.current_player))
            assert np.array_equal(masks[i], s.legal_mask())
            assert np.array_equal(enc[i], s.encode(s.current_player))
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else -1 for m in masks])
        rewards = batch.step(actions)
        assert rewards.dtype == np.float32
        assert np.array_equal(rewards, batch.scores() - scores)
        for i, s in enumerate(states):
            if actions[i] >= 0:
                s.apply(int(actions[i]))
            assert batch.get_state(i).move_history == s.move_history


def test_play_random_respects_max_moves():
    config = HanabiConfig(players=2)
    batch = HanabiBatch(config, 5, seeds=1)
    assert batch.play_random(max_moves=3) == 15
    assert [s.num_moves_played for s in _batch_states(batch)] == [3] * 5
    total = batch.play_random()
    assert batch.terminals().all()
    assert total == sum(s.num_moves_played for s in _batch_states(batch)) - 15
    assert batch.play_random() == 0      # finished games stay finished


def test_set_state_and_from_states_copy():
    config = HanabiConfig(players=2)
    state = HanabiState(config, seed=8)
    batch = HanabiBatch.from_states([state])
    batch.step([config.hand_size])
    assert state.num_moves_played == 0           # the batch holds a copy
    got = batch.get_state(0)
    got.apply(got.legal_moves()[0])
    assert batch.get_state(0).num_moves_played == 1
    batch.set_state(0, got)
    assert batch.get_state(0).move_history == got.move_history
    assert len(batch) == batch.num_games == 1 and batch.config == config


def test_set_hand_with_a_seed_depends_only_on_what_the_player_sees():
    """Two games that look the same to seat 0 but differ in hidden deck order (and RNG)
    give identical worlds after set_hand(..., seed=s): search can re-deal without peeking."""
    rng = random.Random(0)
    for game in range(30):
        state = HanabiState(HanabiConfig(), seed=game)
        for _ in range(rng.randrange(0, 30)):
            if state.is_terminal:
                break
            state.apply(rng.choice(state.legal_moves()))
        if state.is_terminal:
            continue
        other = state.clone()
        other.shuffle_deck(seed=game + 1000)
        hand = state.hand(0)
        a, b = state.clone(), other.clone()
        a.set_hand(0, hand, seed=7)
        b.set_hand(0, hand, seed=7)
        assert a.deck == b.deck
        np.testing.assert_array_equal(a.encode(1), b.encode(1))
        if state.deck_size >= 5:  # another seed, another shuffle of the undrawn cards
            c = state.clone()
            c.set_hand(0, hand, seed=8)
            assert c.deck != a.deck
