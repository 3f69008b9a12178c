"""Beliefs over a seat's own hand: exact (SPARTA), grounded and learned."""

import itertools
import math
import os

import numpy as np
import pytest

from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.agents.rule_bots import _bots as bots
from lbs_pz.agents import RuleBot
from lbs_pz.search.beliefs import (BeliefMemoryError, ExactBelief, FilteredBelief,
                                   GroundedBelief, SeatInfo, importance_weights, make_belief)
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.config import SearchConfig

SMALL = HanabiConfig(players=2, colors=3, ranks=5, hand_size=4)
TINY = HanabiConfig(players=2, colors=3, ranks=3, hand_size=3)


def _play(config, seed, bot="strong"):
    """Yield the state after every move of a self-play game of `bot`."""
    state = HanabiState(config, seed=seed)
    yield state
    while not state.is_terminal:
        state.apply(bots.act(bot, state))
        yield state


# --- exact belief --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_exact_contains_true_hand_every_step(seed):
    rng = np.random.default_rng(seed)
    states = _play(SMALL, seed)
    state = next(states)
    beliefs = [ExactBelief("strong").reset(state, seat) for seat in range(2)]
    for state in states:
        for seat, belief in enumerate(beliefs):
            belief.observe(state)
            assert np.isfinite(belief.log_prob(state.hand(seat))), state.num_moves_played
            samples = belief.sample(200, rng)
            assert samples.shape == (200, len(state.hand(seat)))
            assert belief.seat_info().consistent(samples).all()
    for belief in beliefs:
        assert belief.inconsistent_moves == 0
        assert len(belief.update_seconds) == state.num_moves_played + 1


@pytest.mark.slow
@pytest.mark.parametrize("seed,seat", [(3, 1), (4, 0), (5, 1)])
def test_exact_contains_true_hand_standard_game(seed, seat):
    states = _play(HanabiConfig(players=2), seed)
    state = next(states)
    belief = ExactBelief("strong").reset(state, seat)
    for state in states:
        belief.observe(state)
        assert np.isfinite(belief.log_prob(state.hand(seat)))
    assert belief.inconsistent_moves == 0


def test_exact_never_empties_when_the_partner_is_not_the_blueprint():
    """A partner that leaves the blueprint (here at random, as a searching partner does)
    can have its move explained by other hands only, so that a later fact rules out every
    candidate left: the belief then starts again from the seat's hints and counts
    (`restarts`), never empty, every candidate still fitting what the seat knows, and the
    true hand among them right after."""
    restarts = 0
    for seed in range(2):
        rng, draws = np.random.default_rng(seed), np.random.default_rng(100 + seed)
        state = HanabiState(HanabiConfig(players=2, colors=4, ranks=5, hand_size=4), seed=seed)
        belief = ExactBelief("strong").reset(state, 0)
        while not state.is_terminal:
            legal = state.legal_moves()
            move = (int(legal[rng.integers(len(legal))])
                    if state.current_player == 1 and rng.random() < 0.3
                    else bots.act("strong", state))
            state.apply(move)
            before = belief.restarts
            belief.observe(state)
            assert belief.num_hands > 0
            if belief.restarts > before:
                assert np.isfinite(belief.log_prob(state.hand(0)))
            assert belief.seat_info().consistent(belief.sample(50, draws)).all()
        restarts += belief.restarts
    assert restarts > 0         # the case this guards was met


def test_exact_memory_cap_is_a_clear_error():
    state = HanabiState(HanabiConfig(players=2), seed=0)
    with pytest.raises(BeliefMemoryError, match="memory cap"):
        ExactBelief("strong", memory_cap=1 << 20).reset(state, 0)
    with pytest.raises(BeliefMemoryError, match="memory cap"):
        ExactBelief("strong", memory_cap=1 << 20).initial_count(state, 0)


def test_initial_count_is_the_size_reset_enumerates():
    state = HanabiState(SMALL, seed=3)
    belief = ExactBelief("strong")
    assert belief.initial_count(state, 1) == belief.reset(state, 1).num_hands > 0
    with pytest.raises(ValueError, match="seat"):
        belief.initial_count(state, SMALL.players)


def test_exact_without_blueprint_is_a_superset():
    for state in _play(SMALL, 11):
        if state.num_moves_played == 12:
            break
    with_cf = ExactBelief("strong").reset(state, 0)
    without = ExactBelief(None).reset(state, 0)
    a = {tuple(h) for h in with_cf.hands.tolist()}
    b = {tuple(h) for h in without.hands.tolist()}
    assert a <= b and tuple(state.hand(0)) in a


