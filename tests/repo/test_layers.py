"""One-way layers: no module of lbs_pz imports a higher layer, at any depth.

    engine -> models -> agents -> search -> envs, wrappers -> eval, train -> web -> cli

Every `.py` module is parsed with `ast` (imports at module level, inside functions and
classes, and `>>>` lines of docstrings), every `.pyx` / `.pxd` file line by line
(`import`, `from ... import`, `cimport`). Subpackages of one level (envs / wrappers; eval
/ train) may not import each other either, except envs <-> wrappers. `lbs_pz/__init__.py`
only registers the environments (by entry-point strings); `lbs_pz/optional.py`, the one
gate of the optional dependencies (torch, SB3, Ray, the web stack), and `lbs_pz/files.py`,
the checked output paths and bounded log reading, `lbs_pz/host.py`, the machine that
timings name, and `lbs_pz/checks.py`, the one check of a scalar argument (int, real, bool,
choice, path), sit below every layer: any module may
import them, and they import nothing of lbs_pz but lbs_pz.checks, which sits below them
too and imports nothing of lbs_pz at all. A cycle between
subpackages is impossible when every edge goes strictly down, and the test also checks
for one directly.

Imports sit at module top: an import of an lbs_pz module inside a function is refused
unless ALLOWED_LOCAL names that function and why (each one a deliberate way to keep
torch, SB3 or the web stack off a path that does not need them). And no loop between
files: the graph of module-level imports between lbs_pz modules has no cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pytest

import lbs_pz

ROOT = Path(lbs_pz.__file__).resolve().parent
LEVELS = {"engine": 0, "models": 1, "agents": 2, "search": 3, "envs": 4, "wrappers": 4,
          "eval": 5, "train": 5, "web": 6, "cli": 7}
SAME_LEVEL_ALLOWED = {("envs", "wrappers"), ("wrappers", "envs")}
# Modules at the package root besides __init__: below every layer, importing no lbs_pz but
# BOTTOM (and BOTTOM imports nothing of lbs_pz).
ROOT_MODULES = {"optional", "files", "host", "checks"}
BOTTOM = "checks"

# The only functions that may import an lbs_pz module inside their body ("FILE:FUNCTION",
# FUNCTION dotted through classes and nested functions), each with why: the module it
# imports needs an optional dependency at its top, and the function is reached on paths
# that must work without it. Keep this list short; a stale entry fails the test.
ALLOWED_LOCAL = {
    "lbs_pz/agents/__init__.py:__getattr__":
        "PublicLSTMBlueprint / SB3Blueprint / RLlibBlueprint by name: their modules import "
        "torch (and SB3, or Ray's RLlib) at their top; `import lbs_pz.agents` works without "
        "them",
    "lbs_pz/agents/spec.py:_load_sb3":
        "sb3: specs load SB3 and torch; rule-bot and py: specs need neither",
    "lbs_pz/agents/spec.py:_load_lstm":
        "lstm: specs load torch; rule-bot and py: specs need none",
    "lbs_pz/agents/spec.py:_load_rllib":
        "rllib: specs load Ray's RLlib (seconds; the [rllib] extra) and torch",
    "lbs_pz/search/beliefs/__init__.py:__getattr__":
        "LearnedBelief by name: its module imports torch at its top",
    "lbs_pz/search/beliefs/__init__.py:_learned":
        "the learned belief (torch) only for kind 'learned'; the others work without torch",
    "lbs_pz/cli/serve.py:run":
        "the web app imports starlette at its top; `lbs-pz --help` works without [web]",
    "lbs_pz/cli/train_belief.py:run":
        "the trainer imports torch at its top; `lbs-pz --help` works without torch",
    "lbs_pz/cli/train_value.py:run":
        "the trainer imports torch at its top; `lbs-pz --help` works without torch",
    "lbs_pz/cli/train_blueprint.py:run":
        "the trainer imports torch at its top; `lbs-pz --help` works without torch",
    "lbs_pz/cli/distill.py:run":
        "the trainer imports torch at its top; `lbs-pz --help` works without torch",
    "lbs_pz/cli/improve.py:run":
        "the trainers import torch at their top; `lbs-pz --help` works without torch",
    "lbs_pz/cli/paper.py:retrain_belief":
        "the trainer imports torch at its top; `lbs-pz paper` runs without torch",
}

_PYX_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))")
_PYX_RUNTIME_IMPORT = re.compile(r"^(\s*)(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+([\w.]+))")
_DOCTEST = re.compile(r"^\s*(?:>>>|\.\.\.)\s?(.*)$")


def _layer(module: str):
    parts = module.split(".")
    return parts[1] if parts[0] == "lbs_pz" and len(parts) > 1 else None


def _resolve(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _ast_imports(tree: ast.AST, package: str) -> Iterator[Tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, package)
            yield node.lineno, module
            for alias in node.names:      # `from lbs_pz import cli` names a subpackage
                if module == "lbs_pz":
                    yield node.lineno, f"lbs_pz.{alias.name}"


def _doctest_imports(tree: ast.AST, package: str) -> Iterator[Tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if not doc or ">>>" not in doc:
                continue
            lines = [m.group(1) for m in map(_DOCTEST.match, doc.splitlines()) if m]
            try:
                sub = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            line = getattr(node, "lineno", 1)
            for _, name in _ast_imports(sub, package):
                yield line, name


def module_imports(path: Path) -> List[Tuple[int, str]]:
    """(line, imported module) of every import in the file, at any depth."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    package = ".".join(parts if parts[-1] == "__init__" else parts[:-1]).replace(".__init__", "")
    if path.suffix in (".pyx", ".pxd"):
        out = []
        for i, line in enumerate(path.read_text().splitlines(), 1):
            m = _PYX_IMPORT.match(line)
            if m:
                out.append((i, m.group(1) or m.group(2)))
        return out
    tree = ast.parse(path.read_text(), filename=str(path))
    return list(_ast_imports(tree, package)) + list(_doctest_imports(tree, package))


