"""The C rule bots: legal moves only, no peeking, determinism, rollouts equal step-by-step
play, and self-play strength within stated bands (fixed seeds)."""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck

from tests.helpers.engine import configs, positions, sample_consistent_hand, seeds, self_play
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.agents.rule_bots import _bots as bots

BOTS = bots.BOT_NAMES
CONVENTION_BOTS = ("weak", "medium", "strong")

# Every player count with every hand size up to 7 (and 8 where the deck allows it).
VARIANTS = [HanabiConfig(players=p, hand_size=h) for p in range(2, 6) for h in range(1, 8)]
VARIANTS += [
    HanabiConfig(players=2, hand_size=8),
    HanabiConfig(players=3, colors=3, ranks=3, hand_size=3),
    HanabiConfig(players=2, colors=1, ranks=5, hand_size=2),
    HanabiConfig(players=2, colors=5, ranks=1, hand_size=3),
    HanabiConfig(players=4, max_information_tokens=1, max_life_tokens=1),
    HanabiConfig(players=2, max_information_tokens=16, max_life_tokens=8),
    HanabiConfig(players=3, observation_type="minimal", random_start_player=True),
    HanabiConfig(players=2, observation_type="seer"),
]


def variant_id(cfg):
    return (f"{cfg.players}p-h{cfg.hand_size}-c{cfg.colors}r{cfg.ranks}-"
            f"i{cfg.max_information_tokens}l{cfg.max_life_tokens}-{cfg.observation_type}")


# --- legality ------------------------------------------------------------------------------

@pytest.mark.parametrize("config", VARIANTS, ids=variant_id)
def test_selfplay_only_legal_moves_every_variant(config):
    """bot_play stops with an error on the first illegal move; 150 games per bot here,
    about 5,000 games per bot over all variants."""
    for name in BOTS:
        out = self_play(RuleBot(name), config, 150, seed=11)
        assert np.all(out["moves"] > 0)
        assert np.all((out["score"] >= 0) & (out["score"] <= config.colors * config.ranks))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs, seed=seeds)
def test_stepwise_play_is_legal_and_matches_rollout(config, seed):
    """Each move from scratch (bot_act replaying the history) is legal, and a C rollout
    (incremental memory) makes exactly the same moves."""
    for name in BOTS:
        stepped = HanabiState(config, seed=seed)
        while not stepped.is_terminal:
            move = bots.act(name, stepped)
            assert move in stepped.legal_moves()
            stepped.apply(move)
        rolled = HanabiState(config, seed=seed)
        bots.play_states(name, [rolled])
        assert rolled.move_history == stepped.move_history
        assert rolled.score == stepped.score


def test_rollout_k_moves_then_continue():
    config = HanabiConfig(players=3)
    a = HanabiState(config, seed=5)
    b = a.clone()
    assert bots.play_states("strong", [a], max_moves=7)[0] == 7
    assert a.num_moves_played == 7
    bots.play_states("strong", [a])
    bots.play_states("strong", [b])
    assert a.move_history == b.move_history


def test_batch_rollout_and_act_batch():
    config = HanabiConfig(players=2)
    batch = HanabiBatch(config, 16, seeds=3)
    acts = bots.act_batch("medium", batch)
    assert acts.shape == (16,) and acts.dtype == np.int64
    for i in range(16):
        assert acts[i] == bots.act("medium", batch.get_state(i))
    moves = bots.play_batch("medium", batch, max_moves=5)
    assert np.all(moves == 5)
    bots.play_batch("medium", batch)
    assert batch.terminals().all()
    assert np.all(bots.act_batch("medium", batch) == -1)


def test_act_rejects_wrong_seat():
    state = HanabiState(HanabiConfig(players=3), seed=1)
    with pytest.raises(ValueError):
        bots.act("strong", state, seat=(state.current_player + 1) % 3)
    with pytest.raises(ValueError):
        bots.bot_kind("nobody")


# --- information safety --------------------------------------------------------------------

@pytest.mark.parametrize("config", [HanabiConfig(players=2), HanabiConfig(players=3),
                                    HanabiConfig(players=5), HanabiConfig(players=2, hand_size=7)],
                         ids=variant_id)
def test_no_peeking_own_hand(config):
    """Replacing the acting seat's own cards by any other hand consistent with what it
    knows (and re-dealing the deck) never changes any bot's move."""
    rng = random.Random(7)
    checked = collections.Counter()
    for driver in ("strong", "weak"):
        for state in positions(config, 12, seed=3, driver=driver):
            seat = state.current_player
            before = {name: bots.act(name, state) for name in BOTS}
            for _ in range(3):
                hand = sample_consistent_hand(state, seat, rng)
                if hand is None or hand == state.hand(seat):
                    continue
                other = state.clone()
                other.set_hand(seat, hand)
                for name in BOTS:
                    assert bots.act(name, other) == before[name], (name, state.move_history)
                checked[driver] += 1
    assert checked["strong"] > 100 and checked["weak"] > 100


def test_no_peeking_deck():
    """Re-shuffling the undrawn deck never changes a move."""
    config = HanabiConfig(players=2)
    for state in positions(config, 10, seed=4):
        before = [bots.act(name, state) for name in BOTS]
        other = state.clone()
        other.shuffle_deck(seed=99)
        assert [bots.act(name, other) for name in BOTS] == before


