"""Blueprint specs: one string names any blueprint, on the command line and in Python.

    NAME                        a C rule bot: random, simple, weak, medium, strong
    sb3:PATH                    a Stable-Baselines3 / sb3-contrib policy zip (`model.save`),
                                read by the safe loader of `lbs_pz.agents.sb3_policy`
    lstm:PATH_OR_NAME           a public-LSTM checkpoint (`lbs-pz train-blueprint --out`),
                                or a shipped one by name (`lstm:public_lstm_2p`)
    rllib:DIR                   an RLlib PPO module checkpoint folder (examples/rllib_ppo.py
                                --out, `module.save_to_path`, or an Algorithm checkpoint
                                holding one module), read by the safe loader of
                                `lbs_pz.agents.rllib_policy` (the [rllib] extra)
    py:MODULE_OR_FILE.py:CLASS  a user's class with `name` and `act(state, seat=None)`: an
                                importable module (`py:mypkg.bots:MyBot`) or a .py file
                                (`py:examples/my_blueprint.py:HintPlayDiscard`); the class
                                is instantiated without arguments and wrapped in a
                                contract-checking PythonBlueprint
    hle:MODULE_OR_FILE.py:CLASS an agent written against HLE's rl_env (`act(observation)`
                                on HLE's observation dict): `hle:module.Class` or a .py
                                file's class, instantiated with {'players': N}, given the
                                dict HLE would give it (`lbs_pz.agents.hle_blueprint`)

>>> bp = load_blueprint("strong")
>>> bp.spec, blueprint_identity(bp)["spec"]
('strong', 'strong')

Every loaded blueprint carries its canonical `spec`, and `blueprint_identity(bp)` returns
{"spec": str, "fingerprint": str}: the fingerprint is the sha256 of the weights file
(sb3:, lstm:), of the module's class, model config and weights (rllib:), of the .py
source file (py:, hle:), or of the rule bot's name, convention switches and `BOTS_VERSION`
(`RuleBot.fingerprint`; a change of a bot's moves bumps the version, and the shipped
belief and value must then be retrained or re-stamped); for a blueprint built in memory,
of its weights (a net) or of its class's source file. Belief and value checkpoints
record this identity (`lbs_pz.models.checkpoint`), so that one trained for another
blueprint is refused. A spec that cannot be loaded (a missing file, a missing class, an
object that is not a blueprint, an unknown name) is a `BlueprintError` (a ValueError)
naming the spec.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import textwrap
from typing import Any, Callable, Dict, Optional

from lbs_pz.agents.base import Blueprint, BlueprintError, file_sha256
from lbs_pz.agents.hle_blueprint import load_hle_blueprint
from lbs_pz.agents.python_blueprint import (USER_MODULES, PythonBlueprint,
                                            load_python_blueprint)
from lbs_pz.agents.rule_bots import BOT_NAMES, RuleBot


@dataclasses.dataclass(frozen=True)
class BlueprintKind:
    """One kind of blueprint spec, PREFIX:REST. Every surface that lists or vets specs
    reads `BLUEPRINT_KINDS`: `load_blueprint`, `spec_help` (the CLI's help), and the
    page, which refuses a kind that `reads_file` (unless a shipped model's name) or
    `runs_code` unless its server allows it."""
    prefix: str                     # "sb3"
    form: str                       # how the help writes a spec of it, "sb3:PATH"
    help: str                       # what it names, one line
    load: Callable[[str], Any]      # REST -> the blueprint (BlueprintError, ValueError, OSError)
    reads_file: bool = False        # REST names a file or a folder on this machine
    runs_code: bool = False         # loading it runs code that the spec names


BLUEPRINT_KINDS: Dict[str, BlueprintKind] = {}


def register_blueprint_kind(kind: BlueprintKind) -> BlueprintKind:
    """Add a kind of spec (its prefix lower-case, new, not a rule bot's name); returns it."""
    prefix = kind.prefix
    if not (isinstance(prefix, str) and prefix.isidentifier() and prefix == prefix.lower()):
        raise ValueError(f"a blueprint kind's prefix is a lower-case identifier, got {prefix!r}")
    if prefix in BLUEPRINT_KINDS or prefix in BOT_NAMES:
        raise ValueError(f"blueprint kind {prefix!r} exists already")
    BLUEPRINT_KINDS[prefix] = kind
    return kind


# Deliberately lazy (allow-listed in tests/repo/test_layers.py): these modules import torch (and
# SB3, or Ray's RLlib) at their top; a rule-bot or py: spec needs none.
def _load_sb3(path: str):
    from lbs_pz.agents.sb3_policy import SB3Blueprint
    return SB3Blueprint.load(path)


def _load_lstm(path: str):
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    return PublicLSTMBlueprint.load(path)


def _load_rllib(path: str):
    from lbs_pz.agents.rllib_policy import RLlibBlueprint
    return RLlibBlueprint.load(path)


for _kind in (
        BlueprintKind("sb3", "sb3:PATH", "a saved Stable-Baselines3 / sb3-contrib policy (.zip)",
                      _load_sb3, reads_file=True),
        BlueprintKind("lstm", "lstm:PATH", "a public-LSTM checkpoint (lbs-pz train-blueprint), "
                      "or a shipped one by name (lstm:public_lstm_2p)", _load_lstm,
                      reads_file=True),
        BlueprintKind("rllib", "rllib:DIR", "a saved RLlib PPO module (examples/rllib_ppo.py "
                      "--out DIR)", _load_rllib, reads_file=True),
        BlueprintKind("py", "py:MODULE_OR_FILE.py:CLASS", "your own class: `name` and "
                      "`act(state, seat=None)` reading state.view(seat) are enough (e.g. "
                      "py:my_bot.py:MyBot or py:my_package.bots:MyBot); the library batches it",
                      lambda rest: load_python_blueprint("py:" + rest), runs_code=True),
        BlueprintKind("hle", "hle:MODULE_OR_FILE.py:CLASS", "an agent written against HLE's "
                      "rl_env (act(observation) on its observation dict, e.g. "
                      "hle:hanabi_learning_environment.agents.simple_agent.SimpleAgent or "
                      "hle:my_agent.py:MyAgent), instantiated with {'players': N}",
                      lambda rest: load_hle_blueprint("hle:" + rest), runs_code=True)):
    register_blueprint_kind(_kind)


def spec_forms() -> str:
    """The forms of a spec in one line: "NAME | sb3:PATH | ..."."""
    return " | ".join(["NAME"] + [k.form for k in BLUEPRINT_KINDS.values()])


def spec_help() -> str:
    """Every form of a spec, one per line, with what it names (the CLI's spec list)."""
    width = max(len(k.form) for k in BLUEPRINT_KINDS.values()) + 2
    rows = [("NAME", f"a C rule bot: {', '.join(BOT_NAMES)}")] + \
        [(k.form, k.help) for k in BLUEPRINT_KINDS.values()]
    return "\n".join(textwrap.fill(text, 88, initial_indent=f"  {form:<{width}}",
                                   subsequent_indent=" " * (width + 2))
                     for form, text in rows)


def load_blueprint(spec: str) -> Blueprint:
    """The blueprint a spec names (module docstring), with `.spec` set to its canonical
    form. BlueprintError (ValueError) naming the spec when it cannot be loaded."""
    if not isinstance(spec, str) or not spec.strip():
        raise BlueprintError(f"a blueprint spec is a non-empty string ({spec_forms()}), "
                             f"got {spec!r}")
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    if not sep:
        name = spec.lower()
        if name not in BOT_NAMES:
            raise BlueprintError(f"unknown blueprint {spec!r}: a spec is {spec_forms()} "
                                 f"(NAME: {', '.join(BOT_NAMES)})")
        bot = RuleBot(name)
        bot.spec = name
        return bot
    kind = BLUEPRINT_KINDS.get(prefix.lower())
    if kind is None:
        raise BlueprintError(f"unknown blueprint spec prefix {prefix.lower() + ':'!r} in "
                             f"{spec!r}: a spec is {spec_forms()}")
    if not rest:
        raise BlueprintError(f"blueprint spec {spec!r} names no file: a spec is "
                             f"{kind.form}")
    try:
        return kind.load(rest)
    except BlueprintError:
        raise
    except (ValueError, OSError, ImportError) as err:     # CheckpointError is a ValueError
        raise BlueprintError(f"blueprint spec {spec!r}: {err}") from None


# --- identities ----------------------------------------------------------------------------------

def _weights_fingerprint(module) -> str:
    """sha256 of a torch module's state_dict (names, dtypes, shapes and bytes)."""
    digest = hashlib.sha256()
    for key, value in sorted(module.state_dict().items()):
        t = value.detach().cpu().contiguous()
        digest.update(f"{key}:{t.dtype}:{tuple(t.shape)}".encode())
        digest.update(t.numpy().tobytes())
    return digest.hexdigest()


def _class_identity(obj: Any) -> Dict[str, Optional[str]]:
    cls = type(obj)
    try:
        source = inspect.getsourcefile(cls)
    except (TypeError, OSError):       # a builtin, or a class made where no file is (python -c)
        source = None
    module = cls.__module__
    where = module if module != "__main__" and not module.startswith(USER_MODULES) else source
    return {"spec": f"py:{where or module}:{cls.__qualname__}",
            "fingerprint": file_sha256(source) if source and os.path.isfile(source) else None}


def blueprint_identity(bp: Any) -> Dict[str, Optional[str]]:
    """{"spec": str, "fingerprint": str} of a blueprint (module docstring): what a belief
    or value checkpoint records as the blueprint it was trained for."""
    if isinstance(bp, str):
        bp = load_blueprint(bp)
    spec, fingerprint = getattr(bp, "spec", None), getattr(bp, "fingerprint", None)
    if isinstance(bp, RuleBot):
        return {"spec": spec or bp.name,
                "fingerprint": fingerprint or bp.fingerprint}
    if spec is not None and fingerprint is not None:
        return {"spec": spec, "fingerprint": fingerprint}
    net = getattr(bp, "net", None) if hasattr(bp, "net") else getattr(bp, "policy", None)
    if net is not None and callable(getattr(net, "state_dict", None)):
        kind = "lstm" if hasattr(bp, "net") else "sb3"
        return {"spec": spec or f"{kind}:<in memory: {getattr(bp, 'name', type(bp).__name__)}>",
                "fingerprint": fingerprint or _weights_fingerprint(net)}
    inner = bp.obj if isinstance(bp, PythonBlueprint) else bp
    if not callable(getattr(inner, "act", None)):
        raise BlueprintError(f"{type(bp).__name__} object is not a blueprint (no act method)")
    found = _class_identity(inner)
    return {"spec": spec or found["spec"], "fingerprint": fingerprint or found["fingerprint"]}
