"""Environment hardening (issue 12, "Consistent environment behaviour"): `raw_env`, `env()`,
the Gymnasium self-play env and the SB3 VecEnv accept and refuse the same actions, seeds and
constructor arguments with the same words (`lbs_pz.envs.checks`), and every observation lies
in its declared space.

Each misuse runs in a child process (tests/helpers/isolated.py); independent cases share one
child, which prints one line per case and the parent asserts on them.
"""

import pytest

from tests.helpers.isolated import assert_runs_cleanly

# Four interfaces on the same 2-player game (seed 1: player 0 to act, 0 = Discard 0 is
# illegal with all hint tokens, 5 = Play 0 is legal). `step(kind, env, a)` makes the move
# of the player to act (in the VecEnv: game 0; game 1 plays a legal move).
_FOUR = """
import warnings
warnings.filterwarnings("ignore")
import math
import numpy as np
from lbs_pz.envs import hanabi_v0
from lbs_pz.envs.self_play import HanabiSelfPlayEnv
from lbs_pz.wrappers.vec_env import HanabiVecEnv
KINDS = ("raw", "env", "gym", "vec")

def make(kind, **kwargs):
    if kind == "raw":
        e = hanabi_v0.raw_env(**kwargs); e.reset(seed=1)
    elif kind == "env":
        e = hanabi_v0.env(**kwargs); e.reset(seed=1)
    elif kind == "gym":
        e = HanabiSelfPlayEnv(**kwargs); e.reset(seed=1)
    elif kind == "gym.make":                  # through Gymnasium's registry and wrappers
        import gymnasium, lbs_pz
        e = gymnasium.make("lbs_pz/HanabiSelfPlay-v0", **kwargs); e.reset(seed=1)
    else:
        e = HanabiVecEnv(2, seed=1, **kwargs); e.reset()
    return e

def step(kind, e, action):
    if kind == "vec":
        other = int(e.action_masks()[1].argmax())
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            return e.step(np.array([action, other]))
        return e.step([action, other])
    return e.step(action)

def outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as err:
        return f"{type(err).__name__}: {err}".replace("\\n", " ")
"""


def _lines(out: str) -> dict:
    return dict(line.split(" => ", 1) for line in out.splitlines() if " => " in line)


def test_bad_actions_read_the_same_in_all_four_interfaces():
    """True, 5.7, 99, -1, "a", None, np.float64, np.bool_: the same ValueError (with the value)
    from raw_env, env(), the Gymnasium env and the VecEnv; NumPy integers (and 0-d integer
    arrays) are moves everywhere."""
    out = assert_runs_cleanly(_FOUR + """
cases = {"True": True, "5.7": 5.7, "99": 99, "-1": -1, "'a'": "a", "None": None,
         "np.float64(5.0)": np.float64(5.0), "np.bool_(True)": np.bool_(True),
         "np.int64(99)": np.int64(99), "[5]": [5],
         "np.int64(5)": np.int64(5), "np.uint8(5)": np.uint8(5), "np.array(5)": np.array(5)}
for kind in KINDS + ("gym.make",):
    for name, action in cases.items():
        e = make(kind)
        print(kind, name, "=>", outcome(lambda: step(kind, e, action)))
""")
    results = _lines(out)
    for kind in ("raw", "env", "gym", "vec", "gym.make"):
        where = "game 0: " if kind == "vec" else ""
        for name, shown in [("True", "True (bool)"), ("5.7", "5.7 (float)"), ("'a'", "'a' (str)"),
                            ("None", "None (NoneType)"),
                            ("np.float64(5.0)", "np.float64(5.0) (float64)"),
                            ("np.bool_(True)", "np.True_ (bool)"), ("[5]", "[5] (list)")]:
            assert results[f"{kind} {name}"] == (
                f"ValueError: {where}action must be an integer move id in [0, 20), got {shown}"
            ), (kind, name, results[f"{kind} {name}"])
        for name, value in [("99", 99), ("-1", -1), ("np.int64(99)", 99)]:
            assert results[f"{kind} {name}"] == (
                f"ValueError: {where}illegal action {value}: out of range [0, 20)"), (kind, name)
        for name in ("np.int64(5)", "np.uint8(5)", "np.array(5)"):
            assert results[f"{kind} {name}"] == "ok", (kind, name, results[f"{kind} {name}"])


