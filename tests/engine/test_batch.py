"""Search worlds in one HanabiBatch: from_state, set_hands, hands, take, encode_sparse; the
rule bots' shared memory over a common history; batched value features."""

import numpy as np
import pytest

from lbs_pz.agents import RuleBot
from lbs_pz.agents.rule_bots import _bots as bots
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.search.value import value_features

BOT = RuleBot("strong")


def _position(moves, seed=0, config=HanabiConfig()):
    """A strong-bot self-play position after `moves` moves (or the end)."""
    state = HanabiState(config, seed=seed)
    while not state.is_terminal and state.num_moves_played < moves:
        state.apply(BOT.act(state))
    return state


def _consistent_hands(state, seat, n, seed):
    """n random hands for `seat` that pass `set_hand` (rejection over permutations of the
    cards the seat cannot see)."""
    rng = np.random.default_rng(seed)
    hidden = list(state.hand(seat)) + list(state.deck[len(state.deck) - state.deck_size:])
    size = len(state.hand(seat))
    out = []
    while len(out) < n:
        cand = [int(c) for c in rng.permutation(hidden)[:size]]
        try:
            state.clone().set_hand(seat, cand)
        except ValueError:
            continue
        out.append(cand)
    return np.array(out, dtype=np.int64)


# --- HanabiBatch -------------------------------------------------------------------------

def test_from_state_copies_and_hands_reads_each_seat():
    state = _position(23, seed=3)
    batch = HanabiBatch.from_state(state, 5)
    assert len(batch) == 5
    for i in range(5):
        assert batch.get_state(i).deck == state.deck
        assert batch.get_state(i).move_history == state.move_history
    for seat in range(2):
        assert batch.hands(seat).tolist() == [state.hand(seat)] * 5
    assert batch.hands().tolist() == [state.hand(state.current_player)] * 5
    assert batch.hands().dtype == np.int8 and batch.hands().shape == (5, 5)
    # The copies are independent of the state and of each other.
    batch.step(np.full(5, state.legal_moves()[0]))
    assert state.num_moves_played == 23 and batch.get_state(0).num_moves_played == 24


def test_hands_marks_empty_slots_at_the_end_of_the_game():
    state = _position(10_000, seed=1)          # played to the end: hands have shrunk
    assert state.is_terminal
    batch = HanabiBatch.from_state(state, 2)
    for seat in range(2):
        hand = state.hand(seat)
        expect = hand + [-1] * (5 - len(hand))
        assert batch.hands(seat).tolist() == [expect, expect]
    assert any(len(state.hand(seat)) < 5 for seat in range(2))


def test_set_hands_with_seeds_equals_set_hand_state_by_state():
    for moves, game in [(0, 2), (17, 4), (41, 6)]:
        state = _position(moves, seed=game)
        seat = state.current_player
        hands = _consistent_hands(state, seat, 24, seed=game)
        seeds = np.random.default_rng(game).integers(0, 2**63, size=24)
        seeds[3] = 2**63 - 5                     # near the top of int64 (negative seeds raise)
        batch = HanabiBatch.from_state(state, 24)
        batch.set_hands(seat, hands, seeds=seeds)
        for i in range(24):
            world = state.clone()
            world.set_hand(seat, hands[i].tolist(), seed=int(seeds[i]))
            got = batch.get_state(i)
            assert got.deck == world.deck and got.hands == world.hands
            assert got.move_records() == world.move_records()
        assert batch.hands(seat).tolist() == hands.tolist()


def test_set_hands_without_seeds_uses_each_games_rng():
    state = _position(12, seed=8)
    seat = state.current_player
    hands = _consistent_hands(state, seat, 6, seed=1)
    batch = HanabiBatch.from_state(state, 6)
    batch.set_hands(seat, hands)
    for i in range(6):
        world = state.clone()
        world.set_hand(seat, hands[i].tolist())
        assert batch.get_state(i).deck == world.deck


