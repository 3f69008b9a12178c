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
    tensorboard                    [tensorboard]  a training run's scalars for TensorBoard
                                                  (every trainer's --tensorboard DIR)

A module that cannot work without one imports it through this gate at its top
(`torch = require_torch("the learned belief")`), so a missing package is one clear
`MissingDependency` (an ImportError) naming the extra to install; code that only offers
an optional feature asks `torch_available()` and friends. A subpackage can have an extra
of its own (`ray.rllib`: [rllib], the rest of `ray`: [distributed]); the longest entry of
EXTRAS that a module name starts with decides. This module imports nothing of lbs_pz but
lbs_pz.checks (which imports nothing of lbs_pz), so every layer may import it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import socket
import threading
import time
from types import ModuleType
from typing import Iterator, List, Optional

from lbs_pz.checks import is_real

# package (or subpackage) -> (pip extra, what the extra installs)
EXTRAS = {
    "torch": ("torch", "torch"),
    "stable_baselines3": ("sb3", "stable-baselines3, sb3-contrib"),
    "sb3_contrib": ("sb3", "stable-baselines3, sb3-contrib"),
    "ray": ("distributed", "ray"),
    "ray.rllib": ("rllib", "ray[rllib], torch"),
    "starlette": ("web", "starlette, uvicorn"),
    "uvicorn": ("web", "starlette, uvicorn"),
    "tensorboard": ("tensorboard", "tensorboard"),
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


def require_tensorboard(what: str = "this feature") -> ModuleType:
    """torch.utils.tensorboard (its SummaryWriter writes the event files), after checking
    that tensorboard imports; or a MissingDependency naming the [tensorboard] extra (or
    the [torch] one, without torch)."""
    require("tensorboard", what)
    return require("torch.utils.tensorboard", what)


def torch_available() -> bool:
    """True if torch imports: every model needs it (the [torch] extra)."""
    return available("torch")


def sb3_available() -> bool:
    """True if stable_baselines3 imports (the [sb3] extra)."""
    return available("stable_baselines3")


def ray_available() -> bool:
    """True if ray imports (the [distributed] extra)."""
    return available("ray")


RAY_TIMEOUT = 30.0
"""Seconds `ray_session` waits for a Ray cluster at an address to answer (Ray's own retries
take about 14 minutes) unless $LBS_PZ_RAY_TIMEOUT says otherwise."""
RAY_TIMEOUT_VARIABLE = "LBS_PZ_RAY_TIMEOUT"
_RAY_RETRY_SECONDS = 0.5      # between two connection attempts (a head may be starting)
# ray.exceptions that say the cluster lost a worker, a raylet or a node while a run used it
_RAY_LOST = ("LocalRayletDiedError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError",
             "OutOfMemoryError", "RayActorError", "RaySystemError")


def ray_timeout(timeout: Optional[float] = None) -> float:
    """The seconds to wait for a Ray cluster: `timeout`, else $LBS_PZ_RAY_TIMEOUT, else
    RAY_TIMEOUT; ValueError (naming where it came from) unless a finite number > 0."""
    where = "timeout"
    if timeout is None:
        text = os.environ.get(RAY_TIMEOUT_VARIABLE, "").strip()
        if not text:
            return RAY_TIMEOUT
        where = f"${RAY_TIMEOUT_VARIABLE}"
        try:
            timeout = float(text)
        except ValueError:
            timeout = float("nan")
    if not is_real(timeout, finite=True) or not timeout > 0:
        given = os.environ.get(RAY_TIMEOUT_VARIABLE) if where != "timeout" else timeout
        raise ValueError(f"{where}: the seconds to wait for a Ray cluster must be a finite "
                         f"number > 0, got {given!r}")
    return float(timeout)


def _ray_target(address) -> Optional[str]:
    """The host:port that `ray.init(address=address)` connects to (None: it starts a local
    Ray): $RAY_ADDRESS stands for an address left unset or "auto", "ray://" addresses go
    to Ray Client as given, and Ray replaces a local host (127.0.0.1, localhost) by this
    machine's interface address. ValueError for an address Ray cannot parse;
    ConnectionError for "auto" with no cluster found."""
    if not address or address == "auto":
        address = os.environ.get("RAY_ADDRESS") or address or None
    if address and "://" in address:
        return address.split("://", 1)[1].split("/", 1)[0]
    try:
        services = importlib.import_module("ray._private.services")
        canonical = services.canonicalize_bootstrap_address
    except (ImportError, AttributeError):     # a Ray without it: the address as given
        return None if address in (None, "local") else address
    return canonical(address)


def _connect_error(target: str, seconds: float) -> str:
    """'' once a TCP connection to `target` (host:port) opens, tried until `seconds` have
    passed (a head that is starting refuses for a moment), else why the last try failed."""
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return f"{target!r} is not HOST:PORT"
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, int(port)), timeout=max(left, 0.05)):
                return ""
        except OSError as err:
            reason = (err.strerror if err.strerror else str(err) or type(err).__name__)
        if time.monotonic() + _RAY_RETRY_SECONDS >= deadline:
            return reason
        time.sleep(_RAY_RETRY_SECONDS)