def test_illegal_in_range_moves_follow_one_rule():
    """An illegal in-range move (Discard 0 with all hint tokens): "terminate" ends the game
    with -1 for its author and info["illegal_action"] in every interface (the default of
    env(), Gymnasium and VecEnv); "raise" is a ValueError naming the move and the legal ones,
    with nothing changed (the default of raw_env, as hanabi_v5's raw_env)."""
    out = assert_runs_cleanly(_FOUR + """
for kind in KINDS:
    for mode in (None, "terminate", "raise"):
        kwargs = {} if mode is None else {"illegal_action": mode}
        e = make(kind, **kwargs)
        try:
            result = step(kind, e, np.int64(0))
        except ValueError as err:
            text = str(err)
            if kind == "vec":                     # the VecEnv names the game first
                assert text.startswith("game 0: "), text
                text = text[len("game 0: "):]
            unchanged = (e.game.num_moves_played == 0 if kind != "vec" else
                         all(e.batch.get_state(i).num_moves_played == 0 for i in range(2)))
            print(kind, mode, "=>", "raised", text.startswith("illegal action 0 (Discard 0)")
                  and "; legal actions: [" in text, unchanged)
            continue
        if kind in ("raw", "env"):
            author = "player_0"
            print(kind, mode, "=>", "ended", e.rewards[author], e.rewards["player_1"],
                  all(e.terminations.values()), e.infos[author].get("illegal_action"))
        elif kind == "gym":
            _, reward, terminated, _, info = result
            print(kind, mode, "=>", "ended", reward, None, terminated, info.get("illegal_action"))
        else:
            _, rewards, dones, infos = result
            print(kind, mode, "=>", "ended", rewards[0], None, dones[0],
                  infos[0].get("illegal_action"))
""")
    results = _lines(out)
    for kind in ("raw", "env", "gym", "vec"):
        assert results[f"{kind} raise"] == "raised True True", (kind, results[f"{kind} raise"])
        ended = results[f"{kind} terminate"]
        assert ended.startswith("ended -1.0 ") and ended.endswith(" True True"), (kind, ended)
    assert results["raw None"] == "raised True True"
    for kind in ("env", "gym", "vec"):
        assert results[f"{kind} None"] == results[f"{kind} terminate"]
    assert results["raw terminate"] == results["env terminate"] == "ended -1.0 0.0 True True"


def test_raw_env_terminate_matches_env_wrapper_step_by_step():
    """raw_env(illegal_action="terminate") ends the game exactly as env()'s
    TerminateIllegalWrapper: rewards, cumulative rewards, dead steps to the end."""
    out = assert_runs_cleanly(_FOUR + """
def trace(e):
    e.step(0)
    rows = [(dict(e.rewards), dict(e._cumulative_rewards), dict(e.terminations))]
    while e.agents:
        _, reward, term, trunc, info = e.last()
        rows.append((e.agent_selection, reward, term, trunc, info.get("illegal_action")))
        e.step(None)
    return rows
a = trace(make("raw", illegal_action="terminate"))
b = trace(make("env"))
print("same =>", a == b, len(a))
print("first =>", a[1])
""")
    results = _lines(out)
    assert results["same"] == "True 3"
    assert results["first"] == "('player_0', -1.0, True, True, True)"


