"""Agents and blueprints.

    Agent, Blueprint   the protocols (lbs_pz.agents.base explains the contract and shapes)
    load_blueprint     one spec names any blueprint: NAME | sb3:PATH | lstm:PATH |
                       rllib:DIR | py:MODULE_OR_FILE.py:CLASS | hle:MODULE_OR_FILE.py:CLASS
                       (an agent written against HLE's rl_env) (lbs_pz.agents.spec)
    BLUEPRINT_KINDS, BlueprintKind, register_blueprint_kind   the kinds of spec, in one
                       registry (its loader, whether it reads a file or runs code)
    blueprint_identity {"spec", "fingerprint"} of a blueprint (what checkpoints record)
    as_blueprint       a contract-checked Blueprint for any object with act(state, seat=None)
    PythonBlueprint    the wrapper as_blueprint uses for a user's class
    BlueprintError     a broken blueprint contract or an unloadable spec (a ValueError)
    BlueprintBase      generic batched act / rollout for blueprints written in Python
    ViewAgent          base class for agents that decide from a PlayerView only
    RandomAgent        uniformly random legal moves, reproducible from the public history
    RuleBot            the C rule bots: random, simple, weak, medium, strong
    EnvPolicy, play_env_episode, seat_policy   adapters (PettingZoo env, fixed seat)
    PublicLSTMBlueprint  the paper's public-LSTM Q-network as a blueprint (imports torch
                         on first use; `PublicLSTMBlueprint.load(path)` reads a checkpoint)
    PublicLSTMNet, ARCHITECTURES  that network and its named architecture presets
                         (`PublicLSTMNet.from_preset(name, config)`; torch on first use)
    SB3Blueprint       a saved Stable-Baselines3 / sb3-contrib policy as a blueprint
    RLlibBlueprint     a saved RLlib PPO module as a blueprint (imports Ray's RLlib and
                       torch on first use; `RLlibBlueprint.load(dir)`)

Every Blueprint's `act_batch`, `rollout` and `value` take one `HanabiBatch`.
`lbs_pz.agents.features` builds what the nets read (numpy, no torch): the public/private
split of the canonical observation, every seat's input, the exact card features and the
convention bots' reading of a position.
"""

from lbs_pz.agents.base import Agent, Blueprint, BlueprintBase, BlueprintError, ViewAgent
from lbs_pz.agents.random_agent import RandomAgent
from lbs_pz.agents.rule_bots import BOT_NAMES, STRONGEST, RuleBot
from lbs_pz.agents.adapters import EnvPolicy, play_env_episode, seat_policy
from lbs_pz.agents.python_blueprint import PythonBlueprint, as_blueprint
from lbs_pz.agents.spec import (BLUEPRINT_KINDS, BlueprintKind, blueprint_identity,
                                load_blueprint, register_blueprint_kind, spec_forms, spec_help)

__all__ = [
    "Agent", "Blueprint", "BlueprintBase", "BlueprintError", "ViewAgent", "RandomAgent",
    "RuleBot", "BOT_NAMES", "STRONGEST", "EnvPolicy", "play_env_episode", "seat_policy",
    "PythonBlueprint", "as_blueprint", "load_blueprint", "blueprint_identity", "BLUEPRINT_KINDS",
    "BlueprintKind", "register_blueprint_kind", "spec_forms", "spec_help",
    "PublicLSTMBlueprint", "PublicLSTMNet", "ARCHITECTURES", "SB3Blueprint", "RLlibBlueprint",
]


def __getattr__(name):
    # Deliberately lazy (allow-listed in tests/repo/test_layers.py): these modules import torch
    # (and SB3, or RLlib) at their top, and `import lbs_pz.agents` must work without them.
    if name in ("PublicLSTMBlueprint", "PublicLSTMNet", "ARCHITECTURES"):
        from lbs_pz.agents import public_lstm
        return getattr(public_lstm, name)
    if name == "SB3Blueprint":
        from lbs_pz.agents.sb3_policy import SB3Blueprint
        return SB3Blueprint
    if name == "RLlibBlueprint":
        from lbs_pz.agents.rllib_policy import RLlibBlueprint
        return RLlibBlueprint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
