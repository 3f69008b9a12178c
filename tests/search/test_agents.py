"""SPARTA / LBS search agents on the strong rule blueprint."""

import numpy as np
import pytest

from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.search.agents import LBSAgent, SpartaAgent
from lbs_pz.search.beliefs import GroundedBelief
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.rollout_search import FEW_WORLDS, search_move

from tests.helpers.scripts import load_script

BOT = RuleBot("strong")
# the paper's deviation rule (no confidence margin) with pruning by means: the rollout
# engine's plainest settings, which these tests vary one knob at a time
PLAIN = SearchConfig(confidence=0.0, margin_worlds=0, pruning="means")


def _positions(count, seed=0, every=7, last_move=200, config=HanabiConfig()):
    """Positions of strong-bot self-play (moves 3, 3 + every, ... up to last_move)."""
    out = []
    game = seed
    while len(out) < count:
        state = HanabiState(config, seed=game)
        game += 1
        while not state.is_terminal:
            if state.num_moves_played % every == 3 and state.num_moves_played <= last_move:
                out.append(state.clone())
            state.apply(BOT.act(state))
    return out[:count]


def _known_playable_slots(state, seat):
    """Slots whose every plausible identity is playable now."""
    return [i for i, (colors, rank_set, _, _) in enumerate(state.card_knowledge(seat))
            if all(state.fireworks[c] == r for c in colors for r in rank_set)]


def test_search_plays_legal_moves_and_deviates_only_beyond_delta():
    agent = LBSAgent(BOT, GroundedBelief(), rollouts=48, depth=-1, delta=0.05, seed=3)
    deviated = 0
    for state in _positions(12, seed=1):
        result = agent.search(state)
        assert result.move in state.legal_moves()
        assert result.blueprint_move == BOT.act(state)
        if result.deviated:
            i = list(result.moves).index(result.move)
            j = list(result.moves).index(result.blueprint_move)
            assert result.means[i] - result.means[j] > 0.05
            assert result.gains[i] > 2.0 * result.gain_sems[i]      # the default confidence
            assert result.gains[i] == pytest.approx(result.means[i] - result.means[j])
            deviated += 1
        else:
            assert result.move == result.blueprint_move
    assert deviated > 0


@pytest.mark.parametrize("margin", [0, 32])
def test_verification_decides_deviations_on_fresh_worlds(margin):
    """With `verify`, a deviation needs its gain re-measured on the extra worlds to pass
    delta and the confidence bound, uncapped whatever margin_worlds (the re-measure goes
    to the end of the game: no value's bias for the cap to guard against); without a
    proposal no verification rollouts run."""
    agent = LBSAgent(BOT, GroundedBelief(), rollouts=32, verify=64, depth=-1, seed=4,
                     margin_worlds=margin)
    verified = 0
    for state in _positions(12, seed=1):
        result = agent.search(state)
        assert result.move in state.legal_moves()
        if np.isnan(result.verify_gain):
            assert not result.deviated and result.rollouts == result.counts.sum()
            continue
        verified += 1
        assert result.rollouts == result.counts.sum() + 2 * 64
        passes = result.verify_gain > 0.05 and result.verify_gain > 2.0 * result.verify_sem
        assert result.deviated == passes
    assert verified > 0


