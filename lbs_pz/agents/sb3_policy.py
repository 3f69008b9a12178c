"""`SB3Blueprint`: a Stable-Baselines3 / sb3-contrib policy as a search-ready Blueprint.

Works with policies trained on this project's envs (`lbs_pz.envs.self_play.HanabiSelfPlayEnv`,
`lbs_pz.wrappers.vec_env.HanabiVecEnv`, or anything else whose observation is the canonical
vector of the player to act and whose action is the HLE move id):

    sb3_contrib.MaskablePPO, stable_baselines3.PPO   actor-critic MLP policies
    stable_baselines3.DQN                             Q-network MLP policies

    from lbs_pz.agents.sb3_policy import SB3Blueprint
    from lbs_pz.search.agents import LBSAgent
    from lbs_pz.search.beliefs import GroundedBelief

    blueprint = SB3Blueprint.load("results/maskable_ppo_2p/model.zip")  # or SB3Blueprint(model)
    lbs = LBSAgent(blueprint, GroundedBelief(), rollouts=64, depth=1)  # bootstraps with the critic
    move = lbs.act(state)                                              # state: a HanabiState

or `lbs_pz.agents.load_blueprint("sb3:results/maskable_ppo_2p/model.zip")`.

Acting. The blueprint is greedy and deterministic: the move is the arg-max over the *legal*
moves of the action logits (PPO, MaskablePPO) or Q-values (DQN); illegal moves are always
masked, also for PPO and DQN policies that were trained without masks (ties go to the
lowest move id). The input is `HanabiState.encode(seat)` of the seat to act, which holds
only what that seat may see, so the move never depends on the seat's own hidden cards or
the deck. The policy is a feed-forward network of the current observation: no private
memory, `has_private_memory = False`. `act_batch`, `rollout` and `value` take a
`HanabiBatch`; they encode all running worlds into one (N, encoding_size) array and run ONE
batched forward pass per step.

Value. `value(states)` is the expected final score of each world in score points:
`state.score + critic(observation of the player to move)`, where the critic is the
state value V(s) of PPO / MaskablePPO or the largest legal Q(s, a) of DQN. The env's
reward is the change of score (losing the last life costs the whole score), so the critic
estimates the future score change. It was trained on the *discounted* return
sum_t gamma^t r_t (gamma is read from the saved model, 0.99 by default), so points that
come t moves later are weighted gamma^t: with gamma = 0.99 a point 50 moves ahead counts
about 0.6. The estimate is therefore biased low early in the game; it is the quantity the
policy was trained on, and when LBS bootstraps every candidate move at the same depth the
bias is shared between them. The PPO critic also values the stochastic training policy,
not the greedy one played here. `self.gamma` exposes the discount.

Loading (safety). SB3's own `load` runs `cloudpickle.loads` on entries of the zip's `data`
JSON (policy class, spaces, schedules, ...), which can execute arbitrary code from the file.
This adapter never unpickles anything: it opens the zip with `zipfile`, parses `data` with
`json`, reads only plain JSON fields (spaces' `_shape` / `n`, `gamma`, plain
`policy_kwargs`), identifies the policy class and the activation function by
*disassembling* their pickles with `pickletools.genops` (which executes nothing) and
checking the names against a short allow-list of SB3 / torch classes, rebuilds the policy
from its SB3 class and loads `policy.pth` with `torch.load(..., weights_only=True)` and a
strict `load_state_dict`. Policies with custom (pickled) feature extractors or other
pickled policy arguments are refused with a clear error; load such a model with SB3
yourself (if you trust the file) and pass the model object instead. A missing, truncated
or foreign file raises `lbs_pz.models.checkpoint.CheckpointError` (a ValueError).

Sizes are checked before anything is allocated or decompressed (CheckpointError
otherwise): the `data` entry may hold at most MAX_DATA_BYTES and `policy.pth` at most
MAX_WEIGHTS_BYTES once uncompressed, an entry above RATIO_CHECK_BYTES may not expand more
than MAX_COMPRESSION_RATIO times, the observation and action spaces at most MAX_OBS_SIZE
and MAX_ACTIONS, and the network that `net_arch` describes at most MAX_PARAMETERS
parameters (counted from the JSON before the policy is built). Weights that are NaN or
infinite are refused at load.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickletools
import re
import zipfile
import zlib
from typing import Any, List, Optional, Tuple, Union

import numpy as np
from gymnasium import spaces

from lbs_pz.agents.base import VectorPolicyBase, file_sha256
from lbs_pz.checks import is_int
from lbs_pz.models.checkpoint import CheckpointError, check_finite
from lbs_pz.optional import require, require_torch

torch = require_torch("SB3Blueprint")
_policies = require("stable_baselines3.common.policies", "SB3Blueprint")
ActorCriticPolicy, BaseModel, BasePolicy = (_policies.ActorCriticPolicy, _policies.BaseModel,
                                            _policies.BasePolicy)
DQNPolicy = require("stable_baselines3.dqn.policies", "SB3Blueprint").DQNPolicy

# Policy classes the safe loader rebuilds: (module, name) as pickled -> kind.
_POLICY_CLASSES = {
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): "actor-critic",
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): "actor-critic",
    ("stable_baselines3.dqn.policies", "DQNPolicy"): "dqn",
}
# Activation functions allowed in policy_kwargs (torch.nn classes).
_ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Softplus",
                "Mish", "SELU", "CELU", "Hardtanh")
# policy_kwargs that only matter for training: dropped by the safe loader.
_TRAINING_ONLY = ("optimizer_class", "optimizer_kwargs")
_FLATTEN = ("stable_baselines3.common.torch_layers", "FlattenExtractor")

# Size caps of the safe loader (module docstring); an MLP policy for any Hanabi variant
# is far below every one of them (2p MaskablePPO with net_arch [256, 256]: ~0.3M
# parameters, a 'data' entry of ~20 KB).
MAX_DATA_BYTES = 16 << 20            # uncompressed 'data' JSON
MAX_WEIGHTS_BYTES = 512 << 20        # uncompressed policy.pth
MAX_COMPRESSION_RATIO = 200          # uncompressed / compressed, for entries above...
RATIO_CHECK_BYTES = 4 << 20          # ... this many uncompressed bytes
MAX_PARAMETERS = 1 << 26             # parameters of the rebuilt policy (256 MiB of float32)
MAX_OBS_SIZE = 1 << 16               # observation vector length
MAX_ACTIONS = 1 << 12                # move ids
MAX_LAYERS = 64                      # hidden layers per network


class _NoOptimizer:
    """Stands in for the optimizer SB3 policies build in __init__: inference needs none,
    and building a torch optimizer the first time costs seconds of imports."""

    def __init__(self, params, lr: float = 0.0, **kwargs):
        pass


def _pickled_globals(entry: Any) -> Optional[List[Tuple[str, str]]]:
    """Every (module, name) that a cloudpickled SB3 entry refers to, found by
    disassembling the pickle (nothing is executed); None if it is not a readable pickle."""
    if not isinstance(entry, dict) or not isinstance(entry.get(":serialized:"), str):
        return None
    try:
        raw = base64.b64decode(entry[":serialized:"].encode(), validate=True)
        strings: List[str] = []
        found: List[Tuple[str, str]] = []
        for op, arg, _ in pickletools.genops(raw):
            if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
                strings.append(str(arg))        # a str already (these opcodes push one)
            elif op.name == "STACK_GLOBAL":
                found.append((strings[-2], strings[-1]) if len(strings) >= 2 else ("?", "?"))
            elif op.name in ("GLOBAL", "INST"):
                module, _, name = str(arg).partition(" ")
                found.append((module, name))
            elif op.name in ("REDUCE", "BUILD", "OBJ", "NEWOBJ", "NEWOBJ_EX"):
                found.append(("<call>", op.name))   # calls something: never a plain reference
        return found
    except Exception:  # not base64, not a pickle
        return None


def _describe(ref: Tuple[str, str]) -> str:
    return f"a {ref[1]} call" if ref[0] == "<call>" else ".".join(ref)


def _class_ref(value: Any) -> Optional[Tuple[str, str]]:
    """("torch.nn.modules.activation", "Tanh") from SB3's str() of a class,
    "<class 'torch.nn.modules.activation.Tanh'>"; None for anything else."""
    match = re.fullmatch(r"<class '([\w.]+)\.(\w+)'>", value) if isinstance(value, str) else None
    return (match.group(1), match.group(2)) if match else None


def _allowed_kwarg_ref(ref: Tuple[str, str]) -> bool:
    module, name = ref
    return ((module.startswith("torch.nn") and name in _ACTIVATIONS) or ref == _FLATTEN
            or (module.startswith("torch.optim") and name[:1].isupper()))


def _is_pickled(value: Any) -> bool:
    return isinstance(value, dict) and ":serialized:" in value


def _read_zip(path: str, device: str):
    """(data dict, policy state_dict) from an SB3 model zip, without unpickling."""
    if not os.path.isfile(path):
        raise CheckpointError(f"SB3 model file {path!r} does not exist")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise CheckpointError(
                    f"{path!r} is not a Stable-Baselines3 model zip (it lacks "
                    f"{'data' if 'data' not in names else 'policy.pth'}); save models with "
                    f"model.save(path)")
            raw_data = _read_entry(archive, "data", MAX_DATA_BYTES, path)
            raw_policy = _read_entry(archive, "policy.pth", MAX_WEIGHTS_BYTES, path)
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, zipfile.LargeZipFile, zlib.error) as err:
        raise CheckpointError(f"{path!r} is not a readable Stable-Baselines3 model zip "
                              f"(truncated or not a zip file): {err}") from None
    try:
        data = json.loads(raw_data.decode())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path!r}: the 'data' entry is not SB3's JSON ({err})") from None
    try:
        state_dict = torch.load(io.BytesIO(raw_policy), map_location=device, weights_only=True)
    except Exception as err:
        reason = " ".join(str(err).split())[:160]
        raise CheckpointError(f"{path!r}: policy.pth is not a readable weights file "
                              f"({type(err).__name__}: {reason!r}; loaded with weights_only="
                              f"True, which never runs code from a file)") from None
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"{path!r}: policy.pth does not hold a state dict")
    check_finite(state_dict, f"{path!r}: policy.pth")
    return data, state_dict


def _read_entry(archive: zipfile.ZipFile, name: str, cap: int, path: str) -> bytes:
    """The bytes of one zip entry, its sizes checked against `cap` and the compression
    ratio cap from the zip's directory before decompressing, and the read bounded."""
    info = archive.getinfo(name)
    if info.file_size > cap:
        raise CheckpointError(f"{path!r}: the {name!r} entry unpacks to {info.file_size:,} "
                              f"bytes, above the loader's cap of {cap:,} "
                              f"(lbs_pz.agents.sb3_policy)")
    if info.file_size > RATIO_CHECK_BYTES and \
            info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
        raise CheckpointError(f"{path!r}: the {name!r} entry expands {info.compress_size:,} "
                              f"-> {info.file_size:,} bytes, more than "
                              f"{MAX_COMPRESSION_RATIO}x; refusing a zip bomb")
    with archive.open(info) as entry:
        raw = entry.read(cap + 1)
    if len(raw) > cap:
        raise CheckpointError(f"{path!r}: the {name!r} entry holds more than {cap:,} bytes")
    return raw


