"""Fuzz program for the public engine, rule-bot and environment API (run by
tests/core/test_fuzz_api.py).

    python tests/helpers/fuzz_api.py --examples 300 --seed 0

Hypothesis draws sequences of calls: every public method of HanabiState and HanabiBatch
(found by dir(), so new methods are fuzzed too), the rule bots, the constructors, the
PettingZoo env, the Gymnasium self-play env and the SB3 VecEnv, each with arguments drawn
from a mix of valid values and hostile ones (huge and negative ints, floats, NaN, bools,
None, strings, arrays of the wrong dtype, shape, contiguity or writeability, other engine
objects). A call may raise one of the documented Python exceptions; any other exception
fails the example (Hypothesis shrinks it), and a signal kills this process: each call is
printed before it runs, so the last line printed names the call that crashed.
"""

import argparse
import resource
import sys

import numpy as np
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.envs import hanabi_v0
from lbs_pz.envs.self_play import HanabiSelfPlayEnv
from lbs_pz.wrappers.vec_env import HanabiVecEnv

# What a misuse may raise. Anything else (AttributeError, ZeroDivisionError, SystemError,
# AssertionError, ...) is a bug in how the API reports bad input.
CLEAN = (ValueError, TypeError, IndexError, RuntimeError, OverflowError, MemoryError)

CONFIGS = [HanabiConfig(), HanabiConfig(players=3, colors=3, ranks=3, hand_size=2),
           HanabiConfig(players=5, observation_type="seer")]
STATE_METHODS = sorted(n for n in dir(HanabiState) if not n.startswith("_"))
BATCH_METHODS = sorted(n for n in dir(HanabiBatch) if not n.startswith("_"))
BOT = RuleBot("strong")
BOT_METHODS = ["act", "act_batch", "rollout", "rollout_scores", "value", "counterfactual_mask"]
LOG = sys.stdout


def arrays():
    shape = st.sampled_from([(), (0,), (1,), (4,), (4, 20), (4, 658), (1, 5), (3, 5), (2, 658),
                             (4, 1), (4, 20, 1)])
    dtype = st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32,
                             np.float64, np.bool_])
    fill = st.sampled_from([0, 1, 5, 24, 99, -1, 127])
    kind = st.sampled_from(["plain", "read-only", "strided", "fortran"])

    def build(shape, dtype, fill, kind):
        big = np.full(tuple(2 * s for s in shape) if kind == "strided" else shape, fill)
        arr = big.astype(dtype, casting="unsafe")
        if kind == "strided":
            arr = arr[tuple(slice(None, None, 2) for _ in shape)]
        elif kind == "fortran":
            arr = np.asfortranarray(arr)
        elif kind == "read-only":
            arr.flags.writeable = False
        return arr
    return st.builds(build, shape, dtype, fill, kind)


def values(objects):
    """A valid-or-hostile argument; `objects` are live engine objects to pass where others go."""
    return st.one_of(
        st.integers(-3, 25), st.integers(-2**70, 2**70),
        st.sampled_from([2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, -2**63]),
        st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
        st.text(max_size=3), st.lists(st.integers(-2, 30), max_size=6), arrays(),
        st.sampled_from(objects))


@st.composite
def programs(draw):
    config = draw(st.sampled_from(CONFIGS))
    state = HanabiState(config, seed=draw(st.integers(0, 1000)))
    for _ in range(draw(st.integers(0, 30))):             # a mid-game position
        moves = state.legal_moves()
        if not moves:
            break
        state.apply(moves[draw(st.integers(0, len(moves) - 1))])
    batch = HanabiBatch.from_states([state.clone() for _ in range(draw(st.integers(1, 4)))])
    objects = [state, batch, config, CONFIGS[0], HanabiState(CONFIGS[1], seed=1)]
    calls = []
    for _ in range(draw(st.integers(1, 12))):
        target = draw(st.sampled_from(["state", "batch", "bot", "new", "env", "gym", "vec"]))
        if target == "state":
            name = draw(st.sampled_from(STATE_METHODS))
        elif target == "batch":
            name = draw(st.sampled_from(BATCH_METHODS))
        elif target == "bot":
            name = draw(st.sampled_from(BOT_METHODS))
        elif target == "new":
            name = draw(st.sampled_from(["HanabiState", "HanabiBatch", "HanabiConfig"]))
        elif target == "vec":
            name = draw(st.sampled_from(["step", "reset", "action_masks", "seed"]))
        else:
            name = draw(st.sampled_from(["step", "reset"]))
        args = draw(st.lists(values(objects), max_size=3))
        calls.append((target, name, args))
    return state, batch, calls


def run_call(state, batch, env, target, name, args):
    env, gym_env, vec_env = env
    if target == "state":
        attr = getattr(state, name)
    elif target == "batch":
        attr = getattr(batch, name)
    elif target == "bot":
        attr = getattr(BOT, name)
    elif target == "new":
        attr = {"HanabiState": HanabiState, "HanabiBatch": HanabiBatch,
                "HanabiConfig": HanabiConfig}[name]
    elif target == "gym":
        attr = gym_env.step if name == "step" else \
            (lambda *a: gym_env.reset(seed=a[0] if a else None))
    elif target == "vec":
        attr = getattr(vec_env, name)
    else:
        attr = env.step if name == "step" else (lambda *a: env.reset(*a[:1]))
    result = attr(*args) if callable(attr) else attr
    if isinstance(result, HanabiState):          # use what a call made, as a user would
        result.legal_moves()
        result.encode(result.current_player)
    elif isinstance(result, HanabiBatch):
        result.legal_masks()
        result.encode()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # A hostile size may ask for terabytes; with an address-space cap the engine must answer
    # MemoryError instead of the kernel's out-of-memory killer ending the run.
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))

    @settings(max_examples=args.examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def fuzz(program):
        state, batch, calls = program
        env, gym_env, vec_env = hanabi_v0.env(), HanabiSelfPlayEnv(), HanabiVecEnv(3, seed=0)
        env.reset(seed=0)
        gym_env.reset(seed=0)
        vec_env.reset()
        envs = (env, gym_env, vec_env)
        for target, name, call_args in calls:
            print(f"CALL {target}.{name}({', '.join(_short(a) for a in call_args)})", file=LOG,
                  flush=True)
            try:
                run_call(state, batch, envs, target, name, call_args)
            except CLEAN:
                pass

    seed(args.seed)(fuzz)()
    print("FUZZ DONE", flush=True)


def _short(value):
    if isinstance(value, np.ndarray):
        flags = "" if value.flags.writeable else " read-only"
        flags += "" if value.flags.c_contiguous else " non-C"
        return f"<{value.dtype} {value.shape}{flags}>"
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


if __name__ == "__main__":
    main()