def test_exact_generic_blueprint_matches_c_path():
    from lbs_pz.agents import RuleBot

    class Wrapped:  # a Blueprint that is not recognised as a C rule bot
        def __init__(self):
            self.bot = RuleBot("strong")

        def act_batch(self, states):
            return self.bot.act_batch(states)

    for state in _play(TINY, 5):
        if state.num_moves_played == 8:
            break
    fast = ExactBelief("strong").reset(state, 0)
    slow = ExactBelief(Wrapped()).reset(state, 0)
    assert fast.hands.tolist() == slow.hands.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_filtered_belief_agrees_with_the_exact_support(seed):
    """Counterfactual filtering at sampling time keeps exactly the hands the exact belief
    keeps as the game goes: the true hand always, every exact candidate, and no grounded
    sample the exact belief has ruled out."""
    rng = np.random.default_rng(seed)
    states = _play(SMALL, seed)
    state = next(states)
    seat = seed % 2
    exact = ExactBelief("strong").reset(state, seat)
    filtered = make_belief("grounded+cf", blueprint="strong").reset(state, seat)
    rejected = 0
    for state in states:
        exact.observe(state)
        filtered.observe(state)
        truth = np.array([state.hand(seat)])
        assert filtered.consistent_with_partners(truth).all()
        assert filtered.consistent_with_partners(exact.sample(100, rng)).all()
        samples = filtered.sample(100, rng)
        assert all(np.isfinite(exact.log_prob(h)) for h in samples)
        proposals = filtered.base.sample(100, rng)
        rejected += (~filtered.consistent_with_partners(proposals)).sum()
    assert rejected > 0    # the filter did something



def test_filtered_belief_keeps_a_contradicted_hand_at_the_partner_deviation_rate():
    """With partner_deviation p, a hand the blueprint contradicts at a partner move
    survives with probability p there: after one partner move the share of contradicted
    hands among the samples is what p predicts from the strict pass rate; p = 1 keeps
    every proposal, p = 0 none that is contradicted; bad values are refused."""
    state = HanabiState(HanabiConfig(players=2), seed=0)   # few repeated hands
    state.apply(bots.act("strong", state))          # seat 0's move
    state.apply(bots.act("strong", state))          # seat 1's: one partner decision
    rng = np.random.default_rng(0)
    strict = make_belief("grounded+cf", blueprint="strong").reset(state, 0)
    proposals = strict.base.sample(4000, rng)
    rate = strict.consistent_with_partners(proposals).mean()
    assert 0.05 < rate < 0.95                       # the move says something
    p = 0.3
    soft = FilteredBelief(GroundedBelief(), "strong", partner_deviation=p).reset(state, 0)
    kept = soft.sample(4000, rng)
    share = 1 - strict.consistent_with_partners(kept).mean()
    expected = (1 - rate) * p / (rate + (1 - rate) * p)
    assert abs(share - expected) < 0.03, (share, expected)
    everything = FilteredBelief(GroundedBelief(), "strong", partner_deviation=1.0)
    everything.reset(state, 0)
    assert abs(1 - strict.consistent_with_partners(everything.sample(4000, rng)).mean()
               - (1 - rate)) < 0.03
    assert strict.consistent_with_partners(strict.sample(500, rng)).all()
    for bad, error in ((-0.1, ValueError), (1.5, ValueError), (True, TypeError),
                       ("0.1", TypeError)):
        with pytest.raises(error, match="partner_deviation"):
            FilteredBelief(GroundedBelief(), "strong", partner_deviation=bad)

class _Proposes(GroundedBelief):
    """A proposal that draws only the given hands (cycled)."""

    def __init__(self, hands):
        super().__init__()
        self.hands = np.asarray(hands, dtype=np.int64)

    def sample_weighted(self, n, rng):
        self.last_proposed = n
        rows = np.arange(n) % len(self.hands)
        return self.hands[rows], np.zeros(n)


