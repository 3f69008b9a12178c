"""`RLlibBlueprint`: an RLlib PPO module (RLlib's new API stack) as a search-ready Blueprint.

Train one with `examples/rllib_ppo.py` (multi-agent PPO, one policy shared by every seat,
with action masking, on the PettingZoo env through RLlib's `PettingZooEnv`), then name
the folder it saves with the spec `rllib:DIR` in every command:

    python examples/rllib_ppo.py --iterations 50 --out results/rllib_ppo_2p
    lbs-pz eval --blueprint rllib:results/rllib_ppo_2p --games 1000
    lbs-pz compare --blueprint rllib:results/rllib_ppo_2p --methods blueprint,lbs-1

or in Python:

    from lbs_pz.agents.rllib_policy import RLlibBlueprint
    blueprint = RLlibBlueprint.load("results/rllib_ppo_2p")   # or load_blueprint("rllib:...")
    move = blueprint.act(state)                               # state: a HanabiState

What it reads. DIR is an RLModule checkpoint (`module.save_to_path(DIR)`: metadata.json,
class_and_ctor_args.pkl, module_state.pkl), or a checkpoint holding exactly one: an
Algorithm checkpoint (`algo.save_to_path(DIR)`: its learner's module,
learner_group/learner/rl_module/ID) or a MultiRLModule checkpoint (DIR/ID). With several
modules, name one (`rllib:DIR/learner_group/learner/rl_module/shared`). The
module is a PPO module with a discrete action space over the HLE move ids, reading the
canonical observation vector: `MaskedPPOTorchRLModule` below (what the example trains),
RLlib's example `ActionMaskingTorchRLModule` (the same layout: a Dict observation
{"observations", "action_mask"}, rebuilt here as `MaskedPPOTorchRLModule`), or RLlib's
`DefaultPPOTorchRLModule` over a flat Box observation.

Loading (safety). RLlib's own `RLModule.from_checkpoint` unpickles both .pkl files with
cloudpickle, which can run arbitrary code from the folder. This loader does not. Each
file is first parsed with `pickletools.genops`, which builds nothing: it may hold at most
MAX_PICKLE_OPCODES opcodes, only those CPython's pickler writes for plain data (protocols
2 to 5), every length within the file, and every memo index at most the next free entry
(CPython's unpickler sizes its memo by the largest index named, so a 9-byte file could
otherwise make it allocate 16 GiB). Then a restricted unpickler reads it, resolving only
numpy's array, dtype and scalar constructors, each replaced by a function that makes an
array of a numeric dtype (bool, int, uint, float) from bytes in the file, of exactly the
size its shape names, and the latin-1 decoding of protocol-2 pickles; it stands in for
everything else it accepts with inert records: the gymnasium Box / Discrete / Dict spaces
(their sizes are read from the records, and fresh spaces built), numpy's random
generators, and the names of the module and catalog classes, which must be on the short
list above. Any other global in either file is refused. The model config must hold plain
values (no recurrent encoder: the blueprint is feed-forward), the module is first built
on torch's "meta" device and its parameter names, shapes and count (at most
MAX_PARAMETERS) held against the state, which is then loaded strictly; weights that are
NaN, infinite or above `lbs_pz.models.checkpoint.MAX_ABS_WEIGHT` in magnitude (1e6;
trained modules stay within a few tens) are refused, naming the file and the tensor.
Sizes are checked before reading: class_and_ctor_args.pkl at most MAX_CTOR_BYTES,
module_state.pkl at most MAX_STATE_BYTES, observations at most MAX_OBS_SIZE floats and
MAX_ACTIONS moves. A missing, foreign or broken folder raises
`lbs_pz.models.checkpoint.CheckpointError` (a ValueError; `load_blueprint` turns it into
a BlueprintError naming the spec).

Acting. The blueprint is greedy and deterministic: the arg-max of the policy's logits
over the legal moves (ties to the lowest move id), from `HanabiState.encode(seat)` of the
seat to act (what the env observes) and the legal-move mask, so the move never depends
on the seat's own hidden cards or the deck. `act_batch`, `rollout` and `value` take a
`HanabiBatch`, encode all running worlds into one (N, encoding_size) array and run ONE
forward pass per step. No private memory (`has_private_memory = False`). Nothing it is
given is changed, except the worlds `rollout` is asked to play forward.

Value. Where the module has its critic (a learner's module; an inference-only module
from an env runner has none), `value(batch)` is each world's score plus the critic's
estimate from the observation of the player to move: PPO's V(s) of the discounted future
reward (the env's reward is the change of score, so V estimates the future score change,
discounted by the training gamma, recorded as `gamma` when the module was made by
`module_spec`, else 0.99), as `SB3Blueprint.value`.

Identity. `name` ("rllib-ppo"), `spec` ("rllib:DIR") and `fingerprint`: the sha256 of the
module's class, model config and weights (names, dtypes, shapes and bytes), the same for
every copy of one module (the folder itself, or the module inside an Algorithm
checkpoint), so a belief or value trained for it is matched to it.
`game`: the variant the module records (modules made by `module_spec` do), else None.
A game whose observation or move count differs from the module's, or one other than
the recorded variant, is a BlueprintError naming both.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import pickletools
import reprlib
from typing import TYPE_CHECKING, Any, Dict, Literal, Optional, Sequence, Tuple, Union, cast

import numpy as np
from gymnasium import spaces

from lbs_pz.agents.base import BlueprintError, VectorPolicyBase
from lbs_pz.checks import as_bool, is_int, is_real
from lbs_pz.engine import HanabiConfig
from lbs_pz.models.checkpoint import (CheckpointError, build_network, check_finite,
                                      describe_game, game_from_dict, game_to_dict, same_game)
from lbs_pz.optional import require, require_rllib, require_torch

_WHAT = "RLlib modules (rllib: blueprints, examples/rllib_ppo.py)"
require_rllib(_WHAT)
Columns = require("ray.rllib.core.columns", _WHAT).Columns
PPOCatalog = require("ray.rllib.algorithms.ppo.ppo_catalog", _WHAT).PPOCatalog
if TYPE_CHECKING:           # torch's and RLlib's own types for the checker
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule)
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.utils.typing import TensorType
else:                       # at run time, through the gate
    torch = require_torch(_WHAT)
    RLModuleSpec = require("ray.rllib.core.rl_module.rl_module", _WHAT).RLModuleSpec
    DefaultPPOTorchRLModule = require(
        "ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module",
        _WHAT).DefaultPPOTorchRLModule

# The observation keys of the masked module (RLlib's action-masking convention) and the
# one policy every seat shares.
OBSERVATIONS, ACTION_MASK = "observations", "action_mask"
POLICY_ID = "shared"
# The files of an RLModule checkpoint (RLlib's Checkpointable layout).
STATE_FILE = "module_state.pkl"
CTOR_FILE = "class_and_ctor_args.pkl"

# Size caps of the safe loader (module docstring); a 2-player module with two hidden
# layers of 256 is ~0.5M parameters, a class_and_ctor_args.pkl of ~3 KB.
MAX_CTOR_BYTES = 1 << 20
MAX_STATE_BYTES = 512 << 20
MAX_PARAMETERS = 1 << 26
MAX_OBS_SIZE = 1 << 16
MAX_ACTIONS = 1 << 12
MAX_LAYERS = 64
MAX_WIDTH = 1 << 14
# Opcodes in either file: a module's files hold a few hundred (~420 in the
# class_and_ctor_args.pkl of a masked module, ~20 per tensor in module_state.pkl).
MAX_PICKLE_OPCODES = 1 << 16


# --- the module the example trains --------------------------------------------------------

def rllib_spaces(config: HanabiConfig) -> Tuple[spaces.Dict, spaces.Discrete]:
    """(observation space, action space) of the masked module for a game variant: a Dict
    {"observations": Box(0, 1, (encoding_size,)), "action_mask": Box(0, 1, (num_moves,))},
    float32 both, and Discrete(num_moves)."""
    n, e = config.num_moves, config.encoding_size
    return (spaces.Dict({OBSERVATIONS: spaces.Box(0.0, 1.0, (e,), np.float32),
                         ACTION_MASK: spaces.Box(0.0, 1.0, (n,), np.float32)}),
            spaces.Discrete(n))


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module over the "observations" entry of a Dict observation,
    with the logits of the moves that the "action_mask" entry marks 0 set to the lowest
    float (RLlib's `ActionMaskingTorchRLModule` example, with the same layout and
    weights): exploration, inference and training never pick an illegal move.

    Shapes: obs {"observations": float32 (B, encoding_size), "action_mask": (B,
    num_moves), 1 legal / 0 illegal} -> action_dist_inputs float32 (B, num_moves).
    """

    def __init__(self, *, observation_space=None, **kwargs):
        if not isinstance(observation_space, spaces.Dict) or \
                set(observation_space.spaces) != {OBSERVATIONS, ACTION_MASK}:
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with the "
                             f"keys {OBSERVATIONS!r} and {ACTION_MASK!r}, got "
                             f"{observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBSERVATIONS], **kwargs)

    def setup(self) -> None:
        super().setup()           # the networks are built for the observations alone
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: Dict[str, Any]):
        """(mask, batch with obs = the observations alone); the given dict is unchanged."""
        obs = batch[Columns.OBS]
        if isinstance(obs, dict):
            return obs[ACTION_MASK], {**batch, Columns.OBS: obs[OBSERVATIONS]}
        return batch[ACTION_MASK], batch

    @staticmethod
    def _masked(out: Dict[str, Any], mask) -> Dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = torch.where(
            mask > 0, logits, torch.full_like(logits, torch.finfo(logits.dtype).min))
        return out

    def _forward_inference(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: Dict[str, Any],
                       embeddings: Optional[Any] = None) -> TensorType:
        if isinstance(batch[Columns.OBS], dict):
            batch = {**batch, Columns.OBS: batch[Columns.OBS][OBSERVATIONS]}
        return super().compute_values(batch, embeddings)