def test_set_hands_names_the_first_impossible_world():
    state = _position(30, seed=5)
    seat = state.current_player
    hands = _consistent_hands(state, seat, 6, seed=2)
    knowledge = state.card_knowledge(seat)
    config = state.config
    # A card its slot's knowledge rules out, in world 3.
    colors, ranks = knowledge[0][0], knowledge[0][1]
    ruled_out = next(c * config.ranks + r for c in range(config.colors) for r in range(config.ranks)
                     if c not in colors or r not in ranks)
    bad = hands.copy()
    bad[3, 0] = ruled_out
    bad[5, 0] = ruled_out
    batch = HanabiBatch.from_state(state, 6)
    with pytest.raises(ValueError, match=r"^game 3: .* slot 0 .*knowledge"):
        batch.set_hands(seat, bad, seeds=np.arange(6))
    assert batch.get_state(3).deck == state.deck        # the failing world is unchanged
    assert batch.hands(seat)[:3].tolist() == hands[:3].tolist()
    # More copies of a card than remain unseen.
    greedy = np.tile(hands[:1], (6, 1))
    fives = [t for t in range(config.num_card_types) if config.card_count(t) == 1]
    with pytest.raises(ValueError):
        many = greedy.copy()
        many[0, :] = fives[0]
        HanabiBatch.from_state(state, 6).set_hands(seat, many)
    with pytest.raises(ValueError, match="shape"):
        HanabiBatch.from_state(state, 6).set_hands(seat, hands[:5])
    with pytest.raises(ValueError, match="card ids"):
        HanabiBatch.from_state(state, 6).set_hands(seat, np.full((6, 5), 99))
    with pytest.raises(ValueError, match="seat"):
        HanabiBatch.from_state(state, 6).set_hands(7, hands)
    with pytest.raises(ValueError, match="seeds"):
        HanabiBatch.from_state(state, 6).set_hands(seat, hands, seeds=[1, 2])
    with pytest.raises(TypeError):
        HanabiBatch.from_state(None, 2)
    with pytest.raises(ValueError, match="n must be"):
        HanabiBatch.from_state(state, 0)


def test_take_copies_selected_games_and_checks_indices():
    batch = HanabiBatch(HanabiConfig(), 4, seeds=11)
    batch.play_random(6)
    sub = batch.take(np.array([3, 1, 3]))
    assert [sub.get_state(i).deck for i in range(3)] == \
        [batch.get_state(i).deck for i in (3, 1, 3)]
    sub.play_random(-1)                          # independent of the source
    assert batch.get_state(3).num_moves_played == 6
    copy = batch.copy()
    assert [copy.get_state(i).deck for i in range(4)] == [batch.get_state(i).deck for i in range(4)]
    with pytest.raises(IndexError, match="4"):
        batch.take([0, 4])
    with pytest.raises(IndexError):
        batch.take([-1])
    with pytest.raises(ValueError, match="at least one"):
        batch.take([])
    for bad in (None, [[0, 1]], [0.5], "ab"):
        with pytest.raises(ValueError, match="1-D array of game indices"):
            batch.take(bad)


def test_out_arrays_must_be_writeable_contiguous_and_typed():
    batch = HanabiBatch(HanabiConfig(), 3, seeds=1)
    frozen = np.zeros((3, 5), np.int8)
    frozen.flags.writeable = False
    for bad in (frozen, np.zeros((3, 5), np.int64), np.zeros((5, 3), np.int8).T,
                np.zeros((3, 4), np.int8)):
        with pytest.raises(ValueError, match="writeable C-contiguous"):
            batch.hands(out=bad)
    frozen_scores = np.zeros(3, np.int32)
    frozen_scores.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        batch.scores(out=frozen_scores)
    with pytest.raises(ValueError, match="seat"):
        batch.hands(seat=2)
    out = np.full((3, 5), 7, np.int8)
    assert batch.hands(0, out=out) is out and (out >= 0).all()


@pytest.mark.parametrize("config", [HanabiConfig(), HanabiConfig(players=3, hand_size=4),
                                    HanabiConfig(observation_type="minimal")],
                         ids=["2p", "3p", "minimal"])
def test_encode_sparse_lists_the_ones_of_encode(config):
    batch = HanabiBatch(config, 40, seeds=2)
    batch.play_random(15)
    seats = np.arange(40) % config.players
    for players, dense in ((None, batch.encode()), (seats, batch.encode(players=seats))):
        assert set(np.unique(dense)) <= {0.0, 1.0}
        indices, offsets = batch.encode_sparse(players=players)
        # each game's ones, ascending and each once: embedding sums equal the dense product
        rows, cols = np.nonzero(dense)
        np.testing.assert_array_equal(indices, cols)
        np.testing.assert_array_equal(offsets, np.searchsorted(rows, np.arange(40)))


