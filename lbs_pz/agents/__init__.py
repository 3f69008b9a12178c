"""Agents and blueprints.

    Agent, Blueprint   the protocols (lbs_pz.agents.base explains the contract)
    BlueprintBase      generic batched act / rollout for blueprints written in Python
    ViewAgent          base class for agents that decide from a PlayerView only
    RandomAgent        uniformly random legal moves, reproducible from the public history
    RuleBot            the C rule bots: random, simple, weak, medium, strong
    EnvPolicy, play_env_episode, seat_policy   adapters (PettingZoo env, fixed seat)
    PublicLSTMBlueprint  the paper's public-LSTM Q-network as a blueprint (imports torch
                         on first use; `lbs_pz.train.blueprint.load_blueprint` loads one)
    SB3Blueprint       a saved Stable-Baselines3 / sb3-contrib policy as a blueprint
"""

from lbs_pz.agents.base import Agent, Blueprint, BlueprintBase, ViewAgent
from lbs_pz.agents.random_agent import RandomAgent
from lbs_pz.agents.rule_bots import BOT_NAMES, STRONGEST, RuleBot
from lbs_pz.agents.adapters import EnvPolicy, play_env_episode, seat_policy

__all__ = [
    "Agent", "Blueprint", "BlueprintBase", "ViewAgent", "RandomAgent", "RuleBot",
    "BOT_NAMES", "STRONGEST", "EnvPolicy", "play_env_episode", "seat_policy",
    "PublicLSTMBlueprint", "SB3Blueprint",
]


def __getattr__(name):
    # Torch-backed agents load on first use, so that `import lbs_pz.agents` stays light.
    if name == "PublicLSTMBlueprint":
        from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
        return PublicLSTMBlueprint
    if name == "SB3Blueprint":
        from lbs_pz.agents.sb3_policy import SB3Blueprint
        return SB3Blueprint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