def model_config(config: HanabiConfig, hidden: Sequence[int] = (256, 256),
                 activation: str = "relu", gamma: float = 0.99) -> Dict[str, Any]:
    """The model config of a masked module for a game variant: an MLP of `hidden` widths
    for the actor and another for the critic (no shared layers), and under "lbs_pz" the
    variant and the training discount, which the loader reads back."""
    return {"fcnet_hiddens": [int(h) for h in hidden], "fcnet_activation": activation,
            "vf_share_layers": False,
            "lbs_pz": {"game": game_to_dict(config), "gamma": float(gamma)}}


def module_spec(config: HanabiConfig, hidden: Sequence[int] = (256, 256),
                activation: str = "relu", gamma: float = 0.99) -> RLModuleSpec:
    """The RLModuleSpec of the masked module for a game variant (`model_config`)."""
    observation_space, action_space = rllib_spaces(config)
    return RLModuleSpec(module_class=MaskedPPOTorchRLModule, observation_space=observation_space,
                        action_space=action_space, catalog_class=PPOCatalog,
                        model_config=model_config(config, hidden, activation, gamma))


# --- reading a checkpoint without running its pickles -------------------------------------

# The opcodes CPython's pickler writes for what a module's two files hold (dicts, lists,
# tuples, sets, strings, bytes, numbers, class references, reduce calls; protocols 2 to 5
# with in-band buffers). Anything else is refused: persistent ids, the extension
# registry, protocol 0/1 text opcodes, out-of-band buffers, LONG4 (an int of any size).
_OPCODES = frozenset((
    "PROTO", "FRAME", "STOP", "MARK", "POP", "POP_MARK",
    "NONE", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT",
    "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "SHORT_BINBYTES", "BINBYTES",
    "BINBYTES8", "BYTEARRAY8",
    "EMPTY_TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "TUPLE", "EMPTY_LIST", "APPEND", "APPENDS",
    "EMPTY_DICT", "SETITEM", "SETITEMS", "EMPTY_SET", "ADDITEMS", "FROZENSET",
    "GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "NEWOBJ", "NEWOBJ_EX",
    "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET"))
