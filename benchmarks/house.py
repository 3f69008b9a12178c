"""The repository's health figures: what a clone downloads, how long the longest function is,
how many hand-written argument checks remain, how much of the public API is annotated, and
whether ruff and mypy pass.

    python benchmarks/house.py            # the table (the "house" section of sections.toml)
    python benchmarks/house.py keep results/compute_net.jsonl    # a finished log, to commit

Each figure has its limit beside it; tests/repo/test_house.py asserts the limits.

`keep LOG...` keeps each finished live log gzipped for the repository without rewriting a
file kept before (git keeps every version of a file for good, so a results/ log is
committed once): the first keep of results/X.jsonl writes results/X.jsonl.gz, a later one
(the run went on, or played stale games again) only the lines the kept files do not hold,
as the next segment, results/X.jsonl.2.gz, .3.gz, ... A reader of X.jsonl.gz reads its
segments after it, as one log, and a run on a fresh clone continues from them all
(lbs_pz/files.py). It prints each file written, for `git add`.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tokenize
from typing import Dict, Iterator, List, Tuple

from lbs_pz.files import gzip_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "lbs_pz")
TRACKED_LIMIT = 8_000_000       # bytes tracked outside lbs_pz/models/
LONGEST_LIMIT = 80              # lines of the longest function in lbs_pz/
# a results/ file this big (a run's log, a model) is committed once; a smaller record (a
# long run's improve.json) may follow its run
ONCE_BYTES = 100_000
# the hand-written "an int but not a bool" check: written once, in lbs_pz/checks.py (the
# rule is in int_checks' docstring)
ISINSTANCE = re.compile(r"isinstance\(\s*([^,()]+?(?:\[[^\]]*\])?)\s*,\s*(\([^()]*\)|[\w.]+)\s*\)")
BOOL_TYPE = re.compile(r"\b(?:bool|np\.bool_)(?![\w.])")
NUMBER_TYPE = re.compile(r"\b(?:int|float|np\.integer|np\.floating|np\.number)(?![\w.])")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def tracked_bytes() -> int:
    """Bytes of the files git tracks outside lbs_pz/models/ (what a clone holds beside the
    shipped weights)."""
    total = 0
    for path in git("ls-files", "-z").split("\0"):
        if path and not path.startswith("lbs_pz/models/") and os.path.isfile(
                os.path.join(ROOT, path)):
            total += os.path.getsize(os.path.join(ROOT, path))
    return total


def results_commits() -> Dict[str, int]:
    """{tracked file under results/ of ONCE_BYTES or more: commits that wrote it}."""
    paths = [p for p in git("ls-files", "results").splitlines()
             if p and os.path.getsize(os.path.join(ROOT, p)) >= ONCE_BYTES]
    return {p: len(git("log", "--format=%H", "--follow", "--", p).split()) for p in paths}


def _sources() -> List[Tuple[str, ast.Module]]:
    out = []
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    out.append((os.path.relpath(path, ROOT), ast.parse(f.read())))
    return out


def longest_functions(n: int = 3) -> List[Tuple[int, str]]:
    """The n longest functions of lbs_pz/ as (lines, "path:name"), longest first."""
    rows = [(node.end_lineno - node.lineno + 1, f"{path}:{node.name}")
            for path, tree in _sources() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted(rows, reverse=True)[:n]


def _conditions(path: str) -> Iterator[Tuple[int, str]]:
    """(first line, text) of every logical line of a .py / .pyx / .pxi file: a line with
    its bracket and backslash continuations (Python's tokenizer, which reads Cython too);
    physical lines where it cannot."""
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    try:
        first = None
        for token in tokenize.generate_tokens(iter(lines).__next__):
            if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.ENCODING):
                continue
            if first is None:
                first = token.start[0]
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                yield first, "".join(lines[first - 1:token.end[0]])
                first = None
    except (tokenize.TokenError, SyntaxError):
        yield from enumerate(lines, 1)


def _is_int_check(condition: str) -> bool:
    tests = ISINSTANCE.findall(condition)
    for value, types in tests:
        if not BOOL_TYPE.search(types) or NUMBER_TYPE.search(types):
            continue                  # no bool, or bools accepted alongside the numbers
        name = re.escape(value.strip())
        if any(other == value and NUMBER_TYPE.search(kinds) for other, kinds in tests) \
                or re.search(rf"(?:[<>]=?\s*{name}(?![\w.\[])|(?<![\w.]){name}\s*[<>]=?)",
                             condition):
            return True
    return False


def int_checks() -> List[str]:
    """"path:line" of every hand-written "an int (or a number) but not a bool" check in the
    .py, .pyx and .pxi files of lbs_pz/: one condition (a logical line) that tests a value
    with `isinstance(value, bool)` (or np.bool_, not naming int beside it) and also tests
    that same value as a number: with isinstance against int, float, np.integer,
    np.floating or np.number, or by comparing it with <, <=, > or >=.

    Not counted, as they are no int check: a bool test alone (a dispatch on a bool value:
    a flag's argparse form or command-line spelling, `pruning=True`, refusing a bool
    action or flag) and a test that accepts bools beside ints (`(bool, int, float, str)`
    in a JSON-like value). The one counted place is lbs_pz/checks.py's `is_int`, which
    every other int check calls (the compiled modules through the engine's `int_arg`)."""
    found = []
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith((".py", ".pyx", ".pxi")):
                path = os.path.join(folder, name)
                found += [f"{os.path.relpath(path, ROOT)}:{line}"
                          for line, text in _conditions(path) if _is_int_check(text)]
    return found


def public_functions(tree: ast.AST, where: str = "") -> Iterator[Tuple[str, ast.AST]]:
    """(qualified name, node) of every public function and method of a module: its name does
    not start with "_" (methods of every class count, a private class's too), defined at a
    module's or a class's level, inside `if` / `try` blocks too (a function nested in a
    function is that function's detail)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not node.name.startswith("_"):
                yield f"{where}{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from public_functions(node, f"{where}{node.name}.")
        elif not isinstance(node, ast.Lambda):
            yield from public_functions(node, where)


def annotated_public() -> Tuple[int, int, List[str]]:
    """(public functions with a return annotation, public functions, "path:line name" of
    those without) over lbs_pz/ (`public_functions`)."""
    total, missing = 0, []
    for path, tree in _sources():
        for name, node in public_functions(tree):
            total += 1
            if node.returns is None:
                missing.append(f"{path}:{node.lineno} {name}")
    return total - len(missing), total, missing


def lint(tool: str) -> str:
    """'passes', 'fails (N lines)' or 'not installed' for `ruff check lbs_pz tests` /
    `mypy lbs_pz`."""
    if shutil.which(tool) is None:
        return "not installed"
    argv = [tool, "check", "lbs_pz", "tests"] if tool == "ruff" else [tool, "lbs_pz"]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    lines = len((run.stdout + run.stderr).strip().splitlines())
    return "passes" if run.returncode == 0 else f"fails ({lines} lines of output)"


def keep(logs: List[str], parser: argparse.ArgumentParser) -> int:
    """`keep LOG...`: each log kept gzipped (`gzip_log`); prints the file written or that
    every line is kept already."""
    for log in logs:
        try:
            written = gzip_log(log, "LOG")
        except ValueError as err:
            parser.error(str(err))
        print(written or f"{log}: every line is kept already")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    k = sub.add_parser("keep", help="keep finished logs gzipped, each file once")
    k.add_argument("logs", nargs="+", metavar="LOG", help="a live log, results/X.jsonl")
    args = parser.parse_args(argv)
    if args.command == "keep":
        return keep(args.logs, parser)
    size = tracked_bytes()
    rewritten = {p: n for p, n in results_commits().items() if n > 1}
    longest = longest_functions()
    checks = int_checks()
    annotated, public, _ = annotated_public()
    rows = [
        ("tracked outside lbs_pz/models/", f"{size / 1e6:.1f} MB",
         f"< {TRACKED_LIMIT / 1e6:.0f} MB"),
        (f"results/ files of {ONCE_BYTES // 1000} KB or more written by more than one commit",
         f"{len(rewritten)}",
         "0 since they are kept gzipped" + (f" ({', '.join(sorted(rewritten))})"
                                             if rewritten else "")),
        ("longest function in lbs_pz/", f"{longest[0][0]} lines ({longest[0][1]})",
         f"<= {LONGEST_LIMIT}"),
        ("hand-written int checks (`isinstance(x, bool)` beside a number test) in lbs_pz/",
         f"{sum(c.split(':')[0].endswith('.py') for c in checks)} in Python modules, "
         f"{sum(not c.split(':')[0].endswith('.py') for c in checks)} in the compiled engine",
         "1, in lbs_pz/checks.py"),
        ("public functions with a return annotation", f"{annotated} of {public}", "all"),
        ("ruff check lbs_pz tests", lint("ruff"), "passes"),
        ("mypy lbs_pz", lint("mypy"), "passes"),
    ]
    print("| figure | now | limit |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