def test_a_blueprint_partners_unexplained_move_rules_the_sampled_hands_out():
    """A partner move that no sampled hand explains is ignored (a partner that is not the
    blueprint: no evidence), unless the partner's seat is among `blueprint_seats`: then
    every hand it contradicts is ruled out, and a proposal that also draws the true hand
    keeps only that one. The searching agent hands its blueprint seats, less its own, to
    its belief."""
    state = HanabiState(HanabiConfig(players=2), seed=0)
    state.apply(bots.act("strong", state))          # seat 0's move
    state.apply(bots.act("strong", state))          # seat 1's: one partner decision
    rng = np.random.default_rng(0)
    strict = make_belief("grounded+cf", blueprint="strong").reset(state, 0)
    proposals = strict.base.sample(2000, rng)
    wrong = proposals[~strict.consistent_with_partners(proposals)][:20]
    assert len(wrong) == 20
    ignoring = FilteredBelief(_Proposes(wrong), "strong").reset(state, 0)
    assert len(ignoring.sample(50, rng)) == 50       # the move is ignored
    ruling = FilteredBelief(_Proposes(wrong), "strong")
    ruling.blueprint_seats = frozenset({1})
    ruling.reset(state, 0)
    assert len(ruling.sample(50, rng)) == 0          # too few worlds: a search falls back
    truth = np.array(state.hand(0))
    both = FilteredBelief(_Proposes(np.vstack([wrong, truth])), "strong")
    both.blueprint_seats = frozenset({1})
    both.reset(state, 0)
    kept = both.sample(50, rng)
    assert len(kept) and (kept == truth).all()
    agent = LBSAgent(RuleBot("strong"), config=SearchConfig(rollouts=16), depth=1)
    agent.blueprint_seats = frozenset({0, 1})
    agent.sync_belief(state, 0)
    assert agent.belief.blueprint_seats == frozenset({1})


def _brute_force(state, seat, bot="strong"):
    """P(own hand) by enumerating every type assignment of the seat's current hand
    positions in the deal, weighting by the arrangements of the undrawn cards and
    replaying the whole game from the deal (hints, plays and the partner bot's moves
    must all come out as they did)."""
    config = state.config
    T = config.num_card_types
    deck = list(state.deck)
    positions = state.hand_deck_indices(seat)
    records = state.move_records()
    n = len(positions)
    pos = state.num_moves_played
    undrawn_from = config.deck_size - state.deck_size
    unseen = np.zeros(T, dtype=int)
    for i in range(undrawn_from, config.deck_size):
        unseen[deck[i]] += 1
    for c in state.hand(seat):
        unseen[c] += 1
    probs = {}
    for hand in itertools.product(range(T), repeat=n):
        left = unseen.copy()
        for c in hand:
            left[c] -= 1
        if (left < 0).any():
            continue
        rest = [t for t in range(T) for _ in range(left[t])]
        trial = list(deck)
        for p, c in zip(positions, hand):
            trial[p] = c
        trial[undrawn_from:] = rest
        game = HanabiState(config, deck=trial, start_player=state.start_player)
        ok = True
        for k in range(pos):
            rec = records[k]
            if rec["player"] != seat and bots.act(bot, game) != rec["move"]:
                ok = False
                break
            try:
                game.apply(rec["move"])
            except ValueError:
                ok = False
                break
            got = game.move_records()[k]
            if got["reveal"] != rec["reveal"] or got["card"] != rec["card"]:
                ok = False
                break
        if not ok:
            continue
        weight = math.factorial(sum(left))
        for t in range(T):
            weight //= math.factorial(left[t])
        probs[hand] = weight
    total = sum(probs.values())
    return {h: w / total for h, w in probs.items()}


@pytest.mark.parametrize("seed,stop", [(0, 6), (1, 9), (2, 13), (3, 17)])
def test_exact_matches_brute_force(seed, stop):
    for state in _play(TINY, seed):
        if state.num_moves_played == stop or state.is_terminal:
            break
    seat = state.num_moves_played % 2
    truth = _brute_force(state, seat)
    belief = ExactBelief("strong").reset(state, seat)
    got = {tuple(h): None for h in belief.hands.tolist()}
    assert set(got) == set(truth)
    for hand, p in truth.items():
        assert belief.log_prob(hand) == pytest.approx(math.log(p), abs=1e-9)
    probs = np.zeros((len(state.hand(seat)), TINY.num_card_types))
    for hand, p in truth.items():
        for i, c in enumerate(hand):
            probs[i, c] += p
    np.testing.assert_allclose(belief.card_probabilities(), probs, atol=1e-12)