def _plain_int(value: Any) -> Optional[int]:
    """An int stored by SB3 as a JSON number or as its str() ("20"), else None."""
    if is_int(value):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _space_from_json(entry: Any, what: str, path: str):
    """A gymnasium Box / Discrete rebuilt from the plain fields SB3 writes next to the
    pickled space."""
    if not isinstance(entry, dict):
        raise CheckpointError(f"{path!r}: no {what} in the model's data")
    kind = str(entry.get(":type:", ""))
    n, start = _plain_int(entry.get("n")), _plain_int(entry.get("start", 0))
    if "Discrete" in kind and n is not None and n > 0:
        if n > MAX_ACTIONS:
            raise CheckpointError(f"{path!r}: the {what} has {n:,} actions, above the "
                                  f"loader's cap of {MAX_ACTIONS:,}")
        if start not in (0, None):
            raise CheckpointError(f"{path!r}: the action space starts at {start}, "
                                  f"not at move id 0")
        return spaces.Discrete(n)
    shape = entry.get("_shape")
    if "Box" in kind and isinstance(shape, list) and \
            all(is_int(s) for s in shape):
        if len(shape) != 1 or not 1 <= shape[0] <= MAX_OBS_SIZE:
            raise CheckpointError(f"{path!r}: the {what} has shape {shape}; the adapter "
                                  f"expects a flat vector of 1 to {MAX_OBS_SIZE:,} values")
        return spaces.Box(0.0, 1.0, tuple(shape), np.float32)
    raise CheckpointError(f"{path!r}: unsupported {what} {kind or '?'}; the adapter expects "
                          f"a Box observation (the canonical vector) and Discrete actions")


