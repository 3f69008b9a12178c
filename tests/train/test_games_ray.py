"""Training data from Ray workers: `GameSource("ray")` gives the learner the same arrays as
the in-process source, so train-belief, train-value and distill end with the same
weights on a fixed seed; search-games records the same games on Ray as in a process
pool."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.search.methods import MethodSpec
from lbs_pz.train.belief import train_belief
from lbs_pz.train.configs import BeliefTrainConfig, DistillConfig, ValueTrainConfig
from lbs_pz.train.distill import distill
from lbs_pz.train.games import GameSource, generate_games, generate_positions, teacher_games
from lbs_pz.train.value import train_value

ray = pytest.importorskip("ray")

SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module: every session in it joins this one."""
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield
    ray.shutdown()


def test_ray_workers_give_the_learner_the_in_process_arrays(local_ray):
    config = HanabiConfig(**SMALL)
    bot = RuleBot("medium")
    with GameSource("belief", "medium", config, seed=3, backend="ray", workers=2) as source:
        for first in (0, 7, 14):                    # the later steps were played ahead
            got = source.games(first, 7)
            want = generate_games(config, bot, 7, seed=3, first_game=first)
            for key in ("obs", "hands", "lengths", "scores"):
                assert np.array_equal(got[key], want[key]), (first, key)
        assert (21, 7) in source._pending           # the next steps are already in flight
    assert not source._pending                      # cancelled when the block ends
    with GameSource("value", "medium", config, seed=3, backend="ray", workers=3) as source:
        x, y = source.games(5, 8)
        wx, wy = generate_positions(config, bot, 8, seed=3, first_game=5)
        assert np.array_equal(x, wx) and np.array_equal(y, wy)
    with GameSource("value", "medium", config, seed=3, backend="ray", workers=3,
                    options=dict(off_policy=1.0)) as source:
        ox, oy = source.games(5, 8)
        wx, wy = generate_positions(config, bot, 8, seed=3, first_game=5, off_policy=1.0)
        assert np.array_equal(ox, wx) and np.array_equal(oy, wy) and len(ox) < len(x)
    options = dict(explore=1.0, conventions=True)
    with GameSource("teacher", "medium", config, seed=3, backend="ray", workers=2,
                    options=options) as source:
        got = source.games(4, 9)
    want = teacher_games(config, bot, 9, seed=3, first_game=4, **options)
    assert [g["deal"] for g in got] == [g["deal"] for g in want]
    assert sum(g["value_from"] > 0 for g in got) >= 5     # the games explored
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for key, value in w.items():
            assert np.array_equal(g[key], value), key
            assert not isinstance(value, np.ndarray) or g[key].flags.writeable



def test_train_belief_and_value_end_the_same_on_ray(local_ray, tmp_path):
    weights = {}
    for backend in ("inline", "ray"):
        out = str(tmp_path / f"belief_{backend}.pt")
        torch.manual_seed(123)
        train_belief(BeliefTrainConfig(**SMALL, steps=3, minutes=0.0, games_per_step=6,
                                       val_games=8, val_every=3, embed=16, hidden=16,
                                       decoder=8, threads=1, backend=backend, workers=2,
                                       out=out, curve="none", progress=False),
                     log=lambda s: None)
        value_out = str(tmp_path / f"value_{backend}.pt")
        train_value(ValueTrainConfig(**SMALL, steps=3, minutes=0.0, games_per_step=6,
                                     val_games=8, hidden=16, backend=backend, workers=2,
                                     out=value_out, curve="none", progress=False),
                    log=lambda s: None)
        weights[backend] = (load_checkpoint(out)["weights"],
                            load_checkpoint(value_out)["weights"])
    for inline, on_ray in zip(weights["inline"], weights["ray"]):
        assert inline.keys() == on_ray.keys()
        for name in inline:
            assert torch.equal(inline[name], on_ray[name]), name


def test_teacher_games_in_a_beliefs_worlds_are_the_same_on_ray(local_ray):
    """A teacher's world belief (a spec) is loaded on each worker for the teacher; the
    games that go on in its worlds are the in-process ones."""
    from lbs_pz.search.beliefs.learned import LearnedBelief
    config = HanabiConfig(players=2)
    options = dict(explore=1.0, world_belief="belief_strong_2p", world_fraction=1.0)
    with GameSource("teacher", "strong", config, seed=1, backend="ray", workers=2,
                    options=options) as source:
        got = source.games(0, 4)
    bot = RuleBot("strong")
    want = teacher_games(config, bot, 4, seed=1, explore=1.0, world_fraction=1.0,
                         world_belief=LearnedBelief("belief_strong_2p", blueprint=bot))
    assert sum(g["redealt"] for g in want) >= 2
    for g, w in zip(got, want):
        for key, value in w.items():
            assert np.array_equal(g[key], value), key