def test_vec_env_illegal_game_ends_and_restarts_alone():
    """VecEnv "terminate": the illegal game reports reward -1, done, its observation before
    the move and its score, and restarts; the other games step exactly as a reference."""
    assert_runs_cleanly(_FOUR + """
env, ref = HanabiVecEnv(4, seed=7), HanabiVecEnv(4, seed=7)
obs, _ = env.reset(), ref.reset()
rng = np.random.default_rng(0)
for _ in range(5):
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
    env.step(actions); ref.step(actions)
masks = env.action_masks()
before_obs = env.batch.encode().copy()
before_score = int(env.batch.scores()[2])
actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
actions[2] = int(np.flatnonzero(masks[2] == 0)[0])          # an illegal in-range move
obs, rewards, dones, infos = env.step(actions)
ref_actions = actions.copy(); ref_actions[2] = int(masks[2].argmax())
ref_obs, ref_rewards, ref_dones, _ = ref.step(ref_actions)
assert rewards[2] == -1.0 and dones[2] and infos[2]["illegal_action"]
np.testing.assert_array_equal(infos[2]["terminal_observation"], before_obs[2])
assert infos[2]["episode"]["score"] == before_score and infos[2]["episode"]["l"] == 6
assert env.batch.get_state(2).num_moves_played == 0                # restarted
for i in (0, 1, 3):
    np.testing.assert_array_equal(obs[i], ref_obs[i])
    assert rewards[i] == ref_rewards[i] and dones[i] == ref_dones[i]
    assert "illegal_action" not in infos[i]
strict = HanabiVecEnv(4, seed=7, illegal_action="raise")
strict.reset()
bad = np.array([int(m.argmax()) for m in strict.action_masks()])
bad[3] = int(np.flatnonzero(strict.action_masks()[3] == 0)[0])
try:
    strict.step(bad)
    raise AssertionError("no error")
except ValueError as err:
    assert str(err).startswith(f"game 3: illegal action {bad[3]} ("), err
assert all(strict.batch.get_state(i).num_moves_played == 0 for i in range(4))  # nobody moved
# Without an action_masks() call since the last step the VecEnv checks fresh masks itself.
lazy = HanabiVecEnv(2, seed=1)
lazy.reset()
for _ in range(30):
    masks = lazy.batch.legal_masks()
    legal = masks.argmax(axis=1)
    _, _, _, infos = lazy.step(legal)
    assert not any("illegal_action" in info for info in infos)
masks = lazy.batch.legal_masks()
wrong = masks.argmax(axis=1)
wrong[1] = int(np.flatnonzero(masks[1] == 0)[0])
_, rewards, dones, infos = lazy.step(wrong)
assert (rewards[1] == -1 and dones[1] and infos[1]["illegal_action"]
        and "illegal_action" not in infos[0])
for actions, fragment in [(np.zeros(3, np.int64), "must hold 4 move ids"),
                          (np.full(4, 5.0), "integer array"), (np.ones(4, bool), "integer array"),
                          (5, "4 move ids"), ("abcd", "4 move ids"),
                          (np.array([5, 5, 5, -1], np.int32),
                           "game 3: illegal action -1: out of range"),
                          (np.array([5, 5, 2**40, 5], np.uint64), "game 2: illegal action"),
                          ([5, 5, True, 5], "game 2: action must be an integer")]:
    try:
        strict.step(actions)
        raise AssertionError(f"accepted {actions!r}")
    except ValueError as err:
        assert fragment in str(err), (actions, err)
""")


def test_observations_lie_in_their_spaces_in_all_four_interfaces():
    """observation_space.contains(obs) for every observation of random games (all agents in
    the AEC envs, the public/private wrapper too), and the info action masks; PettingZoo's
    api_test and Gymnasium's / SB3's check_env pass."""
    out = assert_runs_cleanly(_FOUR + """
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from lbs_pz.wrappers import PublicPrivateObservation
rng = np.random.default_rng(0)
counts = dict.fromkeys(("raw", "env", "pubpriv", "gym", "vec"), 0)
variants = [{}, {"players": 3, "hand_size": 3, "observation_type": "minimal"},
            {"players": 4, "colors": 3, "ranks": 4, "observation_type": "seer"}]
for kwargs in variants:
    for kind, make_aec in (("raw", hanabi_v0.raw_env), ("env", hanabi_v0.env),
                           ("pubpriv", lambda **k: PublicPrivateObservation(hanabi_v0.env(**k)))):
        e = make_aec(**kwargs)
        for seed in range(3):
            e.reset(seed=seed)
            for agent in e.agent_iter():
                for other in e.agents:
                    obs = e.observe(other)
                    assert e.observation_space(other).contains(obs), (kind, other)
                    mask = e.infos[other]["action_mask"]
                    assert mask.dtype == np.int8 and mask.shape == (e.action_space(other).n,)
                    counts[kind] += 1
                obs, _, term, trunc, info = e.last()
                if term or trunc:
                    e.step(None)
                else:
                    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
                    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    g = HanabiSelfPlayEnv(**kwargs)
    for seed in range(3):
        obs, info = g.reset(seed=seed)
        done = False
        while not done:
            assert g.observation_space.contains(obs)
            counts["gym"] += 1
            obs, _, done, _, info = g.step(int(rng.choice(info["legal_moves"])))
        assert g.observation_space.contains(obs)
    v = HanabiVecEnv(8, seed=0, **kwargs)
    obs = v.reset()
    for _ in range(120):
        assert obs.dtype == np.float32 and obs.shape == (8,) + v.observation_space.shape
        assert all(v.observation_space.contains(o) for o in obs)
        counts["vec"] += 8
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in v.action_masks()])
        obs, _, dones, infos = v.step(actions)
        for i in np.flatnonzero(dones):
            assert v.observation_space.contains(infos[i]["terminal_observation"])
api_test(hanabi_v0.env(players=3), num_cycles=200)
api_test(hanabi_v0.raw_env(), num_cycles=200)
check_env(HanabiSelfPlayEnv(players=3))
sb3_check_env(HanabiSelfPlayEnv())
print("counts =>", counts)
""")
    counts = eval(_lines(out)["counts"])
    assert all(n > 100 for n in counts.values()), counts