@pytest.mark.parametrize("rule", ["means", "paired", "threshold"])
def test_pruning_never_drops_a_sure_point_on_the_last_turn(rule):
    """On the game's last move, playing a card known (from hints) to be playable scores
    +1 in every world, the most any move can: with pruning on, such a play is never
    pruned (under "threshold", unless the blueprint's move is worth as much: the play
    then cannot gain delta) and the chosen move is worth as much."""
    found = pruned_some = 0
    for game in range(400):
        state = HanabiState(HanabiConfig(), seed=game)
        while not state.is_terminal:
            last_turn = state.deck_size == 0 and state.turns_to_play == 1
            if last_turn:
                seat = state.current_player
                sure = _known_playable_slots(state, seat)
                if sure:
                    belief = GroundedBelief().reset(state, seat)
                    hands = belief.sample(64, np.random.default_rng(game))
                    result = search_move(state, seat, BOT, hands,
                                         PLAIN.replace(pruning=rule, batch_size=8),
                                         min_samples=8, seed=game)
                    moves = list(result.moves)
                    bp_sure = result.means[moves.index(result.blueprint_move)] == state.score + 1
                    for slot in sure:
                        i = moves.index(state.config.hand_size + slot)
                        if not (rule == "threshold" and bp_sure):
                            assert result.counts[i] == result.counts.max()  # never pruned
                            assert result.means[i] == state.score + 1
                    assert result.means[moves.index(result.move)] == state.score + 1
                    pruned_some += result.rollouts < len(moves) * len(hands)
                    found += 1
            state.apply(BOT.act(state))
        if found >= 8:
            break
    assert found >= 8 and pruned_some > 0


def test_fallback_to_the_blueprint_when_too_few_hands_are_legal():
    agent = LBSAgent(BOT, GroundedBelief(), rollouts=16, depth=-1, min_legal_fraction=2.0)
    state = _positions(1, seed=2)[0]
    assert agent.act(state) == BOT.act(state)
    assert agent.fallbacks == 1 and agent.history[-1].rollouts == 0


# SPARTA runs on a 3-color, 3-card variant: its exact belief over 5-card hands takes
# seconds per update, too slow for the default test run.
@pytest.mark.parametrize("make_agent, config", [
    (lambda: LBSAgent(BOT, GroundedBelief(), rollouts=32, depth=8, seed=11), HanabiConfig()),
    (lambda: LBSAgent(BOT, "grounded+cf", rollouts=32, depth=-1, seed=11, importance=True),
     HanabiConfig()),
    (lambda: SpartaAgent(BOT, rollouts=32, seed=11), HanabiConfig(colors=3, hand_size=3)),
])
def test_search_never_peeks_at_the_seats_own_cards(make_agent, config):
    """Same view and seed, different true own hand and deck: same move, same estimates."""
    rng = np.random.default_rng(0)
    checked = 0
    for state in _positions(8, seed=5, every=4, config=config):
        seat = state.current_player
        other = state.clone()
        belief = GroundedBelief().reset(state, seat)  # any hand the seat cannot rule out
        alternatives = [h for h in belief.sample(64, rng) if list(h) != state.hand(seat)]
        if not alternatives:
            continue
        other.set_hand(seat, alternatives[0], seed=int(rng.integers(1 << 30)))
        a, b = make_agent().search(state), make_agent().search(other)
        assert a.move == b.move
        np.testing.assert_allclose(a.means, b.means)
        checked += 1
    assert checked >= 4


def test_bad_parameters_are_clear_errors():
    with pytest.raises(ValueError, match="depth"):
        LBSAgent(BOT, GroundedBelief(), depth=0)
    with pytest.raises(ValueError, match="rollouts"):
        LBSAgent(BOT, GroundedBelief(), rollouts=0)
    with pytest.raises(ValueError, match="verify"):
        LBSAgent(BOT, GroundedBelief(), verify=1)
    with pytest.raises((TypeError, ValueError), match="(?i)blueprint"):
        LBSAgent(42, GroundedBelief())
    state = _positions(1)[0]
    with pytest.raises(ValueError, match="player to move"):
        search_move(state, 1 - state.current_player, BOT, np.zeros((0, 5)))


@pytest.mark.slow
def test_sparta_improves_on_the_blueprint_in_a_few_games():
    """Not a statistical claim (`lbs-pz compare` makes those): SPARTA on seat 0 must
    never lose points on these fixed deals and must deviate somewhere."""
    agent = SpartaAgent(BOT, rollouts=64, seed=0)
    diffs = []
    for game in range(3):
        from lbs_pz.engine import HanabiBatch, game_seeds

        state = HanabiState(HanabiConfig(), seed=int(game_seeds(0, game, 1)[0]))
        alone = HanabiBatch.from_state(state, 1)
        BOT.rollout(alone)
        base = int(alone.scores()[0])
        while not state.is_terminal:
            state.apply(agent.act(state) if state.current_player == 0 else BOT.act(state))
        diffs.append(state.score - base)
    assert agent.deviations > 0
    assert sum(diffs) >= 0