def ray_lost(ray, err: BaseException) -> bool:
    """True if `err` says that the Ray cluster lost a worker, its raylet or a node (not an
    error of the task's own code)."""
    lost = tuple(getattr(ray.exceptions, name) for name in _RAY_LOST
                 if isinstance(getattr(ray.exceptions, name, None), type))
    return isinstance(err, lost)


@contextlib.contextmanager
def ray_session(address=None, workers=None, what: str = "the ray backend",
                timeout: Optional[float] = None,
                rerun: str = "run the same command again") -> Iterator[ModuleType]:
    """Ray for the length of a block: the session already running in this process, else
    the cluster at `address`, else a new local Ray with `workers` CPUs (None: every core);
    a session started here is shut down at the end. Yields the ray module.

    ValueError (one line) when no cluster answers at `address` within `timeout` seconds
    (`ray_timeout`: default RAY_TIMEOUT, $LBS_PZ_RAY_TIMEOUT), naming the address given and
    the one Ray connects to (it replaces 127.0.0.1 by this machine's interface address);
    the address is tried with a TCP connection before `ray.init`, which has no timeout of
    its own. A worker, raylet or node of the cluster lost inside the block (`ray_lost`) is
    also one ValueError, naming `what`, the error Ray gave and `rerun` (what to do
    next). MissingDependency without ray."""
    ray = require_ray(what)
    started_here = not ray.is_initialized()
    if started_here:
        seconds = ray_timeout(timeout)
        hint = ("" if os.environ.get("RAY_AUTH_MODE") else
                "; if the cluster uses token authentication (`ray start` turns it on "
                "from Ray 2.59), set RAY_AUTH_MODE=token here, with the cluster's "
                "token in RAY_AUTH_TOKEN or ~/.ray/auth_token")
        try:
            target = _ray_target(address)
        except ConnectionError as err:
            raise ValueError(f"cannot reach the Ray cluster at address {address!r}: "
                             f"{err}") from None
        except ValueError as err:
            raise ValueError(f"the Ray cluster's address {address!r}: {err} (expected "
                             f"HOST:PORT, e.g. HEAD:6379)") from None
        if target is not None:
            reason = _connect_error(target, seconds)
            if reason:
                named = repr(address) if address else \
                    "(none given: $RAY_ADDRESS, or the last `ray start` here)"
                tried = "" if target == address else f" (Ray connects to it as {target})"
                raise ValueError(
                    f"cannot reach the Ray cluster at address {named}{tried}: nothing "
                    f"answered within {seconds:g} s ({reason}); start it there (`ray start "
                    f"--head`) or give the address it printed; ${RAY_TIMEOUT_VARIABLE} sets "
                    f"the seconds to wait") from None
        try:
            # joining a cluster (one at `address`, or the last `ray start` here that Ray
            # finds when none is given), Ray refuses a CPU count: the cluster has its own
            ray.init(address=address or None, num_cpus=None if target else workers,
                     log_to_driver=False, include_dashboard=False)
        except ConnectionError as err:
            raise ValueError(f"cannot reach the Ray cluster at address {address!r}: "
                             f"{err}{hint}") from None
    try:
        yield ray
    except Exception as err:
        if not ray_lost(ray, err):
            raise
        first = " ".join(str(err).strip().split("\n", 1)[0].split())[:200]
        raise ValueError(f"{what}: the Ray cluster lost a worker, its raylet or a node "
                         f"({type(err).__name__}: {first}); {rerun}") from None
    finally:
        if started_here:
            with sigint_ignored():     # a second Ctrl-C cannot cut the shutdown short
                ray.shutdown()


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
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


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """A SIGINT during this block is held and delivered as it ends, to the handler that was
    there before (main thread only; elsewhere a no-op): bookkeeping that takes locks (a
    process pool's submit and wait) cannot be cut between acquiring and releasing one,
    which would leave the pool's own shutdown waiting on it forever."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: List[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                raise KeyboardInterrupt


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