def test_the_own_hand_follows_the_encoding_dense_and_sparse():
    batch = HanabiBatch(HanabiConfig(), 60, seeds=4)
    BOT.rollout(batch, 200)                   # to the end: some hands have shrunk
    states = [batch.get_state(i) for i in range(60)] + [HanabiState(HanabiConfig(), seed=9)]
    batch = HanabiBatch.from_states(states)
    assert (batch.hands() < 0).any()          # empty slots are listed as nothing
    dense = batch.encode(own_hand=True)
    np.testing.assert_array_equal(dense, _reference_features(states))
    indices, offsets = batch.encode_sparse(own_hand=True)
    rows, cols = np.nonzero(dense)
    np.testing.assert_array_equal(indices, cols)
    np.testing.assert_array_equal(offsets, np.searchsorted(rows, np.arange(len(batch))))
    assert np.array_equal(batch.encode_sparse(own_hand=False)[0], batch.encode_sparse()[0])
    seats = np.arange(len(batch)) % 2         # another seat's view, its own cards included
    np.testing.assert_array_equal(batch.encode(players=seats, own_hand=True)[:, :658],
                                  batch.encode(players=seats))


# --- rule bots over a batch ----------------------------------------------------------------

def _mixed_worlds(kind_seed=0):
    """Worlds from several roots, sampled hands and one candidate move each, in an order
    where consecutive worlds share long, short and no history prefixes."""
    worlds = []
    rng = np.random.default_rng(kind_seed)
    for game, moves in [(1, 20), (2, 35), (1, 21), (3, 0), (1, 20)]:
        root = _position(moves, seed=game)
        if root.is_terminal:
            continue
        seat = root.current_player
        for hand, legal_i in zip(_consistent_hands(root, seat, 12, seed=game + moves),
                                 rng.integers(0, 100, size=12)):
            world = root.clone()
            world.set_hand(seat, hand.tolist(), seed=int(rng.integers(2**62)))
            legal = world.legal_moves()
            world.apply(legal[legal_i % len(legal)])
            worlds.append(world)
    return worlds


@pytest.mark.parametrize("name", ["random", "simple", "weak", "medium", "strong"])
def test_batched_bots_match_replaying_each_world(name):
    """act_batch / play_batch share the memory of common history prefixes across worlds;
    moves and rollouts are identical to replaying every world's history on its own."""
    worlds = _mixed_worlds()
    batch = HanabiBatch.from_states(worlds)
    assert bots.act_batch(name, batch).tolist() == [bots.act(name, w) for w in worlds]
    for depth in (0, 1, 16, -1):
        rolled = HanabiBatch.from_states(worlds)
        made = bots.play_batch(name, rolled, depth)
        copies = [w.clone() for w in worlds]
        assert made.tolist() == bots.play_states(name, copies, depth).tolist()
        assert [rolled.get_state(i).move_history for i in range(len(worlds))] == \
            [c.move_history for c in copies]


def test_rule_bot_blueprint_takes_a_batch_only():
    state = _position(5, seed=2)
    with pytest.raises(TypeError, match="HanabiBatch.from_states"):
        BOT.rollout([state.clone()])
    with pytest.raises(TypeError, match="HanabiBatch.from_states"):
        BOT.act_batch([state])
    with pytest.raises(TypeError, match="HanabiBatch"):
        BOT.value([state])
    batch = HanabiBatch.from_state(state, 3)
    assert BOT.act_batch(batch).tolist() == [BOT.act(state)] * 3
    assert BOT.value(batch) is None
    scores = BOT.rollout_scores(batch, 4)
    assert scores.tolist() == batch.scores().tolist()
    assert all(batch.get_state(i).num_moves_played == 9 for i in range(3))


# --- value features --------------------------------------------------------------------------

def _reference_features(states):
    """The per-state definition of value_features."""
    config = states[0].config
    E, H, T = config.encoding_size, config.hand_size, config.num_card_types
    feats = np.zeros((len(states), E + H * T), np.float32)
    for i, state in enumerate(states):
        seat = state.current_player
        feats[i, :E] = state.encode(seat)
        for slot, card in enumerate(state.hand(seat)):
            feats[i, E + slot * T + card] = 1.0
    return feats


def test_value_features_of_a_batch_match_the_per_state_definition():
    states = [_position(m, seed=s) for m, s in [(0, 1), (30, 2), (55, 3)]]
    ended = (_position(10_000, seed=s) for s in range(4, 100))   # a shrunk hand to move
    states.append(next(st for st in ended if len(st.hand(st.current_player)) < 5))
    batch = HanabiBatch.from_states(states)
    np.testing.assert_array_equal(value_features(batch), _reference_features(states))
    out = np.full((4, value_features(batch).shape[1]), 5.0, np.float32)
    assert value_features(batch, out=out) is out
    np.testing.assert_array_equal(out, _reference_features(states))
    with pytest.raises(ValueError, match="out"):
        value_features(batch, out=np.zeros((4, 3), np.float32))