# --- grounded belief -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_grounded_matches_brute_force_count(seed):
    config = HanabiConfig(players=2)
    rng = np.random.default_rng(seed)
    belief = None
    for state in _play(config, seed):
        if belief is None:
            belief = GroundedBelief().reset(state, 0)
            continue
        belief.observe(state)
        if state.num_moves_played % 7:
            continue
        # The physical cards the seat cannot see: its own hand and the undrawn deck.
        hidden = state.hand(0) + state.deck[config.deck_size - state.deck_size:]
        probs = belief.card_probabilities()
        for i, (colors, ranks, _, _) in enumerate(state.card_knowledge(0)):
            fits = [c for c in hidden if c // config.ranks in colors and c % config.ranks in ranks]
            expect = np.bincount(fits, minlength=config.num_card_types) / len(fits)
            np.testing.assert_allclose(probs[i], expect, atol=1e-12)
        samples = belief.sample(500, rng)
        assert belief.seat_info().consistent(samples).all()
        assert np.isfinite(belief.log_prob(state.hand(0)))


# --- learned belief --------------------------------------------------------------------------

def _tiny_learned(config, seed=0, prior=False):
    import torch

    from lbs_pz.search.beliefs.learned import LearnedBelief
    from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig

    torch.manual_seed(seed)
    net = BeliefNet(BeliefNetConfig(encoding_size=config.encoding_size,
                                    hand_size=config.hand_size,
                                    card_types=config.num_card_types,
                                    embed=16, hidden=16, decoder=8, prior=prior), config)
    return LearnedBelief(model=net, config=config)


def test_learned_samples_are_legal_after_rejection():
    config = HanabiConfig(players=2)
    rng = np.random.default_rng(0)
    for mask, prior in ((True, False), (False, False), (True, True), (False, True)):
        belief = _tiny_learned(config, prior=prior)
        belief.mask = mask
        first = True
        for state in _play(config, 4):
            if first:
                belief.reset(state, 1)
                first = False
            else:
                belief.observe(state)
            samples = belief.sample(300, rng)
            assert samples.shape[1] == len(state.hand(1))
            assert len(samples) == belief.last_legal <= belief.last_proposed == 300
            assert belief.seat_info().consistent(samples).all()
            assert belief.too_few_legal(1.01) or belief.last_legal == 300
        assert np.isfinite(belief.log_prob(state.hand(1)))
        probs = belief.card_probabilities()
        np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_shipped_belief_loads_and_samples():
    from lbs_pz.search.beliefs.learned import LearnedBelief, default_checkpoint

    if not os.path.exists(default_checkpoint()):
        pytest.skip("no shipped belief checkpoint")
    state = HanabiState(HanabiConfig(players=2), seed=2)
    belief = LearnedBelief().reset(state, 0)
    samples = belief.sample(1000, np.random.default_rng(0))
    assert len(samples) > 500 and belief.seat_info().consistent(samples).all()
    from lbs_pz.models.checkpoint import CheckpointMismatchError

    with pytest.raises(CheckpointMismatchError, match="trained for the game 2p 5-card"):
        LearnedBelief().reset(HanabiState(HanabiConfig(players=2, hand_size=6), seed=0), 0)


# --- only the seat's view -----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["exact", "grounded", "learned", "grounded+cf"])
def test_samples_do_not_depend_on_the_true_hand(kind):
    config = HanabiConfig(players=2) if kind != "exact" else SMALL
    for state in _play(config, 8):
        if state.num_moves_played == 14:
            break
    seat = state.current_player
    other = ExactBelief(None).reset(state, seat)
    hands = other.sample(50, np.random.default_rng(1))
    alt = next(h for h in hands if list(h) != state.hand(seat))
    changed = state.clone()
    changed.set_hand(seat, [int(c) for c in alt])
    assert changed.hand(seat) != state.hand(seat)
    make = (lambda: _tiny_learned(config)) if kind == "learned" else \
        (lambda: make_belief(kind, blueprint="strong"))
    a = make().reset(state, seat)
    b = make().reset(changed, seat)
    np.testing.assert_array_equal(a.sample(200, np.random.default_rng(3)),
                                  b.sample(200, np.random.default_rng(3)))
    np.testing.assert_allclose(a.card_probabilities(), b.card_probabilities())
    assert a.log_prob(alt) == pytest.approx(b.log_prob(alt))


def test_observe_catches_up_and_rejects_other_games():
    config = HanabiConfig(players=2)
    states = list(s.clone() for s in _play(config, 9))
    step = GroundedBelief().reset(states[0], 0)
    for s in states[1:20]:
        step.observe(s)
    jump = GroundedBelief().reset(states[0], 0)
    jump.observe(states[19])
    np.testing.assert_allclose(step.card_probabilities(), jump.card_probabilities())
    with pytest.raises(ValueError, match="continuation"):
        jump.observe(HanabiState(config, seed=123))


def test_seat_info_reads_no_own_cards():
    state = HanabiState(HanabiConfig(players=2), seed=1)
    info = SeatInfo.from_state(state, 0)
    assert info.unseen.sum() == 50 - 5
    assert info.plaus.shape == (5, 25) and info.plaus.all()


# --- training and checkpoints ----------------------------------------------------------------

def test_training_loss_goes_down(tmp_path):
    from lbs_pz.search.beliefs.model import load_belief
    from lbs_pz.train.belief import BeliefTrainConfig, train_belief

    out = str(tmp_path / "b.pt")
    tc = BeliefTrainConfig(blueprint="strong", games_per_step=4, steps=300, minutes=0, lr=1e-2,
                           lr_final=3e-3, val_games=16, val_every=100, embed=32, hidden=32,
                           decoder=16, prior=False, threads=1, out=out, progress=False)
    model, history = train_belief(tc, log=lambda *a: None)
    assert history[0][0] == 0 and history[-1][0] == 300
    assert history[-1][2] < history[0][2] - 0.15, history
    loaded, config, ckpt = load_belief(out)
    assert config == HanabiConfig(players=2) and ckpt["info"]["steps"] == 300
    assert ckpt["kind"] == "belief" and ckpt["trained_for"]["spec"] == "strong"
    assert ckpt["info"]["command"].startswith("lbs-pz train-belief --games-per-step 4")
    assert "--no-prior" in ckpt["info"]["command"]
    assert "TRAIN stream" in ckpt["info"]["deals"] and ckpt["info"]["games"] == 1200


def test_training_from_init_starts_where_that_belief_is(tmp_path):
    """--init: the run starts from that belief's weights (its first validation equals the
    shipped belief's loss on the same games, far below an untrained net's), records the
    blueprint it trains for, and refuses a belief of another variant."""
    import torch

    from lbs_pz.agents import RuleBot
    from lbs_pz.engine.seeds import MAX_GAMES
    from lbs_pz.search.beliefs.model import load_belief
    from lbs_pz.train.belief import (BeliefTrainConfig, mean_nll, to_tensors, train_belief)
    from lbs_pz.train.games import generate_games
    common = dict(blueprint="strong", games_per_step=4, steps=20, minutes=0, val_games=16,
                  val_every=10, threads=1, progress=False)
    out = str(tmp_path / "b.pt")
    _, history = train_belief(BeliefTrainConfig(init="belief_strong_2p", out=out, **common),
                              log=lambda *a: None)
    shipped, config, _ = load_belief("belief_strong_2p")
    val = generate_games(config, RuleBot("strong"), 16, seed=0, first_game=MAX_GAMES - 16)
    with torch.no_grad():
        expected = float(mean_nll(shipped, *to_tensors(val)))
    assert abs(history[0][2] - expected) < 1e-4
    _, fresh = train_belief(BeliefTrainConfig(out=str(tmp_path / "f.pt"), embed=32, hidden=32,
                                              decoder=16, **dict(common, steps=1)),
                            log=lambda *a: None)
    assert history[0][2] < fresh[0][2] - 0.1
    assert load_belief(out)[2]["trained_for"]["spec"] == "strong"
    with pytest.raises(ValueError, match="--init"):
        train_belief(BeliefTrainConfig(init="belief_strong_2p", players=3,
                                       out=str(tmp_path / "x.pt"), **common),
                     log=lambda *a: None)


def test_training_games_come_from_the_train_stream():
    from lbs_pz.agents import RuleBot
    from lbs_pz.engine import HanabiBatch
    from lbs_pz.engine.seeds import TRAIN, deal_seeds
    from lbs_pz.train.games import generate_games

    config = HanabiConfig(players=2)
    bot = RuleBot("medium")
    data = generate_games(config, bot, 3, seed=5, first_game=7)
    batch = HanabiBatch(config, 3, seeds=deal_seeds(TRAIN, 5, 7, 3))
    for p in range(2):          # step 0: every seat's first view and its dealt hand
        np.testing.assert_array_equal(data["hands"][p::2, 0], batch.hands(p))
        np.testing.assert_array_equal(data["obs"][p::2, 0],
                                      batch.encode(players=np.full(3, p)).astype(np.uint8))
    bot.rollout(batch)
    np.testing.assert_array_equal(data["scores"], batch.scores())
    # each sequence ends with its seat's final hand (the game's last state)
    last = data["lengths"] - 1
    final = data["hands"][np.arange(6), last]
    np.testing.assert_array_equal(final[0::2], batch.hands(0))
    np.testing.assert_array_equal(final[1::2], batch.hands(1))


def test_checkpoint_errors(tmp_path):
    import torch

    from lbs_pz.models.checkpoint import CheckpointError
    from lbs_pz.search.beliefs.model import load_belief

    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="not a readable"):
        load_belief(str(bad))
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not an lbs_pz belief"):
        load_belief(str(foreign))
    code = tmp_path / "code.pt"
    torch.save({"format": "lbs_pz", "obj": GroundedBelief()}, code)
    with pytest.raises(CheckpointError, match="weights_only"):
        load_belief(str(code))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_belief(str(tmp_path / "missing.pt"))
    with pytest.raises(CheckpointError, match="holds a 'value' model"):
        load_belief("value_strong_2p")
    old = tmp_path / "old.pt"      # the layout before lbs_pz.models.checkpoint
    torch.save({"format": "lbs_pz.belief", "version": 1, "state_dict": {}}, old)
    with pytest.raises(CheckpointError, match="old 'lbs_pz.belief' layout.*upgrade_legacy"):
        load_belief(str(old))


