"""Differential tests: our engine must replay games recorded in the Hanabi Learning
Environment (HLE) and agree with it bit for bit at every step.

Each variant records ~100 HLE games with a mix of policies (uniform, hint-heavy,
reckless, careful and a cheating player that sees its own hand), then replays the same
deal order and moves in `HanabiState` and, in lockstep, in a `HanabiBatch`.
"""

from __future__ import annotations

import collections
import copy
import functools
import random

import numpy as np
import pytest

from tests.helpers import hle_oracle as oracle
from tests.helpers.engine import deck_size_of
from tests.helpers.hle_oracle import pyhanabi
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState

OUT_OF_LIFE = int(pyhanabi.HanabiEndOfGameType.OUT_OF_LIFE_TOKENS)    # 1
OUT_OF_CARDS = int(pyhanabi.HanabiEndOfGameType.OUT_OF_CARDS)         # 2
COMPLETED = int(pyhanabi.HanabiEndOfGameType.COMPLETED_FIREWORKS)     # 3


def cheater_policy(rng, legal, kinds, state):
    """Looks at its own hand and plays every playable card, so games reach high scores:
    fireworks get completed (end code 3, and the info token for a completed color)."""
    cur = state.cur_player()
    fireworks = state.fireworks()
    hand = state.player_hands()[cur]
    # Play and discard ids are ascending in the slot index; plays are always legal.
    plays = [m for m, k in zip(legal, kinds) if k == 1]
    discards = [m for m, k in zip(legal, kinds) if k == 0]
    hints = [m for m, k in zip(legal, kinds) if k >= 2]
    for slot, card in enumerate(hand):
        if fireworks[card.color()] == card.rank():
            return plays[slot]
    if hints and (not discards or rng.random() < 0.5):
        return rng.choice(hints)
    if discards:
        useless = [discards[i] for i, c in enumerate(hand) if c.rank() < fireworks[c.color()]]
        return rng.choice(useless or discards)
    return rng.choice(legal)


# Out of every 20 games: policy, count. Careful and cheating games are long (slow to record).
POLICY_MIX = [
    (oracle.uniform_policy, 7),
    (oracle.hint_heavy_policy, 5),
    (oracle.reckless_policy, 4),
    (oracle.careful_policy, 2),
    (cheater_policy, 2),
]
GAMES_PER_VARIANT = 100


