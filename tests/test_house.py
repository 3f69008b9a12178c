"""The repository's health limits (benchmarks/house.py prints the figures): what a clone
holds, results/ written once, short functions, one hand-written int check."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("house", os.path.join(ROOT, "benchmarks",
                                                                    "house.py"))
house = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(house)


@pytest.fixture(scope="module")
def in_git():
    if not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout (an unpacked sdist or wheel)")


def test_a_clone_holds_little_besides_the_shipped_weights(in_git):
    assert house.tracked_bytes() < house.TRACKED_LIMIT


def test_results_are_written_once(in_git):
    assert {p: n for p, n in house.results_commits().items() if n > 1} == {}


def test_no_function_is_longer_than_the_limit():
    lines, where = house.longest_functions(1)[0]
    assert lines <= house.LONGEST_LIMIT, where


# Python modules where `isinstance(x, bool)` may stand outside lbs_pz/checks.py, and why:
# optional.py imports nothing of lbs_pz (its one check stays written out); in seeds.py,
# train/common.py and cli/options.py it is no int check (a seed refuses bools alone, a
# flag's default picks its argparse form). The compiled engine (.pyx, .pxi) keeps its own
# checks on every move's path.
NOT_THE_HELPER = {"lbs_pz/optional.py", "lbs_pz/engine/seeds.py", "lbs_pz/train/common.py",
                  "lbs_pz/cli/options.py"}


def test_the_int_check_is_written_once():
    found = [place.rsplit(":", 1)[0] for place in house.int_checks()]
    python = [path for path in found if path.endswith(".py")]
    assert python.count("lbs_pz/checks.py") == 1
    assert set(python) - {"lbs_pz/checks.py"} <= NOT_THE_HELPER, python
    assert len(python) - 1 <= len(NOT_THE_HELPER), python
