"""The one training loop (`lbs_pz.train.loop`): the budget stops a run, a resumed run
reaches the same weights as an uninterrupted one, Ctrl-C leaves a checkpoint and exit
status 130, and the learning curve is written as CSV and PNG."""

import csv
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest

torch = pytest.importorskip("torch")

from tests.helpers.waiting import HANG_SECONDS  # noqa: E402
from lbs_pz.cli import main  # noqa: E402
from lbs_pz.models.checkpoint import load_checkpoint  # noqa: E402
from lbs_pz.train.belief import BeliefTrainConfig, train_belief  # noqa: E402
from lbs_pz.train.configs import MAX_GAMES_HELD  # noqa: E402
from lbs_pz.train.loop import Budget, Clock, Trainer, run  # noqa: E402

TINY = dict(blueprint="simple", games_per_step=2, minutes=0, val_games=4, val_every=2,
            embed=16, hidden=16, decoder=8, threads=1, progress=False)


def quiet(*_):
    pass


def counting_trainer(progress=None):
    """A trainer whose update only counts (no torch work)."""
    progress = {} if progress is None else progress
    seen = []

    def update(clock):
        seen.append(clock.updates)
        return {"loss": 1.0 / (1 + clock.updates)}

    def checkpoint():
        return dict(kind="value", game={"players": 2}, architecture={}, weights={})

    trainer = Trainer("test", "value", update, checkpoint, progress=progress,
                      evaluate=lambda clock: {"metric": float(clock.updates)},
                      eval_at_start=True, plot=("metric",))
    return trainer, seen


def test_the_budget_stops_a_run(tmp_path):
    trainer, seen = counting_trainer()
    out = str(tmp_path / "c.pt")
    progress = run(trainer, Budget(updates=7), out, progress_bar=False, log=quiet)
    assert progress["updates"] == 7 and seen == list(range(7))
    # the time budget: a run that cannot reach its updates stops once `minutes` are spent,
    # at the first check after it: no update starts later (every update but the last ended
    # within the budget), however slow the machine
    trainer, seen = counting_trainer()
    slow, ended = trainer.update, []

    def update(clock):
        time.sleep(0.01)
        losses = slow(clock)
        ended.append(clock.elapsed())
        return losses
    trainer.update = update
    start = time.perf_counter()
    run(trainer, Budget(minutes=0.5 / 60, updates=10**9), out, progress_bar=False, log=quiet)
    assert time.perf_counter() - start >= 0.5 and 0 < len(seen) < 10**9
    assert all(seconds < 0.5 for seconds in ended[:-1]), ended[-3:]
    with pytest.raises(ValueError, match="--minutes"):
        run(counting_trainer()[0], Budget(), out, progress_bar=False, log=quiet)


def test_clock_fraction_counts_updates_over_resumed_runs():
    clock = Clock(Budget(updates=10), {"updates": 4, "seconds": 0.0})
    assert clock.fraction() == pytest.approx(0.4) and not clock.done()
    clock.progress["updates"] = 10
    assert clock.fraction() == 1.0 and clock.done()


def test_resume_reaches_the_weights_of_an_uninterrupted_run(tmp_path):
    # a constant learning rate: the schedule follows the budget, which differs between
    # the first half's run (3 updates) and the uninterrupted one (6)
    flat = dict(TINY, lr=1e-3, lr_final=1e-3)
    whole = str(tmp_path / "whole.pt")
    train_belief(BeliefTrainConfig(steps=6, out=whole, **flat), log=quiet)
    half = str(tmp_path / "half.pt")
    train_belief(BeliefTrainConfig(steps=3, out=half, **flat), log=quiet)
    # the second half: the budget counts the updates in total; data and optimizer go on
    train_belief(BeliefTrainConfig(steps=6, out=half, resume=half, **flat), log=quiet)
    a, b = load_checkpoint(whole, "belief"), load_checkpoint(half, "belief")
    assert b["info"]["steps"] == 6 and b["info"]["games"] == a["info"]["games"] == 12
    for name, w in a["weights"].items():
        assert torch.equal(w, b["weights"][name]), name
    assert b["info"]["train_loss"] == a["info"]["train_loss"]
    with pytest.raises(ValueError, match="slim"):
        slim = str(tmp_path / "slim.pt")
        train_belief(BeliefTrainConfig(steps=1, out=slim, half=True, **TINY), log=quiet)
        train_belief(BeliefTrainConfig(steps=2, out=slim, resume=slim, **TINY), log=quiet)


