"""Game logs and recorded search games as a killed run, a careless user and a full disk
leave them: a last line cut short is dropped with a warning and its game played again (the
file cut back so that lines appended next stay valid), a file recorded in another game
variant or with another blueprint is refused for training, and a write that fails (a
file-size limit, run for real in a child process) ends the command with one line, the file
left with whole lines only."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents import RuleBot, blueprint_identity
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.backends import read_log
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.files import MAX_LINE_BYTES, READ_BYTES, append_line, json_lines, open_locked, \
    read_lines
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import check_recorded_for, read_search_games

SMALL = dataclasses.asdict(HanabiConfig(players=2, colors=3, ranks=3, hand_size=3))
SPARTA = MethodSpec(method="sparta", blueprint="strong", rollouts=4, seed=0)
VARIANT = ["--players", "2", "--colors", "3", "--ranks", "3", "--hand-size", "3"]
# In the child: SIGXFSZ ignored, so a write past the limit fails with EFBIG (as on a full
# disk) instead of killing the process; then the CLI, as a user runs it.
LIMITED = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    from lbs_pz.cli import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("recorded") / "games.jsonl")
    record_search_games(SPARTA, 3, out, SMALL, workers=1, log=lambda s: None)
    return out


def _cli(argv, cwd, limit=None, timeout=HANG_SECONDS):
    prefix = [sys.executable, "-c", LIMITED, str(limit)] if limit else \
        [sys.executable, "-m", "lbs_pz.cli"]
    proc = subprocess.run(prefix + argv, capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    return proc.returncode, proc.stdout, proc.stderr


def _one_error_line(code, err, *words):
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], err
    for word in words:
        assert word in lines[0], (word, lines[0])


# --- the shared readers ---------------------------------------------------------------------

def test_read_lines_reads_in_chunks_and_bounds_every_line(tmp_path):
    """Lines across chunk boundaries come back whole, with their offsets; a line of exactly
    MAX_LINE_BYTES is read, one byte more is refused naming the line, from an unbuffered
    file as from a buffered one."""
    lines = [b"x" * n + b"\n" for n in (0, 5, READ_BYTES - 1, READ_BYTES, 3 * READ_BYTES + 7)]
    lines += [b"y" * (MAX_LINE_BYTES - 1) + b"\n", b"tail"]
    path = tmp_path / "lines"
    path.write_bytes(b"".join(lines))
    for buffering in (0, -1):
        with open(path, "rb", buffering=buffering) as f:
            got = list(read_lines(f, str(path), "--x"))
        assert [raw for _, _, raw in got] == lines
        assert [n for n, _, _ in got] == list(range(1, len(lines) + 1))
        assert [off for _, off, _ in got] == [sum(map(len, lines[:i])) for i in
                                              range(len(lines))]
    path.write_bytes(b"ok\n" + b"z" * MAX_LINE_BYTES + b"\n")
    with open(path, "rb", buffering=0) as f, pytest.raises(ValueError, match="line 2: longer"):
        list(read_lines(f, str(path), "--x"))


def test_append_line_leaves_whole_lines_when_a_write_fails(tmp_path):
    """A write that fails part way (here: a descriptor closed under it) leaves the file as
    it was before the line, and nothing is buffered for the close to write again."""
    path = str(tmp_path / "log.jsonl")
    f = open_locked(path, "--out")
    append_line(f, b'{"a": 1}\n')
    f.close()
    with open(path, "rb") as g:
        assert g.read() == b'{"a": 1}\n'
    f = open_locked(path, "--out")
    read_only = os.open(path, os.O_RDONLY)
    os.dup2(read_only, f.fileno())          # writes now fail with EBADF
    os.close(read_only)
    with pytest.raises(OSError):
        append_line(f, b'{"b": 2}\n')
    f.close()                               # nothing buffered: closing raises nothing
    with open(path, "rb") as g:
        assert g.read() == b'{"a": 1}\n'


def test_json_lines_drops_only_a_cut_last_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": 2}\n{"c": ')
    with open(path, "r+b", buffering=0) as f, pytest.warns(UserWarning,
                                                          match="line 4: incomplete last"):
        assert [v for _, v in json_lines(f, str(path), "--x", "a line", repair=True)] == \
            [{"a": 1}, {"b": 2}]
    assert path.read_bytes() == b'{"a": 1}\n\n{"b": 2}\n'
    path.write_bytes(b'{"a": 1}\n{"b": 2}')      # complete but for its newline: kept, fixed
    with open(path, "r+b", buffering=0) as f, warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(json_lines(f, str(path), "--x", "a line", repair=True))) == 2
    assert path.read_bytes() == b'{"a": 1}\n{"b": 2}\n'
    path.write_bytes(b'{"a": 1}\n{"b": \n{"c": 3}\n')
    with open(path, "rb") as f, pytest.raises(ValueError, match="line 2: not a line"):
        list(json_lines(f, str(path), "--x", "a line"))
    path.write_bytes(b'{"a": 1}\n{"b": \n')       # not JSON, but ends with its newline
    with open(path, "rb") as f, pytest.warns(UserWarning, match="line 2: incomplete"):
        assert len(list(json_lines(f, str(path), "--x", "a line"))) == 1
    with open(path, "rb") as f, pytest.raises(ValueError, match="line 2: .*ends with its "
                                                                "newline"):
        list(json_lines(f, str(path), "--x", "a line", unterminated_only=True))


# --- recorded search games: a cut last line -------------------------------------------------

def test_a_cut_last_recorded_game_is_dropped_and_played_again(recorded, tmp_path):
    """A run killed while writing leaves half a line: reading warns naming the file and
    line and leaves the game out; recording again removes it, plays that game again and
    leaves the file as an uninterrupted run writes it. A broken line before the last, or
    a last one ending with its newline, stays one ValueError naming the line."""
    whole = open(recorded, "rb").read()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 3
    out = tmp_path / "games.jsonl"
    out.write_bytes(b"".join(lines[:2]) + lines[2][:len(lines[2]) // 2])
    with pytest.warns(UserWarning, match=r"games.jsonl, line 3: incomplete last line "
                                         r"ignored .*left out"):
        assert [g["game"] for g in read_search_games(str(out))] == [0, 1]
    with pytest.warns(UserWarning, match=r"line 3: incomplete last line ignored and removed"
                                         r" .*played again"):
        record_search_games(SPARTA, 3, str(out), SMALL, workers=1, log=lambda s: None)
    assert out.read_bytes() == whole
    out.write_bytes(lines[0] + lines[1][:40] + b"\n" + lines[2])
    with pytest.raises(ValueError, match="line 2: not a recorded search game .*not an "
                                         "interrupted write"):
        record_search_games(SPARTA, 3, str(out), SMALL, workers=1, log=lambda s: None)
    out.write_bytes(lines[0] + lines[1] + lines[2][:40] + b"\n")
    with pytest.raises(ValueError, match="line 3: not a recorded search game .*ends with its "
                                         "newline"):
        read_search_games(str(out))


def test_the_cli_resumes_a_cut_recorded_games_file(tmp_path):
    """`lbs-pz search-games` on a file whose last line was cut: exit 0, one warning line
    naming the file and line, every game in the file whole."""
    argv = ["search-games", "--method", "sparta", "--blueprint", "strong", "--rollouts", "4",
            "--games", "2", "--out", "g.jsonl"] + VARIANT
    code, _, err = _cli(argv, tmp_path)
    assert code == 0, err
    out = tmp_path / "g.jsonl"
    whole = out.read_bytes()
    out.write_bytes(whole[:-30])
    code, _, err = _cli(argv, tmp_path)
    assert code == 0, err
    assert "Traceback" not in err
    (warning,) = err.strip().splitlines()
    assert "warning" in warning and "g.jsonl, line 2" in warning, err
    assert out.read_bytes() == whole


# --- recorded search games: another variant or blueprint ------------------------------------

def test_belief_training_refuses_games_of_another_variant_or_blueprint(recorded, tmp_path):
    """`train-belief --search-games` on games recorded with 8 information tokens, for a
    9-token game, or with another blueprint: refused before anything is trained, naming
    the file and both sides."""
    out = tmp_path / "belief.pt"
    argv = ["train-belief", "--blueprint", "strong", "--search-games", recorded, "--steps",
            "1", "--minutes", "0", "--embed", "8", "--hidden", "8", "--decoder", "8",
            "--val-games", "2", "--games-per-step", "2", "--no-progress", "--curve", "none",
            "--out", str(out)] + VARIANT
    code, _, err = _cli(argv + ["--max-information-tokens", "9"], tmp_path)
    _one_error_line(code, err, "games.jsonl", "another game variant",
                    "max_information_tokens=8", "max_information_tokens=9")
    code, _, err = _cli([a if a != "strong" else "simple" for a in argv], tmp_path)
    _one_error_line(code, err, "games.jsonl", "blueprint 'strong'", "'simple'")
    assert not out.exists()


def test_distillation_refuses_games_of_another_variant_or_teacher(recorded, tmp_path):
    """`distill --search-games`: games recorded in another variant, or by a search over
    another blueprint than the teacher, are refused before anything is trained."""
    out = tmp_path / "student.pt"
    argv = ["distill", "--teacher", "strong", "--search-games", recorded, "--updates", "1",
            "--minutes", "0", "--num-actors", "2", "--batch-size", "2", "--eval-games", "2",
            "--no-progress", "--curve", "none", "--out", str(out)] + VARIANT
    code, _, err = _cli(argv[:-1] + ["4"], tmp_path)      # --hand-size 4
    _one_error_line(code, err, "games.jsonl", "another game variant", "hand_size=3",
                    "hand_size=4")
    code, _, err = _cli([a if a != "strong" else "simple" for a in argv], tmp_path)
    _one_error_line(code, err, "games.jsonl", "blueprint 'strong'", "'simple'")
    assert not out.exists()


def test_games_are_checked_by_blueprint_fingerprint(recorded):
    """Each recorded game carries its blueprint's fingerprint: another fingerprint under
    the same name is refused (a retrained file), a line without one (an older file) is
    compared by spec, and a line that records nothing (written by hand) is taken."""
    config = HanabiConfig(**SMALL)
    strong = blueprint_identity(RuleBot("strong"))
    games = read_search_games(recorded)
    assert {g["blueprint_fingerprint"] for g in games} == {strong["fingerprint"]}
    check_recorded_for(recorded, games, config, strong)
    other = [dict(g, blueprint_fingerprint="0" * 64) for g in games]
    with pytest.raises(ValueError, match="fingerprint 000000000000"):
        check_recorded_for(recorded, other, config, strong)
    older = [{k: v for k, v in g.items() if k != "blueprint_fingerprint"} for g in games]
    check_recorded_for(recorded, older, config, strong)
    with pytest.raises(ValueError, match="blueprint 'strong'"):
        check_recorded_for(recorded, older, config, blueprint_identity(RuleBot("simple")))
    by_hand = [{k: v for k, v in g.items() if k not in ("run", "blueprint_fingerprint")}
               for g in games]
    check_recorded_for(recorded, by_hand, HanabiConfig(**dict(SMALL, hand_size=2)), strong)
    with pytest.raises(ValueError, match="hand_size=3.*this run is hand_size=2"):
        check_recorded_for(recorded, games, HanabiConfig(**dict(SMALL, hand_size=2)), strong)


def test_recording_refuses_games_of_another_blueprint_file(recorded, tmp_path):
    out = tmp_path / "games.jsonl"
    out.write_text("".join(json.dumps(dict(g, blueprint_fingerprint="0" * 64)) + "\n"
                           for g in read_search_games(recorded)))
    before = out.read_bytes()
    with pytest.raises(ValueError, match="another version of blueprint 'strong'"):
        record_search_games(SPARTA, 4, str(out), SMALL, workers=1, log=lambda s: None)
    assert out.read_bytes() == before


def test_a_malformed_run_field_is_not_a_recorded_game(recorded, tmp_path):
    out = tmp_path / "games.jsonl"
    game = read_search_games(recorded)[0]
    for run in (5, "[1, 2]", "not json", json.dumps([{}, {}, 0])):
        out.write_text(json.dumps(dict(game, run=run)) + "\n")
        with pytest.raises(ValueError, match="line 1: not a recorded search game"):
            read_search_games(str(out))


# --- a write that fails: one line, whole lines left -----------------------------------------

@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="POSIX rlimits")
def test_a_file_size_limit_on_the_compare_log_is_one_line(tmp_path):
    """`compare --jsonl` past a file-size limit: exit 2 with one line naming the log (no
    OSError traceback from closing it), the log holding whole lines only; a rerun without
    the limit plays only the missing games."""
    base = ["compare", "--methods", "blueprint", "--backend", "inline", "--no-progress",
            "--jsonl", "g.jsonl"] + VARIANT
    code, _, err = _cli(base + ["--games", "2"], tmp_path)
    assert code == 0, err
    log = tmp_path / "g.jsonl"
    size = log.stat().st_size
    # room for one more game's line and part of the next: that write fails half-way
    code, _, err = _cli(base + ["--games", "6"], tmp_path, limit=size + 3 * size // 4)
    _one_error_line(code, err, "g.jsonl", "writing it failed", "File too large")
    held = log.read_bytes()
    assert held.endswith(b"\n") and len(held) > size
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no cut line to drop: whole lines only
        assert len(read_log(str(log))) == held.count(b"\n")
    code, _, err = _cli(base + ["--games", "6"], tmp_path)
    assert code == 0 and "warning" not in err, err
    assert sorted(e["game"] for e in read_log(str(log))) == list(range(6))


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="POSIX rlimits")
def test_a_file_size_limit_on_recorded_games_is_one_line(tmp_path):
    """`search-games --out` past a file-size limit: exit 2 with one line naming the file,
    whole lines left; a rerun without the limit plays the rest."""
    out = tmp_path / "g.jsonl"
    argv = ["search-games", "--method", "sparta", "--blueprint", "strong", "--rollouts", "4",
            "--out", "g.jsonl"] + VARIANT
    code, _, err = _cli(argv + ["--games", "1"], tmp_path)
    assert code == 0, err
    first = out.read_bytes()
    code, _, err = _cli(argv + ["--games", "3"], tmp_path, limit=len(first) + 100)
    _one_error_line(code, err, "--out", "g.jsonl", "writing it failed", "File too large")
    assert out.read_bytes() == first
    code, _, err = _cli(argv + ["--games", "3"], tmp_path)
    assert code == 0 and "warning" not in err, err
    assert [g["game"] for g in read_search_games(str(out))] == [0, 1, 2]