def test_layout_and_info_keys_match_hanabi_v5():
    """Same observation keys, shapes and action-mask dtype as PettingZoo's hanabi_v5, whose
    info key (`action_mask`, int8, zeros for the agent not to act) ours carry too. The
    documented differences: float32 in [0, 1] instead of float64 in (-inf, inf), and the
    extra info keys `score` and `legal_moves`; with 4-5 players our default hand size is
    HLE's 4, hanabi_v5's is 5 (pass hand_size=5 to get hanabi_v5's game)."""
    pytest.importorskip("shimmy")
    pytest.importorskip("pyspiel")          # hanabi_v5 runs OpenSpiel's Hanabi through shimmy
    out = assert_runs_cleanly(_FOUR + """
from pettingzoo.classic import hanabi_v5
assert hanabi_v0.env(players=4).unwrapped.config.hand_size == 4
for players in (2, 4):
    ours = hanabi_v0.env(players=players, hand_size=5)
    theirs = hanabi_v5.env(players=players, hand_size=5)
    ours.reset(seed=1); theirs.reset(seed=1)
    a, b = ours.possible_agents[0], theirs.possible_agents[0]
    assert ours.possible_agents == theirs.possible_agents
    so, st = ours.observation_space(a), theirs.observation_space(b)
    assert sorted(so.spaces) == sorted(st.spaces)
    assert so["observation"].shape == st["observation"].shape
    assert so["action_mask"] == st["action_mask"]
    assert ours.action_space(a) == theirs.action_space(b)
    for agent in ours.possible_agents:
        mo, mt = ours.infos[agent]["action_mask"], theirs.infos[agent]["action_mask"]
        assert mo.dtype == mt.dtype == np.int8 and mo.shape == mt.shape
        assert mo.any() == mt.any()                     # only the agent to act has moves
        assert set(theirs.infos[agent]) <= set(ours.infos[agent])
    obs_t = theirs.observe(b)["observation"]
    assert set(np.unique(obs_t)) <= {0.0, 1.0}          # so [0, 1] bounds hold for both
    print(players, "=>", so["observation"].dtype, st["observation"].dtype,
          sorted(set(ours.infos[a]) - set(theirs.infos[b])))
""")
    results = _lines(out)
    assert results["2"] == results["4"] == "float32 float64 ['legal_moves', 'score']"


def test_seeds_out_of_range_are_value_errors_in_all_four():
    out = assert_runs_cleanly(_FOUR + """
def reset(kind, seed):
    if kind == "raw":
        hanabi_v0.raw_env().reset(seed=seed)
    elif kind == "env":
        hanabi_v0.env().reset(seed=seed)
    elif kind == "gym":
        HanabiSelfPlayEnv().reset(seed=seed)
    elif kind == "gym.make":
        import gymnasium, lbs_pz
        gymnasium.make("lbs_pz/HanabiSelfPlay-v0").reset(seed=seed)
    elif kind == "vec":
        v = HanabiVecEnv(2); v.seed(seed); v.reset()
    else:
        HanabiVecEnv(2, seed=seed)
cases = {"-1": -1, "2**64": 2**64, "1.5": 1.5, "True": True, "np.int64(-3)": np.int64(-3),
         "'7'": "7", "2**64-1": 2**64 - 1, "np.uint64(2**64-1)": np.uint64(2**64 - 1),
         "0": 0, "None": None}
for kind in KINDS + ("vec-init", "gym.make"):
    for name, seed in cases.items():
        print(kind, name, "=>", outcome(lambda: reset(kind, seed)))
""")
    results = _lines(out)
    for kind in ("raw", "env", "gym", "vec", "vec-init", "gym.make"):
        assert results[f"{kind} -1"] == "ValueError: seed must be in [0, 2**64), got -1"
        assert results[f"{kind} np.int64(-3)"] == "ValueError: seed must be in [0, 2**64), got -3"
        assert results[f"{kind} 2**64"] == f"ValueError: seed must be in [0, 2**64), got {2**64}"
        for name, shown in [("1.5", "1.5 (float)"), ("True", "True (bool)"), ("'7'", "'7' (str)")]:
            assert results[f"{kind} {name}"] == (
                f"ValueError: seed must be None or an integer in [0, 2**64), got {shown}"), kind
        for name in ("2**64-1", "np.uint64(2**64-1)", "0", "None"):
            assert results[f"{kind} {name}"] == "ok", (kind, name, results[f"{kind} {name}"])