def test_distill_ends_the_same_on_ray(local_ray, tmp_path):
    """distill's teacher games come in blocks of num_actors; on Ray each block is played
    in chunks on the workers, and the run ends with the same weights as in-process."""
    weights = {}
    for backend in ("inline", "ray"):
        out = str(tmp_path / f"distill_{backend}.pt")
        distill(DistillConfig(teacher="medium", **SMALL, updates=6, minutes=0.0, hidden=16,
                              num_actors=10, act_steps=3, batch_size=4, buffer_games=16,
                              eval_games=8, eval_every=0, explore=0.5, threads=1,
                              backend=backend, workers=2, out=out, curve="none"),
                log=lambda s: None, progress_bar=False)
        ckpt = load_checkpoint(out)
        weights[backend] = ckpt["weights"]
        progress = ckpt["info"]["progress"]
        assert progress["games"] > 10 and progress["moves"] >= 6 * 3 * 10   # > one block
    for name in weights["inline"]:
        assert torch.equal(weights["inline"][name], weights["ray"][name]), name


def test_a_trainer_runs_on_a_cluster_at_an_address(tmp_path):
    """`--backend ray --address`: a head and a second node (Ray's own multi-node
    cluster on this machine, one CPU each), the command in another process as on a
    user's machine: `lbs-pz distill` ends with the weights of the in-process run."""
    from ray.cluster_utils import Cluster
    options = dict(teacher="strong", **SMALL, updates=6, minutes=0.0, hidden=16,
                   num_actors=10, act_steps=3, batch_size=4, buffer_games=16, eval_games=8,
                   eval_every=0, threads=1, curve="none")
    inline = str(tmp_path / "inline.pt")
    distill(DistillConfig(**options, out=inline), log=lambda s: None, progress_bar=False)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
        on_cluster = str(tmp_path / "cluster.pt")
        # a cluster started by Ray >= 2.59 asks for its token
        env = dict(os.environ, RAY_AUTH_MODE="token", OMP_NUM_THREADS="1")
        run = subprocess.run([sys.executable, "-m", "lbs_pz.cli", "distill", *flags,
                              "--backend=ray", f"--address={cluster.address}", "--workers=2",
                              f"--out={on_cluster}", "--no-progress"],
                             capture_output=True, text=True, env=env,
                             timeout=HANG_SECONDS)
        # no address: Ray joins the cluster it recorded as the last started here, and
        # --workers (a local Ray's CPU count) does not stop it
        env.pop("RAY_ADDRESS", None)
        joined = str(tmp_path / "joined.pt")
        found = subprocess.run([sys.executable, "-m", "lbs_pz.cli", "distill", *flags,
                                "--backend=ray", "--workers=2", f"--out={joined}",
                                "--no-progress"],
                               capture_output=True, text=True, env=env,
                               timeout=HANG_SECONDS)
    finally:
        cluster.shutdown()
    for done in (run, found):
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Connected to Ray cluster" in done.stderr
    want = load_checkpoint(inline)["weights"]
    for path in (on_cluster, joined):
        got = load_checkpoint(path)["weights"]
        assert all(torch.equal(want[name], got[name]) for name in want)


def test_search_games_are_the_same_on_ray(local_ray, tmp_path):
    spec = MethodSpec(method="lbs-1", blueprint="strong", rollouts=4, seed=0)
    records = {}
    for backend in ("process", "ray"):
        out = str(tmp_path / f"{backend}.jsonl")
        record_search_games(spec, 4, out, SMALL, workers=2, backend=backend,
                            log=lambda s: None)
        records[backend] = sorted((json.loads(line) for line in open(out)),
                                  key=lambda g: g["game"])
    assert [g["game"] for g in records["ray"]] == [0, 1, 2, 3]
    assert records["ray"] == records["process"]


def test_a_source_says_what_is_wrong():
    config = HanabiConfig(**SMALL)
    with pytest.raises(ValueError, match="backend must be one of inline, ray"):
        GameSource("belief", "strong", config, 0, backend="process")
    with pytest.raises(ValueError, match="for the ray backend"):
        GameSource("belief", "strong", config, 0, address="10.0.0.1:6379")
    with pytest.raises(ValueError, match="kind must be"):
        GameSource("policy", "strong", config, 0)
    with pytest.raises(ValueError, match="workers must be an int >= 0"):
        GameSource("value", "strong", config, 0, backend="ray", workers=-1)
    with pytest.raises(ValueError, match=r"options \['explore'\] are not options of 'belief'"):
        GameSource("belief", "strong", config, 0, options=dict(explore=0.5))
    with pytest.raises(RuntimeError, match="inside `with source:`"):
        GameSource("value", "strong", config, 0, backend="ray").games(0, 4)
    with pytest.raises(ValueError, match="backend must be one of"):
        record_search_games(MethodSpec(method="lbs-1", blueprint="strong"), 1, "x.jsonl",
                            SMALL, backend="cluster")
