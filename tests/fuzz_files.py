"""Fuzz program for what lbs_pz reads from files (run by tests/test_fuzz_files.py).

    python tests/fuzz_files.py --examples 200 --seed 0

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
"""

import argparse
import copy
import json
import os
import resource
import sys
import tempfile

import numpy as np
import torch
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from lbs_pz.agents.public_lstm import PublicLSTMBlueprint, PublicLSTMNet
from lbs_pz.cli import main as cli
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.backends import read_log
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.models.checkpoint import save_checkpoint
from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, load_belief, save_belief
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import read_search_games
from lbs_pz.search.value import ValueNetConfig, load_value, make_value_net, save_value

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        paths = make_files(folder)
        calls = fuzz(paths, folder, args.examples, args.seed)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"FUZZ DONE: {calls} files read, peak memory {peak_mb:.0f} MB", flush=True)
    assert peak_mb < MAX_RSS_MB, f"peak memory {peak_mb:.0f} MB"
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