# The array types the loader rebuilds (numpy's dtype codes, what torch.from_numpy takes).
_DTYPES = frozenset(("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"))
_MAX_NDIM = 32


def _scan_pickle(data: bytes, path: str) -> None:
    """CheckpointError unless `data` is a pickle that CPython's unpickler may read here: at
    most MAX_PICKLE_OPCODES opcodes, each one of _OPCODES, every frame within the file and
    every memo index at most the next free entry, as the pickler writes them (the
    unpickler sizes its memo by the largest index a BINPUT / LONG_BINPUT names: a 9-byte
    file could make it allocate 16 GiB). `pickletools.genops` only parses, building
    nothing, and checks each length against the bytes left before reading them; a pickle
    it cannot parse raises its ValueError."""
    memo = 0                      # memo entries made so far
    for count, (op, arg, where) in enumerate(pickletools.genops(data), 1):
        pos = cast(int, where)    # always known: the pickle is read from bytes
        if count > MAX_PICKLE_OPCODES:
            raise CheckpointError(f"{path!r} holds more than {MAX_PICKLE_OPCODES:,} pickle "
                                  f"opcodes, above the loader's cap (lbs_pz.agents."
                                  f"rllib_policy.MAX_PICKLE_OPCODES)")
        name = op.name
        if name not in _OPCODES:
            raise CheckpointError(f"{path!r}: pickle opcode {name} at byte {pos}, which the "
                                  f"loader does not read")
        if name == "MEMOIZE":
            memo += 1
        elif name in ("BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET"):
            arg = cast(int, arg)  # the memo index these opcodes carry
            if arg > memo or (arg == memo and name.endswith("GET")):
                raise CheckpointError(f"{path!r}: pickle memo index {arg:,} at byte {pos}, "
                                      f"with {memo:,} entries made before it; refusing a "
                                      f"forged file")
            memo += arg == memo
        elif name == "FRAME" and cast(int, arg) > len(data) - pos - 9:   # its length
            raise CheckpointError(f"{path!r}: a pickle frame of {arg:,} bytes at byte {pos}, "
                                  f"past the end of the file")


