"""benchmarks/ holds figures only: benchmarks/sections.toml is the one list of sections
(benchmarks/run_all.py runs them and writes RESULTS.md), every file in benchmarks/ is a
script one of its commands names or a file such a script uses, and every script, document
or example a section names exists."""

import ast
import os
import re

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.scripts import load_script

BENCHMARKS = os.path.join(ROOT, "benchmarks")
# the registry and its machinery, and what run_all.py writes
REGISTRY_FILES = {"sections.toml", "run_all.py"}
# a path in the repository that a command or a description names: a script, a document
NAMED_PATH = re.compile(r"(?<![\w./-])((?:benchmarks|examples|docs|lbs_pz)/[\w./-]*\w"
                        r"\.(?:py|sh|md|cc))\b")


def _run_all():
    return load_script("benchmarks/run_all.py")


@pytest.fixture(scope="module")
def run_all():
    return _run_all()


def _benchmark_files():
    return sorted(name for name in os.listdir(BENCHMARKS)
                  if os.path.isfile(os.path.join(BENCHMARKS, name))
                  and not name.startswith("results.json"))


def _commands(sections):
    return [(name, command) for name, (_, _, quick, full) in sections.items()
            for command in (quick, full)]


def _used_by(name, files):
    """The files of benchmarks/ that benchmarks/NAME imports (a Python script) or names
    outside its docstrings and comments (a file it reads, a script it runs)."""
    text = open(os.path.join(BENCHMARKS, name)).read()
    if not name.endswith(".py"):
        code = "\n".join(line for line in text.splitlines()
                         if not line.lstrip().startswith("#"))
        return {f for f in files if f"benchmarks/{f}" in code}
    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            used |= {alias.name + ".py" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            used.add(node.module + ".py")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            used |= {f for f in files if re.search(rf"(?<![\w.]){re.escape(f)}\b", node.value)}
    return used & set(files)


def test_every_file_in_benchmarks_is_a_sections_script_or_used_by_one(run_all):
    files = _benchmark_files()
    named = {path.split("/", 1)[1] for _, command in _commands(run_all.SECTIONS)
             for path in NAMED_PATH.findall(command) if path.startswith("benchmarks/")}
    reached, todo = set(), sorted(named & set(files))
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += sorted(_used_by(name, files) - reached)
    unused = set(files) - REGISTRY_FILES - reached
    assert not unused, (f"files in benchmarks/ that no section of benchmarks/sections.toml "
                        f"runs and no script it runs uses: {sorted(unused)} (a one-question "
                        f"diagnostic belongs beside its question in docs/experiments/)")
    assert "_common.py" in reached and "hle_random_play.cc" in reached     # the check sees uses


def test_every_script_a_section_runs_exists(run_all):
    missing = [(name, path) for name, command in _commands(run_all.SECTIONS)
               for path in NAMED_PATH.findall(command)
               if not os.path.isfile(os.path.join(ROOT, path))]
    assert not missing, missing
    assert any("benchmarks/bots.py" in command for _, command in _commands(run_all.SECTIONS))


def test_every_file_a_section_describes_exists(run_all):
    missing = [(name, path) for name, (title, what, _, _) in run_all.SECTIONS.items()
               for path in NAMED_PATH.findall(title + " " + what)
               if not os.path.isfile(os.path.join(ROOT, path))]
    assert not missing, missing


def test_the_registry_holds_every_section_once(run_all):
    sections, headline = run_all.SECTIONS, run_all.HEADLINE
    assert {"engine", "search-3p", "search-4p", "search-5p", "web"} <= set(sections)
    assert list(headline)[:3] == ["engine", "env", "bots"]
    assert set(headline) <= set(sections)
    for name, (title, what, quick, full) in sections.items():
        assert title and what and quick and full, name
        assert "{" not in title + what + quick + full, name          # every {NAME} filled
    titles = [sections[name][0] for name in headline]                # RESULTS.md's anchors
    assert len(set(titles)) == len(titles)
    assert "--players 4" in sections["search-4p"][3] and "4 players" in sections["search-4p"][0]


def test_a_registry_with_an_unknown_name_or_key_is_refused(tmp_path):
    run_all = _run_all()
    good = ('[vars]\nX = "python benchmarks/bots.py"\n'
            '[sections."s-{n}"]\neach = {n = [1, 2], g = [10, 20]}\ntitle = "T {n}"\n'
            'what = "W"\nquick = "{X} --quick"\nfull = ["{X}", "{X} --games {n}{g}"]\n'
            '[[results]]\nsection = "s-2"\nlines = "^x"\n')
    path = tmp_path / "sections.toml"
    path.write_text(good)
    sections, headline = run_all.load_registry(str(path))
    assert sections == {
        "s-1": ("T 1", "W", "python benchmarks/bots.py --quick",
                "python benchmarks/bots.py && python benchmarks/bots.py --games 110"),
        "s-2": ("T 2", "W", "python benchmarks/bots.py --quick",
                "python benchmarks/bots.py && python benchmarks/bots.py --games 220")}
    assert headline == {"s-2": "^x"}
    for bad, words in ((good.replace('"{X} --quick"', '"{Y} --quick"'), "unknown {Y}"),
                       (good.replace('what = "W"', 'wat = "W"'), "unknown keys ['wat']"),
                       (good.replace('section = "s-2"', 'section = "s-3"'), "s-3"),
                       (good.replace("g = [10, 20]", "g = [10]"), "different lengths")):
        path.write_text(bad)
        with pytest.raises(ValueError, match=re.escape(words)):
            run_all.load_registry(str(path))
