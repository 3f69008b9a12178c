"""The Agent / Blueprint protocols, RandomAgent, RuleBot, the adapters and `lbs-pz eval`."""

from __future__ import annotations


import numpy as np
import pytest

from lbs_pz.agents import (
    BOT_NAMES, Agent, Blueprint, BlueprintBase, EnvPolicy, RandomAgent, RuleBot, ViewAgent,
    play_env_episode, seat_policy,
)
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState


def test_protocols():
    for name in BOT_NAMES:
        bot = RuleBot(name)
        assert isinstance(bot, Agent) and isinstance(bot, Blueprint)
        assert bot.deterministic and not bot.has_private_memory and not bot.has_value
        assert bot.name in RuleBot.conventions(name)
    assert isinstance(RandomAgent(), Blueprint)

    class Oldest(BlueprintBase):
        name = "oldest"

        def act(self, state, seat=None):
            return state.config.hand_size

    assert isinstance(Oldest(), Blueprint)
    worlds = HanabiBatch.from_states([HanabiState(HanabiConfig(), seed=s) for s in range(3)])
    assert list(Oldest().act_batch(worlds)) == [5, 5, 5]
    made = Oldest().rollout(worlds)
    assert made.dtype == np.int32 and np.all(made > 0) and worlds.terminals().all()
    assert Oldest().value(worlds) is None
    assert list(Oldest().act_batch(worlds)) == [-1, -1, -1]


def test_batched_methods_refuse_lists_of_states():
    class Oldest(BlueprintBase):
        name = "oldest"

        def act(self, state, seat=None):
            return state.config.hand_size

    states = [HanabiState(HanabiConfig(), seed=1)]
    for call in (lambda: Oldest().act_batch(states), lambda: Oldest().rollout(states),
                 lambda: Oldest().value(states), lambda: RandomAgent().rollout(states, 3)):
        with pytest.raises(TypeError, match="HanabiBatch.from_states"):
            call()


def test_random_agent_legal_and_reproducible():
    config = HanabiConfig(players=3)
    agent = RandomAgent(seed=4)
    state = HanabiState(config, seed=2)
    moves = []
    while not state.is_terminal:
        move = agent.act(state)
        assert move in state.legal_moves()
        assert agent.act(state.clone()) == move
        moves.append(move)
        state.apply(move)
    # A function of the public history: replaying gives the same game.
    again = HanabiBatch.from_states([HanabiState(config, seed=2)])
    assert RandomAgent(seed=4).rollout(again)[0] == len(moves)
    assert again.get_state(0).move_history == moves
    with pytest.raises(ValueError):
        agent.act(HanabiState(config, seed=2), seat=1 if state.current_player != 1 else 2)


def test_view_agent_sees_only_the_view():
    seen = []

    class Spy(ViewAgent):
        name = "spy"

        def act_view(self, view):
            seen.append(view)
            return view.legal_moves[0]

    state = HanabiState(HanabiConfig(players=2), seed=1)
    Spy().act(state)
    view = seen[0]
    assert view.player == state.current_player
    assert all(card is None for card in view.hands[view.player])


def test_generic_rollout_matches_move_by_move_play():
    class Slow(BlueprintBase):          # the strong bot, driven move by move from Python
        name = "strong-py"

        def act(self, state, seat=None):
            return RuleBot("strong").act(state, seat)

    config = HanabiConfig(players=3)
    worlds = [HanabiState(config, seed=s) for s in range(6)]
    batch = HanabiBatch.from_states(worlds)
    assert list(Slow().act_batch(batch)) == [RuleBot("strong").act(w) for w in worlds]
    made = Slow().rollout(batch, max_moves=7)
    assert list(made) == [7] * 6
    for w in worlds:
        for _ in range(7):
            w.apply(RuleBot("strong").act(w))
    assert [batch.get_state(i).move_history for i in range(6)] == [w.move_history for w in worlds]
    Slow().rollout(batch)
    for w in worlds:
        while not w.is_terminal:
            w.apply(RuleBot("strong").act(w))
    assert list(batch.scores()) == [w.score for w in worlds] and batch.terminals().all()
    assert list(Slow().rollout(batch, 5)) == [0] * 6


def test_seat_policy():
    state = HanabiState(HanabiConfig(players=2), seed=3)
    seat = state.current_player
    policy = seat_policy(RuleBot("medium"), seat)
    assert policy(state) in state.legal_moves()
    assert seat_policy(RuleBot("medium"), 1 - seat)(state) == -1


def test_pettingzoo_adapter_plays_like_the_engine():
    from lbs_pz.envs.hanabi_v0 import env as make_env

    environment = make_env(players=2)
    environment.reset(seed=9)
    result = play_env_episode(environment, RuleBot("strong"))
    direct = HanabiBatch.from_states([HanabiState(HanabiConfig(players=2), seed=9)])
    RuleBot("strong").rollout(direct)
    assert result["score"] == direct.scores()[0]
    assert result["moves"] == direct.get_state(0).num_moves_played

    environment.reset(seed=9)
    mixed = play_env_episode(environment, [RuleBot("weak"), RandomAgent(1)])
    assert mixed["moves"] > 0
    environment.reset(seed=9)
    assert EnvPolicy(RuleBot("weak"))(environment) in environment.unwrapped.game.legal_moves()
