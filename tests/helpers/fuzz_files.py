"""Fuzz program for what lbs_pz reads from files (run by tests/core/test_fuzz_files.py).

    python tests/helpers/fuzz_files.py --examples 200 --seed 0

Hypothesis corrupts real files, written by the code that ships, and hands them to the
readers a user reaches:
- a game log of `lbs-pz compare` (resume and --report-only read it with `read_log`): a
  field of a line replaced by a hostile value, a line duplicated, cut or replaced by bytes;
- a recorded-search file (`read_search_games`, what `distill --search-games` reads);
- a value, belief and public-LSTM checkpoint (`load_value`, `load_belief`,
  `PublicLSTMBlueprint.load`): a header field (architecture, game, kind, trained_for) or a
  weight replaced by a hostile value.
A reader may refuse a file only with ValueError (CheckpointError is one); what it accepts
must be true: a log's scores within the variant's range. A signal kills this process, so
each attempt is printed before it runs, and the peak memory is checked at the end.

    python tests/helpers/fuzz_files.py --rllib --examples 200 --seed 0

fuzzes the RLlib module loader instead (`RLlibBlueprint.load`, needs the [rllib] extra):
one of the two pickles of a module saved by RLlib (class_and_ctor_args.pkl,
module_state.pkl) with bytes changed or cut, or an opcode dropped, repeated, replaced,
given a hostile argument, or a hostile opcode inserted. The loader may refuse it only with
a one-line CheckpointError; a module it accepts plays legal moves; no load may raise the
peak memory by RLLIB_LOAD_MB or more.
"""

import argparse
import copy
import json
import os
import pickletools
import resource
import shutil
import struct
import sys
import tempfile

import numpy as np
import torch
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from lbs_pz.agents.public_lstm import PublicLSTMBlueprint, PublicLSTMNet
from lbs_pz.cli import main as cli
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.eval.backends import read_log
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.models.checkpoint import CheckpointError, save_checkpoint
from lbs_pz.optional import rllib_available
from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, load_belief, save_belief
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import read_search_games
from lbs_pz.search.value import ValueNetConfig, load_value, make_value_net, save_value

RLLIB = rllib_available()
if RLLIB:
    from lbs_pz.agents.rllib_policy import CTOR_FILE, STATE_FILE, RLlibBlueprint, module_spec

SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)
CFG = HanabiConfig(**SMALL)
MAX_RSS_MB = 1500
LOG = sys.stdout

HOSTILE = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 2**31, 2**63, -2**63, 10**30, 1e308,
                     float("nan"), float("inf"), -0.0, "", "x", "16", [], {}, [1, 2], {"a": 1},
                     "\ud800", "../../etc/passwd", 6000, 4097, 65537, 17]),
    st.integers(), st.floats(allow_nan=True), st.text(max_size=8),
    st.builds(torch.zeros, st.integers(0, 3)))


def make_files(folder: str) -> dict:
    """The real files to corrupt: {name: path}."""
    paths = {}
    paths["log"] = os.path.join(folder, "log.jsonl")
    status = cli(["compare", "--methods", "blueprint,lbs-inf", "--belief", "grounded",
                  "--rollouts", "4", "--games", "3", "--backend", "inline", "--no-progress",
                  "--players", "2", "--colors", "3", "--ranks", "3", "--hand-size", "3",
                  "--jsonl", paths["log"]])
    assert status in (0, None), status
    paths["games"] = os.path.join(folder, "games.jsonl")
    record_search_games(MethodSpec(method="lbs-inf", blueprint="strong", rollouts=4, seed=0),
                        3, paths["games"], SMALL, log=lambda s: None)
    torch.manual_seed(0)
    paths["value"] = os.path.join(folder, "value.pt")
    value_cfg = ValueNetConfig(inputs=CFG.encoding_size + CFG.colors * CFG.colors * CFG.ranks,
                               hidden=8)
    save_value(paths["value"], make_value_net(value_cfg), value_cfg, CFG, None)
    paths["belief"] = os.path.join(folder, "belief.pt")
    save_belief(paths["belief"], BeliefNet(BeliefNetConfig(embed=8, hidden=8, decoder=8), CFG),
                CFG)
    paths["public_lstm"] = os.path.join(folder, "public_lstm.pt")
    probe = HanabiConfig()
    arch = dict(pub_dim=533, obs_dim=probe.encoding_size, players=2, num_moves=probe.num_moves,
                hidden=8)
    save_checkpoint(paths["public_lstm"], "public_lstm", probe, arch,
                    PublicLSTMNet(**arch).state_dict())
    return paths


