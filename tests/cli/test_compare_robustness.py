"""`lbs-pz compare` and `eval` under interrupts, broken logs and bad options: each case
runs the real command in a child process (Ctrl-C as a terminal sends it: SIGINT to the
whole process group) and asserts a clean stop or one clear line, never a traceback. A
test waits for the event it needs (games logged, a progress bar) and asserts what a stop
left (games played, workers alive), never how long it took."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.cli import cli_cases
from tests.helpers.waiting import HANG_SECONDS, poll_until

from lbs_pz.eval.backends import collect
from lbs_pz.search.methods import MethodSpec

CLI = [sys.executable, "-m", "lbs_pz.cli"]
# Searches slow enough that a run is still going when it is interrupted (~0.2 s a game).
SLOW = ["compare", "--methods", "lbs-inf", "--belief", "grounded", "--rollouts", "16",
        "--workers", "2", "--no-progress"]
# Tiny, fast games: 2 colors, hand of 3.
TINY = ["--methods", "blueprint,lbs-inf", "--belief", "grounded", "--rollouts", "2",
        "--colors", "2", "--hand-size", "3", "--backend", "inline", "--no-progress"]

posix_only = pytest.mark.skipif(not hasattr(os, "killpg") or not os.path.isdir("/proc"),
                                reason="process groups and /proc (POSIX)")


def _lines(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


def _live_in_group(pgid):
    """Processes of group `pgid` still alive (zombies excluded: they are dead)."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        state, _, group = stat[stat.rindex(")") + 2:].split()[:3]
        if int(group) == pgid and state != "Z":
            alive.append(int(pid))
    return alive


def _gone(pgid):
    """Wait (up to a hang) until no process of group `pgid` is alive; whether none is."""
    return bool(poll_until(lambda: not _live_in_group(pgid), every=0.1))


def _interrupt(argv, log, after_lines, second_after=None, cwd=None):
    """Start `lbs-pz ARGV` in its own process group, send SIGINT to the group once `log`
    has `after_lines` lines (and again `second_after` s later); returns (returncode,
    stderr, log lines at the first SIGINT)."""
    proc = subprocess.Popen(CLI + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, cwd=cwd)
    deadline = time.monotonic() + HANG_SECONDS
    while len(_lines(log)) < after_lines:
        assert proc.poll() is None, f"ended before the interrupt:\n{proc.stderr.read()}"
        assert time.monotonic() < deadline, f"not {after_lines} games logged (a hang)"
        time.sleep(0.01)
    logged = len(_lines(log))
    os.killpg(proc.pid, signal.SIGINT)
    if second_after is not None:
        time.sleep(second_after)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        _, err = proc.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the interrupted run hung")
    # workers are gone once the parent is (zombies aside)
    assert _gone(proc.pid), "a worker outlived the interrupted run"
    return proc.returncode, err, logged


def _assert_clean_interrupt(code, err, log):
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    message = [line for line in err.splitlines() if "interrupted" in line]
    assert len(message) == 1 and "run the same command again" in message[0], err
    for line in _lines(log):        # only complete games
        entry = json.loads(line)
        assert {"key", "game", "result"} <= set(entry)


@posix_only
@pytest.mark.parametrize("backend", ["process", "inline"])
def test_ctrl_c_stops_at_once_and_twice_does_not_hang(tmp_path, backend):
    """300 searched games (~60 s of work) interrupted after the first few: the run stops
    at once (no queued game is played: at most the games running then are logged), a
    second Ctrl-C 50 ms later changes nothing, the log holds only complete lines and no
    worker survives."""
    log = str(tmp_path / "games.jsonl")
    argv = SLOW + ["--games", "300", "--jsonl", log, "--backend", backend]
    code, err, logged = _interrupt(argv, log, after_lines=300 + 2, second_after=0.05)
    _assert_clean_interrupt(code, err, log)
    assert len(_lines(log)) <= logged + 2          # at most the games running then
    assert len(_lines(log)) < 2 * 300


