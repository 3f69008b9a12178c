"""Misuse catalogue: ordinary Python calls that must never kill the interpreter.

    python benchmarks/misuse.py            # every case, each in its own child process
    python benchmarks/misuse.py --list     # the cases and what each expects
    python benchmarks/misuse.py --only engine-readonly-legal-masks,records-float-target

Each case is a short snippet run in a fresh `python -c` child. It passes when the child ends
the way the case expects: a Python exception of the named class ("raises"), or the snippet's
own asserts passing ("ok"), or, for fuzz-like cases, any Python exception or success
("no-crash"). A signal exit (SIGSEGV, SIGABRT, SIGFPE, SIGKILL for memory) is a crash, a
timeout is a hang, and a snippet that runs to its end where it should have raised was
silently accepted. The summary counts each; the goal is zero crashes and zero failures.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import misuse_blueprints  # noqa: E402
import misuse_cli  # noqa: E402
import misuse_web  # noqa: E402

PRELUDE = """
import numpy as np, pickle, copyreg, random
from lbs_pz.engine import HanabiConfig, HanabiState, HanabiBatch
cfg = HanabiConfig()
state = HanabiState(cfg, seed=1)
def ro(shape, dtype):
    arr = np.frombuffer(bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize), dtype).reshape(shape)
    assert not arr.flags.writeable
    return arr
class _Forged:
    def __init__(self, reduce): self.reduce = reduce
    def __reduce__(self): return self.reduce
def forge(reduce):
    '''Unpickle an object from a hand-made reduce tuple, as a corrupted or malicious file would.'''
    if reduce[0] is copyreg.__newobj__:
        reduce = (copyreg._reconstructor, (reduce[1][0], object, None)) + tuple(reduce[2:3])
    return pickle.loads(pickle.dumps(_Forged(reduce)))