def test_central_value_sparse_first_layer_equals_the_dense_network():
    torch = pytest.importorskip("torch")
    from lbs_pz.search.value import CentralValue, value_features

    value = CentralValue()
    batch = HanabiBatch(HanabiConfig(), 200, seeds=5)
    BOT.rollout(batch, 30)
    open_games = batch.take(np.flatnonzero(~batch.terminals()))
    with torch.no_grad():
        dense = value.net(torch.from_numpy(value_features(open_games))).squeeze(1).numpy()
    got = value(open_games)
    assert got.shape == (len(open_games),) and got.dtype == np.float32
    np.testing.assert_allclose(got, dense, atol=1e-4)
    assert np.all((got > 5) & (got < 26))


def test_counterfactual_mask_with_a_memory_cache_equals_a_fresh_fold():
    """The cache follows a game forward, jumps back and to another game, and notices a
    change of the bot's switches; the masks always equal those of a fresh replay."""
    cache = bots.MemoryCache("strong")
    positions = []
    for game in (3, 4):
        state = HanabiState(HanabiConfig(), seed=game)
        while not state.is_terminal:
            positions.append(state.clone())
            state.apply(BOT.act(state))
    order = positions[:40] + positions[10:15] + positions[-30:] + positions[5:8]
    checked = 0
    for before in order:
        seat = 1 - before.current_player
        hands = _consistent_hands(before, seat, 8, seed=before.num_moves_played)
        hands[0] = before.hand(seat)            # the true hand: the move it made
        hands = np.ascontiguousarray(hands, dtype=np.int8)
        move = BOT.act(before)
        fresh = bots.counterfactual_mask("strong", before, seat, move, hands)
        cached = bots.counterfactual_mask("strong", before, seat, move, hands, cache)
        assert cached.tolist() == fresh.tolist() and fresh[0] == 1
        checked += 1
    assert checked == len(order)
    before = positions[30]
    seat = 1 - before.current_player
    hands = np.ascontiguousarray(_consistent_hands(before, seat, 64, seed=1), dtype=np.int8)
    move = BOT.act(before)
    bots.counterfactual_mask("strong", before, seat, move, hands, cache)
    old = bots.get_params("strong")
    try:
        bots._set_params("strong", warn=0, delayed=0)
        fresh = bots.counterfactual_mask("strong", before, seat, move, hands)
        assert bots.counterfactual_mask("strong", before, seat, move, hands, cache).tolist() \
            == fresh.tolist()
    finally:
        bots._set_params("strong", **old)
    with pytest.raises(ValueError, match="cache"):
        bots.counterfactual_mask("medium", before, seat, move, hands, cache)


def test_filtered_belief_filters_repeated_hands_once_with_the_same_verdicts():
    from lbs_pz.search.beliefs import FilteredBelief, GroundedBelief

    belief = FilteredBelief(GroundedBelief(), BOT)
    state = _position(45, seed=9)
    seat = state.current_player
    belief.reset(state, seat)
    distinct = GroundedBelief().reset(state, seat).sample(40, np.random.default_rng(3))
    hands = distinct[np.random.default_rng(4).integers(0, len(distinct), size=120)]
    hands[0] = state.hand(seat)                 # the true hand is never filtered out
    together = belief.consistent_with_partners(hands)
    one_by_one = [belief.consistent_with_partners(h[None])[0] for h in hands]
    assert together.tolist() == one_by_one
    assert together[0] and not together.all()


def test_public_history_keys_are_the_states_keys():
    """HanabiBatch.public_history_keys(rows) equals each game's
    HanabiState.public_history_key() (any start player, any order of rows), and bad rows
    are a Python exception."""
    config = HanabiConfig(players=3)
    batch = HanabiBatch(config, 12, seeds=np.arange(12) + 40)
    bot = RuleBot("strong")
    rows = np.array([11, 0, 5, 5, 3])
    for _ in range(25):
        assert batch.public_history_keys(rows) == \
            [batch.get_state(int(i)).public_history_key() for i in rows]
        batch.step(bot.act_batch(batch))
    assert len(batch.public_history_keys()) == 12
    assert batch.public_history_keys(np.array([], dtype=np.int64)) == []
    with pytest.raises(IndexError):
        batch.public_history_keys([12])
    with pytest.raises(ValueError):
        batch.public_history_keys(np.zeros((2, 2), dtype=np.int64))