def test_shipped_belief_is_found_for_the_strong_bot_only():
    from lbs_pz.agents import RuleBot
    from lbs_pz.models.checkpoint import CheckpointMismatchError
    from lbs_pz.search.beliefs.learned import LearnedBelief

    belief = LearnedBelief(blueprint=RuleBot("strong"))
    assert belief.checkpoint_path.endswith("belief_strong_2p.pt") and not belief.mismatches
    with pytest.raises(CheckpointMismatchError, match="no shipped learned belief.*'simple'"):
        LearnedBelief(blueprint=RuleBot("simple"))
    with pytest.raises(CheckpointMismatchError, match="no shipped"):
        make_belief("learned+cf", blueprint=RuleBot("simple"))
    with pytest.raises(CheckpointMismatchError, match="'strong'.*not for 'medium'.*"
                       "lbs-pz train-belief --blueprint SPEC.*allow_mismatch"):
        LearnedBelief("belief_strong_2p", blueprint=RuleBot("medium"))
    loose = LearnedBelief("belief_strong_2p", blueprint=RuleBot("medium"), allow_mismatch=True)
    assert loose.mismatches == ["it was trained for blueprint 'strong', not for 'medium'"] or \
        "not for 'medium'" in loose.mismatches[0]


def test_belief_for_another_variant_is_refused():
    from lbs_pz.models.checkpoint import CheckpointMismatchError
    from lbs_pz.search.beliefs.learned import LearnedBelief

    three = HanabiState(HanabiConfig(players=3), seed=0)
    with pytest.raises(CheckpointMismatchError, match="trained for the game 2p 5-card"):
        LearnedBelief().reset(three, 0)
    with pytest.raises(CheckpointMismatchError, match="reads the observations"):
        LearnedBelief(allow_mismatch=True).reset(three, 0)


