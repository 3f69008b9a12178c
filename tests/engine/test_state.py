"""Property tests of the engine (hypothesis, derandomized so runs are reproducible):
copying, pickling, seeding, the invariants every position must satisfy, and set_hand."""

from __future__ import annotations

import collections
import copy
import dataclasses
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.helpers.engine import (
    COMMON_CONFIGS, assert_cards_conserved, assert_draws_match_deck, configs, full_deck,
    play_random, seeds, snapshot, states, undrawn,
)
from lbs_pz.agents.rule_bots import _bots as bots
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState

PROPERTY = settings(
    derandomize=True, deadline=None, max_examples=60, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
STANDARD = [c for c in COMMON_CONFIGS if (c.colors, c.ranks) == (5, 5)]


def _some_move(state, rng):
    legal = state.legal_moves()
    return rng.choice(legal) if legal else None


# --- copying and pickling ----------------------------------------------------------

@PROPERTY
@given(states(), st.integers(0, 2**32))
def test_clone_is_identical_and_independent(state, r):
    rng = random.Random(r)
    before = snapshot(state)
    for make_copy in (HanabiState.clone, copy.copy, copy.deepcopy):
        twin = make_copy(state)
        assert snapshot(twin) == before
        # Moving the copy leaves the original alone...
        play_random(twin, 5, rng)
        twin.shuffle_deck(seed=rng.getrandbits(64))
        assert snapshot(state) == before
    # ...and moving the original leaves an earlier copy alone.
    twin = state.clone()
    move = _some_move(state, rng)
    assume(move is not None)
    state.apply(move)
    assert snapshot(twin) == before
    assert state.num_moves_played == twin.num_moves_played + 1


@PROPERTY
@given(states(), st.integers(0, 2**32))
def test_pickle_round_trip(state, r):
    restored = pickle.loads(pickle.dumps(state))
    assert restored.config == state.config
    assert snapshot(restored) == snapshot(state)
    # The RNG travels too: the same reshuffle and the same continuation in both.
    restored.shuffle_deck()
    state.shuffle_deck()
    play_random(restored, 10, random.Random(r))
    play_random(state, 10, random.Random(r))
    assert snapshot(restored) == snapshot(state)


# --- seeding -------------------------------------------------------------------------

@PROPERTY
@given(configs, seeds)
def test_same_seed_same_game(config, seed):
    a, b = HanabiState(config, seed=seed), HanabiState(config, seed=seed)
    assert snapshot(a) == snapshot(b)
    # A batch seeded with a list gives game i exactly HanabiState(seed=seeds[i]).
    batch = HanabiBatch(config, 2, seeds=[seed, seed ^ 1])
    assert snapshot(batch.get_state(0)) == snapshot(a)
    assert batch.get_state(1).deck == HanabiState(config, seed=seed ^ 1).deck


@PROPERTY
@given(configs, seeds, st.integers(1, 8))
def test_same_seed_same_random_playout(config, seed, n):
    results = []
    for _ in range(2):
        batch = HanabiBatch(config, n, seeds=seed)
        total = batch.play_random()
        assert batch.terminals().all()
        games = [batch.get_state(i) for i in range(n)]
        assert total == sum(g.num_moves_played for g in games)
        results.append((total, batch.scores().tolist(), [snapshot(g) for g in games]))
    assert results[0] == results[1]


@PROPERTY
@given(st.sampled_from(STANDARD), seeds, seeds)
def test_different_seeds_different_games(config, s1, s2):
    assume(s1 != s2)
    # 50-card decks: a collision would be astronomically unlikely.
    assert HanabiState(config, seed=s1).deck != HanabiState(config, seed=s2).deck
    a, b = HanabiBatch(config, 4, seeds=s1), HanabiBatch(config, 4, seeds=s2)
    decks_a = [a.get_state(i).deck for i in range(4)]
    decks_b = [b.get_state(i).deck for i in range(4)]
    assert not set(map(tuple, decks_a)) & set(map(tuple, decks_b))
    assert len(set(map(tuple, decks_a))) == 4   # games of one batch differ from each other


@PROPERTY
@given(configs, seeds)
def test_random_playout_replays_with_apply(config, seed):
    """play_random (C, own RNG) only plays legal moves: replaying its history with
    apply() from the same deal reaches the same position."""
    batch = HanabiBatch(config, 1, seeds=[seed])
    start = batch.get_state(0)
    batch.play_random()
    played = batch.get_state(0)
    replay = HanabiState(config, deck=start.deck, start_player=start.current_player)
    for move in played.move_history:
        replay.apply(move)
    mine, theirs = snapshot(replay), snapshot(played)
    del mine["pickled"], theirs["pickled"]          # the RNG state differs, nothing else
    assert mine == theirs


# --- invariants along whole games --------------------------------------------------------

def check_invariants(state):
    config = state.config
    assert_cards_conserved(state)
    assert_draws_match_deck(state)
    assert 0 <= state.information_tokens <= config.max_information_tokens
    assert 0 <= state.life_tokens <= config.max_life_tokens
    assert all(0 <= f <= config.ranks for f in state.fireworks)
    assert 0 <= state.score <= config.colors * config.ranks
    if state.life_tokens == 0:
        assert state.score == 0 and state.is_terminal
    else:
        assert state.score == sum(state.fireworks)
    legal = state.legal_moves()
    mask = state.legal_mask()
    assert mask.dtype == np.int8 and mask.shape == (config.num_moves,)
    assert np.flatnonzero(mask).tolist() == legal
    assert legal == sorted(set(legal))
    assert [m for m in range(config.num_moves) if state.is_legal(m)] == legal
    assert (legal == []) == state.is_terminal
    if not state.is_terminal:
        assert state.view(state.current_player).legal_moves == tuple(legal)
    for p, hand in enumerate(state.hands):
        assert len(hand) <= config.hand_size
        assert len(state.card_knowledge(p)) == len(hand)
        if state.deck_size > 0:
            assert len(hand) == config.hand_size


@PROPERTY
@given(configs, seeds, st.integers(0, 2**32))
def test_invariants_hold_at_every_step(config, seed, r):
    state = HanabiState(config, seed=seed)
    rng = random.Random(r)
    check_invariants(state)
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_moves()))
        check_invariants(state)
    # The game ends on one of HLE's three conditions.
    assert (state.life_tokens == 0 or state.turns_to_play <= 0
            or sum(state.fireworks) == config.colors * config.ranks)