def test_the_curve_is_written_as_csv_and_png(tmp_path):
    out = str(tmp_path / "b.pt")
    _, history = train_belief(BeliefTrainConfig(steps=4, out=out, **TINY), log=quiet)
    rows = list(csv.DictReader(open(tmp_path / "b.curve.csv")))
    assert [int(r["updates"]) for r in rows] == [0, 2, 4] == [h[0] for h in history]
    assert float(rows[-1]["val_loss"]) == pytest.approx(history[-1][2], rel=1e-5)
    with open(tmp_path / "b.curve.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    curve = load_checkpoint(out, "belief")["info"]["progress"]["curve"]
    assert len(curve) == 3
    train_belief(BeliefTrainConfig(steps=1, out=str(tmp_path / "n.pt"), curve="none", **TINY),
                 log=quiet)
    assert not os.path.exists(tmp_path / "n.curve.csv")


def test_ctrl_c_saves_a_checkpoint_and_exits_130(tmp_path):
    """Ctrl-C is sent once the child's log shows a completed update ("step N: ..." with
    N >= 1; however long a loaded machine takes to get there, up to HANG_SECONDS): the
    run saves a checkpoint of that update and exits with status 130."""
    out = tmp_path / "stopped.pt"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    stepped = threading.Event()

    def watch(stream):          # the child's stdout, read to its end
        for line in stream:
            match = re.match(r"step (\d+):", line)
            if match and int(match.group(1)) >= 1:
                stepped.set()

    with open(tmp_path / "stderr.txt", "a+") as err_file:     # the child appends
        proc = subprocess.Popen(
            [sys.executable, "-m", "lbs_pz.cli", "train-belief", "--blueprint", "simple",
             "--minutes", "10", "--games-per-step", "2", "--val-games", "4", "--val-every", "1",
             "--embed", "16", "--hidden", "16", "--decoder", "8", "--threads", "1",
             "--out", str(out), "--no-progress"],
            stdout=subprocess.PIPE, stderr=err_file, text=True, env=env)
        reader = threading.Thread(target=watch, args=(proc.stdout,), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + HANG_SECONDS
            while not stepped.wait(0.5) and proc.poll() is None \
                    and time.monotonic() < deadline:
                pass
            if not stepped.is_set():
                status = proc.poll()
                proc.kill()
                proc.wait()
                err_file.seek(0)
                pytest.fail(f"no completed update within {HANG_SECONDS} s (exit status "
                            f"{status}): {err_file.read()[-2000:]}")
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=HANG_SECONDS)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(timeout=HANG_SECONDS)
            proc.stdout.close()
        err_file.seek(0)
        err = err_file.read()
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err and str(out) in err
    ckpt = load_checkpoint(str(out), "belief")
    assert ckpt["info"]["steps"] >= 1 and "optimizer" in ckpt["resume"]


@pytest.mark.parametrize("argv", [
    ["train-belief", "--val-games", "2000000000"],
    ["train-value", "--games-per-step", "2000000000"],
    ["train-blueprint", "--replay-games", "2000000000"],
    ["distill", "--buffer-games", "2000000000"],
])
def test_games_held_in_memory_are_capped_before_anything_is_allocated(argv, tmp_path, capsys):
    """Every trainer refuses a count of games it would hold in memory beyond
    MAX_GAMES_HELD, naming the option, before it plays or allocates anything: the refusal
    allocates less than one byte per game asked for, and writes nothing."""
    tracemalloc.start()
    try:
        status = main(argv + ["--minutes", "0.05", "--out", str(tmp_path / "out.pt")])
    except SystemExit as exit:
        status = exit.code
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert status == 2
    err = capsys.readouterr().err
    assert f"--{argv[1][2:]} must be an int in 1..{MAX_GAMES_HELD:,}" in err
    assert peak < 256 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    assert not (tmp_path / "out.pt").exists()