def test_cli_parsers_registered():
    from lbs_pz.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["train-belief", "--blueprint", "medium", "--steps", "5"])
    assert args.blueprint == "medium" and args.steps == 5
    args = parser.parse_args(["belief-quality", "--games", "3", "--beliefs", "grounded"])
    assert args.games == 3


def test_support_and_worlds():
    for state in _play(SMALL, 6):
        if state.num_moves_played == 10:
            break
    seat = state.current_player
    belief = ExactBelief("strong").reset(state, seat)
    hands, probs = belief.support()
    assert probs.sum() == pytest.approx(1.0) and len(hands) == belief.num_hands
    samples = belief.sample(20, np.random.default_rng(0))
    worlds = belief.worlds(state, samples)
    for world, hand in zip(worlds, samples):
        assert world.hand(seat) == list(hand)
        assert world.hand(1 - seat) == state.hand(1 - seat)
        assert world.move_history == state.move_history
    assert not belief.too_few_legal()


def test_prior_layout_reads_unseen_counts_and_knowledge():
    from lbs_pz.search.beliefs.model import prior_layout

    for config in (HanabiConfig(players=2), HanabiConfig(players=3), TINY,
                   HanabiConfig(players=2, hand_size=7, max_information_tokens=4)):
        M, count, off, stride = prior_layout(config)
        for state in _play(config, 1):
            if state.num_moves_played % 5:
                continue
            for seat in range(config.players):
                obs, info = state.encode(seat), SeatInfo.from_state(state, seat)
                np.testing.assert_allclose(count - obs @ M, info.unseen)
                for i in range(info.hand_len):
                    got = obs[off + i * stride: off + i * stride + config.num_card_types]
                    np.testing.assert_array_equal(got.astype(bool), info.plaus[i])


def test_prior_alone_is_sequential_grounded():
    """With the network's output zeroed, the learned belief is the grounded prior drawn
    card by card without replacement."""
    import torch

    config = HanabiConfig(players=2)
    belief = _tiny_learned(config, prior=True)
    with torch.no_grad():
        belief.model.out_w.zero_()
        belief.model.out_b.zero_()
    for state in _play(config, 2):
        if state.num_moves_played == 25:
            break
    belief.reset(state, 0)
    info = belief.seat_info()
    hand = state.hand(0)
    left = info.unseen.astype(float)
    expect = 0.0
    for i, c in enumerate(hand):
        w = info.plaus[i] * np.maximum(left, 0)
        expect += math.log(w[c] / w.sum())
        left[c] -= 1
    assert belief.log_prob(hand) == pytest.approx(expect, abs=1e-4)


