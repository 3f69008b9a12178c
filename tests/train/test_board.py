"""`--tensorboard DIR` (`lbs_pz.train.board`): every trainer's run writes the rows of its
learning curve (the same tags as the curve CSV's columns, the same values), its losses and
its throughput as TensorBoard scalars at the update count; a resumed run goes on in the
same folder (its steps continue, and what a run killed after its last checkpoint wrote
beyond it is hidden); `lbs-pz improve` writes each round's scalars and gives each round's
trainers a folder of their own; without the tensorboard package, asking for it is one line
naming the extra before any work. The event files are read back with TensorBoard's own
reader."""

import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator)

from tests.helpers.waiting import HANG_SECONDS  # noqa: E402
from lbs_pz.cli import build_parser, main  # noqa: E402
from lbs_pz.train.belief import BeliefTrainConfig, train_belief  # noqa: E402
from lbs_pz.train.configs import DistillConfig  # noqa: E402
from lbs_pz.train.distill import distill  # noqa: E402
from lbs_pz.train.value import ValueTrainConfig, train_value  # noqa: E402

VALUE = ["train-value", "--blueprint", "simple", "--minutes", "0", "--games-per-step", "4",
         "--val-games", "4", "--batch-size", "64", "--hidden", "8", "--no-progress"]
TINY_VALUE = dict(blueprint="simple", minutes=0, games_per_step=4, val_games=4,
                  batch_size=64, hidden=8, progress=False)
TINY_BELIEF = dict(blueprint="simple", games_per_step=2, minutes=0, val_games=4, val_every=2,
                   embed=16, hidden=16, decoder=8, threads=1, progress=False)
GAME = ["--colors", "3", "--ranks", "3", "--hand-size", "3"]


def quiet(*_):
    pass


def scalars(folder) -> dict:
    """{tag: [(step, value), ...]} of the event files in `folder`, as TensorBoard reads them."""
    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)]
            for tag in acc.Tags()["scalars"]}


def check_curve(folder, csv_path) -> dict:
    """The "curve/" scalars in `folder` are the curve CSV's columns and rows (an empty
    cell: no point), each row at its update count; returns every scalar."""
    with open(csv_path, newline="") as f:
        columns, *rows = list(csv.reader(f))
    got = scalars(folder)
    assert sorted(t[len("curve/"):] for t in got if t.startswith("curve/")) == sorted(columns)
    assert all(t.split("/")[0] in ("curve", "train", "throughput") for t in got), got
    steps = [int(row[1]) for row in rows]
    for i, column in enumerate(columns):
        want = [(step, float(row[i])) for step, row in zip(steps, rows) if row[i] != ""]
        have = got[f"curve/{column}"]
        assert [s for s, _ in have] == [s for s, _ in want], column
        assert [v for _, v in have] == pytest.approx([v for _, v in want], rel=1e-5, abs=1e-6)
    return got


def test_every_trainer_command_takes_tensorboard():
    parser = build_parser()
    for command in ("train-belief", "train-value", "train-blueprint", "distill", "improve"):
        assert parser.parse_args([command, "--tensorboard", "tb"]).tensorboard == "tb"
        assert parser.parse_args([command]).tensorboard == ""     # off by default


