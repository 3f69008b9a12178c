"""The optional dependencies, gated in one place.

The engine, the environments, the rule bots, evaluation and search with the grounded
belief need none of them; each optional package comes with a pip extra:

    torch                          [torch]        learned beliefs, values, the public-LSTM
                                                  blueprint, training
    stable_baselines3, sb3_contrib [sb3]          SB3 policies as blueprints, the SB3 VecEnv
    ray                            [distributed]  the Ray backends (evaluation, training games)
    ray.rllib (ray[rllib]), torch  [rllib]        RLlib PPO training (examples/rllib_ppo.py)
                                                  and RLlib modules as blueprints (rllib:DIR)
    starlette, uvicorn             [web]          the local web page (`lbs-pz serve`)

A module that cannot work without one imports it through this gate at its top
(`torch = require_torch("the learned belief")`), so a missing package is one clear
`MissingDependency` (an ImportError) naming the extra to install; code that only offers
an optional feature asks `torch_available()` and friends. A subpackage can have an extra
of its own (`ray.rllib`: [rllib], the rest of `ray`: [distributed]); the longest entry of
EXTRAS that a module name starts with decides. This module imports nothing of lbs_pz, so
every layer may import it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import threading
from types import ModuleType

# package (or subpackage) -> (pip extra, what the extra installs)
EXTRAS = {
    "torch": ("torch", "torch"),
    "stable_baselines3": ("sb3", "stable-baselines3, sb3-contrib"),
    "sb3_contrib": ("sb3", "stable-baselines3, sb3-contrib"),
    "ray": ("distributed", "ray"),
    "ray.rllib": ("rllib", "ray[rllib], torch"),
    "starlette": ("web", "starlette, uvicorn"),
    "uvicorn": ("web", "starlette, uvicorn"),
}


class MissingDependency(ImportError):
    """An optional package is not installed (or does not import); the message names the
    pip extra that installs it."""


def _package(module: str) -> str:
    """The entry of EXTRAS that `module` belongs to: the longest one it is or starts with
    ("ray.rllib.algorithms" -> "ray.rllib", "ray.util" -> "ray"); KeyError if none."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in EXTRAS:
            return ".".join(parts[:n])
    raise KeyError(module)


def install_hint(package: str) -> str:
    """'pip install "lbs_pz[EXTRA]"' for a package (or one of its modules) of EXTRAS."""
    extra, _ = EXTRAS[_package(package)]
    return f'pip install "lbs_pz[{extra}]"'


def require(module: str, what: str) -> ModuleType:
    """`module` (an optional package or one of its submodules) imported, or a
    MissingDependency saying that `what` needs it and which extra installs it."""
    try:
        package = _package(module)
    except KeyError:
        raise ValueError(f"{module.split('.')[0]!r} is not an optional dependency of lbs_pz "
                         f"({', '.join(EXTRAS)})") from None
    try:
        return importlib.import_module(module)
    except ImportError as err:
        extra, installs = EXTRAS[package]
        installs = "" if installs == package else f" ({installs})"
        raise MissingDependency(
            f"{what} needs {package}, which did not import ({err}); install the "
            f"[{extra}] extra{installs}: {install_hint(package)}") from err


def available(module: str) -> bool:
    """True if the optional `module` imports."""
    try:
        require(module, module)
    except MissingDependency:
        return False
    return True


def require_torch(what: str = "this feature") -> ModuleType:
    """torch, or a MissingDependency naming the [torch] extra."""
    return require("torch", what)


def require_sb3(what: str = "this feature") -> ModuleType:
    """stable_baselines3, or a MissingDependency naming the [sb3] extra."""
    return require("stable_baselines3", what)


def require_ray(what: str = "this feature") -> ModuleType:
    """ray, or a MissingDependency naming the [distributed] extra."""
    return require("ray", what)


def require_rllib(what: str = "this feature") -> ModuleType:
    """ray.rllib (after checking that torch imports: RLlib's modules here are torch
    modules), or a MissingDependency naming the [rllib] extra."""
    rllib = require("ray.rllib", what)
    try:
        require("torch", what)
    except MissingDependency as err:     # torch comes with [rllib] too: name that extra
        raise MissingDependency(f"{what} needs torch, which did not import ({err.__cause__}); "
                                f"install the [rllib] extra (ray[rllib], torch): "
                                f"{install_hint('ray.rllib')}") from err.__cause__
    return rllib


def require_web(what: str = "this feature") -> ModuleType:
    """starlette (after checking that uvicorn imports too), or a MissingDependency naming
    the [web] extra."""
    require("uvicorn", what)
    return require("starlette", what)


def torch_available() -> bool:
    """True if torch imports: every model needs it (the [torch] extra)."""
    return available("torch")


def sb3_available() -> bool:
    """True if stable_baselines3 imports (the [sb3] extra)."""
    return available("stable_baselines3")


def ray_available() -> bool:
    """True if ray imports (the [distributed] extra)."""
    return available("ray")


@contextlib.contextmanager
def ray_session(address=None, workers=None, what: str = "the ray backend"):
    """Ray for the length of a block: the session already running in this process, else
    the cluster at `address`, else a new local Ray with `workers` CPUs (None: every core);
    a session started here is shut down at the end. Yields the ray module. ValueError
    naming `address` when no cluster answers there; MissingDependency without ray."""
    ray = require_ray(what)
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address or None, num_cpus=None if address else workers,
                     log_to_driver=False, include_dashboard=False)
        except ConnectionError as err:
            hint = ("" if os.environ.get("RAY_AUTH_MODE") else
                    "; if the cluster uses token authentication (`ray start` turns it on "
                    "from Ray 2.59), set RAY_AUTH_MODE=token here, with the cluster's "
                    "token in RAY_AUTH_TOKEN or ~/.ray/auth_token")
            raise ValueError(f"cannot reach the Ray cluster at address {address!r}: "
                             f"{err}{hint}") from None
    try:
        yield ray
    finally:
        if started_here:
            with sigint_ignored():     # a second Ctrl-C cannot cut the shutdown short
                ray.shutdown()


@contextlib.contextmanager
def sigint_ignored():
    """SIGINT ignored in this block (main thread only; elsewhere a no-op). Processes
    spawned here inherit the ignored disposition, so a Ctrl-C while a worker starts up
    cannot print its traceback; a cleanup here cannot be cut short by a second Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def rllib_available() -> bool:
    """True if ray.rllib and torch import (the [rllib] extra)."""
    return available("ray.rllib") and available("torch")


def web_available() -> bool:
    """True if starlette and uvicorn import (the [web] extra)."""
    return available("starlette") and available("uvicorn")


class TorchThreads:
    """Context manager: torch's intra-op threads set to `n` inside (None: unchanged),
    restored after. `torch` is the torch module (from `require_torch`)."""

    def __init__(self, torch: ModuleType, n):
        self.torch, self.n, self.old = torch, n, None

    def __enter__(self):
        if self.n is not None:
            self.old = self.torch.get_num_threads()
            if self.old != self.n:
                self.torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        if self.old is not None and self.old != self.n:
            self.torch.set_num_threads(self.old)
        return False