class _HintsFirst:
    """A small Python blueprint (no counterfactual_mask of its own): hint the partner's
    first card's rank while tokens last, else discard the oldest card."""

    name = "hints-first"

    def act(self, state, seat=None):
        view = state.view(seat)
        return view.legal_moves[-1] if view.information_tokens > 0 else view.legal_moves[0]


def test_filtered_belief_remembers_verdicts_exactly():
    """For a blueprint without its own fast counterfactual mask, the filter remembers each
    partner decision's verdict per hand; the remembered verdicts equal fresh ones."""
    from lbs_pz.agents import as_blueprint
    from lbs_pz.agents.base import counterfactual_mask
    from lbs_pz.search.beliefs import FilteredBelief

    bp = as_blueprint(_HintsFirst())
    state = HanabiState(HanabiConfig(players=2), seed=21)
    belief = FilteredBelief(GroundedBelief(), bp).reset(state, seat=0)
    rng = np.random.default_rng(0)
    checked = 0
    while not state.is_terminal and state.num_moves_played < 24:
        state.apply(bp.act(state))
        belief.observe(state)
        if state.current_player != 0:
            continue
        hands = belief.base.sample(64, rng).astype(np.int8)
        first = belief.consistent_with_partners(hands)
        again = belief.consistent_with_partners(hands)      # from the remembered verdicts
        assert np.array_equal(first, again)
        checked += sum(1 for verdicts in belief._verdicts.values() if verdicts)
        true_hand = np.array([state.hand(0)], dtype=np.int8)
        assert belief.consistent_with_partners(true_hand)[0]
    assert checked > 0
    # The remembered verdicts are the blueprint's own, recomputed directly.
    index = max(belief._verdicts)
    _, before, move, _ = belief._events[index]
    keys = list(belief._verdicts[index].items())[:16]
    T, H = belief.config.num_card_types, belief.config.hand_size
    width = len(before.hand(0))
    hands = np.array([[(k // T ** i) % T for i in range(width)] for k, _ in keys], np.int8)
    fresh = counterfactual_mask(bp, before, 0, move, hands)
    assert list(fresh) == [v for _, v in keys]
    assert H >= width


class _CountingGrounded(GroundedBelief):
    """The grounded belief, recording how many hands each round asks it for."""

    def _reset(self, start):
        super()._reset(start)
        self.asked = []

    def sample_weighted(self, n, rng):
        self.asked.append(n)
        return super().sample_weighted(n, rng)


def test_filtered_belief_sizes_its_rounds_by_the_surviving_fraction():
    """A first round draws `oversample` hands per hand; each later one draws what the
    fraction this sample kept says the missing hands need: a sample takes at most a few
    rounds whether the filter keeps most hands or a few percent, and every hand returned
    passes the filter. A sample depends on the position and the rng alone: earlier samples
    (a page showing the belief, `card_probabilities`) never change what a search draws."""
    from lbs_pz.agents import RuleBot
    from lbs_pz.search.beliefs import FilteredBelief

    bot, n = RuleBot("strong"), 64
    state = HanabiState(HanabiConfig(players=2), seed=5)
    belief = FilteredBelief(_CountingGrounded(), bot).reset(state, seat=0)
    rng = np.random.default_rng(0)
    rounds, rates = [], []
    while not state.is_terminal and state.num_moves_played < 40:
        state.apply(bot.act(state))
        belief.observe(state)
        if state.current_player != 0:
            continue
        belief.base.asked = []
        hands = belief.sample(n, rng)
        # fewer only once the budget of max_oversample hands per hand asked is spent
        assert len(hands) == n or belief.last_proposed >= n * belief.max_oversample
        assert belief.consistent_with_partners(hands, True).all()
        assert all(state.config.num_card_types > c >= 0 for c in hands.ravel())
        assert belief.base.asked[0] == n * belief.oversample
        rounds.append(len(belief.base.asked))
        rates.append(belief.last_legal / belief.last_proposed)
    # fixed rounds of `oversample` per hand would take more than 4 below 1/16
    assert min(rates) < 1 / 16 and max(rounds) <= 4
    after_samples = [belief.sample(n, np.random.default_rng(7)), belief.card_probabilities()]
    fresh = FilteredBelief(_CountingGrounded(), bot).reset(state, seat=0)
    assert np.array_equal(after_samples[1], fresh.card_probabilities())
    assert np.array_equal(after_samples[0], fresh.sample(n, np.random.default_rng(7)))

# --- importance weights toward the exact posterior ---------------------------------------

def _marginals(hands, weights, card_types):
    return np.stack([np.bincount(hands[:, i], weights=weights, minlength=card_types)
                     [:card_types] / weights.sum() for i in range(hands.shape[1])])


@pytest.mark.parametrize("filtered", [False, True])
def test_weighted_learned_samples_converge_to_the_exact_belief(filtered):
    """An untrained network is a badly biased proposal: its plain sample marginals stay
    far from the exact belief's however many hands are drawn, while the importance-
    weighted ones converge to them (with counterfactual filtering: to the filtered exact
    belief)."""
    pytest.importorskip("torch")
    for state in _play(SMALL, 2):
        if state.num_moves_played == 16:
            break
    seat, T = state.current_player, SMALL.num_card_types
    exact = ExactBelief("strong" if filtered else None).reset(state, seat).card_probabilities()
    belief = _tiny_learned(SMALL, seed=0)
    if filtered:
        belief = FilteredBelief(belief, RuleBot("strong"))
    belief.reset(state, seat)
    plain, weighted = [], []
    for n in (500, 32000):
        hands, log_w = belief.sample_weighted(n, np.random.default_rng(1))
        assert len(hands) == len(log_w) and np.isfinite(log_w).all()
        np.testing.assert_array_equal(hands, belief.sample(n, np.random.default_rng(1)))
        plain.append(np.abs(_marginals(hands, np.ones(len(hands)), T) - exact).sum(1).max() / 2)
        weighted.append(np.abs(_marginals(hands, importance_weights(log_w), T)
                               - exact).sum(1).max() / 2)
    assert plain[1] > 0.1                     # the proposal's bias does not average away
    assert weighted[1] < 0.03 and weighted[1] < weighted[0] / 3


def test_grounded_weights_correct_its_sequential_draw():
    """Drawing slot by slot from what each slot allows is exact when the slots' allowed
    sets are nested or disjoint; for overlapping ones the weights correct it. Slot 0
    allows {0, 1}, slot 1 {1, 2}, one copy each: the exact belief is uniform over
    (0, 1), (0, 2), (1, 2), the draw gives (1, 2) half the time, the weights undo that."""
    info = SeatInfo(unseen=np.array([1, 1, 1], np.int32),
                    plaus=np.array([[1, 1, 0], [0, 1, 1]], bool),
                    bits=np.array([0b011, 0b110], np.uint32))

    class Crafted(GroundedBelief):
        def seat_info(self):
            return info

    hands, log_w = Crafted().sample_weighted(30000, np.random.default_rng(0))
    keys = hands[:, 0] * 3 + hands[:, 1]
    plain = np.bincount(keys, minlength=9)[[1, 2, 5]] / len(keys)
    w = importance_weights(log_w)
    weighted = np.bincount(keys, weights=w, minlength=9)[[1, 2, 5]] / w.sum()
    np.testing.assert_allclose(plain, [0.25, 0.25, 0.5], atol=0.015)
    np.testing.assert_allclose(weighted, [1 / 3] * 3, atol=0.015)


def test_importance_weights_are_normalised_truncated_and_checked():
    raw = np.array([1.0, 1.0, 1.0, 1000.0])
    w = importance_weights(np.log(raw))      # capped at sqrt(4) times the raw mean
    expect = np.minimum(raw, 2 * raw.mean())
    np.testing.assert_allclose(w, expect / expect.mean())
    np.testing.assert_allclose(importance_weights(np.log([2.0, 4.0])), [2 / 3, 4 / 3])
    assert importance_weights(np.zeros(0)).shape == (0,)
    with pytest.raises(ValueError, match="non-finite"):
        importance_weights(np.array([0.0, -np.inf]))


def test_learned_draws_do_not_depend_on_the_decoding_chunk():
    """The proposals are decoded DRAW_CHUNK hands at a time (flat memory for any sample
    size) from uniforms drawn once: any chunk size gives the same hands and weights."""
    pytest.importorskip("torch")
    for state in _play(SMALL, 1):
        if state.num_moves_played == 10:
            break
    out = []
    for chunk in (7, 100000):
        belief = _tiny_learned(SMALL, seed=2).reset(state, state.current_player)
        belief.DRAW_CHUNK = chunk
        out.append(belief.sample_weighted(300, np.random.default_rng(4)))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
