"""The command line under inputs that once hung it, exhausted memory or lost its results:
outputs that are not regular files (a FIFO, /dev/full, /dev/zero), game counts far beyond
a machine, logs holding results no game can have, two runs on one log, and a write that
fails at the end. Each case runs the real `lbs-pz` in a child process, waits for the event
it needs (a log line, the progress bar) with only a hang's deadline, and asserts a clean end:
the exit status, one line naming the option and the file, no traceback, no signal."""

import json
import os
import re
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.cli import cli_cases
from tests.helpers.waiting import HANG_SECONDS, wait_for
from lbs_pz.files import MAX_LINE_BYTES
from lbs_pz.optional import sigint_deferred

CLI = [sys.executable, "-m", "lbs_pz.cli"]
# Tiny, fast games: 2 colors (max score 10), hand of 3, two methods.
TINY = ["--methods", "blueprint,lbs-inf", "--belief", "grounded", "--rollouts", "2",
        "--colors", "2", "--hand-size", "3", "--backend", "inline", "--no-progress"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.isdir("/proc"),
                                reason="FIFOs, flock and /proc (POSIX)")


def _run(argv, cwd, timeout=HANG_SECONDS, **kwargs):
    """`lbs-pz ARGV` in a child: (exit status, stdout, stderr); a hang fails the test."""
    try:
        proc = subprocess.run(CLI + argv, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, env=ENV, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"lbs-pz {' '.join(argv)} hung for {timeout} s")
    return proc.returncode, proc.stdout, proc.stderr


def _assert_refused(status, err, *words):
    """Exit status 2 (not a signal), no traceback, the last line an error naming `words`."""
    assert status == 2, f"exit {status}\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert "error:" in last, err[-3000:]
    for word in words:
        assert word in last, (word, last)


