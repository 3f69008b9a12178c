"""One search configuration: validated once, one default per knob from Python, the CLI and
the page; `resolve` chooses the belief, the value and every unset knob for a blueprint,
and says why."""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pytest

from lbs_pz.agents import RuleBot, as_blueprint, load_blueprint
from lbs_pz.cli import build_parser
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.search.agents import LBSAgent, SpartaAgent
from lbs_pz.search.beliefs import GroundedBelief
from lbs_pz.search.build import build_agent
from lbs_pz.search.config import (DEFAULTS, MAX_WORLDS, MIN_BUDGET_WORLDS, SearchConfig,
                                  worlds_for_budget)
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.resolve import applied_speed_defaults, resolve
from lbs_pz.web.games import GameStore

BEST_NET = "lstm:conventions_expert_value_2p"


@pytest.mark.parametrize("bad", [
    dict(rollouts=0), dict(rollouts=2.5), dict(rollouts=True), dict(delta=-0.1),
    dict(delta=math.nan), dict(confidence=math.inf), dict(verify=1), dict(verify=-2),
    dict(margin_worlds=-1), dict(pruning="fast"), dict(precision="float16"),
    dict(belief="psychic"), dict(belief="grounded", belief_checkpoint="b.pt"),
    dict(batch_size=0), dict(time_budget=0), dict(min_legal_fraction=-1),
    dict(belief_checkpoint=3)])
def test_a_bad_setting_fails_at_construction(bad):
    with pytest.raises((TypeError, ValueError)):
        SearchConfig(**bad)
    # the same through every door that takes a configuration
    with pytest.raises((TypeError, ValueError)):
        MethodSpec("lbs-16", **bad)
    with pytest.raises((TypeError, ValueError)):
        LBSAgent(RuleBot("simple"), GroundedBelief(), depth=-1, **bad)


def test_frozen_and_replace_checks_names():
    config = SearchConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.rollouts = 3
    with pytest.raises(TypeError, match="unknown search setting"):
        config.replace(rolouts=3)
    assert config.replace(delta=0.5).delta == 0.5 and config.delta is None
    assert SearchConfig(pruning=True).pruning == "means"     # one spelling


def test_one_default_per_knob_from_python_the_cli_and_the_page():
    default = SearchConfig().rollouts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(RuleBot("simple"), GroundedBelief(), depth=-1)
    assert agent.config.rollouts == default
    parser = build_parser()
    for command in (["compare"], ["search-games", "--out", "x.jsonl"]):
        args = parser.parse_args(command)
        assert args.rollouts == default
        for knob in DEFAULTS:            # unset: the blueprint's recommendation, else DEFAULTS
            assert getattr(args, knob) is None
    assert parser.parse_args(["demo"]).rollouts == default
    assert parser.parse_args(["serve"]).rollouts == default
    assert GameStore().default_rollouts == default