class _Record:
    """A pickled object the loader does not rebuild: what it was pickled as, and the
    arguments and state the pickle gave it (read, never run)."""

    pickled_as: Tuple[str, str] = ("", "")
    args: tuple = ()
    state: Any = None

    def __init__(self, *args, **kwargs):
        self.args = args

    def __setstate__(self, state):
        self.state = state

    def field(self, name: str, default: Any = None) -> Any:
        """An entry of the pickled state (a dict, or the dict of a (state, slots) pair)."""
        states = self.state if isinstance(self.state, tuple) else (self.state,)
        state = next((s for s in states if isinstance(s, dict)), {})
        return state.get(name, default)


class _RandomRecord(_Record):
    """Any of numpy's random generators and their constructors, kept as a record."""

    pickled_as = ("numpy.random", "*")


class _Name:
    """The name of a class a pickle refers to (module, qualified name); not callable."""

    def __init__(self, module: str, name: str):
        self.ref = (module, name)


class _NDArrayType:
    """Stands for numpy.ndarray in a pickle: only `_reconstruct` may use it."""


class _DType(_Record):
    """Stands for numpy.dtype in a pickle: its code ("f4") and the state (byte order) the
    pickle gives it; `_as_dtype` makes it a numeric dtype or refuses it."""

    pickled_as = ("numpy", "dtype")


class _PickledArray:
    """The array a pickle makes with numpy's `_reconstruct` and then its state (shape,
    dtype, order, bytes): `array` is built from that state by `_array` alone."""

    array: Optional[np.ndarray] = None

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 5:
            state = state[1:]                         # (version, shape, dtype, fortran, bytes)
        if not isinstance(state, tuple) or len(state) != 4 or \
                not isinstance(state[2], (bool, int)):
            raise pickle.UnpicklingError("an array state other than numpy's")
        shape, dtype, fortran, raw = state
        self.array = _array(raw, dtype, shape, "F" if fortran else "C")


def _as_dtype(value) -> np.dtype:
    """The numeric dtype a pickled numpy.dtype stands for (codes _DTYPES, any byte order)."""
    state = value.state if isinstance(value, _DType) else None
    code = value.args[0] if isinstance(value, _DType) and value.args else None
    if isinstance(code, str) and code in _DTYPES and (state is None or (
            isinstance(state, tuple) and len(state) >= 5 and state[1] in ("<", ">", "|", "=")
            and all(s is None for s in state[2:5]))):
        order: Literal["<", ">", "="] = \
            state[1] if state is not None and state[1] in "<>" else "="
        return np.dtype(code).newbyteorder(order)
    raise pickle.UnpicklingError(f"an array type other than {', '.join(sorted(_DTYPES))}")


def _array(raw, dtype, shape, order: Literal["C", "F"]) -> np.ndarray:
    """A native-order numeric array from the bytes in the file, of exactly the size that
    its shape and dtype make (nothing is allocated before the sizes are checked)."""
    dtype = _as_dtype(dtype)
    if not isinstance(raw, (bytes, bytearray)):
        raise pickle.UnpicklingError("an array whose bytes are not in the file")
    if not isinstance(shape, tuple) or len(shape) > _MAX_NDIM or not all(
            type(n) is int and n >= 0 for n in shape) or order not in ("C", "F"):
        raise pickle.UnpicklingError("an array of a shape other than numpy's")
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise pickle.UnpicklingError(f"an array of shape {shape} and {len(raw):,} bytes")
    array = np.frombuffer(raw, dtype).reshape(shape, order=order)
    return array if dtype.isnative else array.astype(dtype.newbyteorder("="))


def _reconstruct(subtype, shape, typecode):
    """numpy's `_reconstruct` for the empty array a pickled array starts as (its bytes
    come with its state, `_PickledArray`), and nothing else."""
    if subtype is not _NDArrayType or shape != (0,):
        raise pickle.UnpicklingError("an array pickled other than numpy does")
    return _PickledArray()


def _frombuffer(buf, dtype, shape, order):
    """numpy's `_frombuffer` (protocol 5) through `_array`."""
    return _array(buf, dtype, shape, order)


def _scalar(dtype, raw=None):
    """numpy's `scalar` for a numeric type and its bytes."""
    dtype = _as_dtype(dtype)
    if not isinstance(raw, bytes) or len(raw) != dtype.itemsize:
        raise pickle.UnpicklingError("a scalar whose bytes do not fit its type")
    return np.frombuffer(raw, dtype)[0]


def _latin1(text, encoding="latin1"):
    """`_codecs.encode` as protocol-2 pickles use it for bytes (latin-1 text only)."""
    if not isinstance(text, str) or encoding != "latin1":
        raise pickle.UnpicklingError("an encoding call other than pickle's own")
    return text.encode("latin1")


