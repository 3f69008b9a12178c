"""Agents and blueprints.

    Agent, Blueprint   the protocols (lbs_pz.agents.base explains the contract)
    BlueprintBase      generic batched act / rollout for blueprints written in Python
    ViewAgent          base class for agents that decide from a PlayerView only
    RandomAgent        uniformly random legal moves, reproducible from the public history
    RuleBot            the C rule bots: random, simple, weak, medium, strong
    EnvPolicy, play_env_episode, seat_policy   adapters (PettingZoo env, fixed seat)
"""

from lbs_pz.agents.base import Agent, Blueprint, BlueprintBase, ViewAgent
from lbs_pz.agents.random_agent import RandomAgent
from lbs_pz.agents.rule_bots import BOT_NAMES, STRONGEST, RuleBot
from lbs_pz.agents.adapters import EnvPolicy, play_env_episode, seat_policy

__all__ = [
    "Agent", "Blueprint", "BlueprintBase", "ViewAgent", "RandomAgent", "RuleBot",
    "BOT_NAMES", "STRONGEST", "EnvPolicy", "play_env_episode", "seat_policy",
]