def _files() -> List[Path]:
    return sorted(p for ext in ("*.py", "*.pyx", "*.pxd") for p in ROOT.rglob(ext)
                  if "build" not in p.parts)


def violations() -> List[str]:
    found = []
    for path in _files():
        rel = path.relative_to(ROOT.parent)
        own = rel.parts[1] if len(rel.parts) > 2 else None   # None: lbs_pz/__init__.py etc.
        for line, module in module_imports(path):
            target = _layer(module)
            if target is None or target == own or target not in LEVELS:
                continue
            where = f"{rel}:{line} imports {module}"
            if target in ROOT_MODULES and module == f"lbs_pz.{target}":
                if own is None and rel.stem in ROOT_MODULES and \
                        (target != BOTTOM or rel.stem == BOTTOM):
                    found.append(f"{where} (lbs_pz/{rel.name} imports nothing of lbs_pz)")
                continue                  # the root modules sit below every layer
            if own is None and rel.name != "__init__.py":
                found.append(f"{where} (lbs_pz/{rel.name} sits below every layer: it "
                             f"imports nothing of lbs_pz)")
                continue
            if own is None:
                if rel.name == "__init__.py" and target in ("envs",):
                    continue          # the registration may name the envs
                found.append(f"{where} (the top-level package imports nothing but envs)")
                continue
            if own not in LEVELS:
                found.append(f"{where} ({own} is not a known layer: add it to LEVELS)")
                continue
            if LEVELS[target] > LEVELS[own]:
                found.append(f"{where} (layer {own} imports the higher layer {target})")
            elif LEVELS[target] == LEVELS[own] and (own, target) not in SAME_LEVEL_ALLOWED:
                found.append(f"{where} ({own} and {target} are one level: neither imports "
                             f"the other)")
    return found


def subpackage_graph() -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {}
    for path in _files():
        rel = path.relative_to(ROOT.parent)
        if len(rel.parts) <= 2:
            continue
        own = rel.parts[1]
        for _, module in module_imports(path):
            target = _layer(module)
            if target and target != own and target in LEVELS:
                graph.setdefault(own, set()).add(target)
    return graph


def test_every_subpackage_is_a_known_layer():
    packages = {p.name for p in ROOT.iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LEVELS), f"unknown subpackages: {packages - set(LEVELS)}"


