"""A finished run's log is kept in the repository gzipped (X.jsonl.gz, then only what is
new as X.jsonl.2.gz, ...: no file is rewritten), its live log (X.jsonl) out of git: every
reader reads the .gz and its segments as the plain log, a run on a missing live log
starts from them, a run never appends to the .gz, and the repository holds no plain log
under results/ and no carve-out in .gitignore."""

import dataclasses
import gzip
import json
import os
import shutil
import subprocess

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.scripts import load_script
from lbs_pz.cli import main
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.backends import collect, log_contents, read_log
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.files import (gzip_log, log_segments, open_log, read_lines, readable_log,
                          seed_log)
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import read_search_games

SMALL = dataclasses.asdict(HanabiConfig(players=2, colors=3, ranks=3, hand_size=3))
VARIANT = ["--players", "2", "--colors", "3", "--ranks", "3", "--hand-size", "3"]
SPARTA = MethodSpec("sparta", "strong", rollouts=4, seed=0)
COMPARE = ["compare", "--methods", "blueprint", "--backend", "inline", "--no-progress"] + VARIANT


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """A compare log and a recorded-search file, each written by the package's own writer,
    and their gzipped copies (`gzip_log`, as a finished run's log is committed)."""
    folder = tmp_path_factory.mktemp("logs")
    compare_log = str(folder / "games.jsonl")
    assert main(COMPARE + ["--games", "3", "--jsonl", compare_log]) == 0
    recorded = str(folder / "search.jsonl")
    record_search_games(SPARTA, 2, recorded, SMALL, workers=1, backend="inline",
                        log=lambda s: None)
    return {path: gzip_log(path) for path in (compare_log, recorded)}


def _spec(log):
    """The method of the log's games (what compare logged them as)."""
    return MethodSpec.from_dict(json.loads(read_log(log)[0]["key"])[0])


def _lines(path):
    with open(path, "rb") as f:
        return [raw for _, _, raw in read_lines(f, path, "--x")]


def test_every_reader_reads_the_gzipped_log_as_the_plain_one(logs, capsys):
    (compare_log, compare_gz), (recorded, recorded_gz) = logs.items()
    spec = _spec(compare_log)
    with open(compare_gz, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"                     # really gzipped
    for plain, gz in logs.items():
        assert _lines(gz) == _lines(plain) and _lines(plain)  # paper's first-line check
        with open_log(gz, "--x") as f, open(plain, "rb") as g:  # improve's distill input
            assert f.read() == g.read()
    assert read_log(compare_gz) == read_log(compare_log) and len(read_log(compare_log)) == 3
    assert log_contents(compare_gz, [spec], SMALL, 0) == \
        log_contents(compare_log, [spec], SMALL, 0)
    report = [collect([spec], SMALL, 3, backend="inline", show_progress=False, jsonl=log,
                      play=False) for log in (compare_log, compare_gz)]
    assert report[0] == report[1] and len(report[0][spec.label()]) == 3   # paper's reader
    assert read_search_games(recorded_gz) == read_search_games(recorded)
    assert len(read_search_games(recorded)) == 2
    tables = []
    for log in (compare_log, compare_gz):                   # compare --report-only
        assert main(COMPARE + ["--games", "3", "--report-only", "--jsonl", log]) == 0
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1] and "blueprint" in tables[0]


def test_a_run_on_a_missing_live_log_starts_from_the_committed_one(logs, tmp_path, capsys):
    """The live log is made from X.jsonl.gz when missing (compare, search-games, paper's
    run_cells: `seed_log`), so the games the repository holds are not played again; a
    report on the missing live log reads the .gz; the .gz itself is never appended to."""
    (compare_log, compare_gz), (recorded, recorded_gz) = logs.items()
    live = str(tmp_path / "games.jsonl")
    shutil.copy(compare_gz, live + ".gz")
    assert readable_log(live) == live + ".gz"
    assert main(COMPARE + ["--games", "3", "--report-only", "--jsonl", live]) == 0
    assert not os.path.exists(live)                         # a report makes nothing
    capsys.readouterr()
    assert main(COMPARE + ["--games", "4", "--jsonl", live]) == 0
    assert "made from its committed copy" in capsys.readouterr().err
    assert _lines(live)[:3] == _lines(compare_log) and len(_lines(live)) == 4   # 1 played
    assert open(live + ".gz", "rb").read() == open(compare_gz, "rb").read()
    assert readable_log(live) == live and not seed_log(live, "--x")   # the live one wins
    out = str(tmp_path / "search.jsonl")
    shutil.copy(recorded_gz, out + ".gz")
    record_search_games(SPARTA, 2, out, SMALL, workers=1, backend="inline",
                        log=lambda s: None)                 # nothing left to play
    assert open(out, "rb").read() == open(recorded, "rb").read()
    with pytest.raises(ValueError, match="is gzipped .* a run appends to a plain log only"):
        collect([_spec(compare_log)], SMALL, 4, backend="inline", show_progress=False,
                jsonl=live + ".gz")
    assert open(live + ".gz", "rb").read() == open(compare_gz, "rb").read()