def _random_configs(n, seed=1234):
    """Odd but valid variants (1-color decks, 8-card hands, 16 info tokens...)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        players, colors, ranks = rng.randint(2, 5), rng.randint(1, 5), rng.randint(1, 5)
        deck = deck_size_of(colors, ranks)
        if deck // players < 1:
            continue
        out.append(HanabiConfig(
            players=players, colors=colors, ranks=ranks,
            hand_size=rng.randint(1, min(8, deck // players)),
            max_information_tokens=rng.randint(1, 16),
            max_life_tokens=rng.randint(1, 8),
            random_start_player=rng.random() < 0.5,
            observation_type=rng.choice(["minimal", "card_knowledge", "seer"]),
        ))
    return out


def _variants():
    v = {}
    for p in (2, 3, 4, 5):
        v[f"standard-{p}p"] = HanabiConfig(players=p)
        v[f"small-{p}p"] = HanabiConfig(players=p, colors=2, ranks=3, hand_size=2)
        v[f"few-tokens-{p}p"] = HanabiConfig(players=p, max_information_tokens=3, max_life_tokens=1)
        v[f"many-tokens-{p}p"] = HanabiConfig(players=p, max_information_tokens=12,
                                              max_life_tokens=5)
        v[f"minimal-{p}p"] = HanabiConfig(players=p, observation_type="minimal")
        v[f"seer-{p}p"] = HanabiConfig(players=p, observation_type="seer")
        v[f"random-start-{p}p"] = HanabiConfig(players=p, random_start_player=True)
    for hs in (6, 7):
        v[f"hand{hs}-2p"] = HanabiConfig(players=2, hand_size=hs)
    return v


VARIANTS = _variants()
RANDOM_CONFIGS = _random_configs(24)


@functools.lru_cache(maxsize=None)
def corpus(config: HanabiConfig, games: int = GAMES_PER_VARIANT, seed0: int = 0):
    """HLE recordings for one config (cached per worker process)."""
    policies = [pol for pol, count in POLICY_MIX for _ in range(count)]
    return tuple(oracle.record_game(config, seed0 + i, policies[i % len(policies)])
                 for i in range(games))


def _where(rec, t, player=None):
    who = "" if player is None else f", seen by player {player}"
    return (f"step {t}{who} of {rec.config}, deck={rec.deck}, start_player={rec.start_player}, "
            f"moves so far={rec.moves[:t]}")


# --- single-state replay ---------------------------------------------------------------

def replay_state(rec):
    """Replay one recorded game in HanabiState, comparing with HLE at every step."""
    config = rec.config
    state = HanabiState(config, deck=rec.deck, start_player=rec.start_player)
    assert state.deck == rec.deck
    for t, snap in enumerate(rec.snapshots):
        where = _where(rec, t)
        assert state.is_terminal == snap.is_terminal, where
        # HLE's cur_player() after the end is not meaningful (and ours is documented as
        # the last mover's successor), so the seat to move is only compared mid-game.
        if not snap.is_terminal:
            assert state.current_player == snap.current_player, where
        assert state.legal_moves() == snap.legal_moves, where
        assert state.score == snap.score, where
        assert state.information_tokens == snap.information_tokens, where
        assert state.life_tokens == snap.life_tokens, where
        assert state.fireworks == snap.fireworks, where
        assert state.deck_size == snap.deck_size, where
        for p in range(config.players):
            ours = state.encode(p)
            assert ours.dtype == np.float32 and ours.shape == (config.encoding_size,)
            if not np.array_equal(ours, snap.encodings[p]):
                diff = np.flatnonzero(ours != snap.encodings[p])
                pytest.fail(f"encoding differs at indices {diff[:20].tolist()}: "
                            f"{_where(rec, t, p)}")
        if t < len(rec.moves):
            state.apply(rec.moves[t])
    assert state.move_history == rec.moves
    assert state.start_player == rec.start_player
    return state


# --- batched replay --------------------------------------------------------------------

def replay_batch(recs):
    """Replay games in lockstep in one HanabiBatch (-1 for finished games), comparing the
    batched encodings, masks, scores, terminals and rewards with HLE."""
    config = recs[0].config
    n = len(recs)
    batch = HanabiBatch.from_states(
        HanabiState(config, deck=r.deck, start_player=r.start_player) for r in recs)
    longest = max(len(r.snapshots) for r in recs)
    for t in range(longest):
        live = [i for i, r in enumerate(recs) if t < len(r.snapshots)]
        snaps = {i: recs[i].snapshots[t] for i in live}
        masks, scores = batch.legal_masks(), batch.scores()
        terminals, players = batch.terminals(), batch.current_players()
        for i in live:
            snap = snaps[i]
            where = "batch game %d: %s" % (i, _where(recs[i], t))
            assert np.flatnonzero(masks[i]).tolist() == snap.legal_moves, where
            assert scores[i] == snap.score, where
            assert bool(terminals[i]) == snap.is_terminal, where
            if not snap.is_terminal:   # see replay_state: HLE's terminal cur_player is moot
                assert players[i] == snap.current_player, where
        # Every seat's view, with a different seat per game in each call.
        for shift in range(config.players):
            seats = np.array([(i + shift) % config.players for i in range(n)])
            enc = batch.encode(players=seats)
            for i in live:
                if not np.array_equal(enc[i], snaps[i].encodings[seats[i]]):
                    pytest.fail(f"batch encoding differs: game {i}, "
                                f"{_where(recs[i], t, int(seats[i]))}")
        if t + 1 == longest:
            break
        actions = np.array([r.moves[t] if t < len(r.moves) else -1 for r in recs])
        rewards = batch.step(actions)
        for i, r in enumerate(recs):
            if t < len(r.moves):
                expected = r.snapshots[t + 1].score - r.snapshots[t].score
                assert rewards[i] == expected, "batch game %d: %s" % (i, _where(r, t))
            else:
                assert rewards[i] == 0
    assert batch.terminals().all()


def _check_variant(config):
    recs = corpus(config)
    for rec in recs:
        replay_state(rec)
    replay_batch(recs)
    return collections.Counter(r.end_type for r in recs)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_replay_matches_hle(name):
    ends = _check_variant(VARIANTS[name])
    # The corpus must exercise both common endings (otherwise a bug in one of them
    # could hide): bombing out and running out of cards.
    assert ends[OUT_OF_LIFE] > 0, ends
    assert ends[OUT_OF_CARDS] > 0, ends


@pytest.mark.parametrize("index", range(len(RANDOM_CONFIGS)))
def test_replay_matches_hle_random_variant(index):
    config = RANDOM_CONFIGS[index]
    recs = corpus(config, games=20, seed0=10_000 * index)
    for rec in recs:
        replay_state(rec)
    replay_batch(recs)


def test_corpus_covers_all_endings():
    """Completed fireworks (code 3) is rare; check the cheating player reaches it, in the
    standard game and in a small one, and that every ending was replayed."""
    for config in (VARIANTS["standard-2p"], VARIANTS["small-3p"]):
        recs = [oracle.record_game(config, 500 + i, cheater_policy) for i in range(12)]
        ends = collections.Counter(r.end_type for r in recs)
        assert ends[COMPLETED] > 0, ends
        for rec in recs:
            final = replay_state(rec)
            if rec.end_type == COMPLETED:
                assert final.score == config.colors * config.ranks


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_replay_matches_hle_many_games(name):
    recs = corpus(VARIANTS[name], games=1000, seed0=1_000_000)
    for rec in recs:
        replay_state(rec)
    replay_batch(list(recs[:200]))


def test_oracle_fast_encoding_matches_hle_encoder():
    """The oracle parses HLE's encodings with numpy for speed; it must agree with HLE's
    own `ObservationEncoder.encode` (nonzero bits included, so not trivially all zeros)."""
    rng = random.Random(5)
    for name in ("standard-3p", "small-2p", "minimal-4p", "seer-5p"):
        game = pyhanabi.HanabiGame(VARIANTS[name].hle_params(seed=11))
        encoder = pyhanabi.ObservationEncoder(game)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
                state.deal_random_card()
                continue
            for p in range(game.num_players()):
                obs = state.observation(p)
                fast = oracle.encode_fast(encoder, obs)
                assert fast.any()
                assert fast.tolist() == encoder.encode(obs)
            state.apply_move(rng.choice(state.legal_moves()))


@pytest.mark.parametrize("field", ["encoding", "legal_moves", "life_tokens", "deck_size", "move"])
def test_replay_detects_a_tampered_recording(field):
    """The comparison is not vacuous: one wrong bit or number in a recording fails it."""
    rec = copy.deepcopy(corpus(VARIANTS["standard-3p"], games=3)[2])
    snap = rec.snapshots[len(rec.snapshots) // 2]
    if field == "encoding":
        snap.encodings[1, 100] ^= 1
    elif field == "legal_moves":
        snap.legal_moves = snap.legal_moves[:-1]
    elif field == "life_tokens":
        snap.life_tokens += 1
    elif field == "deck_size":
        snap.deck_size -= 1
    else:   # a different (legal) move than HLE played
        t = len(rec.moves) // 2
        rec.moves[t] = next(m for m in rec.snapshots[t].legal_moves if m != rec.moves[t])
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        replay_state(rec)
    if field in ("encoding", "legal_moves", "move"):   # the batch API exposes these
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            replay_batch([rec])
