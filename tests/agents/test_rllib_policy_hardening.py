"""The RLlib loader (`lbs_pz.agents.rllib_policy`) against forged and broken files: memory
stays bounded whatever a pickle names (the memo, array sizes, lengths, opcode counts), only
the arrays numpy's pickler writes are rebuilt, absurd weights are refused, and every
refusal is one CheckpointError naming the file. The checkpoints are real: a module made by
`module_spec` and saved by RLlib's own `save_to_path`. Files that would crash or exhaust a
loader without these bounds are read in a child process."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.optional import rllib_available

if not rllib_available():
    pytest.skip("ray.rllib (or torch) is not importable: the [rllib] extra is not installed",
                allow_module_level=True)

import torch  # noqa: E402

from lbs_pz.agents.rllib_policy import (CTOR_FILE, MAX_PICKLE_OPCODES,  # noqa: E402
                                        STATE_FILE, RLlibBlueprint, module_spec)
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.models.checkpoint import MAX_ABS_WEIGHT, CheckpointError  # noqa: E402

TINY = HanabiConfig(players=2, colors=2, ranks=3, hand_size=3)
MEMORY_BOUND_KB = 50 * 1024
# A 9-byte pickle: PROTO 5, NONE, LONG_BINPUT 2**30, STOP (CPython's unpickler would size
# its memo for 2**31 entries: 16 GiB).
MEMO_BOMB = b"\x80\x05N" + b"r" + struct.pack("<I", 1 << 30) + b"."


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory):
    torch.manual_seed(0)
    out = str(tmp_path_factory.mktemp("rllib_hardening") / "module")
    module_spec(TINY, hidden=(16, 16)).build().save_to_path(out)
    return out


@pytest.fixture(scope="module")
def good(module_dir):
    """(fingerprint, ctor record, state) of the saved module (files made by this test)."""
    with open(os.path.join(module_dir, CTOR_FILE), "rb") as fh:
        ctor = pickle.load(fh)
    with open(os.path.join(module_dir, STATE_FILE), "rb") as fh:
        state = pickle.load(fh)
    return RLlibBlueprint.load(module_dir).fingerprint, ctor, state


def with_file(module_dir, folder, name, data: bytes) -> str:
    """A copy of the module folder at `folder` with file `name` replaced by `data`."""
    shutil.copytree(module_dir, folder)
    with open(os.path.join(folder, name), "wb") as fh:
        fh.write(data)
    return str(folder)


def refused(folder, *words) -> str:
    """The loader's one-line CheckpointError for `folder`, which names each of `words`."""
    with pytest.raises(CheckpointError) as err:
        RLlibBlueprint.load(folder)
    message = str(err.value)
    assert "\n" not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


class _Forged:
    """Pickles as the reduce tuple it is given, as a forged file would hold."""

    def __init__(self, reduce):
        self.reduce = reduce

    def __reduce__(self):
        return self.reduce


CHILD = """
import json, resource, sys
from lbs_pz.agents.rllib_policy import RLlibBlueprint
RLlibBlueprint.load(sys.argv[1])           # the first load's own allocations come first
out = {}
for folder in sys.argv[2:]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        RLlibBlueprint.load(folder)
        error = None
    except Exception as err:
        error = [type(err).__name__, str(err)]
    out[folder] = [error, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before]
print("RESULT " + json.dumps(out))
"""


