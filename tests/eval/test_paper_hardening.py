"""`lbs-pz paper` and `lbs-pz models` under the damage a stopped run, a reused folder or a
broken install leaves: a cut belief-curves cache, a write that fails half-way, `--out`
naming a file, a retrained belief (or its recorded games) of another run in the folder,
and a shipped model whose file was deleted. Each is refused at once, before any game is
played, in one line naming the file and what to do; commands run in a child process with
a time limit, so that a hang fails the test."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.cli import main
from lbs_pz.cli.models import file_problems, listing, not_installed
from lbs_pz.eval.paper import (CURVES, MAX_CURVES_BYTES, RETRAINED_BELIEF, RETRAINED_GAMES,
                               belief_curves, check_retrained, curves_made_for, read_curves,
                               retrained_made_for)
from lbs_pz.models import MODELS_DIR, CheckpointError, load_checkpoint
from lbs_pz.models.manifest import MANIFEST_NAME, read_manifest

CLI = [sys.executable, "-m", "lbs_pz.cli"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
PAPER = ["paper", "--tiny", "--backend", "inline", "--no-progress"]


def _run(argv, timeout=HANG_SECONDS, env=ENV, cwd=None):
    """`lbs-pz ARGV` in a child: (exit status, stdout, stderr); a hang fails the test."""
    try:
        proc = subprocess.run(CLI + argv, capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"lbs-pz {' '.join(argv)} ran on for {timeout} s: it was not refused")
    return proc.returncode, proc.stdout, proc.stderr


def _refused(status, err, *words):
    """Exit status 2, no traceback, the last line of stderr an error naming `words`."""
    assert status == 2, f"exit {status}\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("lbs-pz ") and "error:" in last, err[-3000:]
    for word in words:
        assert word in last, (word, last)
    return last


def _no_game_played(out):
    log = os.path.join(out, "games.jsonl")
    assert not os.path.exists(log) or os.path.getsize(log) == 0


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The folder of a whole `lbs-pz paper --tiny` run (about 30 s)."""
    out = str(tmp_path_factory.mktemp("paper") / "tiny")
    assert main(PAPER + ["--out", out]) == 0
    return out


def _copy(run, tmp_path, name="copy"):
    out = str(tmp_path / name)
    shutil.copytree(run, out)
    return out


# --- the belief curves' cache ---------------------------------------------------------------