def _reference_move_returns(state, seat, moves, hands, world_seeds, blueprint, depth, value):
    """The per-world definition `move_returns` implements with one HanabiBatch: every
    world a HanabiState (clone, set_hand with its seed, apply), rolled out by the bot
    world by world from a full replay of its history, the value on the open worlds,
    each return bounded by its world's `max_score`."""
    from lbs_pz.agents.rule_bots import _bots

    worlds = []
    for move in moves:
        for hand, world_seed in zip(hands, world_seeds):
            world = state.clone()
            world.set_hand(seat, [int(c) for c in hand], seed=int(world_seed))
            world.apply(int(move))
            worlds.append(world)
    _bots.play_states(blueprint.name, worlds, depth)
    returns = np.array([w.score for w in worlds], dtype=np.float64)
    open_games = [i for i, w in enumerate(worlds) if not w.is_terminal]
    if value is not None and depth >= 0 and open_games:
        from lbs_pz.engine import HanabiBatch

        for i in open_games:      # one world at a time: the batched call must agree
            returns[i] = value(HanabiBatch.from_states([worlds[i]]))[0]
    ceilings = np.array([w.max_score for w in worlds], dtype=np.float64)
    clipped = int((returns > ceilings).sum())
    return np.clip(returns, 0, ceilings).reshape(len(moves), len(hands)), clipped


@pytest.mark.parametrize("depth, with_value", [(-1, False), (6, False), (16, True)])
def test_batched_worlds_decide_exactly_as_world_by_world_search(monkeypatch, depth, with_value):
    """search_move over one HanabiBatch per chunk gives the same SearchResult (moves,
    means, counts, gains) as the world-by-world reference, pruning and verification
    included."""
    from lbs_pz.search import rollout_search

    value = None
    if with_value:
        pytest.importorskip("torch")
        from lbs_pz.search.value import CentralValue

        value = CentralValue()
    for i, state in enumerate(_positions(4, seed=3, every=9)):
        seat = state.current_player
        hands = GroundedBelief().reset(state, seat).sample(48, np.random.default_rng(i))
        verify = GroundedBelief().reset(state, seat).sample(40, np.random.default_rng(100 + i))
        config = PLAIN.replace(delta=0.0, batch_size=16)
        kwargs = dict(depth=depth, value=value, min_samples=16, verify_hands=verify, seed=i)
        fast = search_move(state, seat, BOT, hands, config, **kwargs)
        with monkeypatch.context() as patch:
            patch.setattr(rollout_search, "move_returns", _reference_move_returns)
            slow = search_move(state, seat, BOT, hands, config, **kwargs)
        assert fast.move == slow.move and fast.deviated == slow.deviated
        np.testing.assert_array_equal(fast.counts, slow.counts)
        if with_value:     # float32 sums in another order: equal to rounding
            np.testing.assert_allclose(fast.means, slow.means, rtol=0, atol=1e-4)
            np.testing.assert_allclose(fast.gains, slow.gains, rtol=0, atol=1e-4)
        else:
            np.testing.assert_array_equal(fast.means, slow.means)
            np.testing.assert_array_equal(fast.gains, slow.gains)
            assert fast.verify_gain == slow.verify_gain or \
                (np.isnan(fast.verify_gain) and np.isnan(slow.verify_gain))


