"""The wheel checked like the source: build the sdist, build the wheel FROM the sdist, check
what each holds, install the wheel into a fresh virtual environment with no compiler on the
path, and smoke-test it from outside the source tree. Prints the figures.

    python .ci/wheel_check.py            (.ci/run calls it after the tests)

The tree is copied first (the files git tracks or would track), so the build writes nothing
into the working tree. The fresh environment has no system site-packages: torch comes from
`pip install torch==2.13.0`, the wheel and its dependencies as binaries only.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"
COMPILERS = ("cc", "gcc", "c++", "g++", "clang", "clang++", "x86_64-linux-gnu-gcc")
SDIST_NEEDS = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "LICENSE")
SOURCE_PATTERNS = ("lbs_pz/*.pyx", "lbs_pz/*.pxd", "lbs_pz/*.pxi", "lbs_pz/*.pyi")
WHEEL_PATTERNS = ("lbs_pz/models/*.pt", "lbs_pz/models/manifest.json", "lbs_pz/web/static/*",
                  "lbs_pz/py.typed")
SMOKE = """
import pathlib, sys
import lbs_pz
from pettingzoo.test import api_test
from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.envs import hanabi_v0
from lbs_pz.search.agents import LBSAgent

package = pathlib.Path(lbs_pz.__file__).parent
assert package.is_relative_to(sys.prefix), f"lbs_pz imported from {package}"
assert (package / "web" / "static" / "index.html").is_file()
state = HanabiState(HanabiConfig(), seed=0)
move = LBSAgent(load_blueprint("strong"), rollouts=16).act(state)
assert move in state.legal_moves(), move
api_test(hanabi_v0.env(), num_cycles=100)
print("LBS move", move, "and api_test: ok")
"""


def run(cmd, log, **kwargs):
    """Run `cmd`, its output into `log`; on failure print the log's tail and exit."""
    with open(log, "a") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode:
        print(f"FAILED: {' '.join(map(str, cmd))}\n" + "".join(open(log).readlines()[-40:]))
        sys.exit(1)


def timed(cmd, log, **kwargs):
    start = time.perf_counter()
    run(cmd, log, **kwargs)
    return time.perf_counter() - start


def git_files(*patterns, others=False):
    cmd = ["git", "ls-files", "-z", *(["-co", "--exclude-standard"] if others else []),
           "--", *patterns]
    names = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in names.decode().split("\0") if name and (ROOT / name).exists()]


def copy_tree(dst):
    for name in git_files(others=True):
        target = dst / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def missing(names, needed):
    return sorted(need for need in needed
                  if not any(n == need or n.endswith("/" + need) for n in names))


def check_sdist(sdist):
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    lost = missing(names, [*SDIST_NEEDS, *git_files(*SOURCE_PATTERNS)])
    assert not lost, f"the sdist lacks {lost}"
    return len(names)


def check_wheel(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    lost = missing(names, git_files(*WHEEL_PATTERNS) + ["LICENSE"])
    compiled = [n for n in names if n.endswith(".so")]
    lost += [m for m in git_files("lbs_pz/*.pyx")
             if not any(n.startswith(m[:-4] + ".") for n in compiled)]
    assert not lost, f"the wheel lacks {lost}"
    return len(names)


def no_compiler_env(work):
    """The environment with every C compiler shadowed by one that fails."""
    shims = work / "no-compiler"
    shims.mkdir()
    for name in COMPILERS:
        shim = shims / name
        shim.write_text("#!/bin/sh\necho 'no compiler here' >&2\nexit 1\n")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{shims}{os.pathsep}{env['PATH']}", CC="false", CXX="false")
    assert shutil.which("gcc", path=env["PATH"]).startswith(str(shims))
    return env


def install(wheel, venv, env, log):
    """A fresh venv, then torch, then the wheel with its dependencies: the seconds of each."""
    run([sys.executable, "-m", "venv", venv], log)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--only-binary=:all:"]
    return (timed([*pip, TORCH], log, env=env),
            timed([*pip, f"{wheel}[torch]"], log, env=env))


def smoke(venv, env, log):
    """`lbs-pz eval` with a shipped model, one LBS move and api_test, from a temp dir."""
    outside = pathlib.Path(tempfile.mkdtemp())
    env = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    eval_cmd = ["lbs-pz", "eval", "--blueprint", "lstm:conventions_expert_value_2p",
                "--games", "20", "--no-progress"]
    seconds = timed(eval_cmd, log, env=env, cwd=outside)
    seconds += timed([venv / "bin" / "python", "-c", SMOKE], log, env=env, cwd=outside)
    print("".join(open(log).readlines()[-9:]), end="")
    return seconds


def twine_check(dist, log):
    if shutil.which("twine") is None:
        return "not run (twine not installed)"
    run(["twine", "check", "--strict", *sorted(dist.iterdir())], log)
    return "passed"


def report(figures):
    print("wheel check:")
    for key, value in figures.items():
        print(f"  {key:<34} {value}")
    print(json.dumps({"wheel_check": {k: str(v) for k, v in figures.items()}}))


def main():
    work = pathlib.Path(tempfile.mkdtemp(prefix="wheel_check_"))
    log, src, dist = work / "log.txt", work / "src", work / "dist"
    copy_tree(src)
    build_s = timed([sys.executable, "-m", "build", "--outdir", dist, src], log)
    sdist, wheel = next(dist.glob("*.tar.gz")), next(dist.glob("*.whl"))
    sdist_files, wheel_files = check_sdist(sdist), check_wheel(wheel)
    env = no_compiler_env(work)
    torch_s, wheel_s = install(wheel, work / "venv", env, log)
    smoke_s = smoke(work / "venv", env, work / "smoke.txt")
    mb = 1 << 20
    report({
        "wheel": f"{wheel.name}, {wheel.stat().st_size / mb:.1f} MiB, {wheel_files} files",
        "sdist": f"{sdist.name}, {sdist.stat().st_size / mb:.1f} MiB, {sdist_files} files",
        "build (sdist, then wheel from it)": f"{build_s:.0f} s",
        "install into a fresh venv": f"{torch_s + wheel_s:.0f} s ({TORCH} {torch_s:.0f} s, "
                                     f"the wheel and its dependencies {wheel_s:.0f} s)",
        "smoke test, no compiler, outside": f"passed ({smoke_s:.0f} s)",
        "twine check": twine_check(dist, log),
    })
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
