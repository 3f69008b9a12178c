"""The engine, the environments, the rule bots, evaluation and search with the grounded
belief import and run without torch (it is the `[torch]` extra) nor any other optional
package (SB3, Ray, the web stack); search's defaults say why they fall back, `lbs-pz
--help` works, and what needs a missing package says which extra installs it
(`lbs_pz.optional`)."""

import subprocess
import sys
import textwrap

from tests.helpers.waiting import HANG_SECONDS

SCRIPT = textwrap.dedent('''
    import sys, warnings

    class NoTorch:                       # as if no optional package were installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib", "ray",
                                      "starlette", "uvicorn"):
                raise ImportError(f"No module named {name!r}")

    sys.meta_path.insert(0, NoTorch())
    import contextlib, io
    import gymnasium, pettingzoo
    import lbs_pz
    import lbs_pz.envs
    assert "torch" not in sys.modules
    from lbs_pz.agents import RuleBot, load_blueprint
    from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
    from lbs_pz.envs import hanabi_v0
    from lbs_pz.eval import evaluate
    from lbs_pz.search.agents import LBSAgent

    result = evaluate(load_blueprint("strong"), games=50)
    assert result.mean > 20, result.summary()
    env = hanabi_v0.env(players=3)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else info["legal_moves"][0])
    single = gymnasium.make("lbs_pz/HanabiSelfPlay-v0")
    single.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = LBSAgent(RuleBot("strong"), rollouts=8)
    assert agent.depth == -1 and "grounded+cf" in agent.defaults[0], agent.defaults
    assert any("[torch] extra" in str(w.message) for w in caught)
    state = HanabiState(HanabiConfig(), seed=1)
    assert agent.act(state) in state.legal_moves()
    assert "torch" not in sys.modules

    # what needs a missing package names its extra
    from lbs_pz.optional import MissingDependency, torch_available
    assert not torch_available()
    try:
        load_blueprint("lstm:public_lstm_2p")
    except ValueError as err:
        assert 'pip install "lbs_pz[torch]"' in str(err), err
    else:
        raise AssertionError("an lstm: blueprint loaded without torch")
    try:
        import lbs_pz.wrappers.vec_env
    except MissingDependency as err:
        assert 'pip install "lbs_pz[sb3]"' in str(err), err
    else:
        raise AssertionError("the SB3 VecEnv imported without SB3")
    try:
        load_blueprint("rllib:results/rllib_ppo")
    except ValueError as err:
        assert 'pip install "lbs_pz[rllib]"' in str(err), err
    else:
        raise AssertionError("an rllib: blueprint loaded without Ray's RLlib")
    from lbs_pz.optional import rllib_available
    assert not rllib_available()

    # the command: --help, and one line naming the extra for what needs one
    from lbs_pz.cli import main
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main(["--help"])
        except SystemExit as exit:
            assert exit.code == 0, exit.code
    assert "serve" in out.getvalue() and "train-belief" in out.getvalue()
    for argv, extra in ((["serve"], "web"),
                        (["compare", "--backend", "ray", "--games", "1"], "distributed")):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert main(argv) == 2, argv
        assert f'pip install "lbs_pz[{extra}]"' in err.getvalue(), err.getvalue()
    assert not any(m.split(".")[0] in ("torch", "stable_baselines3", "ray", "starlette")
                   for m in sys.modules)
    print("ok")
''')


def test_engine_envs_bots_and_grounded_search_run_without_torch():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
