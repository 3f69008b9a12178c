"""The Agent / Blueprint protocols, RandomAgent, RuleBot, the adapters and `lbs-pz eval`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lbs_pz.agents import (
    BOT_NAMES, Agent, Blueprint, BlueprintBase, EnvPolicy, RandomAgent, RuleBot, ViewAgent,
    play_env_episode, seat_policy,
)
from lbs_pz.bench.evaluate import evaluate
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
    worlds = [HanabiState(HanabiConfig(), seed=s) for s in range(3)]
    assert list(Oldest().act_batch(worlds)) == [5, 5, 5]
    Oldest().rollout(worlds)
    assert all(w.is_terminal for w in worlds)
    assert Oldest().value(worlds) is None


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
    again = HanabiState(config, seed=2)
    RandomAgent(seed=4).rollout([again])
    assert again.move_history == moves
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


def test_rule_bot_batched_api_matches_single_calls():
    bot = RuleBot("strong")
    config = HanabiConfig(players=2)
    worlds = [HanabiState(config, seed=s) for s in range(8)]
    acts = bot.act_batch(worlds)
    assert list(acts) == [bot.act(w) for w in worlds]
    clones = [w.clone() for w in worlds]
    scores = bot.rollout_scores(clones, max_moves=-1)
    assert all(c.is_terminal for c in clones)
    batch = HanabiBatch.from_states(worlds)
    assert np.array_equal(bot.rollout_scores(batch), scores)
    assert np.array_equal(bot.act_batch(batch), -np.ones(8, dtype=np.int64))


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
    direct = HanabiState(HanabiConfig(players=2), seed=9)
    RuleBot("strong").rollout([direct])
    assert result["score"] == direct.score
    assert result["moves"] == direct.num_moves_played

    environment.reset(seed=9)
    mixed = play_env_episode(environment, [RuleBot("weak"), RandomAgent(1)])
    assert mixed["moves"] > 0
    environment.reset(seed=9)
    assert EnvPolicy(RuleBot("weak"))(environment) in environment.unwrapped.game.legal_moves()


def test_evaluate_rule_bot_and_python_agent_agree_on_deals():
    config = HanabiConfig(players=2)
    fast = evaluate("medium", config, games=40, seed=5, chunk=16)

    class Slow(BlueprintBase):          # the same bot, driven move by move from Python
        name = "medium-py"

        def act(self, state, seat=None):
            return RuleBot("medium").act(state, seat)

    slow = evaluate(Slow(), config, games=40, seed=5, chunk=16)
    assert fast.histogram == slow.histogram
    assert fast.mean == slow.mean and fast.games == 40
    assert 0 <= fast.perfect_rate <= 1 and 0 <= fast.bomb_rate <= 1
    assert fast.sem > 0 and fast.games_per_s > 0


def test_cli_eval(tmp_path, capsys):
    from lbs_pz.cli import main

    out = tmp_path / "eval.json"
    assert main(["eval", "--bot", "weak", "--games", "50", "--players", "3",
                 "--no-progress", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mean score" in text and "perfect games" in text and "bomb-outs" in text
    data = json.loads(out.read_text())
    assert data["bot"] == "weak" and data["games"] == 50 and data["config"]["players"] == 3
    assert main(["eval", "--games", "5", "--hand-size", "9", "--no-progress"]) == 2