@posix_only
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_exit_when_the_parent_is_killed(tmp_path, sig):
    """A SIGTERM or SIGKILL of the parent alone (not its group, as `kill PID` does) leaves
    the pool no chance to stop its workers: they notice and exit (left alone, they would
    play their queued games, then wait for more forever) instead of playing the queued
    games for no one."""
    log = str(tmp_path / "games.jsonl")
    proc = subprocess.Popen(CLI + SLOW + ["--games", "300", "--jsonl", log],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + HANG_SECONDS
        while len(_lines(log)) < 300 + 2:       # the workers are playing searched games
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        workers = [pid for pid in _live_in_group(proc.pid) if pid != proc.pid]
        assert len(workers) >= 2
        os.kill(proc.pid, sig)
        proc.wait(HANG_SECONDS)
        assert _gone(proc.pid), "a worker outlived its killed parent"
    finally:
        if _live_in_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


@posix_only
def test_ctrl_c_stops_eval(tmp_path):
    """`lbs-pz eval` of 10^8 games, interrupted while it plays: it stops (exit 130,
    instead of playing on), one line, no --json written."""
    err_path = tmp_path / "err.txt"
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(CLI + ["eval", "--games", "100000000", "--json", "r.json"],
                                stdout=subprocess.DEVNULL, stderr=err_file,
                                start_new_session=True, cwd=tmp_path)
        deadline = time.monotonic() + HANG_SECONDS
        while "eval strong" not in err_path.read_text():       # its progress bar: running
            assert proc.poll() is None and time.monotonic() < deadline, err_path.read_text()
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=HANG_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail("eval played on after Ctrl-C")
    err = err_path.read_text()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "lbs-pz eval: interrupted" in err
    assert not (tmp_path / "r.json").exists()


def _per_game(path):
    """--json's per-game results without their timings."""
    data = json.load(open(path))
    return {label: [{k: v for k, v in g.items() if k != "seconds"} for g in games]
            for label, games in data["per_game"].items()}


@posix_only
def test_an_interrupted_run_resumed_equals_an_uninterrupted_one(tmp_path):
    log, out = str(tmp_path / "games.jsonl"), str(tmp_path / "r.json")
    argv = SLOW + ["--rollouts", "8", "--games", "10", "--jsonl", log, "--json", out]
    code, err, _ = _interrupt(argv, log, after_lines=10 + 1)
    _assert_clean_interrupt(code, err, log)
    assert not os.path.exists(out)                  # nothing reported for a partial run
    before = len(_lines(log))
    assert before < 20
    resumed = subprocess.run(CLI + argv, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in _lines(log)]
    assert len(lines) == 20                         # only the missing games were played
    assert len({(e["method"], e["game"]) for e in lines}) == 20
    spec = MethodSpec("lbs-inf", belief="grounded", rollouts=8)
    whole = collect([MethodSpec("blueprint"), spec], {**json.load(open(out))["config"]},
                    games=10, backend="inline", show_progress=False)
    assert _per_game(out) == {label: [{k: v for k, v in g.items() if k != "seconds"}
                                      for g in games] for label, games in whole.items()}


@pytest.mark.slow
@posix_only
def test_ctrl_c_stops_the_ray_backend(tmp_path):
    pytest.importorskip("ray")
    log = str(tmp_path / "games.jsonl")
    argv = SLOW + ["--games", "200", "--backend", "ray", "--jsonl", log]
    code, err, _ = _interrupt(argv, log, after_lines=200 + 2, second_after=0.05)
    _assert_clean_interrupt(code, err, log)
    assert len(_lines(log)) < 2 * 200               # it stopped before the searched games


def _assert_one_error(status, err, *words):
    assert status == 2, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert "error:" in last, err
    for word in words:
        assert word in last, (word, last)


def test_a_truncated_last_log_line_is_dropped_with_a_warning(tmp_path):
    """A run killed while writing leaves half a line: the next run keeps every complete
    game, names the file and line, replays that game and leaves a valid log; a report
    only warns (the file is left as it is); a broken line in the middle is an error."""
    base = ["compare"] + TINY + ["--games", "6", "--jsonl", "g.jsonl"]
    log = tmp_path / "g.jsonl"
    first = cli_cases([base + ["--json", "a.json"]], tmp_path)
    assert first[0][0] == 0, first[0][1]
    full = log.read_text()
    lines = full.splitlines()
    assert len(lines) == 12
    cut = "\n".join(lines[:11]) + "\n" + lines[11][:len(lines[11]) // 2]
    log.write_text(cut)
    (tmp_path / "broken_middle.jsonl").write_text(
        "\n".join(lines[:2] + ['{"key": "x", "ga'] + lines[3:]) + "\n")
    report, resumed = cli_cases([
        base + ["--report-only"],
        base + ["--json", "b.json"],
    ], tmp_path)
    assert report[0] == 0 and "line 12" in report[1] and "g.jsonl" in report[1], report[1]
    assert "Traceback" not in report[1]
    assert resumed[0] == 0 and "line 12" in resumed[1], resumed[1]
    after = log.read_text().splitlines()
    assert len(after) == 12 and [json.loads(line) for line in after]    # valid again
    assert _per_game(tmp_path / "a.json") == _per_game(tmp_path / "b.json")
    (middle,) = cli_cases([["compare"] + TINY + ["--games", "6", "--jsonl",
                                                  "broken_middle.jsonl"]], tmp_path)
    _assert_one_error(*middle, "broken_middle.jsonl", "line 3")


def test_report_only_needs_a_log_that_matches(tmp_path):
    base = ["compare"] + TINY + ["--games", "4", "--jsonl", "g.jsonl"]
    made, *cases = cli_cases([
        base,
        ["compare"] + TINY + ["--games", "4", "--jsonl", "missing.jsonl", "--report-only"],
        base + ["--report-only", "--methods", "sparta"],
        base + ["--report-only", "--players", "3"],
        base + ["--report-only", "--seed", "7"],
        base + ["--report-only", "--first-game", "10"],
        base + ["--report-only"],
    ], tmp_path)
    assert made[0] == 0, made[1]
    missing, method, variant, seed, out_of_range, ok = cases
    _assert_one_error(*missing, "missing.jsonl")
    _assert_one_error(*method, "sparta", "holds")
    _assert_one_error(*variant, "players=2", "holds")
    _assert_one_error(*seed, "seed 0 (asked: 7)")
    _assert_one_error(*out_of_range, "10..13", "(0..3)")
    assert ok[0] == 0, ok[1]


def test_bad_outputs_fail_before_any_game(tmp_path):
    """10,000 searched games would take minutes: each case must fail before any game (the
    child can play none: a game started ends the case), with one line naming the option
    and the path, exit status 2, and leave nothing behind."""
    long = ["compare", "--methods", "lbs-inf", "--games", "10000", "--backend", "inline",
            "--no-progress"]
    (tmp_path / "folder").mkdir()
    cases = cli_cases([
        long + ["--json", "nowhere/r.json"],
        long + ["--json", "folder"],
        long + ["--plot", "nowhere/r.png"],
        long + ["--plot", "folder"],
        long + ["--plot", "r.xyz"],
        long + ["--jsonl", "nowhere/g.jsonl"],
        long + ["--jsonl", "folder"],
        long + ["--jsonl", "same.json", "--json", "same.json"],
        long + ["--json", "/proc/r.json"],
        ["eval", "--games", "10000000", "--no-progress", "--json", "nowhere/r.json"],
        ["eval", "--games", "10000000", "--no-progress", "--json", "folder"],
    ], tmp_path, refuse_play=True)
    expected = [("--json", "nowhere"), ("--json", "folder"), ("--plot", "nowhere"),
                ("--plot", "folder"), ("--plot", ".xyz"), ("--jsonl", "nowhere"),
                ("--jsonl", "folder"), ("--jsonl and --json", "same.json"),
                ("--json", "/proc/r.json"), ("--json", "nowhere"), ("--json", "folder")]
    for (status, err), words in zip(cases, expected):
        _assert_one_error(status, err, *words)
    assert sorted(os.listdir(tmp_path)) == ["folder"]


def test_a_method_given_twice_is_refused():
    cases = cli_cases([
        ["compare", "--methods", "blueprint,blueprint", "--games", "1"],
        ["compare", "--methods", "lbs-inf,LBS-INF", "--games", "1"],
        ["compare", "--methods", "lbs-16, lbs-016", "--games", "1"],
        ["compare", "--methods", "sparta,lbs-2,Sparta", "--games", "1"],
    ], ".")
    _assert_one_error(*cases[0], "'blueprint' given twice")
    _assert_one_error(*cases[1], "'lbs-inf' and 'LBS-INF' are the same method")
    _assert_one_error(*cases[2], "'lbs-16' and 'lbs-016' are the same method")
    _assert_one_error(*cases[3], "'sparta' and 'Sparta'")
    with pytest.raises(ValueError, match="more than once"):        # the library, too
        collect([MethodSpec("blueprint"), MethodSpec("blueprint")], {}, games=1,
                backend="inline", show_progress=False)


def test_bad_options_are_one_line_not_a_traceback():
    base = ["compare", "--methods", "lbs-inf", "--games", "1", "--backend", "inline",
            "--no-progress"]
    cases = [
        ("argument --games", base + ["--games", "-3"]),
        ("argument --games", base + ["--games", "0"]),
        ("argument --first-game", base + ["--first-game", "-1"]),
        ("argument --workers", base + ["--workers", "0"]),
        ("argument --workers", base + ["--workers", "-2"]),
        ("argument --rollouts", base + ["--rollouts", "0"]),
        ("argument --verify", base + ["--verify", "-1"]),
        ("argument --confidence", base + ["--confidence", "nan"]),
        ("argument --confidence", base + ["--confidence", "-1"]),
        ("argument --delta", base + ["--delta", "nan"]),
        ("argument --delta", base + ["--delta", "-0.5"]),
        ("argument --seed", base + ["--seed", "-1"]),
        ("argument --seed", base + ["--seed", "1e3"]),
        ("--search-seats '0,0'", base + ["--search-seats", "0,0"]),
        ("--address 'localhost:6379'", base + ["--address", "localhost:6379"]),
        ("unknown method 'lbs-\u00b2'", base + ["--methods", "lbs-\u00b2"]),
        ("a run has games 0 .. 4294967295",
         base + ["--first-game", str(2**32 - 1), "--games", "5"]),
        ("argument --games", ["eval", "--games", "-1"]),
        ("argument --seed", ["eval", "--seed", "x"]),
        ("argument --games: expected an integer in [1, 2**32]",
         ["eval", "--games", str(10**23)]),
    ]
    results = cli_cases([argv for _, argv in cases], ".")
    for (words, argv), (status, err) in zip(cases, results):
        _assert_one_error(status, err, words)