def test_no_module_imports_a_higher_layer():
    found = violations()
    assert not found, "upward or sideways imports:\n" + "\n".join(found)


def test_no_cycle_between_subpackages():
    graph = subpackage_graph()
    state: Dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join(trail + [node, nxt]))
            if not state.get(nxt):
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [])


def test_the_scanner_sees_imports_inside_functions_docstrings_and_pyx(tmp_path):
    """The checker itself: a nested import, a doctest import and a cimport are found."""
    src = ('"""Doc.\n\n    >>> from lbs_pz.cli import main\n"""\n'
           'def f():\n    from lbs_pz.eval import evaluate\n')
    tree = ast.parse(src)
    names = [m for _, m in _ast_imports(tree, "lbs_pz.search")] + \
            [m for _, m in _doctest_imports(tree, "lbs_pz.search")]
    assert "lbs_pz.eval" in names and "lbs_pz.cli" in names
    assert _PYX_IMPORT.match("from lbs_pz.search.beliefs._x cimport y").group(1) == \
        "lbs_pz.search.beliefs._x"
    assert _PYX_IMPORT.match("cimport lbs_pz.engine._core").group(2) == "lbs_pz.engine._core"
    rel = ast.parse("from ...train import belief").body[0]
    assert _resolve(rel, "lbs_pz.search.beliefs") == "lbs_pz.train"


# --- imports at module top, and no loop between files ---------------------------------------

def module_name(path: Path) -> str:
    """lbs_pz.search.beliefs for lbs_pz/search/beliefs/__init__.py, etc."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package_of(path: Path) -> str:
    name = module_name(path)
    return name if path.stem == "__init__" else name.rsplit(".", 1)[0]


def _import_targets(node, package: str) -> List[str]:
    """The lbs_pz modules (or packages) an import statement names: for `from P import x`,
    P.x when that is a module, else P."""
    out = []
    if isinstance(node, ast.Import):
        out = [alias.name for alias in node.names]
    else:
        base = _resolve(node, package)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            out.append(sub if sub in MODULES else base)
    return [m for m in out if m == "lbs_pz" or m.startswith("lbs_pz.")]


def _scopes(tree: ast.AST) -> List[Tuple[Optional[str], ast.AST]]:
    """(enclosing function, dotted through classes and nested functions, or None at
    module level (class bodies included), import node) of every import."""
    out: List[Tuple[Optional[str], ast.AST]] = []

    def walk(node, scope: str, function: Optional[str]):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{scope}.{child.name}" if scope else child.name
                walk(child, name, name)
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{scope}.{child.name}" if scope else child.name, function)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append((function, child))
            else:
                walk(child, scope, function)

    walk(tree, "", None)
    return out


MODULES = {module_name(p) for p in sorted(
    q for ext in ("*.py", "*.pyx") for q in ROOT.rglob(ext) if "build" not in q.parts)}


def import_scopes(path: Path) -> Tuple[List[Tuple[int, str]], List[Tuple[int, str, str]]]:
    """(module-level imports [(line, lbs_pz module)], function-level imports [(line,
    function, lbs_pz module)]) of one .py or .pyx file; a .pyx import is function-level
    when indented (cimports are compile-time and left out)."""
    package = _package_of(path)
    top, local = [], []
    if path.suffix == ".pyx":
        for i, line in enumerate(path.read_text().splitlines(), 1):
            m = _PYX_RUNTIME_IMPORT.match(line)
            if not m:
                continue
            if m.group(2):
                names = [n.strip().split(" as ")[0].strip("( ")
                         for n in m.group(3).split("#")[0].split(",")]
                targets = [f"{m.group(2)}.{n}" if f"{m.group(2)}.{n}" in MODULES
                           else m.group(2) for n in names if n]
            else:
                targets = [m.group(4)]
            for t in targets:
                if t.startswith("lbs_pz"):
                    (local.append((i, "<indented>", t)) if m.group(1)
                     else top.append((i, t)))
        return top, local
    tree = ast.parse(path.read_text(), filename=str(path))
    for scope, node in _scopes(tree):
        for target in _import_targets(node, package):
            if scope is None:
                top.append((node.lineno, target))
            else:
                local.append((node.lineno, scope, target))
    return top, local


def _sources() -> List[Path]:
    return sorted(p for ext in ("*.py", "*.pyx") for p in ROOT.rglob(ext)
                  if "build" not in p.parts)


def local_imports() -> Dict[str, List[str]]:
    """{"FILE:FUNCTION": ["FILE:LINE imports MODULE", ...]} of every lbs_pz module
    imported inside a function."""
    found: Dict[str, List[str]] = {}
    for path in _sources():
        rel = path.relative_to(ROOT.parent).as_posix()
        for line, scope, module in import_scopes(path)[1]:
            found.setdefault(f"{rel}:{scope}", []).append(f"{rel}:{line} imports {module}")
    return found


def file_graph() -> Dict[str, Set[str]]:
    """module -> the lbs_pz modules its module-level imports run. Importing P.x also runs
    the package P (and its parents) first, except the importer's own packages, which are
    already being imported; a name taken from one of those (`from P import name`) is an
    edge to P."""
    graph: Dict[str, Set[str]] = {}
    for path in _sources():
        me = module_name(path)
        mine = {".".join(me.split(".")[:i]) for i in range(1, me.count(".") + 1)}
        if path.stem == "__init__":
            mine.add(me)
        edges = graph.setdefault(me, set())
        for _, target in import_scopes(path)[0]:
            parts = target.split(".")
            chain = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            for step in chain[:-1]:
                if step not in mine and step in MODULES:
                    edges.add(step)
            if target in MODULES and target != me:
                edges.add(target)
    return graph


def find_cycle(graph: Dict[str, Set[str]]):
    """One cycle [a, b, ..., a] of the graph, or None."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if not state.get(nxt):
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if not state.get(node):
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_of_lbs_pz_inside_a_function_unless_allowed():
    found = local_imports()
    refused = [hit + f"  (inside {key.split(':', 1)[1]}: move it to the module top, or add "
               f"{key!r} to ALLOWED_LOCAL with the reason)"
               for key, hits in sorted(found.items()) if key not in ALLOWED_LOCAL
               for hit in hits]
    assert not refused, "imports of lbs_pz modules inside functions:\n" + "\n".join(refused)
    stale = sorted(set(ALLOWED_LOCAL) - set(found))
    assert not stale, ("ALLOWED_LOCAL names functions without an lbs_pz import inside: "
                       "remove " + ", ".join(stale))