LOADERS = {"value": load_value, "belief": load_belief, "public_lstm": PublicLSTMBlueprint.load}


def places(obj, prefix=()):
    """Every (path, value) inside nested dicts and lists, the containers included."""
    yield prefix, obj
    items = obj.items() if isinstance(obj, dict) else \
        enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        yield from places(v, prefix + (k,))


def replaced(obj, path, value):
    obj = copy.deepcopy(obj)
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return obj


def check_lines(name: str, lines, what: str, reader, out: str, accept) -> None:
    with open(out, "wb") as f:
        f.write(b"".join(lines))
    print(f"{name}: {what}", file=LOG, flush=True)
    try:
        accept(reader(out))
    except ValueError:
        pass


def fuzz(paths: dict, folder: str, examples: int, seed_value: int) -> int:
    logged = [json.loads(line) for line in open(paths["log"])]
    recorded = [json.loads(line) for line in open(paths["games"])]
    ckpts = {k: torch.load(paths[k], weights_only=True) for k in LOADERS}
    calls = [0]

    def scores_true(entries):
        for e in entries:
            assert 0 <= e["result"]["score"] <= CFG.colors * CFG.ranks, e

    def lines_of(objs, data):
        lines = [json.dumps(o).encode() + b"\n" for o in objs]
        op = data.draw(st.sampled_from(["field", "field", "bytes", "cut", "duplicate"]))
        i = data.draw(st.integers(0, len(lines) - 1))
        what = f"line {i + 1}: {op}"
        if op == "field":
            where, value = data.draw(st.sampled_from(list(places(objs[i]))))[0], data.draw(HOSTILE)
            if isinstance(value, torch.Tensor):
                value = value.tolist()
            lines[i] = json.dumps(replaced(objs[i], where, value)).encode() + b"\n"
            what += f" {where} = {value!r:.60}"
        elif op == "bytes":
            lines[i] = data.draw(st.binary(max_size=200))
            what += f" {lines[i][:60]!r}"
        elif op == "cut":
            lines[i] = lines[i][:data.draw(st.integers(0, len(lines[i])))]
            what += f" to {len(lines[i])} bytes"
        else:
            lines.insert(i, lines[i])
        return lines, what

    @settings(max_examples=examples, deadline=None, derandomize=False, database=None,
              suppress_health_check=list(HealthCheck))
    @seed(seed_value)
    @given(st.data())
    def one(data):
        calls[0] += 1
        target = data.draw(st.sampled_from(["log", "games"] + list(LOADERS)))
        out = os.path.join(folder, "fuzzed")
        if target == "log":
            check_lines("log", *lines_of(logged, data), read_log, out, scores_true)
        elif target == "games":
            check_lines("games", *lines_of(recorded, data), read_search_games, out,
                        lambda games: None)
        else:
            ckpt = ckpts[target]
            header = {k: v for k, v in ckpt.items() if k != "weights"}
            if data.draw(st.booleans()):
                where = data.draw(st.sampled_from([p for p, _ in places(header) if p]))
                ckpt = dict(replaced(header, where, data.draw(HOSTILE)), weights=ckpt["weights"])
                what = f"{where} replaced"
            else:
                name = data.draw(st.sampled_from(sorted(ckpt["weights"])))
                shape = data.draw(st.lists(st.integers(0, 9), max_size=3))
                fill = data.draw(st.sampled_from([0.0, 1.0, float("nan"), float("inf"), 1e38]))
                weights = dict(ckpt["weights"], **{name: torch.full(shape, fill)})
                ckpt = dict(ckpt, weights=weights)
                what = f"weight {name} -> {shape} of {fill}"
            print(f"{target}: {what}", file=LOG, flush=True)
            torch.save(ckpt, out)
            try:
                LOADERS[target](out)
            except ValueError:
                pass

    one()
    return calls[0]