_SPACES = {("gymnasium.spaces.box", "Box"), ("gymnasium.spaces.discrete", "Discrete"),
           ("gymnasium.spaces.dict", "Dict")}
_NUMPY = {"dtype": _DType, "_reconstruct": _reconstruct, "_frombuffer": _frombuffer,
          "scalar": _scalar, "ndarray": _NDArrayType}
_NUMPY_MODULES = ("numpy", "numpy.core.multiarray", "numpy._core.multiarray",
                  "numpy.core.numeric", "numpy._core.numeric")
# Module classes the loader rebuilds: (module, name) as pickled -> masked observation?
MODULE_CLASSES = {
    ("lbs_pz.agents.rllib_policy", "MaskedPPOTorchRLModule"): True,
    ("ray.rllib.examples.rl_modules.classes.action_masking_rlm",
     "ActionMaskingTorchRLModule"): True,
    ("ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module",
     "DefaultPPOTorchRLModule"): False,
    ("ray.rllib.algorithms.ppo.torch.ppo_torch_rl_module", "PPOTorchRLModule"): False,
}
_CATALOGS = {("ray.rllib.algorithms.ppo.ppo_catalog", "PPOCatalog")}


class _SafeUnpickler(pickle.Unpickler):
    """The restricted unpickler of the module docstring (run on a file `_scan_pickle`
    passed)."""

    def __init__(self, file):
        super().__init__(file)
        self._records: Dict[Tuple[str, str], type] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module in _NUMPY_MODULES and name in _NUMPY:
            return _NUMPY[name]
        if module == "collections" and name == "OrderedDict":
            return dict
        if module == "_codecs" and name == "encode":
            return _latin1
        if (module, name) in _SPACES:
            key = (module, name)
            if key not in self._records:
                self._records[key] = type(name, (_Record,), {"pickled_as": key})
            return self._records[key]
        if module.startswith("numpy.random"):
            return _RandomRecord
        if (module, name) in MODULE_CLASSES or (module, name) in _CATALOGS:
            return _Name(module, name)
        raise pickle.UnpicklingError(f"it refers to {module}.{name}, which the loader does "
                                     f"not read")


def _read_pickle(path: str, cap: int) -> Any:
    try:
        size = os.path.getsize(path)
        if size > cap:
            raise CheckpointError(f"{path!r} holds {size:,} bytes, above the loader's cap of "
                                  f"{cap:,} (lbs_pz.agents.rllib_policy)")
        with open(path, "rb") as fh:
            data = fh.read(size + 1)
        if len(data) > size:
            raise CheckpointError(f"{path!r} grew while it was read; load it again once it "
                                  f"is written")
        _scan_pickle(data, path)
        return _SafeUnpickler(io.BytesIO(data)).load()
    except CheckpointError:
        raise
    except OSError as err:
        raise CheckpointError(f"cannot read {path!r}: {err.strerror or err}") from None
    except Exception as err:     # noqa: BLE001 - any failure of a foreign pickle is one error
        reason = " ".join(str(err).split())[:200]
        raise CheckpointError(f"{path!r} is not an RLlib module file this loader reads: "
                              f"{type(err).__name__}: {reason}") from None


def _is_module_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, STATE_FILE)) and \
        os.path.isfile(os.path.join(path, CTOR_FILE))


def find_module_dir(path: str) -> str:
    """The RLModule checkpoint folder `path` names: itself, or the one module below it in
    an Algorithm checkpoint (learner_group/learner/rl_module/ID) or a MultiRLModule
    checkpoint (ID/, or rl_module/ID/). CheckpointError if there is none, or several."""
    if not os.path.exists(path):
        raise CheckpointError(f"{path!r} does not exist")
    if not os.path.isdir(path):
        raise CheckpointError(f"{path!r} is a file; an RLlib module checkpoint is a folder "
                              f"(`module.save_to_path(DIR)`)")
    for parent in (os.path.join(path, "learner_group", "learner", "rl_module"),
                   os.path.join(path, "rl_module"), path):
        # a Checkpointable's own folder (with its class file) holds its components
        if not os.path.isfile(os.path.join(parent, CTOR_FILE)):
            continue
        found = sorted(d for d in os.listdir(parent)
                       if _is_module_dir(os.path.join(parent, d)))
        if len(found) == 1:
            return os.path.join(parent, found[0])
        if found:
            raise CheckpointError(f"{path!r} holds {len(found)} modules ({', '.join(found)}); "
                                  f"name one: rllib:{os.path.join(parent, found[0])}")
    if _is_module_dir(path):
        return path
    if os.path.isfile(os.path.join(path, "module_state.msgpack")):
        raise CheckpointError(f"{path!r} holds a msgpack module state; the loader reads "
                              f"{STATE_FILE} (save without use_msgpack)")
    raise CheckpointError(f"{path!r} is not an RLlib module checkpoint: no {STATE_FILE} and "
                          f"{CTOR_FILE} in it or in one module below it (save one with "
                          f"`module.save_to_path(DIR)` or `algo.save_to_path(DIR)`, or train "
                          f"one with examples/rllib_ppo.py)")