def load_in_child(module_dir, folders):
    """{folder: ([exception class, message] or None, peak memory growth in KB)} of loading
    each folder in a child process, after one load of the good module."""
    proc = subprocess.run([sys.executable, "-c", CHILD, module_dir, *folders],
                          capture_output=True, text=True, timeout=HANG_SECONDS,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    line = next(s for s in proc.stdout.splitlines() if s.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


# --- memory bounds -----------------------------------------------------------------------

def test_a_memo_bomb_in_either_file_is_refused_before_anything_is_allocated(module_dir,
                                                                             tmp_path):
    assert len(MEMO_BOMB) == 9
    folders = [with_file(module_dir, tmp_path / name, name, MEMO_BOMB)
               for name in (CTOR_FILE, STATE_FILE)]
    results = load_in_child(module_dir, folders)
    for folder, name in zip(folders, (CTOR_FILE, STATE_FILE)):
        error, growth_kb = results[folder]
        assert error is not None and error[0] == "CheckpointError", error
        assert "\n" not in error[1] and name in error[1], error
        assert "memo index 1,073,741,824" in error[1], error
        assert growth_kb < MEMORY_BOUND_KB, f"{name}: peak memory grew by {growth_kb} KB"


def test_arrays_numpy_s_pickler_would_not_write_are_refused_unbuilt(module_dir, good,
                                                                    tmp_path):
    """An object array of 2**27 entries from an empty list (numpy's own __setstate__
    would fill it from the list: a crash), bytes that do not fit the shape, and dtypes
    that are not numbers: one CheckpointError each, memory bounded."""
    from numpy._core.multiarray import _reconstruct
    from numpy._core.numeric import _frombuffer
    _, _, state = good
    key = next(iter(state))
    cases = {
        "object_list": _Forged((_reconstruct, (np.ndarray, (0,), b"b"),
                                (1, (1 << 27,), np.dtype("O"), False, []))),
        "short_bytes": _Forged((_reconstruct, (np.ndarray, (0,), b"b"),
                                (1, (1 << 28,), np.dtype("f4"), False, b"\0" * 16))),
        "short_buffer": _Forged((_frombuffer, (b"\0" * 16, np.dtype("f4"), (1 << 28,), "C"))),
        "object": np.array([1.0, None], dtype=object),
        "structured": np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]),
        "longdouble": np.zeros(2, dtype=np.longdouble),
        "complex": np.zeros(2, dtype=np.complex64),
        "text": np.array(["a", "b"]),
    }
    folders = {name: with_file(module_dir, tmp_path / name, STATE_FILE,
                               pickle.dumps({**state, key: value}, protocol=5))
               for name, value in cases.items()}
    results = load_in_child(module_dir, list(folders.values()))
    for name, folder in folders.items():
        error, growth_kb = results[folder]
        assert error is not None and error[0] == "CheckpointError", (name, error)
        assert "\n" not in error[1] and STATE_FILE in error[1], (name, error)
        assert growth_kb < MEMORY_BOUND_KB, f"{name}: peak memory grew by {growth_kb} KB"


@pytest.mark.parametrize("name", [CTOR_FILE, STATE_FILE])
@pytest.mark.parametrize("data,words", [
    pytest.param(b"\x80\x05N" + b"q\x05" + b".", ["memo index 5", "0 entries"], id="binput-gap"),
    pytest.param(b"\x80\x05N\x94" + b"j" + struct.pack("<I", 1 << 31) + b".",
                 ["memo index 2,147,483,648"], id="long-binget"),
    pytest.param(b"\x80\x05N\x94h\x01.", ["memo index 1", "1 entries"], id="binget-unset"),
    pytest.param(b"\x80\x05\x95" + struct.pack("<Q", 1 << 40) + b"N.",
                 ["frame of 1,099,511,627,776"], id="frame"),
    pytest.param(b"\x80\x05\x8e" + struct.pack("<Q", 1 << 40) + b".", ["bytes8"], id="binbytes8"),
    pytest.param(b"\x80\x04\x82\x01.", ["opcode EXT1"], id="ext1"),
    pytest.param(b"\x80\x02(cos\nsystem\nS'true'\no.", ["opcode STRING"], id="string"),
    pytest.param(b"\x80\x02U\x01x.", ["opcode SHORT_BINSTRING"], id="short-binstring"),
    pytest.param(b"\x80\x02(ios\nsystem\n.", ["opcode INST"], id="inst"),
    pytest.param(b"\x80\x02\x8b\x01\x00\x00\x00\x05.", ["opcode LONG4"], id="long4"),
    pytest.param(b"\x80\x02X\x01\x00\x00\x00xQ.", ["opcode BINPERSID"], id="binpersid"),
    pytest.param(pickle.dumps({"a": [1, 2]}, protocol=0), ["opcode"], id="protocol-0"),
    pytest.param(b"\x80\x04" + b"]0" * MAX_PICKLE_OPCODES + b"N.",
                 [f"{MAX_PICKLE_OPCODES:,} pickle opcodes"], id="too-many-opcodes"),
])
def test_a_pickle_beyond_the_scan_s_bounds_is_refused(module_dir, tmp_path, name, data, words):
    message = refused(with_file(module_dir, tmp_path / "bad", name, data), name)
    assert any(w in message for w in words), (words, message)


