"""The repository's health limits (benchmarks/house.py prints the figures): what a clone
holds, results/ written once, short functions, one hand-written int check."""

import os

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.scripts import load_script

house = load_script("benchmarks/house.py")


@pytest.fixture(scope="module")
def in_git():
    if not os.path.exists(os.path.join(ROOT, ".git")):     # a folder, or a worktree's file
        pytest.skip("not a git checkout (an unpacked sdist or wheel)")


def test_a_clone_holds_little_besides_the_shipped_weights(in_git):
    assert house.tracked_bytes() < house.TRACKED_LIMIT


def test_results_are_written_once(in_git):
    assert {p: n for p, n in house.results_commits().items() if n > 1} == {}


def test_no_function_is_longer_than_the_limit():
    lines, where = house.longest_functions(1)[0]
    assert lines <= house.LONGEST_LIMIT, where


def test_the_int_check_is_written_once():
    """lbs_pz/checks.py's is_int, and nowhere else: the Python modules call lbs_pz.checks,
    the compiled ones the engine's int_arg, which answers a plain int or a NumPy integer in
    C and asks is_int about anything else."""
    found = [place.rsplit(":", 1)[0] for place in house.int_checks()]
    assert found == ["lbs_pz/checks.py"], found


@pytest.mark.parametrize("text, counted", [
    ("if isinstance(x, bool) or not isinstance(x, (int, np.integer)):", True),
    ("return isinstance(v, (int, np.integer)) and not isinstance(v, bool)", True),
    ("if (isinstance(s, (bool, np.bool_))\n        or not isinstance(s, int)):", True),
    ("if isinstance(t, bool) or not isinstance(t, (int, float)):", True),
    ("if isinstance(n, bool) or n < 0:", True),
    ("if isinstance(default, bool):", False),                 # a dispatch on a bool value
    ("if isinstance(p, (bool, np.bool_)):", False),
    ("if v is None or isinstance(v, (bool, int, float, str)):", False),   # bools accepted
    ("if isinstance(a, bool) or not isinstance(b, int):", False),         # two values
])
def test_the_count_sees_int_checks_only(tmp_path, text, counted):
    path = tmp_path / "m.py"
    path.write_text(text + "\n    pass\n")
    assert house._is_int_check(next(house._conditions(str(path)))[1]) is counted