def test_verification_rolls_out_to_the_end_whatever_the_depth():
    """A proposed deviation is re-measured on the fresh worlds to the end of the game:
    the value is asked about the search's worlds only (one estimate per rollout: no game
    can end within its 3 moves), never about the verification's."""
    calls = []

    def value(batch):
        calls.append(len(batch))
        return batch.scores().astype(np.float64) + 0.3 * batch.legal_masks().sum(axis=1)

    verified = 0
    for i, state in enumerate(_positions(12, seed=5, every=5)):
        if state.deck_size <= 3 or state.life_tokens < 3:
            continue
        seat = state.current_player
        hands = GroundedBelief().reset(state, seat).sample(32, np.random.default_rng(i))
        verify = GroundedBelief().reset(state, seat).sample(40, np.random.default_rng(50 + i))
        calls.clear()
        config = PLAIN.replace(delta=0.0, confidence=0.0)
        deep = search_move(state, seat, BOT, hands, config, depth=2, value=value,
                           verify_hands=verify, seed=i)
        assert sum(calls) == deep.counts.sum()
        if np.isnan(deep.verify_gain):
            continue
        verified += 1
        assert deep.rollouts == deep.counts.sum() + 2 * len(verify)
    assert verified > 0


def test_world_returns_check_what_a_value_returns():
    from lbs_pz.search.rollout_search import move_returns

    state = _positions(1, seed=2)[0]
    seat = state.current_player
    hands = np.array([state.hand(seat)] * 3)
    with pytest.raises(ValueError, match="value returned shape"):
        move_returns(state, seat, state.legal_moves()[:2], hands, np.arange(3), BOT, 2,
                     lambda batch: np.zeros(1))
    seen = []
    returns, clipped = move_returns(state, seat, state.legal_moves()[:2], hands, np.arange(3),
                                    BOT, 2, lambda b: seen.append(len(b)) or np.full(len(b), 7.5))
    assert returns.shape == (2, 3) and seen == [6] and np.all(returns == 7.5) and clipped == 0
    # an estimate above what a world can still score is clipped to its ceiling, and counted
    returns, clipped = move_returns(state, seat, state.legal_moves()[:2], hands, np.arange(3),
                                    BOT, 2, lambda b: np.full(len(b), 99.0))
    assert clipped == 6 and np.all(returns <= 25) and np.all(returns > 0)


def _searches_by_rule(rules, count, hands_seed, search_seed):
    """search_move under each pruning rule, on the same 128 sampled hands, at `count`
    positions of one strong-bot game (every third move with 3+ legal moves):
    a list of {rule: SearchResult}."""
    state = HanabiState(HanabiConfig(), seed=5)
    out = []
    while not state.is_terminal and len(out) < count:
        seat = state.current_player
        if state.num_moves_played % 3 == 0 and len(state.legal_moves()) > 2:
            hands = GroundedBelief().reset(state, seat).sample(
                128, np.random.default_rng(hands_seed))
            out.append({rule: search_move(state, seat, BOT, hands,
                                          PLAIN.replace(pruning=rule, batch_size=16),
                                          min_samples=16, depth=-1, seed=search_seed)
                        for rule in rules})
        state.apply(BOT.act(state))
    assert len(out) == count
    return out


def test_paired_pruning_rolls_out_less_and_keeps_the_move():
    """Pairing the moves world by world cancels the spread the worlds cause, so "paired"
    drops weak moves after fewer worlds than "means", never the blueprint's move, and on
    these positions picks the same move; "off" rolls every move out in every world."""
    runs = {"means": 0, "paired": 0}
    for got in _searches_by_rule(("means", "paired", "off"), 6, hands_seed=1, search_seed=3):
        off = got["off"]
        assert off.rollouts == len(off.moves) * 128
        for rule in runs:
            runs[rule] += got[rule].rollouts
            bp = list(got[rule].moves).index(got[rule].blueprint_move)
            assert got[rule].counts[bp] == 128                 # the reference stays
        assert got["paired"].move == got["means"].move
    assert runs["paired"] < runs["means"]


def test_threshold_pruning_drops_what_cannot_be_played_and_keeps_the_move():
    """"threshold" also drops a move once its paired gain over the blueprint's move is
    2 s.e. below delta: it rolls out less than "paired", never drops the blueprint's
    move (the reference), and on these positions picks the move that "off" picks."""
    rollouts = {"paired": 0, "threshold": 0}
    for got in _searches_by_rule(("paired", "threshold", "off"), 8, hands_seed=2,
                                 search_seed=4):
        for rule in rollouts:
            rollouts[rule] += got[rule].rollouts
        fast, off = got["threshold"], got["off"]
        assert fast.move == off.move
        bp = list(fast.moves).index(fast.blueprint_move)
        assert fast.counts[bp] == fast.counts.max() == fast.worlds
    assert rollouts["threshold"] < rollouts["paired"]


