"""The trainers and the backends under the misuse and the accidents that once lost work or
ended in a traceback: a trainer killed (kill -9) between two checkpoints, two trainers on
one --out, a checkpoint write that fails (a file-size limit), a Ray address where no
cluster answers, and a worker of the process pool killed while games run. Each case runs
the real `lbs-pz` in a child process and waits for the event it needs (a file, a lock),
never for a time; it asserts the end: the exit status, one line naming the file or the
address, no traceback, and that a rerun goes on without losing or repeating anything."""

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")

from tests.helpers.waiting import HANG_SECONDS, wait_for  # noqa: E402
from lbs_pz.cli import main  # noqa: E402
from lbs_pz.models.checkpoint import load_checkpoint  # noqa: E402
from lbs_pz.optional import (RAY_TIMEOUT_VARIABLE, ray_available, ray_session,  # noqa: E402
                             require_ray)
from lbs_pz.train.loop import LOCK_SUFFIX, claim_output  # noqa: E402

CLI = [sys.executable, "-m", "lbs_pz.cli"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
# A small, quick value run: a tiny net on a few games of a rule bot per step.
VALUE = ["train-value", "--blueprint", "simple", "--games-per-step", "2", "--val-games", "4",
         "--hidden", "16", "--batch-size", "64", "--threads", "1", "--no-progress"]
WAIT = HANG_SECONDS     # seconds before a wait for an event counts as a hang

posix_only = pytest.mark.skipif(not os.path.isdir("/proc"), reason="flock, rlimits, /proc")
needs_ray = pytest.mark.skipif(not ray_available(), reason="needs ray (the [distributed] extra)")
ray = require_ray() if ray_available() else None


_STARTED = []       # the children of the test in progress


@pytest.fixture(autouse=True)
def _no_child_outlives_its_test():
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _start(argv, cwd, env=None, **kwargs):
    """`lbs-pz ARGV` started in a child (stdout and stderr to files in `cwd`), with `env`
    added to its environment; killed at the end of the test if it still runs."""
    out = open(os.path.join(cwd, f"out{time.monotonic_ns()}.txt"), "w+")
    proc = subprocess.Popen(CLI + argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                            env=dict(ENV, **(env or {})), text=True, **kwargs)
    proc.log = out
    _STARTED.append(proc)
    return proc


def _finish(proc, timeout=WAIT):
    """(exit status, output) of a child started by `_start`; a hang fails the test."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"{proc.args} hung for {timeout} s")
    proc.log.seek(0)
    return proc.returncode, proc.log.read()


def _run(argv, cwd, **kwargs):
    return _finish(_start(argv, cwd, **kwargs))


def _wait_for(condition, proc, what):
    """Wait until `condition()` holds while `proc` (from `_start`) runs; fail with its
    output if it ends first, or if it hangs."""
    wait_for(condition, what, proc=proc, every=0.05, output=lambda: _finish(proc)[1][-3000:])


def _nonempty(path):
    """A file with bytes at `path` (a checkpoint lands whole by rename; the empty file an
    output check creates and removes at once to try the path does not count)."""
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def _assert_one_line(status, output, *words):
    """Exit status 2 (not a signal), no traceback, the last line an error naming `words`."""
    assert status == 2, f"exit {status}\n{output[-3000:]}"
    assert "Traceback" not in output, output[-3000:]
    last = output.strip().splitlines()[-1]
    assert "error:" in last, output[-3000:]
    for word in words:
        assert word in last, (word, last)
    return last


@pytest.mark.parametrize("minutes", ["-1", "inf", "nan"])
def test_a_bad_save_interval_is_refused_before_any_work(tmp_path, capsys, minutes):
    assert main(VALUE + ["--minutes", "1", "--save-minutes", minutes,
                         "--out", str(tmp_path / "v.pt")]) == 2
    assert "--save-minutes must be a finite number >= 0" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


@posix_only
def test_a_trainer_killed_between_checkpoints_resumes_from_the_last(tmp_path, capsys):
    """kill -9 of train-value after its first checkpoint by time (--save-minutes
    tiny): the checkpoint loads, and --resume goes on from its update (the lock file the
    killed run left does not stop it)."""
    out = str(tmp_path / "value.pt")
    proc = _start(VALUE + ["--minutes", "30", "--save-minutes", "0.0005", "--out", out],
                  str(tmp_path))
    _wait_for(lambda: _nonempty(out), proc, "a checkpoint by time")
    proc.kill()                                         # SIGKILL: nothing runs after it
    assert proc.wait(WAIT) == -signal.SIGKILL
    saved = load_checkpoint(out, "value")["info"]["progress"]["updates"]
    assert saved >= 1
    assert main(VALUE + ["--minutes", "0", "--steps", str(saved + 2), "--resume", out,
                         "--out", out]) == 0
    assert f"at update {saved}" in capsys.readouterr().out
    assert load_checkpoint(out, "value")["info"]["progress"]["updates"] == saved + 2
    assert not os.path.exists(out + LOCK_SUFFIX)       # a run that ends removes its lock


@posix_only
def test_a_second_trainer_on_one_out_is_refused_at_once(tmp_path):
    """Two real processes on one --out: the second is refused before it trains, in one line
    naming the path, while the first goes on and saves its own checkpoint."""
    out = str(tmp_path / "value.pt")
    first = _start(VALUE + ["--minutes", "30", "--out", out], str(tmp_path))
    _wait_for(lambda: os.path.exists(out + LOCK_SUFFIX), first, "the first run's lock")
    status, output = _run(VALUE + ["--minutes", "30", "--out", out], str(tmp_path))
    _assert_one_line(status, output, out, "in use")
    assert "validation MSE" not in output and first.poll() is None   # it trained nothing
    curve = str(tmp_path / "value.curve.csv")            # the first run is in its loop
    _wait_for(lambda: _nonempty(curve), first, "the first run's first evaluation")
    first.send_signal(signal.SIGINT)                    # the first run saves and stops
    status, output = _finish(first)
    assert status == 130 and f"saved to {out}" in output, output[-3000:]
    assert load_checkpoint(out, "value")["info"]["command"].startswith("lbs-pz train-value")
    # ... after which the file is free again (in this process: the loop's own claim)
    with claim_output(out):
        with claim_output(out):                                   # claims nest
            assert os.path.exists(out + LOCK_SUFFIX)
    assert not os.path.exists(out + LOCK_SUFFIX)


def _file_size_limit(limit):
    """preexec_fn: writes past `limit` bytes fail with EFBIG, SIGXFSZ ignored."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@posix_only
def test_a_checkpoint_write_that_fails_is_one_line_and_keeps_the_last(tmp_path):
    """A file-size limit below the checkpoint's size: one line naming --out, exit 2, no
    traceback; the checkpoint written before is byte for byte as it was, no temporary
    file is left."""
    out = str(tmp_path / "value.pt")
    big = VALUE + ["--hidden", "256", "--curve", "none"]
    assert main(big + ["--minutes", "0", "--steps", "1", "--out", out]) == 0
    before = open(out, "rb").read()
    assert len(before) > 200_000
    status, output = _run(big + ["--minutes", "0", "--steps", "2", "--resume", out,
                                 "--out", out], str(tmp_path),
                          preexec_fn=_file_size_limit(100_000))
    _assert_one_line(status, output, "--out", out, "writing the checkpoint failed",
                     "unchanged")
    assert open(out, "rb").read() == before
    assert not [n for n in os.listdir(tmp_path) if ".tmp" in n or n.endswith(LOCK_SUFFIX)]


@needs_ray
def test_an_address_where_no_ray_cluster_answers_fails_within_the_timeout(monkeypatch):
    """Nothing listens at 127.0.0.1:1: the error comes from the probe bounded by the
    timeout (`ray.init`, which has none of its own, is never called), names the address
    given (and the one Ray connects to, if it rewrites it), and Ray is left uninitialized."""
    inits = []
    monkeypatch.setattr(ray, "init", lambda *args, **kwargs: inits.append(kwargs))
    with pytest.raises(ValueError, match=r"'127\.0\.0\.1:1'.*within 1 s") as err:
        with ray_session("127.0.0.1:1", timeout=1.0):
            pytest.fail("connected to a cluster at 127.0.0.1:1")
    assert inits == [] and not ray.is_initialized()
    assert "\n" not in str(err.value)
    monkeypatch.setenv(RAY_TIMEOUT_VARIABLE, "soon")
    with pytest.raises(ValueError, match=RAY_TIMEOUT_VARIABLE):
        with ray_session("127.0.0.1:1"):
            pytest.fail("connected to a cluster at 127.0.0.1:1")
    # the command: --address with the timeout from the environment
    monkeypatch.setenv(RAY_TIMEOUT_VARIABLE, "1")
    status = main(["compare", "--methods", "blueprint", "--games", "2", "--backend", "ray",
                   "--address", "127.0.0.1:1", "--no-progress"])
    assert status == 2 and inits == [] and not ray.is_initialized()


def _pool_workers(pid):
    """The process-pool workers among the children of `pid` (not its resource tracker)."""
    children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    workers = []
    for child in children:
        try:
            cmdline = open(f"/proc/{child}/cmdline", "rb").read()
        except FileNotFoundError:
            continue
        if b"spawn_main" in cmdline:
            workers.append(int(child))
    return workers


@posix_only
def test_a_killed_pool_worker_is_one_line_and_a_rerun_loses_no_game(tmp_path):
    """compare --backend process, one worker killed (SIGKILL) while games run: one line
    naming the worker, exit 2, no traceback; the same command again plays the games not
    logged, and the log then holds every game once."""
    log = str(tmp_path / "games.jsonl")
    argv = ["compare", "--methods", "lbs-inf", "--belief", "grounded", "--rollouts", "20",
            "--games", "16", "--backend", "process", "--workers", "2", "--no-progress",
            "--jsonl", log]
    proc = _start(argv, str(tmp_path))
    _wait_for(lambda: _nonempty(log)
              and len(_pool_workers(proc.pid)) == 2, proc, "a logged game")
    victim = _pool_workers(proc.pid)[0]
    os.kill(victim, signal.SIGKILL)
    status, output = _finish(proc)
    _assert_one_line(status, output, "worker", f"process {victim}", "SIGKILL",
                     "run the same command again")
    logged = len(open(log).read().splitlines())
    assert 0 < logged < 32
    status, output = _run(argv, str(tmp_path))
    assert status == 0, output[-3000:]
    entries = [json.loads(line) for line in open(log).read().splitlines()]
    games = [(entry["method"], entry["game"]) for entry in entries]
    assert len(games) == 32 and len(set(games)) == 32
    assert {game for _, game in games} == set(range(16))


def _children_running(pid, word: bytes):
    """The processes among the descendants of `pid` whose command line holds `word`."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            children = open(f"/proc/{parent}/task/{parent}/children").read().split()
        except FileNotFoundError:
            continue
        for child in map(int, children):
            todo.append(child)
            try:
                if word in open(f"/proc/{child}/cmdline", "rb").read():
                    found.append(child)
            except FileNotFoundError:
                pass
    return found


@needs_ray
@posix_only
@pytest.mark.slow
def test_a_killed_raylet_is_one_line_and_a_rerun_loses_no_game(tmp_path):
    """compare --backend ray on a local Ray, its raylet killed while games run: one line
    naming what Ray lost, exit 2, no traceback; the same command again completes the log,
    every game once."""
    log = str(tmp_path / "games.jsonl")
    argv = ["compare", "--methods", "lbs-inf", "--belief", "grounded", "--rollouts", "20",
            "--games", "16", "--backend", "ray", "--workers", "2", "--no-progress",
            "--jsonl", log]
    proc = _start(argv, str(tmp_path))
    _wait_for(lambda: _nonempty(log)
              and _children_running(proc.pid, b"/raylet"), proc, "a logged game")
    os.kill(_children_running(proc.pid, b"/raylet")[0], signal.SIGKILL)
    status, output = _finish(proc)
    _assert_one_line(status, output, "--backend ray", "Ray cluster lost",
                     "run the same command again")
    status, output = _run(argv, str(tmp_path))
    assert status == 0, output[-3000:]
    games = [(json.loads(line)["method"], json.loads(line)["game"])
             for line in open(log).read().splitlines()]
    assert len(games) == 32 and len(set(games)) == 32