def _space_size(record, key: str, where: str) -> int:
    """The length of a pickled Box (key "_shape") or the size of a Discrete ("n")."""
    kind = getattr(record, "pickled_as", ("", ""))[1]
    if key == "_shape" and kind == "Box":
        shape = record.field("_shape")
        if isinstance(shape, tuple) and len(shape) == 1:
            value, cap = shape[0], MAX_OBS_SIZE
        else:
            raise CheckpointError(f"{where}: the module reads a Box of shape "
                                  f"{reprlib.repr(shape)}; the blueprint reads a flat "
                                  f"observation vector")
    elif key == "n" and kind == "Discrete":
        value, cap, start = record.field("n"), MAX_ACTIONS, record.field("start")
        if start is not None and not (isinstance(start, (np.integer, int)) and start == 0):
            raise CheckpointError(f"{where}: a Discrete action space that does not start at 0")
    else:
        raise CheckpointError(f"{where}: expected a {'Box' if key == '_shape' else 'Discrete'} "
                              f"space, found {kind or type(record).__name__}")
    if is_int(value) and 1 <= int(value) <= cap:
        return int(value)
    raise CheckpointError(f"{where}: a space of size {reprlib.repr(value)} (1 to {cap:,} "
                          f"allowed)")


def _plain(value, where: str, depth: int = 0):
    """`value` if it is a plain config value (None, bool, int, float, str, or lists and
    str-keyed dicts of them); CheckpointError otherwise."""
    if depth > 8:
        raise CheckpointError(f"{where}: nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_LAYERS:
            raise CheckpointError(f"{where}: a list of {len(value)} entries (at most "
                                  f"{MAX_LAYERS})")
        return [_plain(v, where, depth + 1) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v, f"{where}[{k!r}]", depth + 1) for k, v in value.items()}
    raise CheckpointError(f"{where}: {type(value).__name__} is not a plain config value")


def _model_config(raw, where: str) -> Dict[str, Any]:
    config = _plain(raw if raw is not None else {}, f"{where}: model_config")
    if not isinstance(config, dict):
        raise CheckpointError(f"{where}: model_config is not a dict")
    if config.get("use_lstm") or config.get("use_attention"):
        raise CheckpointError(f"{where}: a recurrent module (use_lstm / use_attention); the "
                              f"blueprint runs feed-forward modules")
    for key in ("fcnet_hiddens", "head_fcnet_hiddens"):
        widths = config.get(key) or []
        if not isinstance(widths, list) or not all(
                is_int(w) and 1 <= w <= MAX_WIDTH
                for w in widths):
            raise CheckpointError(f"{where}: {key} {widths!r} (widths 1 to {MAX_WIDTH:,})")
    return config