# --- set_hand -------------------------------------------------------------------------------

def sample_consistent_hand(state, player, rng, tries=50):
    """A hand `player` could be holding given what it knows: each card allowed by its
    slot's knowledge, and no more copies than the player cannot see (deck + own hand)."""
    knowledge = state.card_knowledge(player)
    ranks = state.config.ranks
    for _ in range(tries):
        unseen = collections.Counter(undrawn(state) + state.hand(player))
        hand = []
        for colors, rank_set, _, _ in knowledge:
            options = [c for c in sorted(unseen)
                       if unseen[c] > 0 and c // ranks in colors and c % ranks in rank_set]
            if not options:
                break
            card = rng.choice(options)
            unseen[card] -= 1
            hand.append(card)
        else:
            return hand
    return list(state.hand(player))   # greedy sampling kept failing: the true hand fits


def _without_draws_of(view, player):
    """A view whose history hides the cards `player` drew (compared separately, see
    test_set_hand_keeps_record_a_valid_deal)."""
    records = bytearray(view.records)          # 7 bytes a move: byte 1 player, 6 drawn
    for i in range(0, len(records), 7):
        if records[i + 1] == player:
            records[i + 6] = 255
    hidden = dataclasses.replace(view, records=bytes(records))
    assert all(m.drawn is None for m in hidden.history if m.player == player)
    return hidden


def hint_ids_for(state, target):
    """Move ids of the current player's hints at `target`, each mapped to itself if the
    hint is legal (a token left and a matching card) and to -1 otherwise; {} if the
    current player is `target`."""
    config, cur = state.config, state.current_player
    P, C, R, hs = config.players, config.colors, config.ranks, config.hand_size
    offset = (target - cur) % P
    if offset == 0:
        return {}
    hand, tokens = state.hand(target), state.information_tokens > 0
    out = {}
    for c in range(C):
        move = 2 * hs + (offset - 1) * C + c
        out[move] = move if tokens and any(card // R == c for card in hand) else -1
    for r in range(R):
        move = 2 * hs + (P - 1) * C + (offset - 1) * R + r
        out[move] = move if tokens and any(card % R == r for card in hand) else -1
    return out


@st.composite
def set_hand_cases(draw):
    state = draw(states(max_moves=100))
    assume(not state.is_terminal)
    player = draw(st.integers(0, state.config.players - 1))
    rng = random.Random(draw(st.integers(0, 2**32)))
    return state, player, sample_consistent_hand(state, player, rng), rng


@PROPERTY
@given(set_hand_cases())
def test_set_hand_changes_only_the_hand(case):
    state, p, hand, rng = case
    config = state.config
    before = snapshot(state)
    state.set_hand(p, hand)
    assert state.hand(p) == hand
    # The player itself cannot tell the difference.
    assert state.view(p) == before["views"][p]
    assert state.encode(p).tobytes() == before["encodings"][p]
    # Everybody else sees p's new cards and nothing else new.
    for q in range(config.players):
        if q == p:
            continue
        old = before["views"][q]
        hands = list(old.hands)
        hands[p] = tuple(hand)
        # The seat to move may now hint p differently (checked below).
        expected = dataclasses.replace(old, hands=tuple(hands),
                                       legal_moves=state.view(q).legal_moves)
        assert _without_draws_of(state.view(q), p) == _without_draws_of(expected, p)
        # The encoding changes at most in the block of p's cards (p's relative seat).
        rel = (p - q) % config.players
        block = config.hand_size * config.num_card_types
        diff = np.flatnonzero(state.encode(q) != np.frombuffer(before["encodings"][q], np.float32))
        assert all((rel - 1) * block <= i < rel * block for i in diff)
    after = snapshot(state)
    for key in ("discards", "fireworks", "tokens", "current_player", "knowledge",
                "deck_size", "score", "turns_to_play"):
        assert after[key] == before[key], key
    assert [h for i, h in enumerate(state.hands) if i != p] == \
           [h for i, h in enumerate(before["hands"]) if i != p]
    # Legal moves: only the hints aimed at p may change, and they follow p's new cards.
    to_p = hint_ids_for(state, p)
    assert [m for m in after["legal"] if m not in to_p] == \
           [m for m in before["legal"] if m not in to_p]
    assert [m for m in after["legal"] if m in to_p] == sorted(to_p[m] for m in to_p if to_p[m] >= 0)
    assert_cards_conserved(state)
    # In the dealing order only the slots p's cards were dealt from changed (plus the
    # undrawn tail, re-shuffled).
    dealt = config.deck_size - state.deck_size
    changed = {i for i in range(dealt) if state.deck[i] != before["deck"][i]}
    assert changed <= set(state.hand_deck_indices(p))
    assert [state.deck[i] for i in state.hand_deck_indices(p)] == hand
    # The game goes on normally to its end.
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_moves()))
        assert_cards_conserved(state)


