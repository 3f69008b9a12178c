"""One-way layers: no module of lbs_pz imports a higher layer, at any depth.

    engine -> models -> agents -> search -> envs, wrappers -> eval, train -> web -> cli

Every `.py` module is parsed with `ast` (imports at module level, inside functions and
classes, and `>>>` lines of docstrings), every `.pyx` / `.pxd` file line by line
(`import`, `from ... import`, `cimport`). Subpackages of one level (envs / wrappers; eval
/ train) may not import each other either, except envs <-> wrappers. `lbs_pz/__init__.py`
only registers the environments (by entry-point strings). A cycle between subpackages is
impossible when every edge goes strictly down, and the test also checks for one directly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

import lbs_pz

ROOT = Path(lbs_pz.__file__).resolve().parent
LEVELS = {"engine": 0, "models": 1, "agents": 2, "search": 3, "envs": 4, "wrappers": 4,
          "eval": 5, "train": 5, "web": 6, "cli": 7}
SAME_LEVEL_ALLOWED = {("envs", "wrappers"), ("wrappers", "envs")}

_PYX_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))")
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