def test_the_cli_writes_the_curve_losses_and_throughput_and_a_resume_goes_on(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(VALUE + ["--steps", "3", "--out", "v.pt", "--tensorboard", "tb"]) == 0
    got = check_curve("tb", "v.curve.csv")
    assert [s for s, _ in got["curve/updates"]] == [0, 3]
    assert [s for s, _ in got["train/mse"]] == [3]
    for tag in ("throughput/updates_per_second", "throughput/games_per_second"):
        assert [s for s, _ in got[tag]] == [3] and got[tag][0][1] > 0
    # resumed: the same folder, the steps going on from the checkpoint's update count
    assert main(VALUE + ["--steps", "6", "--out", "v.pt", "--resume", "v.pt",
                         "--tensorboard", "tb"]) == 0
    got = check_curve("tb", "v.curve.csv")
    assert [s for s, _ in got["curve/updates"]] == [0, 3, 6]
    assert [s for s, _ in got["train/mse"]] == [3, 6]
    assert len(os.listdir("tb")) == 2
    # a file where the folder should be: one line, nothing trained
    open("file", "w").close()
    capsys.readouterr()
    assert main(VALUE + ["--steps", "1", "--out", "w.pt", "--tensorboard", "file"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tensorboard 'file': not a folder" in err
    assert not os.path.exists("w.pt")


def test_a_resume_hides_what_a_killed_run_wrote_after_its_checkpoint(tmp_path):
    """A run resumed from an earlier checkpoint than the last events in the folder (a run
    killed after its checkpoint): every step is shown once, from the resumed run."""
    tb, a, b = (str(tmp_path / name) for name in ("tb", "a.pt", "b.pt"))
    train_value(ValueTrainConfig(steps=3, out=a, tensorboard=tb, **TINY_VALUE), log=quiet)
    shutil.copy(a, b)                   # the checkpoint at update 3
    train_value(ValueTrainConfig(steps=6, out=a, resume=a, tensorboard=tb, **TINY_VALUE),
                log=quiet)              # the run that goes on to 6, as if killed after
    train_value(ValueTrainConfig(steps=6, out=b, resume=b, tensorboard=tb, **TINY_VALUE),
                log=quiet)              # resumed again from update 3
    got = check_curve(tb, str(tmp_path / "b.curve.csv"))
    assert [s for s, _ in got["curve/updates"]] == [0, 3, 6]
    assert [s for s, _ in got["train/mse"]] == [3, 6]


def test_an_empty_metric_is_no_point(tmp_path):
    """train-belief's curve: val_search_loss is empty without --search-games."""
    tb, out = str(tmp_path / "tb"), str(tmp_path / "b.pt")
    train_belief(BeliefTrainConfig(steps=4, out=out, tensorboard=tb, **TINY_BELIEF), log=quiet)
    got = check_curve(tb, str(tmp_path / "b.curve.csv"))
    assert "curve/val_search_loss" not in got or not got["curve/val_search_loss"]
    assert [s for s, _ in got["curve/val_loss"]] == [0, 2, 4]
    assert [s for s, _ in got["train/loss"]] == [2, 4]     # at each evaluation


def test_improve_writes_each_round_and_its_trainers_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    distill(DistillConfig(teacher="strong", out="s0.pt", hidden=8, updates=2, minutes=0,
                          num_actors=8, batch_size=4, buffer_games=16, eval_games=2,
                          eval_every=0, curve="none", colors=3, ranks=3, hand_size=3),
            log=quiet, progress_bar=False)
    command = ["improve", "--student", "lstm:s0.pt", "--teacher", "lbs-1", "--rollouts", "4",
               "--rounds", "1", "--out", "imp", "--games-per-round", "2", "--updates", "4",
               "--belief-steps", "2", "--belief-games-per-step", "4", "--eval-games", "4",
               "--backend", "inline", "--seed", "3", "--no-progress"] + GAME
    for _ in range(2):       # again: every round written again, each shown once
        assert main(command + ["--tensorboard", "tb"]) == 0
        with open(os.path.join("imp", "improve.json")) as f:
            rounds = json.load(f)["rounds"]
        got = scalars("tb")
        assert [s for s, _ in got["round/score"]] == [0, 1]
        for name in ("score", "games", "core_hours"):
            assert [v for _, v in got[f"round/{name}"]] == pytest.approx(
                [rounds[k][name] for k in ("0", "1")], rel=1e-5, abs=1e-6)
        for name in ("gain", "tuning_gain"):
            assert got[f"round/{name}"] == [(1, pytest.approx(rounds["1"][name], abs=1e-6))]
        assert [v for _, v in got["round/kept"]] == [1.0, float(rounds["1"]["kept"])]
    trainer = scalars(os.path.join("tb", "round_1", "distill"))
    assert [s for s, _ in trainer["curve/updates"]] == [4]
    assert "curve/agreement" in trainer and "train/loss" in trainer
    assert os.path.isdir(os.path.join("tb", "round_1", "belief")) == rounds["1"]["kept"]


NO_TENSORBOARD = textwrap.dedent('''
    import contextlib, io, os, sys

    class NoTensorBoard:                 # as if the tensorboard package were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "tensorboard":
                raise ImportError(f"No module named {name!r}")

    sys.meta_path.insert(0, NoTensorBoard())
    from lbs_pz.cli import main
    from lbs_pz.optional import MissingDependency
    from lbs_pz.train.value import ValueTrainConfig, train_value

    hint = 'pip install "lbs_pz[tensorboard]"'
    for argv in (["train-value", "--blueprint", "simple", "--steps", "1", "--minutes", "0",
                  "--out", "v.pt", "--no-progress", "--tensorboard", "tb"],
                 ["improve", "--out", "imp", "--tensorboard", "tb", "--no-progress"]):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert main(argv) == 2, argv
        assert err.getvalue().count("\\n") == 1 and hint in err.getvalue(), err.getvalue()
    try:
        train_value(ValueTrainConfig(steps=1, minutes=0, out="v.pt", tensorboard="tb"))
    except MissingDependency as err:
        assert hint in str(err), err
    else:
        raise AssertionError("trained without tensorboard")
    assert not any(os.path.exists(p) for p in ("v.pt", "imp", "tb")), os.listdir(".")
    print("ok")
''')


def test_without_tensorboard_asking_for_it_is_one_line_before_any_work(tmp_path):
    proc = subprocess.run([sys.executable, "-c", NO_TENSORBOARD], capture_output=True,
                          text=True, cwd=tmp_path, timeout=HANG_SECONDS)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