def test_no_import_cycle_between_files():
    cycle = find_cycle(file_graph())
    assert cycle is None, "import cycle between files: " + " -> ".join(cycle)


def test_root_modules_are_known():
    found = {p.stem for p in ROOT.glob("*.py")} - {"__init__"}
    assert found <= ROOT_MODULES, (f"modules at the package root: {sorted(found - ROOT_MODULES)}"
                                   f"; put them in a layer, or add them to ROOT_MODULES")


def test_the_file_checks_see_local_imports_and_cycles(tmp_path):
    """The checkers themselves: a function-local import is attributed to its function
    (through classes), a package named by `from P import name` is an edge, and a cycle
    is named."""
    src = ("import os\nfrom lbs_pz.engine import HanabiState\n"
           "class A:\n    def f(self):\n        from lbs_pz.search import value\n"
           "def g():\n    def h():\n        import lbs_pz.agents.spec\n")
    scopes = [(scope, _import_targets(node, "lbs_pz.eval")) for scope, node in
              _scopes(ast.parse(src))]
    assert scopes == [(None, []), (None, ["lbs_pz.engine"]),
                      ("A.f", ["lbs_pz.search.value"]), ("g.h", ["lbs_pz.agents.spec"])]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    graph = file_graph()
    assert "lbs_pz.agents" in graph["lbs_pz.search.trained_for"]        # from P import name
    assert "lbs_pz.engine.view" in graph["lbs_pz.engine.state"]         # a .pyx import
    assert "lbs_pz.search.beliefs" not in graph["lbs_pz.search.beliefs.exact"]  # own package