def test_a_cut_gzipped_log_is_an_error_naming_it(logs, tmp_path):
    compare_gz = list(logs.values())[0]
    cut = tmp_path / "cut.jsonl.gz"
    data = open(compare_gz, "rb").read()
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="cut.jsonl.gz.*not a whole gzip file"):
        read_log(str(cut))
    live = str(tmp_path / "cut.jsonl")
    with pytest.raises(ValueError, match="not a whole gzip file"):
        seed_log(live, "--jsonl")
    assert not os.path.exists(live)                         # whole or not at all
    assert gzip.decompress(data) == open(list(logs)[0], "rb").read()


def test_a_later_keep_writes_only_the_new_lines_as_the_next_segment(logs, tmp_path):
    """A log kept, then continued and cut down (stale lines dropped, a game played again):
    the second keep writes the lines not kept yet, in order, as X.jsonl.2.gz, leaving
    X.jsonl.gz as it was; every reader of X.jsonl.gz reads both as one log; a run on a
    fresh clone continues from both; a third keep with nothing new writes nothing."""
    compare_log = list(logs)[0]
    live = str(tmp_path / "games.jsonl")
    shutil.copy(compare_log, live)
    assert gzip_log(live) == live + ".gz"
    first = open(live + ".gz", "rb").read()
    assert main(COMPARE + ["--games", "5", "--jsonl", live]) == 0    # the run went on
    lines = _lines(live)
    with open(live, "wb") as f:                                 # and the live log was cut
        f.writelines(lines[1:])
    assert gzip_log(live) == live + ".2.gz"
    assert open(live + ".gz", "rb").read() == first             # never rewritten
    assert _lines(live + ".2.gz") == lines[3:]                  # only the new ones
    assert log_segments(live + ".gz") == [live + ".gz", live + ".2.gz"]
    assert _lines(live + ".gz") == lines                        # read as one log
    assert read_log(live + ".gz") == read_log(compare_log) + read_log(live)[2:]
    assert gzip_log(live) is None and not os.path.exists(live + ".3.gz")
    os.remove(live)
    assert seed_log(live, "--x") and _lines(live) == lines      # a fresh clone continues
    spec = _spec(compare_log)
    played = collect([spec], SMALL, 5, backend="inline", show_progress=False,
                     jsonl=live + ".gz", play=False)
    assert len(played[spec.label()]) == 5


def test_a_segment_missing_or_damaged_is_an_error_naming_it(logs, tmp_path):
    base = str(tmp_path / "games.jsonl")
    shutil.copy(list(logs.values())[0], base + ".gz")
    shutil.copy(list(logs.values())[0], base + ".3.gz")        # .2.gz is not there
    with pytest.raises(ValueError, match=r"games.jsonl.2.gz is missing but .*3.gz is there"):
        read_log(base + ".gz")
    os.rename(base + ".3.gz", base + ".2.gz")
    data = open(base + ".2.gz", "rb").read()
    for broken, why in ((b"", "not a gzip file"), (data[:len(data) // 2], "not a whole gzip")):
        with open(base + ".2.gz", "wb") as f:
            f.write(broken)
        with pytest.raises(ValueError, match=f"games.jsonl.2.gz.*{why}"):
            read_log(base + ".gz")


def test_house_keep_prints_what_to_commit(logs, tmp_path, capsys):
    house = load_script("benchmarks/house.py")
    live = str(tmp_path / "games.jsonl")
    shutil.copy(list(logs)[0], live)
    assert house.main(["keep", live]) == 0 and house.main(["keep", live]) == 0
    assert capsys.readouterr().out.splitlines() == [live + ".gz",
                                                    f"{live}: every line is kept already"]
    with pytest.raises(SystemExit):
        house.main(["keep", str(tmp_path / "none.jsonl")])
    assert "no such log" in capsys.readouterr().err


def _tracked(*paths):
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", *paths], capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.decode().split("\0") if p]


def test_the_repository_keeps_each_log_gzipped_and_ignores_without_carve_outs():
    """.gitignore ignores by pattern, never re-includes (no `!` line), and no log under
    results/ is tracked plain: each is committed once, gzipped."""
    with open(os.path.join(ROOT, ".gitignore")) as f:
        carve_outs = [line for line in f if line.startswith("!")]
    assert not carve_outs
    tracked = _tracked("results")
    assert tracked and not [p for p in tracked if p.endswith(".jsonl")]
    for path in (p for p in tracked if p.endswith(".gz")):
        with open(os.path.join(ROOT, path), "rb") as f:
            assert f.read(2) == b"\x1f\x8b", path