def read_module_checkpoint(path: str) -> Dict[str, Any]:
    """What an RLModule checkpoint holds, read without running its pickles (module
    docstring): {"path", "class", "masked", "inference_only", "encoding_size",
    "num_moves", "model_config", "weights" (name -> float tensor)}. CheckpointError for
    anything else."""
    path = find_module_dir(os.fspath(path))
    where = repr(path)
    info = _read_pickle(os.path.join(path, CTOR_FILE), MAX_CTOR_BYTES)
    try:
        cls = info["class"]
        args, kwargs = info["ctor_args_and_kwargs"]
    except (TypeError, KeyError, ValueError, IndexError):
        raise CheckpointError(f"{where}: {CTOR_FILE} is not an RLlib class-and-arguments "
                              f"record") from None
    if not isinstance(cls, _Name) or cls.ref not in MODULE_CLASSES:
        what = ".".join(cls.ref) if isinstance(cls, _Name) else type(cls).__name__
        raise CheckpointError(f"{where}: module class {what} is not supported; the loader "
                              f"rebuilds PPO modules: "
                              + ", ".join(name for _, name in MODULE_CLASSES))
    if args or not isinstance(kwargs, dict):
        raise CheckpointError(f"{where}: the module's constructor arguments are not keywords")
    catalog = kwargs.get("catalog_class")
    if catalog is not None and (not isinstance(catalog, _Name) or catalog.ref not in _CATALOGS):
        raise CheckpointError(f"{where}: catalog class is not RLlib's PPOCatalog")
    inference_only = kwargs.get("inference_only")
    inference_only = as_bool(False if inference_only is None else inference_only,
                             f"{where}: inference_only", error=CheckpointError)
    masked = MODULE_CLASSES[cls.ref]
    obs, act = kwargs.get("observation_space"), kwargs.get("action_space")
    if masked:
        inner = obs.field("spaces") if isinstance(obs, _Record) else None
        if not isinstance(inner, dict) or set(inner) != {OBSERVATIONS, ACTION_MASK}:
            raise CheckpointError(f"{where}: a masked module needs a Dict observation space "
                                  f"of {OBSERVATIONS!r} and {ACTION_MASK!r}")
        encoding_size = _space_size(inner[OBSERVATIONS], "_shape", where)
        mask_size = _space_size(inner[ACTION_MASK], "_shape", where)
    else:
        encoding_size = mask_size = _space_size(obs, "_shape", where)
    num_moves = _space_size(act, "n", where)
    if masked and mask_size != num_moves:
        raise CheckpointError(f"{where}: an action mask of {mask_size} for {num_moves} moves")
    state = _read_pickle(os.path.join(path, STATE_FILE), MAX_STATE_BYTES)
    if isinstance(state, dict):
        state = {k: v.array if isinstance(v, _PickledArray) else v for k, v in state.items()}
    if not isinstance(state, dict) or not state or not all(
            isinstance(k, str) and isinstance(v, np.ndarray) and v.dtype.kind in "biuf"
            for k, v in state.items()):
        raise CheckpointError(f"{where}: {STATE_FILE} is not a module state (names -> "
                              f"numeric arrays)")
    weights = {k: torch.from_numpy(np.array(v, copy=True)) for k, v in state.items()}
    check_finite(weights, repr(os.path.join(path, STATE_FILE)))
    return {"path": path, "class": ".".join(cls.ref), "masked": masked,
            "inference_only": inference_only,
            "encoding_size": encoding_size, "num_moves": num_moves,
            "model_config": _model_config(kwargs.get("model_config"), where),
            "weights": weights}


def build_module(ckpt: Dict[str, Any]) -> DefaultPPOTorchRLModule:
    """The module a `read_module_checkpoint` record describes, with its weights (strict:
    names and shapes checked on the meta device first, `build_network`)."""
    n, e = ckpt["num_moves"], ckpt["encoding_size"]
    box = spaces.Box(0.0, 1.0, (e,), np.float32)
    if ckpt["masked"]:
        cls = MaskedPPOTorchRLModule
        observation_space: spaces.Space = spaces.Dict({OBSERVATIONS: box,
                                         ACTION_MASK: spaces.Box(0.0, 1.0, (n,), np.float32)})
    else:
        cls, observation_space = DefaultPPOTorchRLModule, box

    def build():
        try:
            return cls(observation_space=observation_space, action_space=spaces.Discrete(n),
                       inference_only=ckpt["inference_only"],
                       model_config=ckpt["model_config"], catalog_class=PPOCatalog)
        except Exception as err:   # noqa: BLE001 - RLlib refuses a config with many classes
            raise ValueError(f"{type(err).__name__}: {err}") from None

    return build_network({"path": ckpt["path"], "weights": ckpt["weights"],
                          "architecture": ckpt["model_config"]}, build, "PPO module")


def module_fingerprint(module) -> str:
    """sha256 of a module's class, model config and weights (names, dtypes, shapes and
    bytes): the same for every copy of one module."""
    digest = hashlib.sha256()
    cls = type(module)
    digest.update(f"{cls.__module__}.{cls.__qualname__}\n".encode())
    digest.update(json.dumps(module.model_config, sort_keys=True, default=repr).encode())
    for key, value in sorted(module.state_dict().items()):
        t = value.detach().cpu().contiguous()
        digest.update(f"\n{key}:{t.dtype}:{tuple(t.shape)}".encode())
        digest.update(t.numpy().tobytes())
    return digest.hexdigest()


# --- the blueprint -----------------------------------------------------------------------

