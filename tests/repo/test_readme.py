"""The README's Python examples run as written, and the README stays a newcomer's page."""

import pathlib
import re

import pytest

from tests.helpers import paths

ROOT = pathlib.Path(paths.ROOT)
README = ROOT / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
# the neural blueprints that no longer ship: the README must not send anyone to them
RETIRED = ("distilled_strong_2p", "finetuned_strong_2p", "conventions_strong_2p",
           "conventions_maxq_2p", "conventions_maxq_value_2p", "conventions_expert_2p")


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code):
    exec(compile(code, str(README), "exec"), {})


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_is_short_and_ci_runs_its_test_command():
    lines = TEXT.splitlines()
    assert len(lines) <= 250
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    test_command = next(line for line in lines if "pytest" in line and "pip install" in line)
    assert test_command in ci
    assert any(line.endswith("&& lbs-pz demo") and "pip install" in line for line in lines)


def test_readme_names_no_retired_model_and_links_exist():
    for name in RETIRED:
        assert not re.search(rf"\b{name}\b", TEXT), name
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link