def _policy_kwargs(raw: Any, path: str) -> dict:
    """Keyword arguments of the policy class from the `policy_kwargs` entry. SB3 stores a
    dict with any class in it (activation_fn, ...) as a whole-dict pickle, next to the
    plain JSON values and the str() of the others; the pickle is only disassembled, to
    check that it refers to nothing beyond the allowed torch / SB3 classes."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path!r}: policy_kwargs is not a dict")
    if _is_pickled(raw):
        refs = _pickled_globals(raw)
        if refs is None or "dict" not in str(raw.get(":type:", "")):
            raise CheckpointError(f"{path!r}: policy_kwargs is an unreadable pickled object")
        bad = sorted({r for r in refs if not _allowed_kwarg_ref(r)})
        if bad:
            raise CheckpointError(
                f"{path!r}: policy_kwargs refer to {', '.join(_describe(r) for r in bad)}, which "
                f"the safe loader does not rebuild (it never unpickles); if you trust the file, "
                f"load it with SB3 yourself and pass the model object")
    kwargs = {}
    for key, value in raw.items():
        if key in (":type:", ":serialized:") or key in _TRAINING_ONLY:
            continue
        ref = _class_ref(value)
        if key == "activation_fn":
            if ref is None or not _allowed_kwarg_ref(ref) or ref[1] not in _ACTIVATIONS:
                raise CheckpointError(f"{path!r}: activation_fn {value!r} is not one of the "
                                      f"torch.nn activations the safe loader allows")
            kwargs[key] = getattr(torch.nn, ref[1])
        elif key == "features_extractor_class":
            if ref != _FLATTEN:
                raise CheckpointError(f"{path!r}: custom features extractor {value!r}; the safe "
                                      f"loader only rebuilds MLP policies on the flat vector")
        elif ref is not None or (isinstance(value, str) and value.startswith("<")):
            raise CheckpointError(f"{path!r}: policy_kwargs[{key!r}] = {value!r} is a Python "
                                  f"object the safe loader does not rebuild; if you trust the "
                                  f"file, load it with SB3 yourself and pass the model object")
        else:
            kwargs[key] = value
    return kwargs


def _layer_sizes(value: Any, what: str, path: str) -> List[int]:
    if not isinstance(value, list) or len(value) > MAX_LAYERS or not all(
            is_int(v) and 1 <= v <= MAX_PARAMETERS
            for v in value):
        raise CheckpointError(f"{path!r}: {what} = {value!r} is not a list of at most "
                              f"{MAX_LAYERS} positive layer sizes")
    return value


def _count_parameters(kind: str, obs_size: int, num_actions: int, kwargs: dict,
                      path: str) -> int:
    """Parameters of the MLP policy that `kwargs["net_arch"]` describes (SB3's defaults
    where it is absent), counted from the JSON alone: nothing is allocated."""
    def mlp(sizes, out):
        total, last = 0, obs_size
        for width in list(sizes) + [out]:
            total += (last + 1) * width
            last = width
        return total

    arch = kwargs.get("net_arch")
    if kind == "dqn":
        arch = [64, 64] if arch is None else _layer_sizes(arch, "net_arch", path)
        return 2 * mlp(arch, num_actions)          # q_net and q_net_target
    if arch is None:
        arch = dict(pi=[64, 64], vf=[64, 64])
    if isinstance(arch, dict):
        if not set(arch) <= {"pi", "vf"}:
            raise CheckpointError(f"{path!r}: net_arch keys {sorted(arch)}; expected pi, vf")
        pi = _layer_sizes(arch.get("pi", []), "net_arch['pi']", path)
        vf = _layer_sizes(arch.get("vf", []), "net_arch['vf']", path)
    else:
        pi = vf = _layer_sizes(arch, "net_arch", path)
    return mlp(pi, num_actions) + mlp(vf, 1)


def _rebuild_policy(path: str, device: str):
    """(policy, gamma, algorithm name) from a zip, by the safe path described above."""
    data, state_dict = _read_zip(path, device)
    refs = _pickled_globals(data.get("policy_class"))
    ref = refs[0] if refs is not None and len(refs) == 1 else None
    if ref not in _POLICY_CLASSES:
        if ref is None and "policy_class" not in data:
            raise CheckpointError(f"{path!r} is not a Stable-Baselines3 model (no policy_class)")
        what = ", ".join(_describe(r) for r in refs) if refs else "unreadable"
        raise CheckpointError(f"{path!r}: policy class ({what}) is not supported; the adapter "
                              f"loads MaskablePPO / PPO (MlpPolicy) and DQN (MlpPolicy)")
    module, name = ref
    if module.startswith("sb3_contrib"):
        cls = require("sb3_contrib.common.maskable.policies",
                      f"{path!r} (a MaskablePPO model)").MaskableActorCriticPolicy
    elif name == "DQNPolicy":
        cls = DQNPolicy
    else:
        cls = ActorCriticPolicy
    observation_space = _space_from_json(data.get("observation_space"), "observation space", path)
    action_space = _space_from_json(data.get("action_space"), "action space", path)
    kwargs = _policy_kwargs(data.get("policy_kwargs"), path)
    kind = _POLICY_CLASSES[ref]
    count = _count_parameters(kind, int(observation_space.shape[0]), int(action_space.n),
                              kwargs, path)
    if count > MAX_PARAMETERS:
        raise CheckpointError(f"{path!r}: net_arch {kwargs.get('net_arch')!r} describes a "
                              f"policy of {count:,} parameters, above the loader's cap of "
                              f"{MAX_PARAMETERS:,} (lbs_pz.agents.sb3_policy.MAX_PARAMETERS)")
    try:
        policy = cls(observation_space, action_space, lambda _: 0.0,
                     optimizer_class=_NoOptimizer, **kwargs)
    except (TypeError, ValueError, AssertionError) as err:
        raise CheckpointError(f"{path!r}: cannot rebuild {name} from policy_kwargs "
                              f"{sorted(kwargs)}: {err}") from None
    try:
        policy.load_state_dict(state_dict, strict=True)
    except (RuntimeError, KeyError, TypeError) as err:
        reason = " ".join(str(err).split())[:240]
        raise CheckpointError(f"{path!r}: policy.pth does not fit a {name} with "
                              f"policy_kwargs {kwargs}: {reason}") from None
    gamma = data.get("gamma", 0.99)
    if not isinstance(gamma, (int, float)):
        gamma = 0.99
    algorithm = "DQN" if name == "DQNPolicy" else ("MaskablePPO" if module.startswith("sb3_contrib")
                                                    else "PPO")
    return policy.to(device), float(gamma), algorithm


def _policy_kind(policy) -> str:
    if "Recurrent" in type(policy).__name__:
        raise TypeError(f"{type(policy).__name__} keeps a recurrent hidden state; SB3Blueprint "
                        f"supports feed-forward policies (MaskablePPO, PPO, DQN)")
    if isinstance(policy, DQNPolicy):
        return "dqn"
    if isinstance(policy, ActorCriticPolicy) or all(
            hasattr(policy, attr) for attr in ("mlp_extractor", "action_net", "value_net",
                                               "pi_features_extractor", "predict_values")):
        return "actor-critic"      # PPO's policy, or sb3-contrib's MaskableActorCriticPolicy
    raise TypeError(f"unsupported SB3 policy {type(policy).__name__}; expected an actor-critic "
                    f"(PPO, MaskablePPO) or DQN policy")


class SB3Blueprint(VectorPolicyBase):
    """A saved or loaded SB3 policy (MaskablePPO, PPO, DQN) as a greedy Blueprint.

    Args:
        model: a path to a zip written by `model.save(path)` (loaded by the safe path of
            the module docstring), an SB3 algorithm object (`MaskablePPO`, `PPO`, `DQN`)
            or its `.policy`.
        device: torch device of the forward passes ("cpu" by default).
        gamma: the discount the critic was trained with; default: the model's (0.99 for a
            bare policy). Only documents `value`, which is not rescaled.
        name: shown in tables (default "sb3-<algorithm>").

    Attributes: deterministic = True, has_private_memory = False, has_value = True;
    `encoding_size` and `num_moves` of the policy's spaces; `gamma`; `algorithm`; `spec`
    and `fingerprint` (the `sb3:` spec and the zip's sha256, set by `load`).

    Shapes: `act_batch` -> int64 (N,), `rollout` -> int32 (N,) moves made,
    `value` -> float32 (N,) expected final scores; inside, observations are float32
    (N, encoding_size) and legal masks bool (N, num_moves).
    """

    deterministic = True
    has_private_memory = False
    has_value = True

    def __init__(self, model: Union[str, "os.PathLike[str]", Any], device: str = "cpu",
                 gamma: Optional[float] = None, name: Optional[str] = None):
        algorithm = None
        if isinstance(model, (str, os.PathLike)):
            policy, saved_gamma, algorithm = _rebuild_policy(os.fspath(model), device)
        elif hasattr(model, "policy") and hasattr(model, "gamma"):    # an SB3 algorithm
            policy, saved_gamma = model.policy, float(model.gamma)
            algorithm = type(model).__name__
        else:
            policy, saved_gamma = model, 0.99
        if not isinstance(policy, BasePolicy):
            raise TypeError(f"model must be a path to an SB3 zip, an SB3 model or its policy, "
                            f"got {type(model).__name__}")
        self.kind = _policy_kind(policy)
        obs_space, act_space = policy.observation_space, policy.action_space
        if not isinstance(act_space, spaces.Discrete) or not isinstance(obs_space, spaces.Box) \
                or len(obs_space.shape) != 1:
            raise ValueError(f"the policy must map a flat Box observation to Discrete moves, "
                             f"got {obs_space} -> {act_space}")
        self.policy = policy.to(device)
        self.policy.set_training_mode(False)
        self.device = torch.device(device)
        self.encoding_size = int(obs_space.shape[0])
        self.num_moves = int(act_space.n)
        self.gamma = float(saved_gamma if gamma is None else gamma)
        if algorithm is None:
            algorithm = ("DQN" if self.kind == "dqn" else
                         "MaskablePPO" if type(policy).__name__.startswith("Maskable") else "PPO")
        self.algorithm = algorithm
        self.name = name or f"sb3-{self.algorithm.lower()}"
        self.spec: Optional[str] = None
        self.fingerprint: Optional[str] = None

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], **kwargs) -> "SB3Blueprint":
        """`SB3Blueprint(path, **kwargs)`: the safe loader of the module docstring, with
        `spec` ("sb3:PATH") and `fingerprint` (the zip's sha256) set."""
        path = os.fspath(path)
        blueprint = cls(path, **kwargs)
        blueprint.spec = f"sb3:{os.path.normpath(path)}"
        blueprint.fingerprint = file_sha256(path)
        return blueprint

    # --- forward passes ----------------------------------------------------------------

    def _check(self, config) -> None:
        if config.encoding_size != self.encoding_size or config.num_moves != self.num_moves:
            raise ValueError(f"{self.name} was trained on observations of size "
                             f"{self.encoding_size} and {self.num_moves} moves; this game has "
                             f"{config.encoding_size} and {config.num_moves} "
                             f"({config.players} players, hand size {config.hand_size})")

    def _scores(self, obs: np.ndarray) -> np.ndarray:
        """Action preferences (N, num_moves) float32: actor logits or Q-values."""
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device)
            policy = self.policy
            if self.kind == "dqn":
                out = policy.q_net(x)
            else:
                features = BaseModel.extract_features(policy, x, policy.pi_features_extractor)
                out = policy.action_net(policy.mlp_extractor.forward_actor(features))
            return out.cpu().numpy()

    def _preferences(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self._scores(obs)

    def _critic(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Future-return estimate per row (N,) float64 (discounted, see the module doc);
        0 where the network's estimate is NaN or infinite (the value is then the score)."""
        if self.kind == "dqn":
            q = np.where(masks, self._scores(obs), -np.inf)
            out = q.max(axis=1).astype(np.float64)
        else:
            with torch.no_grad():
                x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device)
                out = self.policy.predict_values(x).reshape(-1).cpu().numpy().astype(np.float64)
        return np.where(np.isfinite(out), out, 0.0)

    def __repr__(self) -> str:
        return (f"SB3Blueprint({self.algorithm}, {self.encoding_size} -> {self.num_moves}, "
                f"gamma={self.gamma})")


def load_sb3_blueprint(path: Union[str, "os.PathLike[str]"], **kwargs) -> SB3Blueprint:
    """`SB3Blueprint.load(path, **kwargs)`."""
    return SB3Blueprint.load(path, **kwargs)


__all__ = ["SB3Blueprint", "load_sb3_blueprint"]