def test_every_knob_is_an_option_and_the_advanced_ones_have_their_heading(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--help"])
    text = capsys.readouterr().out
    for field in dataclasses.fields(SearchConfig):
        if field.name == "seed":          # the run's --seed seeds the search
            continue
        flag = "--search-precision" if field.name == "precision" else \
            f"--{field.name.replace('_', '-')}"
        assert flag in text, flag
    assert "search, advanced" in text
    args = build_parser().parse_args(["compare", "--delta", "0.5", "--margin-worlds", "32",
                                      "--no-refill", "--seed", "7"])
    from lbs_pz.cli.options import search_config
    config = search_config(args)
    assert (config.delta, config.margin_worlds, config.refill, config.seed) == (0.5, 32, False, 7)


def test_resolve_says_what_it_chose_for_a_rule_bot():
    chosen = resolve(RuleBot("strong"), HanabiConfig(), SearchConfig(), "lbs-16")
    assert chosen.depth == 16 and chosen.depth_reason is None
    assert chosen.notes[0].startswith("belief: learned+cf (shipped 'belief_strong_2p'")
    assert chosen.notes[1] == "value: shipped 'value_strong_2p'"
    assert {k: getattr(chosen.config, k) for k in DEFAULTS} == DEFAULTS
    # no value for this bot: to the end of the game, and it says why
    chosen = resolve(RuleBot("simple"), HanabiConfig(), SearchConfig(), "lbs-4")
    assert chosen.depth == -1 and "train-value" in chosen.depth_reason
    assert chosen.notes[0].startswith("belief: grounded+cf")


def test_a_neural_blueprints_recommendation_and_speed_settings_travel_with_it():
    net = load_blueprint(BEST_NET)
    lbs1 = resolve(net, None, SearchConfig(), "lbs-1")
    assert lbs1.config.delta == 0.75            # recorded in the manifest for LBS-1
    assert any(n.startswith("delta: 0.75 (recommended for") for n in lbs1.notes)
    lbs16 = resolve(net, None, SearchConfig(), "lbs-16")
    # float32 rollouts: bfloat16 is slower on a CPU without AMX, and machine-dependent
    assert (lbs16.config.pruning, lbs16.config.precision) == ("threshold", "float32")
    assert any(n.startswith("pruning: 'threshold' (its rollouts are batched") for n in lbs16.notes)
    assert not any(n.startswith("precision") for n in lbs16.notes)
    assert applied_speed_defaults(net, HanabiConfig(), SearchConfig(), "lbs-16") == \
        {"pruning": "threshold"}
    assert applied_speed_defaults(net, HanabiConfig(), SearchConfig(pruning="off"),
                                  "lbs-16") == {}
    assert applied_speed_defaults(RuleBot("strong"), HanabiConfig(), SearchConfig(),
                                  "lbs-16") == {}
    # what the user sets wins over every default
    mine = resolve(net, None, SearchConfig(delta=0.2, pruning="means", precision="float32"),
                   "lbs-1")
    assert (mine.config.delta, mine.config.pruning, mine.config.precision) == \
        (0.2, "means", "float32")
    assert not any(n.startswith(("delta", "pruning", "precision")) for n in mine.notes)
    # the same choice from Python and from a MethodSpec (the CLI and the page)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(net, depth=1, rollouts=8)
        _, built = build_agent(MethodSpec("lbs-1", blueprint=BEST_NET, rollouts=8))
    assert agent.config == built.config and agent.defaults == built.defaults


def test_a_python_class_called_per_position_gets_threshold_pruning():
    """A user's class with `act` alone pays a Python call per world and move: its search
    prunes by "threshold" unless told otherwise; one with its own act_batch and rollout,
    and a rule bot (rollouts in C), keep the general default."""
    walker = load_blueprint("py:examples/my_blueprint.py:HintPlayDiscard")
    assert walker.per_position
    chosen = resolve(walker, None, SearchConfig(), "lbs-16")
    assert chosen.config.pruning == "threshold"
    assert "pruning: 'threshold' (its moves are Python calls, one per position)" in chosen.notes
    assert resolve(walker, None, SearchConfig(pruning="means"), "lbs-16").config.pruning \
        == "means"

    class Batched:
        def act(self, state, seat=None):
            return state.legal_moves()[0]

        def act_batch(self, batch):
            return RuleBot("simple").act_batch(batch)

        def rollout(self, batch, max_moves=-1):
            return RuleBot("simple").rollout(batch, max_moves)

    batched = as_blueprint(Batched())
    assert not batched.per_position
    assert resolve(batched, None, SearchConfig(), "lbs-16").config.pruning == DEFAULTS["pruning"]
    assert resolve(RuleBot("medium"), None, SearchConfig(), "lbs-16").config.pruning == \
        DEFAULTS["pruning"]


def test_sparta_resolves_too():
    agent = SpartaAgent(RuleBot("strong"), rollouts=8)
    assert agent.depth == -1 and agent.belief.name.startswith("exact")
    assert {k: getattr(agent.config, k) for k in DEFAULTS} == DEFAULTS
    with pytest.raises(ValueError, match="exact belief"):
        SpartaAgent(RuleBot("strong"), belief=None, config=SearchConfig(belief="grounded"))


def test_method_spec_round_trips_and_pickles():
    spec = MethodSpec("LBS-016", blueprint="medium", search_seats=(0, 1), rollouts=64,
                      delta=0.5, pruning="threshold")
    assert spec.method == "lbs-16" and spec.rollouts == 64 and spec.delta == 0.5
    assert MethodSpec.from_dict(spec.to_dict()) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(spec) == hash(
        MethodSpec.from_dict(spec.to_dict()))
    assert spec.label() == "lbs-16 (default belief, seats 0,1, pruning threshold, delta 0.5)"
    with pytest.raises(TypeError):
        MethodSpec.from_dict({"method": "lbs-1", "bogus": 1})


def test_a_variant_change_resolves_again_and_keeps_the_history():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(RuleBot("strong"), rollouts=8, seed=0)
        state = HanabiState(HanabiConfig(), seed=1)
        agent.act(state)
        assert agent.depth == 16
        small = HanabiState(HanabiConfig(colors=3, ranks=3, hand_size=3), seed=1)
        agent.act(small)                  # nothing ships for it: grounded, to the end
    assert agent.decisions == 2 and agent.depth == -1
    assert agent.defaults[0].startswith("belief: grounded+cf")


def test_a_margin_of_fewer_worlds_never_deviates_where_the_full_margin_would_not():
    """margin_worlds only widens the confidence test: on the same worlds, every deviation
    it allows is one the uncapped rule makes too, with the same move (pruning by means,
    which does not depend on the margin, so both roll out the same worlds)."""
    bot = RuleBot("medium")
    kwargs = dict(depth=-1, rollouts=96, seed=5, delta=0.0, pruning="means")
    capped = LBSAgent(bot, GroundedBelief(), margin_worlds=16, **kwargs)
    full = LBSAgent(bot, GroundedBelief(), margin_worlds=0, **kwargs)
    rng = np.random.default_rng(0)
    state = HanabiState(HanabiConfig(), seed=3)
    while not state.is_terminal and state.num_moves_played < 24:
        if state.current_player == 0:
            a, b = capped.search(state), full.search(state)
            assert np.array_equal(a.gains, b.gains)        # the same worlds, the same gains
            if a.deviated:
                assert b.deviated and a.move == b.move
        legal = state.legal_moves()
        state.apply(int(legal[rng.integers(len(legal))]) if rng.random() < 0.3
                    else bot.act(state))
    assert full.deviations > 0 and full.deviations >= capped.deviations


def test_threshold_pruning_drops_the_moves_the_capped_margin_rules_out():
    """With margin_worlds, "threshold" pruning also stops rolling out a move whose gain
    cannot clear the capped margin: fewer rollouts, and (on these positions) the same
    moves as rolling every move out."""
    bot = RuleBot("medium")
    kwargs = dict(depth=-1, rollouts=128, seed=2, margin_worlds=16)
    pruned = LBSAgent(bot, GroundedBelief(), pruning="threshold", **kwargs)
    plain = LBSAgent(bot, GroundedBelief(), pruning="threshold", **dict(kwargs, margin_worlds=0))
    full = LBSAgent(bot, GroundedBelief(), pruning="off", **kwargs)
    state = HanabiState(HanabiConfig(), seed=8)
    same = total = 0
    while not state.is_terminal and state.num_moves_played < 20:
        if state.current_player == 0:
            a, b, c = pruned.search(state), full.search(state), plain.search(state)
            same += a.move == b.move
            total += 1
            assert a.rollouts <= c.rollouts <= b.rollouts
        state.apply(bot.act(state))
    assert same == total and sum(r.rollouts for r in pruned.history) < \
        sum(r.rollouts for r in plain.history)


def test_a_budget_buys_worlds_by_the_cost_of_a_rollout():
    """`budget` (simulated blueprint moves per decision) replaces `rollouts`: a deeper
    rollout costs more, so it buys fewer worlds; the worlds stay within [16, 10,000], come
    from public facts only (the same for a re-dealt own hand) and are what the search
    samples; a bad budget is a clear error."""

    bot = RuleBot("strong")
    state = HanabiState(HanabiConfig(), seed=4)
    for _ in range(12):
        state.apply(bot.act(state))
    k = len(state.legal_moves())
    assert worlds_for_budget(k * 17 * 500, state, 16) == 500
    assert worlds_for_budget(k * 5 * 500, state, 4) == 500
    assert worlds_for_budget(10**6, state, -1) < worlds_for_budget(10**6, state, 16)
    assert worlds_for_budget(1, state, 16) == MIN_BUDGET_WORLDS
    assert worlds_for_budget(10**12, state, 16) == MAX_WORLDS
    other = state.clone()
    seat = state.current_player
    other.set_hand(seat, GroundedBelief().reset(state, seat).sample(1, np.random.default_rng(1))[0])
    assert worlds_for_budget(10**6, other, -1) == worlds_for_budget(10**6, state, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(bot, GroundedBelief(), depth=4, budget=k * 5 * 40, pruning="off")
    result = agent.search(state)
    assert agent.worlds_for(state) == 40 and result.worlds == 40
    assert result.rollouts == k * 40
    for bad in (0, -5):
        with pytest.raises(ValueError, match="budget"):
            SearchConfig(budget=bad)
    with pytest.raises(TypeError, match="budget"):
        SearchConfig(budget=2.5)


def test_a_budget_rolls_to_the_end_where_it_affords_deep_worlds():
    """With `deep_worlds` D, a budget's decision that affords D worlds to the end rolls out
    to the end, weighted and uncapped (what its SearchResult records); one that does not
    keeps the method's depth and margin; D = 0, no budget or a search already to the end
    change nothing. The choice reads public facts only: the same for a re-dealt own hand."""
    bot = RuleBot("strong")
    late = HanabiState(HanabiConfig(), seed=4)
    while late.deck_size > 3 and not late.is_terminal:
        late.apply(bot.act(late))
    early = HanabiState(HanabiConfig(), seed=4)
    # 200 worlds to the end at the late decision, far fewer at the first
    budget = 200 * len(late.legal_moves()) * (1 + 2 * late.deck_size + late.turns_to_play)
    assert worlds_for_budget(budget, late, -1) >= 200 > worlds_for_budget(budget, early, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = LBSAgent(bot, GroundedBelief(), depth=16, budget=budget, deep_worlds=200,
                         delta=0.05, confidence=2.0, margin_worlds=32)
        plain = LBSAgent(bot, GroundedBelief(), depth=16, budget=budget, deep_worlds=0)
        fixed = LBSAgent(bot, GroundedBelief(), depth=16, rollouts=64, deep_worlds=200)
    depth, config = agent.depth_for(late)
    assert depth == -1 and config.importance and config.margin_worlds == 0
    result = agent.search(late)
    assert result.depth == -1 and result.margin_worlds == 0
    assert agent.depth_for(early) == (16, agent.config)
    assert agent.search(early).depth == 16 and agent.history[-1].margin_worlds == 32
    assert plain.depth_for(late)[0] == 16 and plain.search(late).depth == 16
    assert fixed.depth_for(late)[0] == 16
    seat = late.current_player
    redealt = late.clone()
    hand = GroundedBelief().reset(late, seat).sample(1, np.random.default_rng(3))[0]
    redealt.set_hand(seat, hand)
    assert agent.depth_for(redealt)[0] == -1
    with pytest.raises(ValueError, match="deep_worlds"):
        SearchConfig(deep_worlds=-1)


def test_an_importance_weighted_search_resolves_its_own_margin():
    """By the rule of docs/experiments/importance_weights.md: from 1,024 worlds up a
    weighted LBS-k caps the margin at 128 worlds and a weighted search to the end not at
    all; below 1,024 worlds, unweighted, or with the margin set, nothing changes."""
    bot = RuleBot("strong")
    margin = lambda method, **knobs: resolve(   # noqa: E731
        bot, None, SearchConfig(**knobs), method).config.margin_worlds
    assert margin("lbs-16", importance=True, rollouts=1024) == 128
    assert margin("lbs-inf", importance=True, rollouts=4096) == 0
    assert margin("lbs-16", importance=True, rollouts=256) == DEFAULTS["margin_worlds"]
    assert margin("lbs-16", rollouts=1024) == DEFAULTS["margin_worlds"]
    assert margin("lbs-inf", importance=True, rollouts=1024, margin_worlds=7) == 7
    notes = resolve(bot, None, SearchConfig(importance=True, rollouts=1024), "lbs-16").notes
    assert any(n.startswith("margin_worlds: 128") for n in notes)


def test_sparta_margin_follows_the_noise_from_256_worlds_up():
    """By the rule of docs/experiments/sparta_margin.md: SPARTA (the exact belief, rollouts
    to the end: no bias) resolves its margin to 0 (no cap) from 256 worlds per decision
    up, with a note saying why; below 256 worlds, under a budget, or with the margin set,
    the general default or the setting stands. LBS keeps its cap."""
    bot = RuleBot("strong")
    chosen = lambda method, **knobs: resolve(   # noqa: E731
        bot, None, SearchConfig(**knobs), method)
    uncapped = chosen("sparta", rollouts=256)
    assert uncapped.config.margin_worlds == 0
    assert any(n.startswith("margin_worlds: 0 (SPARTA") and "sparta_margin.md" in n
               for n in uncapped.notes)
    assert chosen("sparta", rollouts=10_000).config.margin_worlds == 0
    assert chosen("sparta", rollouts=255).config.margin_worlds == DEFAULTS["margin_worlds"]
    assert chosen("sparta", budget=10**6).config.margin_worlds == DEFAULTS["margin_worlds"]
    assert chosen("sparta", rollouts=1024, margin_worlds=32).config.margin_worlds == 32
    assert chosen("lbs-16", rollouts=1024).config.margin_worlds == DEFAULTS["margin_worlds"]


def test_lbs_inf_weights_its_worlds_from_1024_worlds_up():
    """With `importance` unset, LBS-inf weights its worlds (and drops the margin cap) from
    1,024 worlds per decision up; below, other depths and SPARTA do not; set, it is kept."""
    bot = RuleBot("strong")
    chosen = lambda method, **knobs: resolve(   # noqa: E731
        bot, None, SearchConfig(**knobs), method).config
    weighted = chosen("lbs-inf", rollouts=1024)
    assert weighted.importance is True and weighted.margin_worlds == 0
    assert chosen("lbs-inf", rollouts=512).importance is False
    assert chosen("lbs-16", rollouts=4096).importance is False
    assert chosen("sparta", rollouts=4096).importance is False
    assert chosen("lbs-inf", rollouts=4096, importance=False).importance is False
    assert chosen("lbs-inf", rollouts=4096, importance=False).margin_worlds == 32