# --- the RLlib module loader ---------------------------------------------------------------

RLLIB_LOAD_MB = 64
# Arguments of a pickle opcode, and opcodes to insert, that name sizes or indexes far beyond
# the file, or that the loader does not read.
HOSTILE_INTS = [0, 1, 2**7, 2**8 - 1, 2**15, 2**16 - 1, 2**30, 2**31 - 1, 2**32 - 1, 2**40,
                2**63 - 1, 2**64 - 1]
HOSTILE_TEXTS = ["", "os", "system", "posix", "builtins", "eval", "O8", "f16", "c8", "V8",
                 "<U1", "M8", ">f4", "numpy.random", "numpy.random._pickle", "Box", "Discrete",
                 "Dict", "relu", "nope", "fcnet_hiddens", "use_lstm", "inference_only",
                 "observations", "action_mask", "start", "_shape", "n", "\x00" * 3, "x" * 300]
HOSTILE_OPCODES = [b"r" + struct.pack("<I", 2**30), b"q\xff", b"j" + struct.pack("<I", 2**31),
                   b"h\x00", b"\x94", b"\x95" + struct.pack("<Q", 2**40),
                   b"\x8e" + struct.pack("<Q", 2**40), b"\x96" + struct.pack("<Q", 2**33),
                   b"X" + struct.pack("<I", 2**31), b"\x8b" + struct.pack("<i", 2**20),
                   b"]" * 2000, b"(" * 2000, b"0", b"1", b"N", b".", b"R", b"b", b"\x81",
                   b"\x82\x01", b"Q", b"\x93", b"(cos\nsystem\n", b"\x97", b"\x98"]


def make_rllib_module(folder: str) -> str:
    """A masked PPO module for the small variant, saved by RLlib (`save_to_path`)."""
    torch.manual_seed(0)
    path = os.path.join(folder, "rllib_module")
    module_spec(CFG, hidden=(16, 16)).build().save_to_path(path)
    return path


def mutated(raw: bytes, ops: list, data) -> tuple:
    """(bytes, what was done) of one corruption of the pickle `raw` (`ops`: its genops).
    After a change of the opcodes behind its frame header the pickle's frame is resized to
    the new length, so that the change reaches the unpickler (the loader refuses a frame
    that runs past the end)."""
    changed, what, at = _mutated(raw, ops, data)
    if at is None or at < 11 or [o.name for o, _, _ in ops[:2]] != ["PROTO", "FRAME"]:
        return changed, what
    return changed[:3] + struct.pack("<Q", len(changed) - 11) + changed[11:], what