def test_a_pickle_of_data_is_read_only_with_the_memo_the_pickler_writes(module_dir, good,
                                                                       tmp_path):
    """Every protocol from 2 (BINPUT, text GLOBAL, latin-1 bytes) to 5 (MEMOIZE, in-band
    buffers), and big-endian arrays, make the same module."""
    fingerprint, ctor, state = good
    for protocol in (2, 3, 4, 5):
        folder = tmp_path / f"p{protocol}"
        with_file(module_dir, folder, STATE_FILE, pickle.dumps(state, protocol=protocol))
        with open(folder / CTOR_FILE, "wb") as fh:
            pickle.dump(ctor, fh, protocol=protocol)
        assert RLlibBlueprint.load(folder).fingerprint == fingerprint, protocol
    swapped = {k: v.astype(v.dtype.newbyteorder(">")) for k, v in state.items()}
    folder = with_file(module_dir, tmp_path / "big_endian", STATE_FILE, pickle.dumps(swapped))
    assert RLlibBlueprint.load(folder).fingerprint == fingerprint


# --- weights -----------------------------------------------------------------------------

@pytest.mark.parametrize("value", [3e38, -3e38, 2 * MAX_ABS_WEIGHT])
def test_finite_but_absurd_weights_are_refused_naming_file_and_tensor(module_dir, good,
                                                                      tmp_path, value):
    _, _, state = good
    key = next(k for k in state if k.endswith("weight"))
    changed = state[key].copy()
    changed.flat[3] = value
    folder = with_file(module_dir, tmp_path / "absurd", STATE_FILE,
                       pickle.dumps({**state, key: changed}))
    refused(folder, STATE_FILE, repr(key), "1e+06", "MAX_ABS_WEIGHT")


def test_large_weights_below_the_bound_load(module_dir, good, tmp_path):
    _, _, state = good
    key = next(k for k in state if k.endswith("weight"))
    changed = state[key].copy()
    changed.flat[3] = MAX_ABS_WEIGHT / 2
    folder = with_file(module_dir, tmp_path / "large", STATE_FILE,
                       pickle.dumps({**state, key: changed}))
    blueprint = RLlibBlueprint.load(folder)
    loaded = dict(blueprint.module.state_dict())[key]
    assert float(loaded.flatten()[3]) == MAX_ABS_WEIGHT / 2
    state_ = HanabiState(TINY, seed=0)
    assert blueprint.act(state_) in state_.legal_moves()


# --- the records read from class_and_ctor_args.pkl ---------------------------------------

@pytest.mark.parametrize("field,value", [
    ("inference_only", np.zeros(2, np.float32)),
    ("inference_only", "yes"),
    ("action_space", [1, 2]),
    ("observation_space", np.zeros(3, np.float32)),
])
def test_ctor_fields_of_the_wrong_kind_are_refused_in_one_line(module_dir, good, tmp_path,
                                                               field, value):
    _, ctor, _ = good
    kwargs = dict(ctor["ctor_args_and_kwargs"][1], **{field: value})
    changed = dict(ctor, ctor_args_and_kwargs=((), kwargs))
    refused(with_file(module_dir, tmp_path / "ctor", CTOR_FILE, pickle.dumps(changed)))


def test_a_discrete_space_that_does_not_start_at_a_plain_zero_is_refused(module_dir, good,
                                                                         tmp_path):
    _, ctor, _ = good
    kwargs = ctor["ctor_args_and_kwargs"][1]
    for start in ([0], np.int64(3)):
        space = kwargs["action_space"]
        forged = _Forged((type(space), (), dict(vars(space), start=start)))
        changed = dict(ctor, ctor_args_and_kwargs=((), dict(kwargs, action_space=forged)))
        folder = with_file(module_dir, tmp_path / f"start_{type(start).__name__}", CTOR_FILE,
                           pickle.dumps(changed))
        refused(folder, "does not start at 0")


def test_a_config_rllib_cannot_build_is_one_checkpoint_error(module_dir, good, tmp_path):
    _, ctor, _ = good
    kwargs = ctor["ctor_args_and_kwargs"][1]
    config = dict(kwargs["model_config"], fcnet_activation="no-such-activation")
    changed = dict(ctor, ctor_args_and_kwargs=((), dict(kwargs, model_config=config)))
    refused(with_file(module_dir, tmp_path / "config", CTOR_FILE, pickle.dumps(changed)),
            "does not make a PPO module")