def test_memory_masks_match_engine_knowledge():
    """The bots' fold of the public history rebuilds HLE's card knowledge exactly."""
    config = HanabiConfig(players=3)
    for state in positions(config, 6, seed=5):
        for name in CONVENTION_BOTS:
            memory = bots.memory(name, state)
            for p in range(config.players):
                knowledge = state.card_knowledge(p)
                assert len(memory[p]) == len(knowledge)
                for (cm, rm, _, _, _), (colors, ranks, _, _) in zip(memory[p], knowledge):
                    assert cm == sum(1 << c for c in colors)
                    assert rm == sum(1 << r for r in ranks)


def test_same_inputs_same_action():
    config = HanabiConfig(players=4)
    for state in positions(config, 5, seed=6):
        for name in BOTS:
            a = bots.act(name, state)
            assert bots.act(name, state) == a
            assert bots.act(name, state.clone()) == a
        acts = bots.act_states("strong", [state, state.clone()])
        assert acts[0] == acts[1]


# --- strength -------------------------------------------------------------------------------

# 2-player self-play, 1,000 games on the deals of seed 0: the measured mean must stay in
# the band (about +- 5 s.e.m. around the value measured when the band was set).
BANDS = {
    "simple": (15.9, 16.8),     # measured 16.29 +- 0.05
    "weak": (16.8, 17.6),       # measured 17.19 +- 0.06
    "medium": (20.4, 21.2),     # measured 20.80 +- 0.07
    "strong": (22.95, 23.5),    # measured 23.21 +- 0.05
}


@pytest.mark.parametrize("name", sorted(BANDS))
def test_strength_bands(name):
    out = self_play(RuleBot(name), HanabiConfig(players=2), 1000, seed=0)
    lo, hi = BANDS[name]
    assert lo <= out["score"].mean() <= hi
    if name != "simple":
        assert np.mean(out["lives"] == 0) < 0.01      # (almost) never bombs out


def test_random_bot_bombs_out():
    out = self_play(RuleBot("random"), HanabiConfig(players=2), 200, seed=0)
    assert np.mean(out["score"]) < 2


def test_bots_ordered_by_strength_in_every_player_count():
    for players in (2, 3, 4, 5):
        config = HanabiConfig(players=players)
        means = [self_play(RuleBot(n), config, 300, seed=1)["score"].mean()
                 for n in ("simple", "weak", "medium")]
        assert means[0] < means[1] < means[2]
        assert self_play(RuleBot("strong"), config, 300, seed=1)["score"].mean() >= means[2] - 0.2


@pytest.mark.slow
def test_strong_reaches_smartbot_level():
    """The issue's target: >= 23.0 mean in 2-player self-play over 10,000 games."""
    out = self_play(RuleBot("strong"), HanabiConfig(players=2), 10_000, seed=0)
    assert out["score"].mean() >= 23.0


# Every bot's moves on fixed deals, pinned. A change in any bot's behaviour fails here:
# bump BOTS_VERSION in lbs_pz/agents/rule_bots/__init__.py (models trained for the old bot
# are then refused instead of silently misused), retrain or re-stamp the shipped belief
# and value, and update these digests.
PINNED_MOVES = {"random": "a67023d03afe880d", "simple": "bcebf50b863c775b",
                "weak": "b249f77c1412c313", "medium": "8ba9cadfc35c312d",
                "strong": "fb04046eb715a277"}
PINNED_VERSION = 1


@pytest.mark.parametrize("name", list(PINNED_MOVES))
def test_bot_moves_are_pinned_to_the_bots_version(name):
    import hashlib

    from lbs_pz.agents.rule_bots import BOTS_VERSION
    from lbs_pz.engine import HanabiBatch
    from lbs_pz.engine.seeds import EVAL, deal_seeds

    bot, digest = RuleBot(name), hashlib.sha256()
    for config in (HanabiConfig(players=2), HanabiConfig(players=3),
                   HanabiConfig(players=2, hand_size=7)):
        batch = HanabiBatch(config, 40, seeds=deal_seeds(EVAL, 0, 0, 40))
        while not batch.terminals().all():
            moves = bot.act_batch(batch)
            digest.update(moves.astype(np.int64).tobytes())
            batch.step(moves)
    assert BOTS_VERSION == PINNED_VERSION, "update the pinned digests with the version"
    assert digest.hexdigest()[:16] == PINNED_MOVES[name], (
        f"{name}'s moves changed: bump BOTS_VERSION and re-stamp the shipped models")


def test_fingerprint_follows_name_switches_and_version():
    from lbs_pz.agents.rule_bots import _bots

    strong, medium = RuleBot("strong"), RuleBot("medium")
    assert strong.fingerprint == RuleBot("strong").fingerprint != medium.fingerprint
    before = strong.fingerprint
    original = _bots.get_params("strong")["gamble"]
    try:
        _bots._set_params("strong", gamble=1 - original)
        assert strong.fingerprint != before     # other conventions: another blueprint
    finally:
        _bots._set_params("strong", gamble=original)
    assert strong.fingerprint == before