def _max_rss_mib(pid):
    """Peak resident memory (MiB) of a running process, from /proc."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@posix_only
def test_outputs_and_logs_that_are_not_regular_files_are_refused_at_once(tmp_path):
    """A FIFO would hang the output check (or the final write); /dev/zero as a log would
    be read until memory runs out; /dev/full passes a writability test and loses the
    table at the end. Each is refused before any game (the child can play none: a game
    started ends the case), in one line naming the option and the path; the FIFO is never
    opened (nothing blocks)."""
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    long = ["compare", "--methods", "lbs-inf", "--games", "10000", "--backend", "inline",
            "--no-progress"]
    cases = [
        (long + ["--json", fifo], ("--json", "pipe", "FIFO")),
        (long + ["--plot", fifo], ("--plot", "pipe", "FIFO")),
        (long + ["--jsonl", fifo], ("--jsonl", "pipe", "FIFO")),
        (long + ["--jsonl", "/dev/zero"], ("--jsonl", "/dev/zero", "character device")),
        (long + ["--jsonl", "/dev/urandom"], ("--jsonl", "/dev/urandom", "not a regular")),
        (long + ["--json", "/dev/full"], ("--json", "/dev/full", "not a regular file")),
        (long + ["--report-only", "--jsonl", "/dev/zero"], ("--jsonl", "/dev/zero")),
        (long + ["--report-only", "--jsonl", fifo], ("--jsonl", "pipe", "FIFO")),
        (["eval", "--games", "10000000", "--json", fifo], ("--json", "pipe", "FIFO")),
        (["eval", "--games", "10000000", "--json", "/dev/full"], ("--json", "/dev/full")),
        (["search-games", "--method", "sparta", "--games", "1000", "--out", fifo],
         ("--out", "pipe", "FIFO")),
        (["search-games", "--method", "sparta", "--games", "1000", "--out", "/dev/zero"],
         ("--out", "/dev/zero")),
        (["belief-quality", "--games", "1000", "--beliefs", "grounded", "--plot", fifo],
         ("--plot", "pipe", "FIFO")),
    ]
    results = cli_cases([argv for argv, _ in cases], tmp_path, refuse_play=True,
                        env={"OMP_NUM_THREADS": "1"})
    for (argv, words), (status, err) in zip(cases, results):
        _assert_refused(status, err, *words)       # PLAYED: refused only after playing
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


@posix_only
def test_trainer_outputs_that_are_not_regular_files_are_refused_before_training(tmp_path):
    """A trainer's checkpoint, curve and slim copy, and distill's --search-games input:
    a FIFO or a device is refused before any training, in one line."""
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    cases = [
        (["train-belief", "--out", fifo, "--minutes", "5"], ("--out", "FIFO")),
        (["train-value", "--curve", "/dev/full", "--minutes", "5"], ("--curve", "/dev/full")),
        (["distill", "--search-games", "/dev/zero", "--out", "d.pt", "--minutes", "5"],
         ("--search-games", "/dev/zero", "regular file")),
    ]
    for argv, words in cases:
        status, _, err = _run(argv, tmp_path)
        _assert_refused(status, err, *words)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


@posix_only
def test_game_counts_beyond_the_maximum_are_refused_by_the_parser(tmp_path):
    """Every count of games has one parser and one maximum (2**32, the deals of a run's
    stream): beyond it, or not an integer, is argparse's one-line error (exit 2) at
    once, and --help says the maximum."""
    too_many = str(2**32 + 1)
    cases = [
        ["compare", "--games", too_many],
        ["eval", "--games", too_many],
        ["eval", "--games", "2e9"],
        ["search-games", "--games", too_many, "--out", "g.jsonl"],
        ["belief-quality", "--games", too_many],
        ["belief-quality", "--games", "0"],
        ["demo", "--games", too_many],
        ["demo", "--search-games", "-1"],
    ]
    for argv in cases:
        status, _, err = _run(argv, tmp_path)
        flag = next(a for a in argv if a.startswith("--") and a.endswith("games"))
        _assert_refused(status, err, f"argument {flag}", "2**32")
    for command in ("compare", "eval", "search-games", "belief-quality"):
        status, out, _ = _run([command, "--help"], tmp_path)
        assert status == 0 and "at most 2**32" in " ".join(out.split()), command
    assert os.listdir(tmp_path) == []


def _games_played(shown, log, err_path):
    """Games a run has played so far: the lines of its log (`shown` "log") or the count on
    its progress bar ("bar")."""
    if shown == "log":
        return len(log.read_text().splitlines()) if log.exists() else 0
    return max(map(int, re.findall(r"\| *(\d+)/\d+ \[", err_path.read_text())), default=0)


@posix_only
@pytest.mark.parametrize("argv, shown, played", [
    (["compare", "--methods", "blueprint", "--games", str(2**31), "--backend", "inline",
      "--no-progress", "--jsonl", "games.jsonl"], "log", 200),
    (["compare", "--methods", "blueprint", "--games", str(2**31), "--workers", "1",
      "--no-progress", "--jsonl", "games.jsonl"], "log", 200),
    (["eval", "--games", str(2**32)], "bar", 10_000),        # 10 chunks of 1000 games
])
def test_a_huge_game_count_streams_in_bounded_memory(tmp_path, argv, shown, played):
    """2**31 games per method (building every task first once took 3.8 GB in 33 s) and
    2**32 self-play games (once a 15 GiB array): games are played before any such work
    could end (`played` of them, however long a loaded machine takes), peak memory stays
    small, and Ctrl-C stops the run cleanly."""
    err_path = tmp_path / "err.txt"
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(CLI + argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=err_file, env=ENV, start_new_session=True)
        try:
            log = tmp_path / "games.jsonl"
            wait_for(lambda: _games_played(shown, log, err_path) >= played,
                     f"{played} games played", proc)
            peak = _max_rss_mib(proc.pid)
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=HANG_SECONDS)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert peak < 1024, f"peak memory {peak:.0f} MiB"
    err = err_path.read_text()
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]


def _tampered_logs(tmp_path):
    """A log of 2 tiny games per method, then copies with one line changed: {name:
    (path, the line number changed)}."""
    status, _, err = _run(["compare"] + TINY + ["--games", "2", "--jsonl", "good.jsonl"],
                          tmp_path)
    assert status == 0, err
    lines = (tmp_path / "good.jsonl").read_text().splitlines()
    assert len(lines) == 4

    def tamper(name, change, at=1):
        entry = json.loads(lines[at])
        change(entry)
        changed = lines[:at] + [json.dumps(entry)] + lines[at + 1:]
        (tmp_path / name).write_text("\n".join(changed) + "\n")
        return name, at + 1

    def result(**fields):
        return lambda entry: entry["result"].update(fields)

    def bad_variant(entry):
        spec, config, seed = json.loads(entry["key"])
        entry["key"] = json.dumps([spec, dict(config, colors=9), seed])

    logs = {
        "score-999": tamper("score999.jsonl", result(score=999)),
        "score-11-of-10": tamper("score11.jsonl", result(score=11), at=3),
        "negative-score": tamper("negative.jsonl", result(score=-1)),
        "score-a-string": tamper("string.jsonl", result(score="7")),
        "score-a-float": tamper("float.jsonl", result(score=7.0)),
        "score-a-bool": tamper("bool.jsonl", result(score=True)),
        "no-moves": tamper("moves0.jsonl", result(moves=0)),
        "a-million-moves": tamper("moves.jsonl", result(moves=10**6)),
        "fewer-moves-than-points": tamper("fewer.jsonl", result(score=9, moves=8)),
        "more-decisions-than-moves": tamper("decisions.jsonl", result(decisions=10**6)),
        "more-fallbacks-than-decisions": tamper("fallbacks.jsonl",
                                                result(fallbacks=10**6), at=3),
        "nan-seconds": tamper("nan.jsonl", result(seconds=float("nan"))),
        "negative-seconds": tamper("seconds.jsonl", result(seconds=-1.0)),
        "a-machine-not-named": tamper("machine.jsonl", result(machine=["cpu"])),
        "a-machine-named-at-length": tamper("machine_long.jsonl", result(machine="x" * 10**4)),
        "another-game's-result": tamper("game.jsonl", result(game=1), at=0),
        "a-variant-that-cannot-be": tamper("variant.jsonl", bad_variant),
        "game-2**40": tamper("index.jsonl", lambda e: e.update(game=2**40)),
    }
    huge = lines[:1] + ["[" + " " * (MAX_LINE_BYTES + 10) + "]"] + lines[1:]
    (tmp_path / "long.jsonl").write_text("\n".join(huge) + "\n")
    logs["a-line-over-the-limit"] = ("long.jsonl", 2)
    return logs


def test_a_ctrl_c_inside_the_pools_bookkeeping_is_held_to_its_end():
    """`sigint_deferred` (around the process pool's wait and submit, which take locks):
    a SIGINT inside it raises nothing there, then reaches the handler before it as the
    block ends; with SIGINT ignored before, it stays ignored."""
    reached = []
    # the handler a command has (the test process's may be another test's or a plugin's)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with sigint_deferred():
                signal.raise_signal(signal.SIGINT)  # handled before it returns: it waits
                reached.append("end of the block")
    finally:
        signal.signal(signal.SIGINT, outer)
    assert reached == ["end of the block"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigint_deferred():
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_impossible_logged_results_are_refused_naming_file_and_line(tmp_path):
    """A well-formed line whose result no game can give (score 999 in a 10-point game,
    a count of the wrong type, more decisions than moves) is neither reused by a resume
    nor reported by --report-only: both stop at once with one line naming the file and
    the line, and the log is left as it was."""
    logs = _tampered_logs(tmp_path)
    code = f"""
        import contextlib, io, json, os
        os.chdir({str(tmp_path)!r})
        from lbs_pz.cli import main
        out = {{}}
        for name, (path, line) in {logs!r}.items():
            for extra in ([], ["--report-only"]):
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    status = main(["compare"] + {TINY!r} + ["--games", "2", "--jsonl", path]
                                  + extra)
                out[name + " " + " ".join(extra)] = [status, err.getvalue(), path, line]
        print(json.dumps(out))
    """
    before = {path: (tmp_path / path).read_bytes() for path, _ in logs.values()}
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                           text=True, timeout=HANG_SECONDS, env=ENV)
    assert child.returncode == 0, child.stderr[-3000:]
    results = json.loads(child.stdout.strip().splitlines()[-1])
    assert len(results) == 2 * len(logs)
    for case, (status, err, path, line) in results.items():
        assert status == 2, (case, err)
        _assert_refused(status, err, path, f"line {line}")
    assert {path: (tmp_path / path).read_bytes() for path, _ in logs.values()} == before
    status, out, err = _run(["compare"] + TINY + ["--games", "2", "--jsonl", "good.jsonl",
                                                  "--report-only"], tmp_path)
    assert status == 0 and "| blueprint | 2 |" in out, err


@posix_only
def test_a_second_run_on_a_log_in_use_is_refused(tmp_path):
    """Two runs on one log once both played every game (36 lines, 24 unique). While one
    run writes the log (held still by SIGSTOP once it has logged a game, however fast the
    second one starts), a second one is refused, naming the log; the first one, let go,
    finishes with every game once."""
    argv = ["compare", "--methods", "blueprint,lbs-inf", "--belief", "grounded", "--rollouts",
            "16", "--backend", "inline", "--no-progress", "--games", "25", "--jsonl", "g.jsonl"]
    log = tmp_path / "g.jsonl"
    first = subprocess.Popen(CLI + argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        wait_for(lambda: log.exists() and log.read_text(), "the first run's first game", first)
        first.send_signal(signal.SIGSTOP)
        try:
            status, _, err = _run(argv, tmp_path)
            still_running = first.poll() is None
        finally:
            first.send_signal(signal.SIGCONT)
        _, first_err = first.communicate(timeout=HANG_SECONDS)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert still_running, "the first run ended before the second started: no overlap"
    _assert_refused(status, err, "g.jsonl", "another run")
    assert first.returncode == 0, first_err
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(entries) == 50
    assert len({(e["method"], e["game"]) for e in entries}) == 50


def _file_size_limit(limit):
    """preexec_fn: writes past `limit` bytes fail with EFBIG (Python ignores SIGXFSZ)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@posix_only
@pytest.mark.parametrize("argv, table", [
    (["compare"] + TINY + ["--games", "2", "--json", "r.json"], "| blueprint | 2 |"),
    (["eval", "--games", "20", "--no-progress", "--json", "r.json"], "mean score"),
])
def test_a_failed_write_at_the_end_keeps_the_table(tmp_path, argv, table):
    """The disk fills up as --json is written (here: a file-size limit of 200 bytes):
    the table is already printed, and the failure is one line naming --json and the
    reason, exit status 2, no traceback."""
    status, out, err = _run(argv, tmp_path, preexec_fn=_file_size_limit(200))
    assert table in out, out
    _assert_refused(status, err, "--json", "r.json", "writing it failed")
