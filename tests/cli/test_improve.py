"""`lbs-pz improve` (lbs_pz/cli/improve.py): rounds of a search's games distilled into a
public-LSTM net, on a tiny variant (2 players, 3 colours, 3 ranks, 3 cards) with a tiny
student (a 16-wide net distilled from the strong bot in the test): two rounds end to end,
a run killed in the middle of its teacher games resumes to the same round table, a run
stopped by Ctrl-C in the middle of distill or train-belief resumes from the partial
checkpoint to the same round table (slow), --patience, and the
refusals (another variant, a student that is no net, another command on the same --out).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from tests.helpers.paths import ROOT  # noqa: E402
from tests.helpers.waiting import wait_for  # noqa: E402
from lbs_pz.cli import build_parser, main  # noqa: E402
from lbs_pz.cli.improve import settings_of  # noqa: E402
from lbs_pz.files import open_locked  # noqa: E402
from lbs_pz.models.checkpoint import load_checkpoint  # noqa: E402

torch = pytest.importorskip("torch")

GAME = ["--colors", "3", "--ranks", "3", "--hand-size", "3"]
TINY = dict(players=2, colors=3, ranks=3, hand_size=3)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """lstm:PATH of a tiny net for the tiny variant (300 updates imitating strong: about
    3.5 points, half its games lost, room for a round to gain)."""
    from lbs_pz.train.configs import DistillConfig
    from lbs_pz.train.distill import distill
    path = str(tmp_path_factory.mktemp("student") / "s0.pt")
    distill(DistillConfig(teacher="strong", out=path, hidden=16, updates=300, lr=3e-3,
                          minutes=0, num_actors=16, batch_size=8, buffer_games=64,
                          eval_games=8, eval_every=0, curve="none", **TINY),
            log=lambda *_: None, progress_bar=False)
    return "lstm:" + path


def command(student, out, *extra):
    return (["improve", "--student", student, "--teacher", "lbs-4", "--rollouts", "8",
             "--rounds", "2", "--out", str(out), "--games-per-round", "8", "--updates", "10",
             "--belief-steps", "2", "--belief-games-per-step", "8", "--eval-games", "40",
             "--backend", "inline", "--seed", "3"] + GAME + list(extra))


def state(out):
    with open(os.path.join(out, "improve.json")) as f:
        return json.load(f)


def rows(out):
    """The round table's rows without the core-hours column (CPU time varies)."""
    with open(os.path.join(out, "rounds.md")) as f:
        lines = [line.split("|") for line in f if line.startswith("| ") and "round |" not in line]
    return [[c.strip() for i, c in enumerate(cells) if i != 6] for cells in lines]


def check_finished(out, rounds=2):
    s = state(out)
    assert s["stopped"] is None
    assert sorted(s["rounds"], key=int) == [str(k) for k in range(rounds + 1)]
    for k in range(1, rounds + 1):
        r = s["rounds"][str(k)]
        # the belief is trained for a kept round's student only
        assert set(r["steps"]) == {"teacher_games", "distill", "eval"} | (
            {"belief"} if r["kept"] else set())
        assert all(step["done"] for step in r["steps"].values())
        assert r["games"] == 8 and r["core_hours"] > 0 and isinstance(r["kept"], bool)
        for name in ("teacher_games.jsonl.gz", "student.pt", "eval.json"):
            assert os.path.isfile(os.path.join(out, f"round_{k}", name))
        assert os.path.isfile(os.path.join(out, f"round_{k}", "belief.pt")) == r["kept"]
        slim = load_checkpoint(os.path.join(out, f"round_{k}", "student.pt"))
        assert slim.get("resume") is None and {w.dtype for w in slim["weights"].values()
                                               if w.is_floating_point()} == {torch.float16}
        for name in ("teacher_games.jsonl", "student.train.pt", "belief.train.pt"):
            assert not os.path.exists(os.path.join(out, f"round_{k}", name))      # tidied
        with gzip.open(os.path.join(out, f"round_{k}", "teacher_games.jsonl.gz")) as f:
            records = [json.loads(line) for line in f]
        assert [g["game"] for g in records] == list(range((k - 1) * 8, k * 8))  # none twice
        # one seat searched (the default), turned by the game's index
        assert all(g["seats"] == [g["game"] % 2] for g in records)
    assert os.path.getsize(os.path.join(out, "rounds.png")) > 0
    return s


