"""The `.pyi` stubs of the compiled modules cannot drift from them.

Every Cython module of lbs_pz (each `.pyx` beside a compiled extension) has a stub beside
it; the stub names exactly the module's public attributes (names not starting with `_`;
imported modules such as `np` aside), and each class of the stub exactly the public
attributes its compiled class defines (methods, properties, readonly fields). Names are
read from the stub with `ast`: functions, classes, annotated or assigned names, and
explicit re-exports (`from M import X as X`). The package is marked typed (`py.typed`), and
setup.cfg ships the marker and the stubs.
"""

from __future__ import annotations

import ast
import configparser
import importlib
import types
from pathlib import Path
from typing import Dict, Set

import pytest

import lbs_pz

ROOT = Path(lbs_pz.__file__).resolve().parent
COMPILED = sorted(ROOT.rglob("*.pyx"))


def _module_name(pyx: Path) -> str:
    return ".".join(("lbs_pz",) + pyx.relative_to(ROOT).with_suffix("").parts)


def _public(name: str) -> bool:
    return not name.startswith("_")


def _body_names(body: list) -> Dict[str, ast.AST]:
    """Public names a stub's module or class body defines, each with its node."""
    out: Dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:        # only `X as X` re-exports a name (PEP 484)
                if alias.asname is not None and alias.asname == alias.name:
                    out[alias.asname] = node
    return {name: node for name, node in out.items() if _public(name)}


def _runtime_names(module: types.ModuleType) -> Set[str]:
    return {name for name, value in vars(module).items()
            if _public(name) and not isinstance(value, types.ModuleType)}


def test_every_compiled_module_is_found():
    names = {_module_name(p) for p in COMPILED}
    assert {"lbs_pz.engine.state", "lbs_pz.engine.batch", "lbs_pz.engine._core",
            "lbs_pz.agents.rule_bots._bots"} <= names


@pytest.mark.parametrize("pyx", COMPILED, ids=_module_name)
def test_stub_names_every_public_attribute(pyx: Path):
    name = _module_name(pyx)
    stub = pyx.with_suffix(".pyi")
    assert stub.is_file(), f"{name} is compiled from {pyx.name} but has no stub {stub.name}"
    module = importlib.import_module(name)
    assert not module.__file__.endswith(".py"), f"{name} did not load its extension"
    tree = ast.parse(stub.read_text(), str(stub))
    declared = _body_names(tree.body)
    actual = _runtime_names(module)
    assert set(declared) == actual, (
        f"{stub.relative_to(ROOT.parent)} drifted from the compiled module: missing from the "
        f"stub {sorted(actual - set(declared))}, in the stub but not in the module "
        f"{sorted(set(declared) - actual)}")
    for cls_name, node in declared.items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, cls_name)
        members = set(_body_names(node.body))
        real = {n for n in vars(cls) if _public(n)}
        assert members == real, (
            f"{name}.{cls_name}: missing from the stub {sorted(real - members)}, in the stub "
            f"but not in the class {sorted(members - real)}")


def test_stub_functions_are_fully_annotated():
    """Every public function of a stub says what it returns and what each argument is."""
    missing = []
    for pyx in COMPILED:
        stub = pyx.with_suffix(".pyi")
        for node in ast.walk(ast.parse(stub.read_text())):
            if isinstance(node, ast.FunctionDef) and (_public(node.name)
                                                      or node.name == "__init__"):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                unannotated = [a.arg for a in args[1 if args and args[0].arg in ("self", "cls")
                                                   else 0:] if a.annotation is None]
                if node.returns is None or unannotated:
                    missing.append(f"{stub.name}:{node.lineno} {node.name} {unannotated}")
    assert not missing, "stub functions without annotations:\n" + "\n".join(missing)


def test_package_is_marked_typed_and_ships_its_stubs():
    assert (ROOT / "py.typed").is_file()
    cfg = configparser.ConfigParser()
    cfg.read(ROOT.parent / "setup.cfg")
    data = {package: [p.strip() for p in patterns.replace("\n", ",").split(",") if p.strip()]
            for package, patterns in cfg["options.package_data"].items()}
    assert "py.typed" in data.get("lbs_pz", [])
    for pyx in COMPILED:
        package = _module_name(pyx).rsplit(".", 1)[0]
        assert "*.pyi" in data.get(package, []), f"setup.cfg does not ship {package}'s stubs"