@PROPERTY
@given(set_hand_cases())
def test_set_hand_keeps_record_a_valid_deal(case):
    """set_hand writes the new cards into the deck order where the old ones were dealt
    from "so the record of the game stays a valid deal": the cards the history says were
    drawn must then be the deck's cards, and a fresh game dealt from `deck` and replaying
    `move_history` must reach the same position."""
    state, p, hand, rng = case
    state.set_hand(p, hand)
    assert_draws_match_deck(state)
    start = (state.current_player - state.num_moves_played) % state.config.players
    replay = HanabiState(state.config, deck=state.deck, start_player=start)
    for move in state.move_history:
        replay.apply(move)
    assert replay.hands == state.hands
    assert [replay.card_knowledge(q) for q in range(state.config.players)] == \
           [state.card_knowledge(q) for q in range(state.config.players)]


@PROPERTY
@given(states(max_moves=100), st.integers(0, 2**32))
def test_set_hand_with_true_hand_is_accepted(state, r):
    for p in range(state.config.players):
        hand = state.hand(p)
        remaining = collections.Counter(undrawn(state))
        state.set_hand(p, hand)
        assert state.hand(p) == hand
        # Only the undrawn deck may be re-shuffled.
        assert collections.Counter(undrawn(state)) == remaining
        assert_cards_conserved(state)
    play_random(state, 200, random.Random(r))
    assert state.is_terminal


def test_set_hand_can_reach_every_unseen_card():
    """At the start nothing is known, so slot 0 may be any card type with a copy outside
    the other players' hands; and the undrawn deck adjusts to keep the multiset valid."""
    config = HanabiConfig(players=2)
    base = HanabiState(config, seed=3)
    visible = collections.Counter(base.hand(1))
    for card in range(config.num_card_types):
        state = base.clone()
        hand = state.hand(0)
        hand[0] = card
        ok = collections.Counter(undrawn(state) + state.hand(0))[card] > 0
        if ok:
            state.set_hand(0, hand)
            assert state.hand(0)[0] == card
            assert collections.Counter(state.deck) == full_deck(config)
        else:
            assert visible[card] == config.card_count(card)
            with pytest.raises(ValueError):
                state.set_hand(0, hand)


# --- the score's ceiling ------------------------------------------------------------

@pytest.mark.parametrize("config", [HanabiConfig(), HanabiConfig(players=3),
                                    HanabiConfig(colors=3, ranks=3, hand_size=3)])
def test_max_score_bounds_every_final_score_and_never_rises(config):
    """`max_score` is a ceiling of the final score from every position of a game (strong
    bot and random play, which loses cards and lives), never rises as the game goes, is
    the score once the game is over, and `HanabiBatch.max_scores` agrees with it."""
    below = 0
    for seed in range(24):
        state = HanabiState(config, seed=seed)
        rng = random.Random(seed)
        ceilings, positions = [], []
        while not state.is_terminal:
            ceilings.append(state.max_score)
            positions.append(state.clone())
            move = bots.act("strong", state) if seed % 2 else rng.choice(state.legal_moves())
            state.apply(move)
        assert state.max_score == state.score
        assert all(c >= state.score for c in ceilings)
        assert all(a >= b for a, b in zip(ceilings, ceilings[1:]))
        assert ceilings[0] == config.colors * config.ranks
        below += ceilings[-1] < config.colors * config.ranks
        batch = HanabiBatch.from_states(positions)
        np.testing.assert_array_equal(batch.max_scores(), ceilings)
    assert below > 0          # the ceiling does come down in some games