def cli(args, capsys):
    rc = main(args)
    return rc, capsys.readouterr()


def start(args, stderr=subprocess.DEVNULL):
    """`lbs-pz ARGS` in a subprocess, its stdout a pipe."""
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "lbs_pz.cli"] + args, cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=stderr)


def test_two_rounds_then_a_run_killed_in_its_teacher_games_resumes_the_same(
        student, tmp_path, capsys):
    a = tmp_path / "a"
    rc, out = cli(command(student, a, "--no-progress"), capsys)
    assert rc == 0, out.err
    s = check_finished(str(a))
    assert all(step["attempts"] == 1 for r in s["rounds"].values() for step in r["steps"].values())
    table = rows(str(a))
    assert [r[1] for r in table] == ["0", "1", "2"]
    # round 2 distils the games of rounds 1 and 2
    assert [s["rounds"][k]["steps"]["distill"]["teacher_games"] for k in "12"] == [8, 16]
    assert s["rounds"]["2"]["steps"]["distill"]["search_games"].endswith(
        os.path.join("round_2", "distill_games.jsonl"))
    assert not (a / "round_2" / "distill_games.jsonl").exists()     # tidied: made again
    assert "best student" in out.out

    # the same command again: nothing is played again
    rc, out = cli(command(student, a, "--no-progress"), capsys)
    assert rc == 0 and state(str(a))["rounds"] == s["rounds"]
    # the run's command names what it teaches even where that is a default
    assert all(f"--{o} " in s["command"] for o in ("student", "teacher", "teacher-blueprint",
                                                     "search-seats", "rollouts",
                                                     "games-per-round", "eval-games", "out"))
    # the round table from improve.json alone, no other option
    rc, out = cli(["improve", "--out", str(a), "--report-only"], capsys)
    assert rc == 0 and out.out == (a / "rounds.md").read_text()
    rc, out = cli(["improve", "--out", str(tmp_path / "none"), "--report-only"], capsys)
    assert rc == 2 and "no run in --out" in out.err
    if not s["rounds"]["2"]["kept"]:    # with --patience 1, a third round is not played
        args = command(student, a, "--no-progress", "--patience", "1", "--rounds", "3")
        rc, out = cli(args, capsys)
        assert rc == 0 and "no gain in the last 1 round(s)" in out.out
        assert not (a / "round_3").exists()
        assert "stopped before round 3" in state(str(a))["stopped"]

    # killed (SIGKILL) once round 1 has recorded some of its teacher games
    b = tmp_path / "b"
    log = b / "round_1" / "teacher_games.jsonl"

    def some_games():
        return log.exists() and 2 <= log.read_bytes().count(b"\n") < 8
    proc = start(command(student, b))
    try:
        wait_for(some_games, "round 1's games half done", proc=proc, every=0.01)
        proc.kill()
    finally:
        proc.communicate()
    assert not state(str(b))["rounds"]["1"]["steps"]["teacher_games"]["done"]
    rc, out = cli(command(student, b, "--no-progress"), capsys)
    assert rc == 0, out.err
    s = check_finished(str(b))
    assert s["rounds"]["1"]["steps"]["teacher_games"]["attempts"] == 2
    assert rows(str(b)) == table        # the same rounds as the run never stopped


