"""Adapters: drive any Agent/Blueprint from a PettingZoo env or a HanabiState seat.

In a PettingZoo env (`lbs_pz.envs.hanabi_v0`, a higher layer: this module only reads the
env object it is given):

    environment = lbs_pz.envs.hanabi_v0.env(players=2)
    environment.reset(seed=5)
    result = play_env_episode(environment, RuleBot("strong"))   # {"score": .., "moves": ..}

For one seat of a game:

>>> from lbs_pz.agents import RuleBot
>>> from lbs_pz.engine import HanabiConfig, HanabiState
>>> state = HanabiState(HanabiConfig(players=2), seed=5)
>>> policy = seat_policy(RuleBot("strong"), state.current_player)
>>> policy(state) in state.legal_moves()
True
"""

from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Sequence, Union

from lbs_pz.agents.base import Agent
from lbs_pz.engine import HanabiState


def seat_policy(agent: Agent, seat: int) -> Callable[[HanabiState], int]:
    """A function state -> move for a fixed seat (returns -1 when it is not its turn or
    the game is over)."""

    def policy(state: HanabiState) -> int:
        if state.is_terminal or state.current_player != seat:
            return -1
        return agent.act(state, seat)

    return policy


class EnvPolicy:
    """Plays an Agent in lbs_pz's PettingZoo AEC env (`lbs_pz/Hanabi-v0`).

    Call it with the env and the agent name whose turn it is; it reads the engine state
    behind the env (`env.unwrapped.game`) and asks the agent to act for that seat, which
    by the Agent contract only uses what the seat may see.
    """

    def __init__(self, agent: Agent):
        self.agent = agent

    def __call__(self, env, agent_name: Optional[str] = None) -> int:
        raw = env.unwrapped
        agent_name = env.agent_selection if agent_name is None else agent_name
        return int(self.agent.act(raw.game, raw.seat(agent_name)))


def play_env_episode(env, agents: Union[Agent, Sequence[Agent], Mapping[str, Agent]]) -> Dict:
    """Play one episode of an already reset lbs_pz AEC env to the end. `agents` is one
    agent for every seat, a list per seat, or a dict per agent name. Returns the final
    score and the move count."""
    names = list(env.possible_agents)
    if isinstance(agents, Mapping):
        table = {n: EnvPolicy(agents[n]) for n in names}
    elif isinstance(agents, Sequence):
        table = {n: EnvPolicy(a) for n, a in zip(names, agents)}
    else:
        table = {n: EnvPolicy(agents) for n in names}
    moves = 0
    for name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(table[name](env, name))
        moves += 1
    game = env.unwrapped.game
    return {"score": game.score, "moves": moves}