NASTY = [-1, -2**31, 2**31 - 1, 127, 128, 255, 2**63 - 1, 0, 50, 10**9]
def tamper(value, rng):
    '''A randomly corrupted copy of a reduce tuple's payload.'''
    if isinstance(value, (bytes, bytearray)):
        data = bytearray(value)
        if rng.random() < 0.3:
            return bytes(rng.getrandbits(8) for _ in data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.getrandbits(8)
        return bytes(data)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice(NASTY)
    if isinstance(value, tuple):
        return tuple(tamper(v, rng) if rng.random() < 0.5 else v for v in value)
    if isinstance(value, list):
        return [tamper(v, rng) if rng.random() < 0.5 else v for v in value]
    if isinstance(value, dict):
        return {k: (tamper(v, rng) if rng.random() < 0.5 else v) for k, v in value.items()}
    return value
def exercise(s):
    '''Use a state the way search does; any Python exception is acceptable here.'''
    moves = s.legal_moves()
    s.encode(s.current_player); s.clone()
    if moves: s.apply(moves[-1])
    HanabiBatch.from_states([s]).legal_masks()
"""

HANABLIVE = """
from lbs_pz.engine.records import to_hanablive, from_hanablive
good = HanabiState(cfg, seed=3)
for _ in range(6):
    good.apply(good.legal_moves()[-1])
record = to_hanablive(good)
clue = next(i for i, a in enumerate(record["actions"]) if a["type"] in (2, 3))
def with_action(**change):
    bad = dict(record, actions=[dict(a) for a in record["actions"]])
    bad["actions"][clue].update(change)
    return bad
"""

SB3 = """
import zipfile, json, os, tempfile, torch, sb3_contrib
from lbs_pz.wrappers.vec_env import HanabiVecEnv
from lbs_pz.agents.sb3_policy import SB3Blueprint
from lbs_pz.models import CheckpointError
tmp = tempfile.mkdtemp()
model = sb3_contrib.MaskablePPO("MlpPolicy", HanabiVecEnv(2, seed=0), n_steps=8, batch_size=16,
                                policy_kwargs=dict(net_arch=[8]), device="cpu", seed=0)
good = os.path.join(tmp, "good.zip")
model.save(good)
def rewrite(name, replace):
    dst = os.path.join(tmp, name)
    with zipfile.ZipFile(good) as a, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as b:
        for entry in a.namelist():
            if entry in replace and callable(replace[entry]):
                with b.open(entry, "w") as out:
                    replace[entry](out)
            else:
                b.writestr(entry, replace.get(entry, a.read(entry)))
    return dst
data = json.loads(zipfile.ZipFile(good).read("data"))
"""


# (name, expectation, exception class or None, snippet). Expectations: "raises" (that class,
# or a subclass, by name), "ok" (the snippet's asserts pass), "no-crash" (anything but a signal).
CASES = [
    # --- engine: out arrays -----------------------------------------------------------------
    ("engine-readonly-legal-masks", "raises", "ValueError",
     "buf = bytes(80); out = np.frombuffer(buf, np.int8).reshape(4, 20)\n"
     "b = HanabiBatch(cfg, 4)\n"
     "try:\n    b.legal_masks(out=out)\nfinally:\n    assert buf == bytes(80), 'bytes object changed'"),
    ("engine-readonly-memmap-legal-masks", "raises", "ValueError",
     "import tempfile, os\n"
     "path = os.path.join(tempfile.mkdtemp(), 'm.bin'); open(path, 'wb').write(bytes(80))\n"
     "out = np.memmap(path, dtype=np.int8, mode='r', shape=(4, 20))\n"
     "HanabiBatch(cfg, 4).legal_masks(out=out)"),
    ("engine-readonly-encode", "raises", "ValueError",
     "HanabiBatch(cfg, 4).encode(out=ro((4, cfg.encoding_size), np.float32))"),
    ("engine-readonly-terminals", "raises", "ValueError",
     "HanabiBatch(cfg, 4).terminals(out=ro((4,), np.bool_))"),
    ("engine-readonly-scores", "raises", "ValueError",
     "HanabiBatch(cfg, 4).scores(out=ro((4,), np.int32))"),
    ("engine-wrong-shape-encode", "raises", "ValueError",
     "HanabiBatch(cfg, 4).encode(out=np.zeros((3, cfg.encoding_size), np.float32))"),
    ("engine-noncontiguous-encode", "raises", "ValueError",
     "HanabiBatch(cfg, 4).encode(out=np.zeros((4, 2 * cfg.encoding_size), np.float32)[:, ::2])"),
    # --- engine: None and wrong types --------------------------------------------------------
    ("engine-set-state-none", "raises", "TypeError", "HanabiBatch(cfg, 2).set_state(0, None)"),
    ("engine-from-states-none", "raises", "TypeError", "HanabiBatch.from_states([state, None])"),
    ("engine-batch-float-size", "raises", "TypeError", "HanabiBatch(cfg, num_games=1.5)"),
    ("engine-batch-zero-size", "raises", "ValueError", "HanabiBatch(cfg, num_games=0)"),
    ("engine-state-players-50", "raises", "ValueError", "HanabiState(HanabiConfig(players=50))"),
    ("engine-apply-out-of-range", "raises", "ValueError", "state.apply(10**6)"),
    ("engine-seed-negative", "raises", "ValueError", "HanabiState(cfg, seed=-1)"),
    ("engine-seed-2-64", "raises", "ValueError", "HanabiBatch(cfg, 2).reset(2**64)"),
    # --- engine: objects not set up ---------------------------------------------------------
    ("engine-state-new-start-player", "raises", "Exception",
     "HanabiState.__new__(HanabiState).start_player"),
    ("engine-state-new-every-method", "ok", None,
     "s = HanabiState.__new__(HanabiState)\n"
     "for name in [n for n in dir(HanabiState) if not n.startswith('__')]:\n"
     "    try:\n        attr = getattr(s, name)\n        attr() if callable(attr) else None\n"
     "    except Exception:\n        pass"),
    ("engine-batch-new-encode", "raises", "Exception", "HanabiBatch.__new__(HanabiBatch).encode()"),
    ("engine-batch-new-reset", "raises", "Exception", "HanabiBatch.__new__(HanabiBatch).reset(0)"),
    ("engine-batch-new-every-method", "ok", None,
     "b = HanabiBatch.__new__(HanabiBatch)\n"
     "for name in [n for n in dir(HanabiBatch) if not n.startswith('__')]:\n"
     "    for args in [(), (0,), (0, 0)]:\n"
     "        try:\n            attr = getattr(b, name)\n            attr(*args) if callable(attr) else None\n"
     "        except Exception:\n            pass"),
    ("engine-batch-reinit", "ok", None,
     "b = HanabiBatch(cfg, 4)\n"
     "try:\n    b.__init__(HanabiConfig(players=5), 4)\nexcept Exception:\n    pass\n"
     "enc = b.encode(); b.play_random()\n"
     "assert enc.shape == (4, b.config.encoding_size), (enc.shape, b.config)"),
    ("engine-state-reinit", "ok", None,
     "s = HanabiState(cfg, seed=1)\n"
     "try:\n    s.__init__(HanabiConfig(players=5), seed=1)\nexcept Exception:\n    pass\n"
     "assert len(s.legal_moves()) > 0 and s.encode(0).shape == (s.config.encoding_size,)"),
    # --- engine: pickles --------------------------------------------------------------------
    ("engine-pickle-random-state-blobs", "no-crash", None,
     "rng = random.Random(0)\nreduce = state.__reduce_ex__(2)\n"
     "for i in range(400):\n"
     "    try:\n        exercise(forge(tamper(reduce, rng)))\n    except Exception:\n        pass"),
    ("engine-pickle-tampered-midgame-states", "no-crash", None,
     "rng = random.Random(1)\n"
     "for i in range(200):\n"
     "    s = HanabiState(HanabiConfig(players=rng.randint(2, 5)), seed=i)\n"
     "    for _ in range(rng.randint(0, 40)):\n"
     "        if s.is_terminal: break\n"
     "        s.apply(rng.choice(s.legal_moves()))\n"
     "    try:\n        exercise(forge(tamper(s.__reduce_ex__(2), rng)))\n    except Exception:\n        pass"),
    ("engine-pickle-config-players-50", "raises", "ValueError",
     "reduce = cfg.__reduce_ex__(2)\nstate_dict = dict(reduce[2], players=50)\n"
     "c = forge(reduce[:2] + (state_dict,))\nHanabiState(c)"),
    ("engine-pickle-config-fuzz", "no-crash", None,
     "rng = random.Random(2)\n"
     "for i in range(300):\n"
     "    try:\n        c = forge(tamper(cfg.__reduce_ex__(2), rng))\n"
     "        s = HanabiState(c, seed=i); exercise(s); HanabiBatch(c, 3).play_random()\n"
     "    except Exception:\n        pass"),
    # --- engine: threads --------------------------------------------------------------------
    ("engine-batch-two-threads", "no-crash", None,
     "import threading, time\nb = HanabiBatch(cfg, 256)\nerrors = []\n"
     "def work(k):\n    end = time.time() + 3\n    while time.time() < end:\n"
     "        try:\n            b.reset(k); b.play_random(); b.encode(); b.legal_masks()\n"
     "        except RuntimeError as err:\n            errors.append(err)\n"
     "ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]\n"
     "[t.start() for t in ts]; [t.join() for t in ts]"),
    ("engine-state-two-threads", "no-crash", None,
     "import threading, time\ns = HanabiState(cfg, seed=0)\n"
     "def work():\n    end = time.time() + 3\n    while time.time() < end:\n"
     "        try:\n            m = s.legal_moves()\n            s.apply(m[0]) if m else None\n"
     "            s.encode(0); s.clone()\n"
     "        except Exception:\n            pass\n"
     "ts = [threading.Thread(target=work) for _ in range(2)]\n"
     "[t.start() for t in ts]; [t.join() for t in ts]"),
    # --- agents -----------------------------------------------------------------------------
    ("bots-act-none", "raises", "TypeError",
     "from lbs_pz.agents.rule_bots import RuleBot\nRuleBot().act(None)"),
    ("bots-act-batch-none", "raises", "TypeError",
     "from lbs_pz.agents.rule_bots import RuleBot\nRuleBot().act_batch([None])"),
    ("bots-rollout-list-with-none", "raises", "TypeError",
     "from lbs_pz.agents.rule_bots import RuleBot\nRuleBot('strong').rollout([state, None])"),
    ("bots-private-play-batch-none", "raises", "TypeError",
     "from lbs_pz.agents.rule_bots import _bots\n_bots.play_batch(4, None)"),
    ("bots-act-bad-seat", "raises", "ValueError",
     "from lbs_pz.agents.rule_bots import RuleBot\nRuleBot().act(state, seat=7)"),
    ("bots-counterfactual-bad-hands", "raises", "ValueError",
     "from lbs_pz.agents.rule_bots import RuleBot\n"
     "RuleBot().counterfactual_mask(state, 0, state.legal_moves()[0], np.full((3, 5), 99))"),
    ("exact-kernels-wrong-sizes", "ok", None,
     "from lbs_pz.search.beliefs import _exact\n"
     "calls = [lambda: _exact.count_hands(np.zeros(1, np.uint32), np.full(1, -5, np.int32), 10),\n"
     "         lambda: _exact.enumerate_hands(np.zeros(5, np.uint32), np.zeros(2, np.int32), 10**6),\n"
     "         lambda: _exact.feasible_mask(np.full((2, 9), 120, np.int8), np.zeros(1, np.uint32), np.zeros(1, np.int32)),\n"
     "         lambda: _exact.hand_weights(np.full((2, 5), 120, np.int8), np.zeros(3, np.int32)),\n"
     "         lambda: _exact.remove_slot(np.zeros((2, 5), np.int8), 99, 0),\n"
     "         lambda: _exact.append_draw(np.full((2, 5), 7, np.int8), np.ones(3, np.int32), 1, 10**6)]\n"
     "raised = 0\nfor call in calls:\n    try:\n        call()\n    except (ValueError, TypeError, OverflowError, RuntimeError):\n        raised += 1\n"
     "assert raised == len(calls), f'{raised} of {len(calls)} raised'"),
    ("sb3-huge-net-arch", "raises", "CheckpointError",
     SB3 + "data['policy_kwargs']['net_arch'] = [200000, 200000]\n"
     "SB3Blueprint.load(rewrite('huge.zip', {'data': json.dumps(data)}))"),
    ("sb3-zip-bomb-data", "raises", "CheckpointError",
     SB3 + "def bomb(out):\n    out.write(json.dumps(data)[:-1].encode())\n"
     "    for _ in range(1024):\n        out.write(b' ' * 2**20)\n    out.write(b'}')\n"
     "SB3Blueprint.load(rewrite('bomb.zip', {'data': bomb}))"),
    ("sb3-nan-weights", "raises", "CheckpointError",
     SB3 + "with torch.no_grad():\n    next(model.policy.parameters()).fill_(float('nan'))\n"
     "model.save(os.path.join(tmp, 'nan.zip'))\nSB3Blueprint.load(os.path.join(tmp, 'nan.zip'))"),
    ("sb3-all-minus-inf-logits", "ok", None,
     SB3 + "with torch.no_grad():\n    model.policy.action_net.weight.zero_()\n"
     "    model.policy.action_net.bias.fill_(float('-inf'))\n"
     "bp = SB3Blueprint(model)\n"
     "for seed in range(5):\n    s = HanabiState(cfg, seed=seed)\n"
     "    move = bp.act(s)\n    assert move in s.legal_moves(), move\n"
     "    moves = bp.act_batch(HanabiBatch.from_states([s, s]))\n"
     "    assert all(m in s.legal_moves() for m in moves), moves"),
    # --- importers --------------------------------------------------------------------------
    ("records-color-clue-minus-1", "raises", "ValueError",
     HANABLIVE + "from_hanablive(with_action(type=2, value=-1))"),
    ("records-color-clue-5-of-5", "raises", "ValueError",
     HANABLIVE + "from_hanablive(with_action(type=2, value=5))"),
    ("records-rank-clue-0", "raises", "ValueError", HANABLIVE + "from_hanablive(with_action(type=3, value=0))"),
    ("records-target-201", "raises", "ValueError", HANABLIVE + "from_hanablive(with_action(target=201))"),
    ("records-bool-target", "raises", "ValueError", HANABLIVE + "from_hanablive(with_action(target=True))"),
    ("records-float-target", "raises", "ValueError", HANABLIVE + "from_hanablive(with_action(target=1.0))"),
    ("records-card-rank-6", "raises", "ValueError",
     HANABLIVE + "bad = dict(record, deck=[dict(c) for c in record['deck']]); bad['deck'][0]['rank'] = 6\n"
     "from_hanablive(bad)"),
    ("records-deep-nesting", "raises", "ValueError",
     HANABLIVE + "from_hanablive('[' * 100000 + ']' * 100000)"),
    ("records-actions-not-a-list", "raises", "ValueError",
     HANABLIVE + "from_hanablive(dict(record, actions=5))"),
    # --- environments -----------------------------------------------------------------------
    ("env-raw-step-bool", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\ne = hanabi_v0.raw_env(); e.reset(seed=0)\ne.step(True)"),
    ("env-raw-step-float", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\ne = hanabi_v0.raw_env(); e.reset(seed=0)\ne.step(5.7)"),
    ("env-raw-step-99", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\ne = hanabi_v0.raw_env(); e.reset(seed=0)\ne.step(99)"),
    ("env-wrapped-step-float", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\ne = hanabi_v0.env(); e.reset(seed=0)\ne.step(5.7)"),
    ("env-numpy-int-legal", "ok", None,
     "from lbs_pz.envs import hanabi_v0\ne = hanabi_v0.env(); e.reset(seed=0)\n"
     "mask = e.observe(e.agent_selection)['action_mask']\ne.step(np.int64(np.flatnonzero(mask)[0]))"),
    ("env-gymnasium-step-bool", "raises", "ValueError",
     "import gymnasium, lbs_pz\ne = gymnasium.make('lbs_pz/HanabiSelfPlay-v0'); e.reset(seed=0)\ne.step(True)"),
    ("env-reset-seed-negative", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\nhanabi_v0.env().reset(seed=-1)"),
    ("env-reset-seed-2-64", "raises", "ValueError",
     "from lbs_pz.envs import hanabi_v0\nhanabi_v0.env().reset(seed=2**64)"),
    ("env-vec-step-float", "raises", "ValueError",
     "from lbs_pz.wrappers.vec_env import HanabiVecEnv\nv = HanabiVecEnv(2, seed=0); v.reset()\n"
     "masks = v.action_masks()\nv.step(np.array([np.flatnonzero(m)[0] + 0.5 for m in masks]))"),
    ("env-bad-players", "raises", "ValueError", "from lbs_pz.envs import hanabi_v0\nhanabi_v0.env(players=7)"),
]

CASES += misuse_blueprints.CASES + misuse_cli.CASES + misuse_web.CASES

SIGNAL_NAMES = {-s.value: s.name for s in signal.Signals}


def run_case(case, timeout: float) -> dict:
    name, expect, exc, body = case
    code = (PRELUDE + textwrap.dedent(body) + "\nprint('__CASE_END__')\n")
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        return dict(name=name, outcome="hang", detail=f"no exit after {timeout:.0f} s",
                    seconds=timeout)
    seconds = time.perf_counter() - start
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    if proc.returncode < 0:
        return dict(name=name, outcome="crash", seconds=seconds,
                    detail=SIGNAL_NAMES.get(proc.returncode, f"signal {-proc.returncode}"))
    ended = proc.returncode == 0 and "__CASE_END__" in proc.stdout
    if expect == "no-crash":
        ok = ended or proc.returncode == 1
        outcome = "pass" if ok else "fail"
        detail = "ran" if ended else last
    elif expect == "ok":
        outcome = "pass" if ended else "fail"
        detail = "ran" if ended else last
    else:
        raised = last.split(":", 1)[0].rsplit(".", 1)[-1] if proc.returncode == 1 else ""
        if ended:
            outcome, detail = "accepted", "ran to the end without an exception"
        elif not raised:
            outcome, detail = "fail", f"exit {proc.returncode}: {last}"
        else:
            outcome = "pass" if exc == "Exception" or _is_subclass(raised, exc) else "wrong-error"
            detail = last[:160]
    return dict(name=name, outcome=outcome, detail=detail, seconds=seconds)


def _is_subclass(raised: str, expected: str) -> bool:
    import builtins
    from lbs_pz.models import CheckpointError
    known = dict(vars(builtins), CheckpointError=CheckpointError)
    cls = known.get(raised)
    if cls is None:                                   # a project exception: match by name
        return raised == expected
    return isinstance(cls, type) and issubclass(cls, known.get(expected, Exception))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--workers", type=int, default=2, help="child processes at a time")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a hang")
    args = parser.parse_args(argv)
    cases = CASES
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {c[0] for c in CASES}
        if unknown:
            parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
        cases = [c for c in CASES if c[0] in wanted]
    if args.list:
        for name, expect, exc, _ in cases:
            print(f"{name:42s} {expect}{' ' + exc if exc else ''}")
        return 0
    if args.workers < 1 or args.timeout <= 0:
        parser.error("--workers must be >= 1 and --timeout > 0")
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda c: run_case(c, args.timeout), cases))
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        mark = "ok " if r["outcome"] == "pass" else "!! "
        print(f"{mark}{r['name']:42s} {r['outcome']:11s} {r['seconds']:5.1f}s  {r['detail']}")
    bad = len(results) - counts.get("pass", 0)
    print(f"\nmisuse cases: {len(results)} tried in {time.perf_counter() - start:.0f} s; "
          f"crashes (signal): {counts.get('crash', 0)}; hangs: {counts.get('hang', 0)}; "
          f"silently accepted: {counts.get('accepted', 0)}; wrong error class: "
          f"{counts.get('wrong-error', 0)}; other failures: {counts.get('fail', 0)}; "
          f"passed: {counts.get('pass', 0)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