def test_bad_constructor_arguments_name_the_argument():
    out = assert_runs_cleanly(_FOUR + """
from lbs_pz.engine import HanabiConfig
from lbs_pz.wrappers import PublicPrivateObservation
cases = {
    "raw players=7": lambda: hanabi_v0.raw_env(players=7),
    "env hand_size=0": lambda: hanabi_v0.env(hand_size=0),
    "env observation_type": lambda: hanabi_v0.env(observation_type="x-ray"),
    "env render_mode": lambda: hanabi_v0.env(render_mode="video"),
    "env render_mode list": lambda: hanabi_v0.env(render_mode=["human"]),
    "env illegal_action": lambda: hanabi_v0.env(illegal_action="ignore"),
    "raw illegal_reward nan": lambda: hanabi_v0.raw_env(illegal_reward=float("nan")),
    "gym players=7": lambda: HanabiSelfPlayEnv(players=7),
    "gym hand_size=0": lambda: HanabiSelfPlayEnv(hand_size=0),
    "gym observation_type": lambda: HanabiSelfPlayEnv(observation_type="x-ray"),
    "gym render_mode": lambda: HanabiSelfPlayEnv(render_mode="rgb_array"),
    "gym seat True": lambda: HanabiSelfPlayEnv(seat=True),
    "gym seat 2": lambda: HanabiSelfPlayEnv(seat=2),
    "gym illegal_reward str": lambda: HanabiSelfPlayEnv(illegal_reward="-1"),
    "gym partner": lambda: HanabiSelfPlayEnv(partner="bot"),
    "vec players=7": lambda: HanabiVecEnv(2, players=7),
    "vec hand_size=0": lambda: HanabiVecEnv(2, hand_size=0),
    "vec num_envs=0": lambda: HanabiVecEnv(0),
    "vec num_envs=1.5": lambda: HanabiVecEnv(1.5),
    "vec num_envs=True": lambda: HanabiVecEnv(True),
    "vec config str": lambda: HanabiVecEnv(2, config="standard"),
    "vec config+kwargs": lambda: HanabiVecEnv(2, config=HanabiConfig(), players=3),
    "vec illegal_action": lambda: HanabiVecEnv(2, illegal_action=None),
    "pubpriv object": lambda: PublicPrivateObservation(object()),
    "pubpriv gym env": lambda: PublicPrivateObservation(HanabiSelfPlayEnv()),
}
for name, make_it in cases.items():
    print(name, "=>", outcome(make_it))
raw = hanabi_v0.raw_env()
print("raw step before reset =>", outcome(lambda: raw.step(5)))
print("gym step before reset =>", outcome(lambda: HanabiSelfPlayEnv().step(5)))
print("gym masks before reset =>", outcome(lambda: HanabiSelfPlayEnv().action_masks()))
""")
    results = _lines(out)
    expected = {
        "raw players=7": "players", "env hand_size=0": "hand_size",
        "env observation_type": "observation_type", "env render_mode": "render_mode",
        "env render_mode list": "render_mode", "env illegal_action": "illegal_action",
        "raw illegal_reward nan": "illegal_reward", "gym players=7": "players",
        "gym hand_size=0": "hand_size", "gym observation_type": "observation_type",
        "gym render_mode": "render_mode", "gym seat True": "seat", "gym seat 2": "seat",
        "gym illegal_reward str": "illegal_reward", "gym partner": "partner",
        "vec players=7": "players", "vec hand_size=0": "hand_size",
        "vec num_envs=0": "num_envs", "vec num_envs=1.5": "num_envs",
        "vec num_envs=True": "num_envs", "vec config str": "config",
        "vec config+kwargs": "either config", "vec illegal_action": "illegal_action",
        "pubpriv object": "env must be an lbs_pz hanabi_v0 env",
        "pubpriv gym env": "env must be an lbs_pz hanabi_v0 env",
    }
    for name, argument in expected.items():
        got = results[name]
        assert got.startswith("ValueError: ") and argument in got, (name, got)
    for name in ("raw step before reset", "gym step before reset", "gym masks before reset"):
        assert results[name].startswith("RuntimeError: call reset()"), (name, results[name])