def test_refusals(student, tmp_path, capsys):
    # a student of another variant (the game options left at the standard game)
    args = command(student, tmp_path / "x")
    rc, out = cli(args[:-len(GAME)], capsys)
    assert rc == 2 and "--student" in out.err and "3x3" in out.err
    assert len(out.err.strip().splitlines()) == 1
    # a teacher blueprint of another variant
    rc, out = cli(command(student, tmp_path / "x", "--teacher-blueprint",
                          "lstm:conventions_expert_value_2p", "--search-seats", "all"), capsys)
    assert rc == 2 and "--teacher-blueprint" in out.err and "5x5" in out.err
    # one seat searching over a blueprint that is not the student: the other seat's moves
    # would be taught as the teacher's
    rc, out = cli(command(student, tmp_path / "x", "--teacher-blueprint", "strong"), capsys)
    assert rc == 2 and "--search-seats 0" in out.err and "student" in out.err
    # a student that is not a public-LSTM net
    rc, out = cli(command("strong", tmp_path / "x"), capsys)
    assert rc == 2 and "--student" in out.err
    assert not (tmp_path / "x").exists()        # refused before anything was written
    # another command on the same --out: refused, naming what differs
    c = tmp_path / "c"
    os.makedirs(c)
    args = build_parser().parse_args(command(student, c))
    with open(c / "improve.json", "w") as f:     # the record a run of `args` starts with
        json.dump({"command": "lbs-pz improve ...", "settings": settings_of(args),
                   "rounds": {}, "stopped": None}, f)
    rc, out = cli(command(student, c, "--updates", "11", "--seed", "4"), capsys)
    assert rc == 2 and "--updates 10 there, 11 now" in out.err and "--seed 3 there" in out.err
    assert len(out.err.strip().splitlines()) == 1
    # ... but not --rounds, --patience, --workers: the same run, further or elsewhere
    further = build_parser().parse_args(command(student, c, "--rounds", "5", "--patience",
                                                "4", "--workers", "2"))
    assert settings_of(further) == settings_of(args)
    # a run already working in that folder (it holds the lock): refused at once
    with open_locked(str(c / "improve.lock"), "--out"):
        rc, out = cli(command(student, c), capsys)
    assert rc == 2 and "is in use" in out.err and "improve.lock" in out.err


@pytest.mark.slow
@pytest.mark.parametrize("step,bar", [("distill", "distill"), ("belief", "train-belief")])
def test_ctrl_c_in_a_trainer_resumes_from_its_checkpoint(student, tmp_path, capsys, step, bar):
    """Ctrl-C once the trainer of round 1's `step` has made some updates (its progress bar
    says so): exit 130 with its partial checkpoint saved; the same command goes on from it
    (--resume), every round finished once, no other step run twice, and the run ends with
    the round table of a run never stopped (both trainers resume exactly)."""
    out_dir = tmp_path / "e"
    # distill: the default teacher (a search over the student, one seat, turned by the
    # game's index); belief: LBS on every seat of the strong bot, whose round 1 gains on
    # this student, and so trains a belief
    extra = (["--updates", "120"] if step == "distill" else
             ["--updates", "10", "--teacher-blueprint", "strong", "--search-seats", "all"])
    args = command(student, out_dir, "--belief-steps", "120", *extra)
    proc = start(args, stderr=subprocess.STDOUT)
    started = re.compile(rf"{bar}:.*\| *[1-9][0-9]*/120 ".encode())
    seen, text = False, b""
    try:
        while True:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            text = text[-4096:] + chunk
            if not seen and started.search(text):
                seen = True         # training, past its first update: stop it there
                proc.send_signal(signal.SIGINT)
    finally:
        proc.communicate()
    assert seen and proc.returncode == 130, text[-2000:]    # (belief: round 1 was kept)
    record = state(str(out_dir))["rounds"]["1"]["steps"][step]
    assert not record["done"] and record["cpu_seconds"] > 0
    assert os.path.isfile(out_dir / "round_1" / ("student.train.pt" if step == "distill"
                                                 else "belief.train.pt"))
    rc, out = cli(args + ["--no-progress"], capsys)
    assert rc == 0, out.err
    s = state(str(out_dir))
    for k in ("1", "2"):
        for name, rec in s["rounds"][k]["steps"].items():
            assert rec["done"]
            assert rec["attempts"] == (2 if (k, name) == ("1", step) else 1)
            assert rec.get("resumed", False) == ((k, name) == ("1", step))
    whole = tmp_path / "whole"
    rc, out = cli(command(student, whole, "--belief-steps", "120", *extra, "--no-progress"),
                  capsys)
    assert rc == 0 and rows(str(whole)) == rows(str(out_dir))