def _mutated(raw: bytes, ops: list, data) -> tuple:
    """(bytes, what was done, the position of a change of opcodes or None)."""
    kind = data.draw(st.sampled_from(["flip", "cut", "drop", "repeat", "opcode", "argument",
                                      "insert", "random"]))
    i = data.draw(st.integers(0, len(ops) - 1))
    op, _, pos = ops[i]
    end = ops[i + 1][2] if i + 1 < len(ops) else len(raw)
    if kind == "flip":
        out = bytearray(raw)
        at = data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=8))
        for j in at:
            out[j] = data.draw(st.integers(0, 255))
        return bytes(out), f"bytes {at} changed", None
    if kind == "cut":
        n = data.draw(st.integers(0, len(raw) - 1))
        return raw[:n], f"cut to {n} bytes", None
    if kind == "random":
        return data.draw(st.binary(max_size=64)), "random bytes", None
    if kind == "repeat":
        times = data.draw(st.integers(1, 3))
        return raw[:end] + raw[pos:end] * times + raw[end:], f"{op.name} repeated", pos
    if kind == "opcode":
        code = data.draw(st.sampled_from([o.code for o in pickletools.opcodes]))
        return raw[:pos] + code.encode("latin-1") + raw[pos + 1:], f"{op.name} -> {code!r}", pos
    if kind == "insert":
        snippet = data.draw(st.sampled_from(HOSTILE_OPCODES))
        return raw[:pos] + snippet + raw[pos:], f"{snippet[:12]!r} inserted at {pos}", pos
    width = op.arg.n if op.arg is not None else 0
    if kind == "argument" and op.name in ("SHORT_BINUNICODE", "BINUNICODE"):
        text = data.draw(st.sampled_from(HOSTILE_TEXTS)).encode()[:255]
        size = struct.pack("<B", len(text)) if op.name == "SHORT_BINUNICODE" \
            else struct.pack("<I", len(text))
        return (raw[:pos + 1] + size + text + raw[end:], f"{op.name} at {pos} = {text[:20]!r}",
                pos)
    if kind == "argument" and width > 0:
        value = data.draw(st.sampled_from(HOSTILE_INTS)) % (1 << (8 * width))
        return (raw[:pos + 1] + value.to_bytes(width, "little") + raw[pos + 1 + width:],
                f"{op.name} at {pos} = {value}", None if op.name == "FRAME" else pos)
    return raw[:pos] + raw[end:], f"{op.name} at {pos} dropped", pos


def fuzz_rllib(module: str, folder: str, examples: int, seed_value: int) -> int:
    originals = {}
    for name in (CTOR_FILE, STATE_FILE):
        with open(os.path.join(module, name), "rb") as fh:
            originals[name] = fh.read()
    ops = {name: list(pickletools.genops(raw)) for name, raw in originals.items()}
    out = os.path.join(folder, "fuzzed_module")
    shutil.copytree(module, out)
    state = HanabiState(CFG, seed=0)
    assert RLlibBlueprint.load(module).act(state) in state.legal_moves()   # the first load
    calls = [0]

    def peak_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    @settings(max_examples=examples, deadline=None, derandomize=False, database=None,
              suppress_health_check=list(HealthCheck))
    @seed(seed_value)
    @given(st.data())
    def one(data):
        calls[0] += 1
        target = data.draw(st.sampled_from(sorted(originals)))
        raw, what = mutated(originals[target], ops[target], data)
        for name, original in originals.items():
            with open(os.path.join(out, name), "wb") as fh:
                fh.write(raw if name == target else original)
        print(f"rllib {target}: {what}", file=LOG, flush=True)
        before = peak_mb()
        try:
            blueprint = RLlibBlueprint.load(out)
        except CheckpointError as err:
            assert "\n" not in str(err), str(err)
        else:
            assert blueprint.act(state) in state.legal_moves()
        grown = peak_mb() - before
        assert grown < RLLIB_LOAD_MB, f"one load raised the peak memory by {grown:.0f} MB"

    one()
    return calls[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rllib", action="store_true",
                        help="fuzz the RLlib module loader (needs the [rllib] extra)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.rllib and not RLLIB:
        print("FUZZ SKIPPED: ray.rllib is not importable", flush=True)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        if args.rllib:
            calls = fuzz_rllib(make_rllib_module(folder), folder, args.examples, args.seed)
        else:
            paths = make_files(folder)
            calls = fuzz(paths, folder, args.examples, args.seed)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"FUZZ DONE: {calls} files read, peak memory {peak_mb:.0f} MB", flush=True)
    assert peak_mb < MAX_RSS_MB, f"peak memory {peak_mb:.0f} MB"
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