class RLlibBlueprint(VectorPolicyBase):
    """An RLlib PPO module as a greedy, deterministic, batched Blueprint (module doc).

    Args:
        module: an RLlib torch PPO module over the canonical observation: a Dict
            {"observations", "action_mask"} (MaskedPPOTorchRLModule) or a flat Box.
        name: the blueprint's name (default "rllib-ppo").
        gamma: the discount its critic was trained with (default: the module's record,
            else 0.99).

    Attributes: `encoding_size`, `num_moves`, `masked`, `has_value` (the module has its
    critic), `gamma`, `game` (the recorded HanabiConfig, or None), `spec` and
    `fingerprint`.

    Shapes: `act_batch` -> int64 (N,), `rollout` -> int32 (N,) moves made, `value` ->
    float32 (N,) expected final scores; inside, observations are float32 (N,
    encoding_size) and legal masks bool (N, num_moves).
    """

    deterministic = True
    has_private_memory = False

    def __init__(self, module, name: Optional[str] = None, gamma: Optional[float] = None):
        obs, act = getattr(module, "observation_space", None), getattr(module, "action_space", None)
        box: Any                        # the observations' space (checked below)
        if isinstance(obs, spaces.Dict) and OBSERVATIONS in obs.spaces:
            self.masked, box = True, obs[OBSERVATIONS]
        else:
            self.masked, box = False, obs
        if not isinstance(module, DefaultPPOTorchRLModule) or not isinstance(box, spaces.Box) \
                or len(box.shape) != 1 or not isinstance(act, spaces.Discrete):
            raise TypeError(f"module must be an RLlib torch PPO module mapping a flat Box "
                            f"observation (or a Dict of 'observations' and 'action_mask') to "
                            f"Discrete moves, got {type(module).__name__} {obs} -> {act}")
        self.module = module
        self.module.eval()
        self.encoding_size, self.num_moves = int(box.shape[0]), int(act.n)
        self.has_value = not getattr(module, "inference_only", False) and \
            getattr(module, "vf", None) is not None
        record = (module.model_config or {}).get("lbs_pz", {}) \
            if isinstance(module.model_config, dict) else {}
        record = record if isinstance(record, dict) else {}
        self.game: Optional[HanabiConfig] = None
        if isinstance(record.get("game"), dict):
            self.game = game_from_dict(record["game"], "the module's model_config['lbs_pz']")
        saved = record.get("gamma", 0.99)
        saved = float(saved) if is_real(saved) else 0.99
        self.gamma = float(saved if gamma is None else gamma)
        self.name = name or "rllib-ppo"
        self.fingerprint: str = module_fingerprint(module)
        self.spec: str = f"rllib:<in memory: {self.name}>"

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], **kwargs) -> "RLlibBlueprint":
        """The module checkpoint at `path` (module docstring), read by the safe loader,
        with `spec` "rllib:PATH". CheckpointError (a ValueError) for a folder that is not
        one."""
        path = os.fspath(path)
        blueprint = cls(build_module(read_module_checkpoint(path)), **kwargs)
        blueprint.spec = f"rllib:{os.path.normpath(path)}"
        return blueprint

    # --- forward passes ----------------------------------------------------------------

    def _check(self, config: HanabiConfig) -> None:
        if config.encoding_size != self.encoding_size or config.num_moves != self.num_moves:
            made = f" (made for {describe_game(self.game)})" if self.game else ""
            raise BlueprintError(f"{self.name} reads observations of size {self.encoding_size} "
                                 f"and {self.num_moves} moves{made}; this game "
                                 f"({describe_game(config)}) has {config.encoding_size} and "
                                 f"{config.num_moves}")
        if self.game is not None and not same_game(self.game, config):
            raise BlueprintError(f"{self.name} was trained for {describe_game(self.game)}, "
                                 f"not {describe_game(config)}")

    def _inputs(self, obs: np.ndarray, masks: np.ndarray) -> Dict[str, Any]:
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        if not self.masked:
            return {Columns.OBS: x}
        m = torch.from_numpy(np.ascontiguousarray(masks, dtype=np.float32))
        return {Columns.OBS: {OBSERVATIONS: x, ACTION_MASK: m}}

    def _preferences(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The module's action logits (N, A) float32 (`forward_inference`)."""
        with torch.no_grad():
            out = self.module.forward_inference(self._inputs(obs, masks))
        return out[Columns.ACTION_DIST_INPUTS].float().cpu().numpy()

    def _critic(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            values = cast(torch.Tensor, self.module.compute_values(self._inputs(obs, masks)))
        out = values.reshape(-1).float().cpu().numpy().astype(np.float64)
        return np.where(np.isfinite(out), out, 0.0)

    def __repr__(self) -> str:
        return (f"RLlibBlueprint({type(self.module).__name__}, {self.encoding_size} -> "
                f"{self.num_moves}, value={self.has_value}, gamma={self.gamma})")


def load_rllib_blueprint(path: Union[str, "os.PathLike[str]"], **kwargs) -> RLlibBlueprint:
    """`RLlibBlueprint.load(path, **kwargs)`."""
    return RLlibBlueprint.load(path, **kwargs)


__all__ = ["RLlibBlueprint", "MaskedPPOTorchRLModule", "load_rllib_blueprint", "module_spec",
           "model_config", "rllib_spaces", "read_module_checkpoint", "build_module",
           "find_module_dir", "module_fingerprint", "OBSERVATIONS", "ACTION_MASK", "POLICY_ID"]