def test_refilled_batches_keep_the_rollouts_per_batch(monkeypatch):
    """After pruning, a batch takes batch_size * (k // moves alive) worlds (k legal moves),
    so that it rolls out about k * batch_size (move, world) pairs; refill=False keeps
    batch_size worlds. Both pick the same move here. By default (None) a rule bot, whose
    rollouts cost the same per world in any batch, is not refilled; a public-LSTM net,
    one batched forward per move, is."""
    from lbs_pz.search import rollout_search

    calls = []
    real = rollout_search.move_returns

    def watched(state, seat, moves, hands, *args):
        calls.append((len(moves), len(hands)))
        return real(state, seat, moves, hands, *args)

    monkeypatch.setattr(rollout_search, "move_returns", watched)
    state = _positions(1, seed=6, every=11)[0]
    seat = state.current_player
    k = len(state.legal_moves())
    hands = GroundedBelief().reset(state, seat).sample(256, np.random.default_rng(3))
    moves, batches = {}, {}
    for refill in (False, True, None):
        calls.clear()
        config = PLAIN.replace(pruning="threshold", batch_size=16, refill=refill)
        result = search_move(state, seat, BOT, hands, config, min_samples=16, depth=-1, seed=5)
        moves[refill], batches[refill] = result.move, list(calls)
        if refill is None:
            continue
        assert calls[0] == (k, 16) and sum(w for _, w in calls) == result.worlds
        assert result.rollouts == sum(m * w for m, w in calls)
        done = 16
        for alive, worlds in calls[1:]:
            want = 16 * max(1, k // alive) if refill else 16
            assert worlds == min(want, len(hands) - done)
            done += worlds
        if refill:
            assert any(worlds > 16 for _, worlds in calls[1:])
    assert moves[False] == moves[True] == moves[None] and batches[None] == batches[False]
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    assert PublicLSTMBlueprint.wide_batches and not getattr(BOT, "wide_batches", False)


def test_pruning_rule_is_checked():
    state = HanabiState(HanabiConfig(), seed=0)
    hands = GroundedBelief().reset(state, 0).sample(8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="pruning must be one of"):
        search_move(state, state.current_player, BOT, hands, SearchConfig(pruning="fast"))
    with pytest.raises(ValueError, match="pruning must be one of"):
        LBSAgent(BOT, rollouts=8, pruning="fast")


def test_pruning_check_runs_every_rule_on_the_same_worlds(capsys):
    """docs/experiments/pruning_check.py: every rule searches the same decisions; none rolls out
    more than "off" at any of them, "threshold" no more than "paired" in all; the report
    has one row per rule, and an unknown rule is a usage error."""
    pruning_check = load_script("docs/experiments/pruning_check.py")

    results = pruning_check.check("strong", "grounded", 16, 96, 1, ["threshold", "paired"],
                                  log=lambda *_: None)
    assert list(results) == ["off", "threshold", "paired"]
    off_moves, off_rollouts, _ = results["off"]
    assert len(off_moves) > 10
    for moves, rollouts, seconds in results.values():
        assert len(moves) == len(off_moves) and np.all(rollouts <= off_rollouts)
        assert np.all(seconds > 0)
    assert results["threshold"][1].sum() < results["paired"][1].sum() < off_rollouts.sum()
    lines = []
    pruning_check.report(results, log=lines.append)
    assert len(lines) == 5 and lines[2].startswith("| off | ")
    with pytest.raises(SystemExit) as exit_info:
        pruning_check.main(["--rules", "fast", "--blueprint", "strong"])
    assert exit_info.value.code == 2 and "--rules: choose from" in capsys.readouterr().err


def test_deviation_check_can_follow_the_search_s_own_games():
    """docs/experiments/deviation_check.py: a move sent into the walk is the one seat 0 plays
    (the search's own games); --follow search plays the search's moves and still measures
    every deviation; an unknown --follow is an error."""
    deviation_check = load_script("docs/experiments/deviation_check.py")

    walk = deviation_check.seat0_decisions("strong", "grounded", 1, 8, 1, log=lambda *_: None)
    _, _, _, state, move = walk.send(None)
    other = next(m for m in state.legal_moves() if m != move)
    before = state.num_moves_played
    _, _, _, later, _ = walk.send(other)
    assert later.move_history[before] == other
    walk.close()
    quiet = dict(log=lambda *_: None)
    rows = deviation_check.deviations("strong", "grounded", 1, 16, 1, 8, follow="search", **quiet)
    assert rows and all(np.isfinite(r[1:]).all() for r in rows)
    with pytest.raises(ValueError, match="follow"):
        deviation_check.deviations("strong", "grounded", 1, 16, 1, 8, follow="partner", **quiet)


def test_importance_weights_reweight_every_estimate():
    """Equal weights give the plain estimates; weight 0 on the second half of the worlds
    gives the estimates of the first half alone (its worlds are the same: a world's deck
    seed depends on its index only); the effective worlds say so."""
    state = _positions(1, seed=4, every=9)[0]
    seat = state.current_player
    hands = GroundedBelief().reset(state, seat).sample(64, np.random.default_rng(2))
    kwargs = dict(config=PLAIN.replace(pruning="off", batch_size=16), depth=-1, seed=7)
    plain = search_move(state, seat, BOT, hands, **kwargs)
    equal = search_move(state, seat, BOT, hands, weights=np.full(64, 3.0), **kwargs)
    np.testing.assert_allclose(equal.means, plain.means, atol=1e-12)
    np.testing.assert_allclose(equal.gain_sems, plain.gain_sems, atol=1e-12)
    assert equal.move == plain.move and equal.ess == pytest.approx(plain.ess) == 64
    half = search_move(state, seat, BOT, hands[:32], **kwargs)
    masked = search_move(state, seat, BOT, hands, weights=np.repeat([1.0, 0.0], 32), **kwargs)
    np.testing.assert_allclose(masked.means, half.means, atol=1e-12)
    np.testing.assert_allclose(masked.gain_sems, half.gain_sems, atol=1e-12)
    assert masked.ess == pytest.approx(32)
    with pytest.raises(ValueError, match="one weight per sampled hand"):
        search_move(state, seat, BOT, hands, weights=np.ones(3), **kwargs)
    with pytest.raises(ValueError, match="finite"):
        search_move(state, seat, BOT, hands, weights=np.full(64, np.nan), **kwargs)


def test_a_search_never_reports_an_estimate_above_the_ceiling():
    """A value that claims more than a world can still score is clipped to its ceiling
    and counted: no candidate's mean exceeds the position's `max_score`."""
    agent = LBSAgent(BOT, GroundedBelief(), rollouts=32, depth=2,
                     value=lambda worlds: np.full(len(worlds), 30.0))
    for state in _positions(3, seed=8, every=13):
        result = agent.search(state)
        assert result.value_clipped > 0
        assert np.all(result.means <= state.max_score + 1e-9)
    assert agent.value_clipped == sum(r.value_clipped for r in agent.history) > 0


def test_a_weighted_sample_too_concentrated_falls_back():
    """With weights, the world count that must reach `min_worlds` is the effective sample
    size: one world carrying all the weight is a fallback, as one world would be."""
    state = _positions(1, seed=4, every=9)[0]
    seat = state.current_player
    hands = GroundedBelief().reset(state, seat).sample(64, np.random.default_rng(2))
    weights = np.full(64, 1e-9)
    weights[0] = 1.0
    result = search_move(state, seat, BOT, hands, PLAIN, weights=weights, min_worlds=8,
                         depth=-1)
    assert result.fallback and result.fallback_reason == FEW_WORLDS and result.rollouts == 0
    even = search_move(state, seat, BOT, hands, PLAIN, weights=np.ones(64), min_worlds=8,
                       depth=-1)
    assert not even.fallback