def test_a_cut_curves_cache_is_refused_at_once_naming_it(tiny_run, tmp_path):
    """The issue's case: belief_curves.json cut in half. A resumed run and --report-only
    end at once with one line naming the file and saying to delete it (not "Expecting ','
    delimiter" alone), before a game is played; deleted, the run computes it again."""
    out = _copy(tiny_run, tmp_path)
    cache = os.path.join(out, CURVES)
    whole = open(cache, "rb").read()
    with open(cache, "wb") as f:
        f.write(whole[: len(whole) // 2])
    lines = open(os.path.join(out, "games.jsonl")).read()
    for extra in ([], ["--report-only"]):
        status, _, err = _run(PAPER + ["--out", out] + extra)
        last = _refused(status, err, cache, "not whole JSON", "delete it")
        assert "Expecting" in last                       # the parser's reason, kept
    assert open(os.path.join(out, "games.jsonl")).read() == lines
    fresh = str(tmp_path / "fresh")                     # a cut cache alone: no game first
    os.makedirs(fresh)
    with open(os.path.join(fresh, CURVES), "wb") as f:
        f.write(whole[: len(whole) // 2])
    _refused(*_run(PAPER + ["--out", fresh])[::2], CURVES)
    _no_game_played(fresh)
    os.remove(cache)
    assert main(PAPER + ["--out", out, "--report-only"]) == 0     # read-only: not computed
    assert not os.path.exists(cache)
    assert main(PAPER + ["--out", out]) == 0
    again, then = json.loads(open(cache).read()), json.loads(whole)
    assert set(again["seconds"]) == set(then["seconds"])         # computed again, the same
    assert {k: v for k, v in again.items() if k != "seconds"} == \
        {k: v for k, v in then.items() if k != "seconds"}


def test_a_damaged_curves_cache_of_any_shape_is_one_error_naming_it(tmp_path):
    made_for = curves_made_for("tiny", 0)
    cache = str(tmp_path / CURVES)
    good = belief_curves("tiny", progress=False, cache=cache)
    data = json.load(open(cache))
    assert read_curves(cache, dict(made_for, seed=1)) is None     # another run's: recomputed
    for bad in ("[]", "null", '{"ce": {}}', json.dumps(dict(data, scores=["x"])),
                json.dumps(dict(data, ce={"exact": [[1.0]]})),
                json.dumps(dict(data, scores=[1e999])),
                json.dumps(dict(data, seconds={})), b"\xff\xfe{",
                "[" * 100_000):
        with open(cache, "wb") as f:
            f.write(bad if isinstance(bad, bytes) else bad.encode())
        with pytest.raises(ValueError, match="delete it to compute the belief curves again") \
                as err:
            read_curves(cache, made_for)
        assert cache in str(err.value) and "\n" not in str(err.value)
    os.truncate(cache, MAX_CURVES_BYTES + 1)                      # bounded: never read whole
    with pytest.raises(ValueError, match="larger than"):
        read_curves(cache, made_for)
    os.remove(cache)
    os.mkfifo(cache)                                              # never opened to block
    with pytest.raises(ValueError, match="FIFO"):
        read_curves(cache, made_for)
    assert set(good["ce"]) == set(made_for["beliefs"])


def test_a_cache_written_before_it_recorded_the_blueprint_is_still_read(tmp_path):
    """Caches record the strong bot's fingerprint and the learned belief's sha256; one
    written before (as the full run's in the repository) is read on the other fields."""
    cache = str(tmp_path / CURVES)
    belief_curves("tiny", progress=False, cache=cache)
    data = json.load(open(cache))
    made_for = data["made_for"]
    assert made_for == curves_made_for("tiny", 0) and made_for["blueprint"]
    old = {k: v for k, v in made_for.items() if k not in ("blueprint", "learned")}
    json.dump(dict(data, made_for=old), open(cache, "w"))
    assert read_curves(cache, made_for) is not None
    json.dump(dict(data, made_for=dict(made_for, blueprint="0" * 64)), open(cache, "w"))
    assert read_curves(cache, made_for) is None                  # another strong bot's
    repository = os.path.join(ROOT, "results", "paper_full", CURVES)
    assert read_curves(repository, curves_made_for("full", 0)) is not None


def test_a_write_that_fails_half_way_leaves_the_former_file_whole(tiny_run, tmp_path):
    """Every cache and table is written to a temporary file renamed over it: a write
    stopped half-way (here by a file-size limit, as by a full disk) ends in one error
    naming the file, and the former file stays whole and readable (written in place, the
    cache was left cut, and every later run refused it)."""
    out = _copy(tiny_run, tmp_path)
    cache = os.path.join(out, CURVES)
    before = {name: open(os.path.join(out, name), "rb").read()
              for name in (CURVES, "paper.md", "paper.json")}
    limit = len(before[CURVES]) // 2
    script = textwrap.dedent(f"""
        import json, os, resource, signal
        from lbs_pz.eval.paper import belief_curves, build_report, plan, write_report
        report = build_report(plan("tiny"), {{}})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # EFBIG instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        for write in (lambda: belief_curves("tiny", seed=1, progress=False, cache={cache!r}),
                      lambda: write_report(report, {out!r}, {{"x": "y" * {limit}}})):
            try:
                write()
            except ValueError as err:
                print(err)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=HANG_SECONDS, env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = proc.stdout.strip().splitlines()
    assert len(said) == 2, proc.stdout
    assert cache in said[0] and "writing it failed" in said[0]
    assert os.path.join(out, "paper.md") in said[1] or "paper.json" in said[1]
    for name, data in before.items():
        assert open(os.path.join(out, name), "rb").read() == data, name
    assert not [f for f in os.listdir(out) if ".tmp" in f]
    assert read_curves(cache, curves_made_for("tiny", 0)) is not None


def test_a_run_leaves_no_temporary_file_and_rewrites_its_tables_whole(tiny_run):
    names = os.listdir(tiny_run)
    assert not [f for f in names if ".tmp" in f or f.endswith(".partial")], names
    for name in ("paper.md", "paper.json", CURVES, RETRAINED_BELIEF, RETRAINED_GAMES):
        assert name in names
    json.load(open(os.path.join(tiny_run, "paper.json")))


# --- --out ----------------------------------------------------------------------------------

def test_out_naming_a_file_is_one_line(tmp_path):
    path = tmp_path / "a_file"
    path.write_text("keep me")
    for extra in ([], ["--report-only"]):
        status, _, err = _run(PAPER + ["--out", str(path)] + extra)
        _refused(status, err, str(path), "is a file, not a folder")
    assert path.read_text() == "keep me"
    status, _, err = _run(PAPER + ["--out", str(path / "below")])
    _refused(status, err, str(path / "below"), "cannot make the folder")


def test_a_table_path_that_is_a_folder_is_refused_before_any_game(tmp_path):
    out = tmp_path / "run"
    (out / "paper.md").mkdir(parents=True)
    status, _, err = _run(PAPER + ["--out", str(out)])
    _refused(status, err, "paper.md", "folder")
    _no_game_played(str(out))


# --- the retrained belief and its games -----------------------------------------------------

def _belief_of(out, info=None, name="belief_strong_2p"):
    """OUT/belief_on_lbs.pt: a copy of a shipped belief, its info updated by `info`."""
    from lbs_pz.models.checkpoint import read, write
    ckpt = read(os.path.join(MODELS_DIR, name + ".pt"))
    ckpt["info"] = dict(ckpt["info"], **(info or {}))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, RETRAINED_BELIEF)
    write(path, ckpt)
    return path


def test_the_retrained_belief_records_the_run_that_made_it(tiny_run):
    pytest.importorskip("torch")
    info = load_checkpoint(os.path.join(tiny_run, RETRAINED_BELIEF))["info"]
    assert info["paper"] == retrained_made_for("tiny", 0)
    check_retrained(tiny_run, "tiny", 0)
    for size, seed in (("quick", 0), ("full", 0), ("tiny", 1)):
        with pytest.raises(ValueError, match="is not this run's retrained belief"):
            check_retrained(tiny_run, size, seed)


def test_a_stale_belief_of_another_variant_is_refused_at_once(tmp_path):
    """The issue's case: a belief for another variant in `paper --out` (here the shipped
    5-card one in a --tiny run, 3 colours) ended the run in advice that did not apply
    (`--allow-mismatch`) after the first pass; now it is refused before any game, naming
    the file, its variant, this run's, and what to do."""
    pytest.importorskip("torch")
    out = str(tmp_path / "run")
    path = _belief_of(out)
    status, _, err = _run(PAPER + ["--out", out])
    last = _refused(status, err, path, "2p 5-card 5x5, not 2p 3-card 3x3",
                    f"delete {path}", "another --out")
    assert "allow-mismatch" not in last and "train-belief" not in last
    _no_game_played(out)


def test_a_quick_runs_belief_is_never_reused_by_a_full_run(tmp_path):
    """A belief retrained by --quick left in the folder of a --full run would have stood
    for the full run's (its games keyed by the file's name): the full run refuses it at
    once, saying whose it is, and the quick run it was made by goes on using it."""
    pytest.importorskip("torch")
    out = str(tmp_path / "run")
    path = _belief_of(out, {"paper": retrained_made_for("quick", 0)})
    check_retrained(out, "quick", 0)
    with pytest.raises(ValueError) as err:
        check_retrained(out, "full", 0)
    text = str(err.value)
    assert "retrained by a --quick run" in text and "this is a --full run" in text
    assert path in text and "another --out" in text
    status, _, err = _run(["paper", "--full", "--no-progress", "--out", out])
    _refused(status, err, "retrained by a --quick run", "this is a --full run")
    _no_game_played(out)


def test_the_full_runs_belief_in_the_repository_is_accepted_for_its_run():
    """The full run's belief in the repository was retrained before beliefs recorded their
    run: it is judged by its steps and seed, and accepted for the full run only."""
    pytest.importorskip("torch")
    folder = os.path.join(ROOT, "results", "paper_full")
    check_retrained(folder, "full", 0, play=False)
    with pytest.raises(ValueError, match=r"600 steps with run seed 0 \(a --full run's\)"):
        check_retrained(folder, "quick", 0, play=False)


def test_another_runs_recorded_games_are_refused_naming_the_file(tiny_run, tmp_path):
    """With no belief yet, the run records LBS-16's games into OUT/lbs_games.jsonl: games
    of another run there (another seed) are refused at once, naming the file and saying
    to delete it (not "give a new file", which the run never took)."""
    pytest.importorskip("torch")
    out = _copy(tiny_run, tmp_path)
    os.remove(os.path.join(out, RETRAINED_BELIEF))
    games = os.path.join(out, RETRAINED_GAMES)
    lines = open(os.path.join(out, "games.jsonl")).read()
    status, _, err = _run(PAPER + ["--out", out, "--seed", "1"])
    _refused(status, err, games, "run seed 0", f"delete {games}", "another --out")
    assert open(os.path.join(out, "games.jsonl")).read() == lines
    check_retrained(out, "tiny", 0)                 # its own run resumes from them
    check_retrained(out, "tiny", 1, play=False)     # read-only: nothing is recorded


def test_a_corrupt_belief_is_one_line_saying_what_to_do(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "run"
    out.mkdir()
    (out / RETRAINED_BELIEF).write_bytes(b"not a checkpoint")
    status, _, err = _run(PAPER + ["--out", str(out)])
    _refused(status, err, RETRAINED_BELIEF, "to retrain it here")
    _no_game_played(str(out))


# --- lbs-pz models and a deleted model ------------------------------------------------------

def _package_without(tmp_path, name):
    """A copy of the lbs_pz package in tmp_path (its files linked, its models folder a
    real folder) without the shipped model `name`: the checkout keeps its file. A child
    imports it with PYTHONPATH and its working folder set to the returned folder."""
    root = tmp_path / "site"
    package = root / "lbs_pz"
    package.mkdir(parents=True)
    source = os.path.dirname(MODELS_DIR)
    for entry in os.listdir(source):
        if entry not in ("models", "__pycache__"):
            os.symlink(os.path.join(source, entry), package / entry)
    (package / "models").mkdir()
    for entry in os.listdir(MODELS_DIR):
        if entry != name + ".pt" and entry != "__pycache__":
            os.symlink(os.path.join(MODELS_DIR, entry), package / "models" / entry)
    assert os.path.isfile(os.path.join(MODELS_DIR, name + ".pt"))
    return str(root)


def test_models_marks_a_deleted_model_and_says_how_to_restore_it(tmp_path):
    site = _package_without(tmp_path, "value_weak_2p")
    env = dict(ENV, PYTHONPATH=site)
    status, out, err = _run(["models"], env=env, cwd=site)
    last = _refused(status, err, "value_weak_2p (missing)", "reinstall lbs_pz")
    assert os.path.join(site, "lbs_pz", "models") in last
    marked = [line for line in out.splitlines() if "** file missing **" in line]
    assert len(marked) == 1 and marked[0].startswith("value_weak_2p ")
    status, out, err = _run(["models", "--json"], env=env, cwd=site)
    assert status == 2 and json.loads(out)["problems"] == {"value_weak_2p": "missing"}
    status, out, _ = _run(["models", "--retired"], env=env, cwd=site)      # retired: none ships
    assert status == 0 and "retired models" in out
    status, out, err = _run(["models"])                            # the checkout: whole
    assert status == 0 and "**" not in out and err == ""


def test_loading_a_deleted_shipped_model_says_so_in_one_line(tmp_path):
    """By name, by its path in the models folder, and as a default a search picks."""
    site = _package_without(tmp_path, "belief_strong_2p")
    script = textwrap.dedent("""
        from lbs_pz.models import CheckpointError, load_checkpoint, path
        from lbs_pz.search.beliefs.learned import default_checkpoint
        for name in ("belief_strong_2p", "belief_strong_2p.pt", path("belief_strong_2p"),
                     default_checkpoint()):
            try:
                load_checkpoint(name, kind="belief")
            except CheckpointError as err:
                print(err)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=HANG_SECONDS, env=dict(ENV, PYTHONPATH=site), cwd=site)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = proc.stdout.strip().splitlines()
    assert len(said) == 4, proc.stdout
    for line in said:
        assert "shipped model 'belief_strong_2p' is missing" in line
        assert "reinstall lbs_pz" in line
    status, _, err = _run(["compare", "--methods", "lbs-1", "--games", "1", "--backend",
                           "inline", "--no-progress"], env=dict(ENV, PYTHONPATH=site),
                          cwd=site)
    _refused(status, err, "'belief_strong_2p' is missing", "reinstall lbs_pz")


def test_models_in_a_folder_with_a_file_of_another_size(tmp_path):
    data = json.load(open(os.path.join(MODELS_DIR, MANIFEST_NAME)))
    data["models"] = [m for m in data["models"] if m["name"] in ("value_weak_2p",
                                                                 "belief_weak_2p")]
    data["retired"] = []
    for m in data["models"]:
        m["needs"] = []
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data))
    shutil.copy(os.path.join(MODELS_DIR, "value_weak_2p.pt"), tmp_path)
    (tmp_path / "belief_weak_2p.pt").write_bytes(b"cut")
    manifest = read_manifest(str(tmp_path))
    problems = file_problems(manifest, str(tmp_path))
    size = next(m["size"] for m in data["models"] if m["name"] == "belief_weak_2p")
    assert problems == {"belief_weak_2p": f"3 bytes, not the {size} listed"}
    text = listing(manifest, False, False, str(tmp_path))
    assert f"** file 3 bytes, not the {size} listed **" in text
    assert "belief_weak_2p" in not_installed(problems, str(tmp_path))
    os.remove(tmp_path / "belief_weak_2p.pt")
    with pytest.raises(CheckpointError, match="is missing: its manifest lists it"):
        load_checkpoint("belief_weak_2p", models_dir=str(tmp_path))
    with pytest.raises(CheckpointError, match="neither a file nor a shipped model"):
        load_checkpoint("no_such_model", models_dir=str(tmp_path))
