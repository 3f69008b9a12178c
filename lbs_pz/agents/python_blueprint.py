"""Any Python object with `act(state, seat=None)` as a full, contract-checked Blueprint.

What a user class needs (the "bring your own blueprint" contract):

    class MyBlueprint:
        name = "mine"                          # shown in tables and error messages
        def act(self, state, seat=None):       # state: lbs_pz.engine.HanabiState
            view = state.view(seat)            # read ONLY what the seat may see
            return view.legal_moves[0]         # a legal move id (an int) of the player to move

`state.view(seat)` is a `lbs_pz.engine.view.PlayerView`: player, num_players,
current_player, fireworks (per color, cards played), information_tokens, life_tokens,
deck_size, discard_pile (card ids), hands (per seat, card ids; the viewer's own cards are
None), knowledge (per seat and slot: `CardKnowledge` with the colors / ranks still
possible and hinted_color / hinted_rank), history (`PastMove` per move: player, move_id,
move, card, revealed, scored, information_token, drawn), last_moves, legal_moves, score,
is_terminal. A card id is color * ranks + rank; move ids follow HLE (`lbs_pz.engine.
decode_move` / `encode_move` / `move_name` convert).

Optional attributes and methods: `deterministic` (default True: the move is a function
of the seat's view; search replays it in sampled worlds), `has_private_memory` (default
False), `value(batch)` (float (N,) expected final scores; `has_value` then defaults to
True), and batched `act_batch(batch)` / `rollout(batch, max_moves)` of its own (used
instead of the generic ones when given).

`PythonBlueprint(obj)` supplies `act_batch(batch)`, `rollout(batch, max_moves)` and
`value(batch)` (all on one `HanabiBatch`: shapes in `lbs_pz.agents.base.Blueprint`) and
checks the contract at the boundary, each breach a `BlueprintError` (a ValueError) naming
the blueprint: a class instead of an instance, a missing `act`, an `act` without the
`seat` parameter, a non-int or illegal move (with the position: the move history and whose
turn it is, and the legal moves), an `act_batch` of the wrong shape or with illegal
moves, a `rollout` that returns None / the wrong shape / counts that do not match the
moves it made, or does not advance, a `value` of the wrong shape or dtype. Moves are
always checked (a legal-mask lookup); a user's own `rollout` is always checked to leave
every world a continuation of its game with as many moves as it reports, its other checks
and those of `value` run on its first `check_calls` calls, then it is trusted.

What the user's code receives, and cannot corrupt:

- `act` receives a copy of the caller's state (`state.clone()`, one per call): a
  blueprint that applies a move or rewrites a hand changes only its copy, and its
  returned move is checked against the caller's untouched position.
- a user's own `act_batch(batch)` and `value(batch)` receive the caller's batch and must
  only read it; a user's own `rollout(batch, max_moves)` must only play it forward. A
  batch changed while `act`, `act_batch` or `value` runs (a reset, step or write from
  inside the blueprint, the batch being rolled out included: `HanabiBatch.generation`
  tells) is a BlueprintError, and so is a rollout that leaves a world that does not
  continue its game (a reset or overwritten world).

Time limit: every call into the user's object (`act`, `act_batch`, `rollout`, `value`)
may take at most `time_limit` seconds (default DEFAULT_TIME_LIMIT = 60; None: no
limit). On the main thread a call that runs past it is interrupted (SIGALRM every TICK
= 0.05 s through `signal.setitimer` while the blueprint runs, the previous handler and
timer restored afterwards) and raises BlueprintError, within the limit plus a tick for
Python code (a long C call is interrupted when
it returns to Python; code that catches BaseException can swallow the interruption). Off
the main thread a signal cannot interrupt the call: it runs to its end, and raises
BlueprintError then if it took longer than the limit; one that never returns is not
stopped there (run it in a process of its own to bound it).

`as_blueprint(obj)` is what search and evaluation call on whatever they are given: the
library's own blueprints (RuleBot, RandomAgent, PublicLSTMBlueprint, SB3Blueprint, a
PythonBlueprint) come back unchanged, anything else with `act` is wrapped.
`load_python_blueprint(spec)` loads a `py:MODULE_OR_FILE.py:CLASS` spec (what
`lbs_pz.agents.load_blueprint` calls for one); a blueprint loaded so pickles as its spec.

>>> from lbs_pz.engine import HanabiBatch, HanabiConfig
>>> class FirstLegal:
...     name = "first-legal"
...     def act(self, state, seat=None):
...         return state.view(seat).legal_moves[0]
>>> bp = as_blueprint(FirstLegal())
>>> batch = HanabiBatch(HanabiConfig(), 4, seeds=1)
>>> bp.rollout(batch, 3).tolist()
[3, 3, 3, 3]
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import math
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

# `_signal` is what the `signal` module wraps; its calls skip the enum conversions, which
# cost microseconds per call into a blueprint.
import _signal  # noqa: E402

from lbs_pz.agents.base import (
    Blueprint, BlueprintBase, BlueprintError, act_each, acted_move, check_batch_unchanged,
    check_max_moves, describe_position, file_sha256, legal_text, require_batch, rollout_each,
)
from lbs_pz.agents.random_agent import RandomAgent
from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.checks import as_int, as_real
from lbs_pz.engine import HanabiBatch, HanabiState, move_name

CHECK_CALLS = 4
DEFAULT_TIME_LIMIT = 60.0            # seconds per call into a user's blueprint
USER_MODULES = "_lbs_pz_user"        # prefix of the module names of py: files
SIGNATURE = "def act(self, state, seat=None) -> int"


def _label(obj: Any) -> str:
    name = getattr(obj, "name", None)
    return repr(name) if isinstance(name, str) else type(obj).__name__


def _check_act(obj: Any) -> None:
    """BlueprintError unless obj (an instance) has an `act` that takes (state, seat)."""
    if isinstance(obj, type):
        raise BlueprintError(f"{obj.__name__} is a class, not a blueprint: pass an instance "
                             f"({obj.__name__}())")
    act = getattr(obj, "act", None)
    if not callable(act):
        raise BlueprintError(f"{type(obj).__name__} object {_label(obj)} is not a blueprint: "
                             f"it has no act method; a blueprint needs a `name` and "
                             f"`{SIGNATURE}` returning a legal move id")
    try:
        signature = inspect.signature(act)
    except (TypeError, ValueError):       # a builtin or C method: nothing to inspect
        return
    try:
        signature.bind(None, 0)
    except TypeError:
        raise BlueprintError(f"blueprint {_label(obj)}: act{signature} does not take the "
                             f"seat; the required signature is `{SIGNATURE}` (seat: the "
                             f"player to move, None meaning state.current_player)") from None


def _own(obj: Any, attr: str):
    """obj's bound method `attr` if it defines one (not BlueprintBase's generic one)."""
    method = getattr(obj, attr, None)
    if not callable(method):
        return None
    generic = getattr(BlueprintBase, attr)
    if isinstance(obj, BlueprintBase) and getattr(type(obj), attr, None) is generic:
        return None
    return method


class _OutOfTime(BaseException):
    """Raised inside the user's code when its call runs past the time limit (a
    BaseException, so that the user's `except Exception` does not swallow it); the
    PythonBlueprint turns it into a BlueprintError."""


def _alarm(signum, frame):
    """SIGALRM, every TICK seconds while a PythonBlueprint runs on the main thread:
    interrupts the user's call once its deadline has passed."""
    if time.monotonic() > _ALARM["deadline"]:
        _ALARM["deadline"] = math.inf
        raise _OutOfTime()


TICK = 0.05                          # seconds between two looks at the deadline
_MAIN_THREAD = threading.main_thread().ident
# The main thread's alarm: entry points under way, the handler and timer found before
# the outermost one (restored after it), when that began, the running call's deadline.
_ALARM: Dict[str, Any] = {"depth": 0, "previous": None, "timer": (0.0, 0.0), "start": 0.0,
                          "deadline": math.inf}


def _check_time_limit(time_limit) -> Optional[float]:
    if time_limit is None:
        return None
    return as_real(time_limit, "time_limit", above=0, error=ValueError,
                   what="a positive number of seconds or None (no limit)")


class _Limited:
    """`PythonBlueprint._limited`'s context (a class: a generator-based context manager
    costs microseconds per call into a blueprint)."""

    __slots__ = ("bp", "armed")

    def __init__(self, bp: "PythonBlueprint"):
        self.bp = bp
        self.armed = bp.time_limit is not None and threading.get_ident() == _MAIN_THREAD

    def __enter__(self):
        if self.armed:
            if _ALARM["depth"] == 0:
                _ALARM["previous"] = _signal.signal(_signal.SIGALRM, _alarm)
                _ALARM["timer"] = timer = _signal.setitimer(_signal.ITIMER_REAL, TICK, TICK)
                if timer[0] > 0:
                    _ALARM["start"] = time.monotonic()
            _ALARM["depth"] += 1
        return self

    def __exit__(self, kind, err, tb):
        if self.armed:
            _ALARM["depth"] -= 1
            if _ALARM["depth"] == 0:
                _signal.setitimer(_signal.ITIMER_REAL, 0)
                previous = _ALARM["previous"]
                _signal.signal(_signal.SIGALRM, _signal.SIG_DFL if previous is None else previous)
                delay, interval = _ALARM["timer"]
                if delay > 0:           # someone else's timer: give it its remaining time
                    left = delay - (time.monotonic() - _ALARM["start"])
                    _signal.setitimer(_signal.ITIMER_REAL, max(left, 1e-3), interval)
        if kind is _OutOfTime:
            bp = self.bp
            raise bp._fail(f"{bp._calling} did not return within its time limit of "
                           f"{bp.time_limit:g} s (PythonBlueprint(obj, time_limit=S); None: "
                           f"no limit)") from None
        return False


class PythonBlueprint:
    """A user's object with `act(state, seat=None)` as a Blueprint (module docstring).

    Args:
        obj: an instance with `act` (and usually `name`).
        name: overrides obj.name (default: obj.name, else its class name).
        check_calls: how many calls of a user's own `rollout` / `value` are fully checked
            before they are trusted (moves, and that a rollout continues every game, are
            always checked).
        time_limit: seconds each call into `obj` may take (module docstring); None: no
            limit.

    Attributes: name, deterministic, has_private_memory, has_value (from obj, with the
    defaults True, False, "obj has value"), per_position (True when obj has neither
    act_batch nor rollout of its own: every move is one call of `act`), obj, time_limit,
    spec (the blueprint spec it was loaded from, or None), fingerprint (sha256 of its
    source file, or None).
    """

    def __init__(self, obj: Any, name: Optional[str] = None, check_calls: int = CHECK_CALLS,
                 time_limit: Optional[float] = DEFAULT_TIME_LIMIT):
        if isinstance(obj, PythonBlueprint):
            raise BlueprintError(f"{obj!r} is already a PythonBlueprint; use it as it is "
                                 f"(as_blueprint returns it unchanged)")
        _check_act(obj)
        name = getattr(obj, "name", None) if name is None else name
        if name is None:
            name = type(obj).__name__
        if not isinstance(name, str) or not name:
            raise BlueprintError(f"blueprint {type(obj).__name__}: name must be a non-empty "
                                 f"str, got {name!r}")
        check_calls = as_int(check_calls, "check_calls", lo=0, error=ValueError)
        self.obj, self.name = obj, name
        self.deterministic = bool(getattr(obj, "deterministic", True))
        self.has_private_memory = bool(getattr(obj, "has_private_memory", False))
        self._act_batch = _own(obj, "act_batch")
        self._rollout = _own(obj, "rollout")
        self._value = _own(obj, "value")
        self.has_value = self._value is not None and bool(getattr(obj, "has_value", True))
        # Moves from `act`, one Python call per world and move: search picks its speed
        # settings for that (lbs_pz.search.resolve.speed_defaults).
        self.per_position = self._act_batch is None and self._rollout is None
        self.check_calls = check_calls
        self.time_limit = _check_time_limit(time_limit)
        self._calling = "act"               # the user's method being called (for messages)
        self._checks = {"rollout": check_calls, "value": check_calls}
        self.spec: Optional[str] = None
        self.fingerprint: Optional[str] = None

    # --- calls into the user's object ----------------------------------------------------

    def _limited(self) -> "_Limited":
        """A context around every entry point: on the main thread, SIGALRM is handled and
        fires every TICK seconds (the previous handler and timer kept, and restored at
        the end), so that a call `_call` makes is interrupted once it runs past its
        deadline; the interruption becomes a BlueprintError."""
        return _Limited(self)

    def _call(self, what: str, fn: Callable, *args):
        """fn(*args), a call into the user's object, under the time limit."""
        self._calling = what
        if self.time_limit is None:
            return fn(*args)
        if _ALARM["depth"] and threading.get_ident() == _MAIN_THREAD:
            outer = _ALARM["deadline"]
            _ALARM["deadline"] = time.monotonic() + self.time_limit
            try:
                return fn(*args)
            finally:
                _ALARM["deadline"] = outer
        start = time.perf_counter()
        out = fn(*args)
        took = time.perf_counter() - start
        if took > self.time_limit:
            raise self._fail(f"{what} took {took:.1f} s, more than its time limit of "
                             f"{self.time_limit:g} s (off the main thread a call is not "
                             f"interrupted; it is refused when it returns)")
        return out

    def _call_act(self, state: HanabiState, seat: Optional[int]):
        return self._call("act", self.obj.act, state, seat)

    # --- Agent ------------------------------------------------------------------------------

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """The user's move for `seat` (default: the player to move), checked to be a legal
        int in `state`; -1 if the game is over. The user's `act` receives a copy of
        `state`, which it cannot change."""
        if state.is_terminal:
            return -1
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        with self._limited():
            return acted_move(self.name, self._call_act, state)

    # --- Blueprint --------------------------------------------------------------------------

    def act_batch(self, batch: HanabiBatch) -> np.ndarray:
        """int64 (N,): the move of each world's player to move, -1 where it is over."""
        batch = require_batch(batch, f"blueprint {self.name!r}: act_batch")
        with self._limited():
            if self._act_batch is None:
                return act_each(self.name, self._call_act, batch)
            generation = batch.generation
            out = self._call("act_batch", self._act_batch, batch)
            check_batch_unchanged(self.name, batch, generation, "act_batch")
        return self._check_moves(out, batch)

    def rollout(self, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Play every world forward in place, this blueprint in every seat, at most
        `max_moves` moves each (all if negative): int32 (N,) moves made."""
        batch = require_batch(batch, f"blueprint {self.name!r}: rollout")
        max_moves = check_max_moves(max_moves)
        with self._limited():
            if self._rollout is None:
                return rollout_each(self.name, self._call_act, batch, max_moves)
            return self._checked_rollout(batch, max_moves)

    def value(self, batch: HanabiBatch) -> Optional[np.ndarray]:
        """float32 (N,) expected final scores (the user's `value`), or None without one."""
        batch = require_batch(batch, f"blueprint {self.name!r}: value")
        if not self.has_value:
            return None
        with self._limited():
            generation = batch.generation
            out = self._call("value", self._value, batch)
            check_batch_unchanged(self.name, batch, generation, "value")
        if self._checks["value"] <= 0:
            return np.asarray(out, dtype=np.float32)
        self._checks["value"] -= 1
        return self._checked_value(out, batch)

    # --- contract checks --------------------------------------------------------------------

    def _fail(self, text: str) -> BlueprintError:
        return BlueprintError(f"blueprint {self.name!r}: {text}")

    def _int_array(self, out, n: int, what: str, meaning: str) -> np.ndarray:
        """`out` as an int array (n,), else a BlueprintError saying what `what` returns."""
        must = f"it must return an int array ({n},) of {meaning}"
        if out is None:
            raise self._fail(f"{what} returned None; {must}")
        arr = np.asarray(out)
        if arr.shape != (n,) or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise self._fail(f"{what} returned {arr.dtype} {arr.shape} for {n} worlds; {must}")
        return arr

    def _check_moves(self, out, batch: HanabiBatch) -> np.ndarray:
        n = len(batch)
        arr = self._int_array(out, n, "act_batch", "moves (-1 where a game is over)")
        arr = arr.astype(np.int64, copy=False)
        done = batch.terminals()
        over = np.flatnonzero(done & (arr != -1))
        if over.size:
            raise self._fail(f"act_batch returned move {arr[over[0]]} for world {over[0]}, "
                             f"whose game is over (its entry must be -1)")
        legal = batch.legal_masks().astype(bool)
        m = legal.shape[1]
        ok = done | ((arr >= 0) & (arr < m) & legal[np.arange(n), np.clip(arr, 0, m - 1)])
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = int(bad[0])
            state = batch.get_state(i)
            move = int(arr[i])
            name = move_name(state.config, move) if 0 <= move < m else "(no such move)"
            raise self._fail(f"act_batch returned the illegal move {move} {name} for world {i} "
                             f"({bad.size} illegal in all), {describe_position(state)}; legal "
                             f"moves: {legal_text(state)}")
        return arr

    def _checked_rollout(self, batch: HanabiBatch, max_moves: int) -> np.ndarray:
        """The user's own rollout, checked: every call, that each world continues its game
        (its public history extends the one it had: not reset, not overwritten) by as
        many moves as reported; on the first `check_calls` calls also that no world's
        deal changed and that each running world advanced as far as it should."""
        n = len(batch)
        full = self._checks["rollout"] > 0
        if full:
            self._checks["rollout"] -= 1
        running = ~batch.terminals()
        before = batch.public_history_keys()
        decks = [batch.get_state(i).deck for i in range(n)] if full else []
        made = self._call("rollout", self._rollout, batch, max_moves)
        what = f"rollout(batch, max_moves={max_moves})"
        arr = self._int_array(made, n, what, "the moves made in each world")
        after = batch.public_history_keys()
        for i in range(n):
            if not after[i].startswith(before[i]) or \
                    (full and batch.get_state(i).deck != decks[i]):
                raise self._fail(
                    f"{what} left world {i} in a position that does not continue its game "
                    f"(it had {(len(before[i]) - 1) // 3} moves, and now holds another "
                    f"game{' or deal' if full else ''}): the batch was reset or a world "
                    f"overwritten during the rollout; a rollout only plays each world "
                    f"forward")
            if (len(after[i]) - len(before[i])) // 3 != arr[i]:
                raise self._fail(f"{what} says world {i} made {arr[i]} moves, but it made "
                                 f"{(len(after[i]) - len(before[i])) // 3}")
        if not full:
            return arr.astype(np.int32)
        done = batch.terminals()
        if max_moves != 0:
            stuck = np.flatnonzero(running & (arr == 0))
            if stuck.size:
                raise self._fail(f"{what} did not advance world {int(stuck[0])} (a running "
                                 f"game, {describe_position(batch.get_state(int(stuck[0])))})")
        short = np.flatnonzero(running & ~done & ((arr < max_moves) if max_moves >= 0 else True))
        if short.size:
            i = int(short[0])
            raise self._fail(f"{what} stopped world {i} after {arr[i]} moves, before "
                             f"{'the end of the game' if max_moves < 0 else f'{max_moves} moves'}")
        if max_moves >= 0 and np.any(arr > max_moves):
            i = int(np.argmax(arr))
            raise self._fail(f"{what} made {arr[i]} moves in world {i}, more than {max_moves}")
        return arr.astype(np.int32)

    def _checked_value(self, out, batch: HanabiBatch) -> np.ndarray:
        n = len(batch)
        if out is None:
            raise self._fail(f"value returned None although has_value is True; it must return "
                             f"a float array ({n},) of expected final scores (or set "
                             f"has_value = False)")
        arr = np.asarray(out)
        if arr.shape != (n,) or arr.dtype == np.bool_ or not (
                np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
            raise self._fail(f"value returned {arr.dtype} {arr.shape} for {n} worlds; it must "
                             f"return a float array ({n},) of expected final scores")
        if not np.all(np.isfinite(arr)):
            raise self._fail("value returned a non-finite estimate (nan or inf)")
        return arr.astype(np.float32)

    # --- the rest ----------------------------------------------------------------------------

    def __reduce__(self):
        # A blueprint loaded from a spec travels (to worker processes) as its spec.
        if self.spec is not None and self.spec.startswith("py:"):
            return (load_python_blueprint, (self.spec, self.time_limit))
        return object.__reduce__(self)

    def __repr__(self) -> str:
        return f"<PythonBlueprint {self.name!r} of {type(self.obj).__name__}>"


def _trusted(obj: Any) -> bool:
    """The library's own blueprints, whose contract is tested here."""
    if isinstance(obj, (PythonBlueprint, RuleBot)) or type(obj) is RandomAgent:
        return True
    for module, cls in (("lbs_pz.agents.public_lstm", "PublicLSTMBlueprint"),
                        ("lbs_pz.agents.sb3_policy", "SB3Blueprint"),
                        ("lbs_pz.agents.rllib_policy", "RLlibBlueprint")):
        loaded = sys.modules.get(module)
        if loaded is not None and type(obj) is getattr(loaded, cls):
            return True
    return False


def as_blueprint(obj: Any) -> Blueprint:
    """A Blueprint for `obj`: the library's own blueprints unchanged, anything else with
    `act(state, seat=None)` wrapped in a contract-checking `PythonBlueprint`.
    BlueprintError (a ValueError) for a class, an object without `act`, or an `act`
    without the seat parameter."""
    if _trusted(obj):
        return obj
    return PythonBlueprint(obj)


# --- py: specs ------------------------------------------------------------------------------

def load_python_blueprint(spec: str,
                          time_limit: Optional[float] = DEFAULT_TIME_LIMIT) -> Blueprint:
    """The blueprint a `py:MODULE_OR_FILE.py:CLASS` spec names (`lbs_pz.agents.spec`):
    the class instantiated without arguments (or the object itself) through
    `as_blueprint`, with `spec` set to its canonical form, `fingerprint` to the sha256
    of its source file and the per-call `time_limit` (seconds, None: none) set. A
    blueprint so loaded pickles as (spec, time_limit). BlueprintError naming the spec
    when it cannot be loaded."""
    time_limit = _check_time_limit(time_limit)
    found, canonical, source = resolve_spec_target(spec, "py")
    if isinstance(found, type):
        try:
            obj = found()
        except Exception as err:
            attr = canonical.rpartition(":")[2]
            raise BlueprintError(f"blueprint spec {spec!r}: {attr}() raised {type(err).__name__}: "
                                 f"{err} (the class is instantiated without arguments)") from None
    else:
        obj = found
    try:
        bp: Any = as_blueprint(obj)     # any blueprint: its spec and fingerprint are set here
    except BlueprintError as err:
        raise BlueprintError(f"blueprint spec {spec!r}: {err}") from None
    bp.spec = canonical
    if isinstance(bp, PythonBlueprint):
        bp.time_limit = time_limit
    bp.fingerprint = source_fingerprint(found, source)
    return bp


def resolve_spec_target(spec: str, prefix: str) -> Tuple[Any, str, Optional[str]]:
    """What a `PREFIX:MODULE_OR_FILE.py:NAME` spec names (py: and hle: specs share it):
    (the object: a class or an instance, the canonical spec `PREFIX:TARGET:NAME`, the
    path of the module's source file or None). TARGET is a .py file (or any path with a
    separator), imported as a module of its own (`_import_file`), else an importable
    module; NAME may be dotted (`Outer.Inner`). BlueprintError naming the spec for a
    malformed spec, a missing file, a module that does not import or raises, a missing
    NAME."""
    rest = spec.strip().partition(":")[2]
    target, sep, attr = rest.rpartition(":")
    if not sep or not target or not attr:
        raise BlueprintError(f"blueprint spec {spec!r}: expected "
                             f"{prefix}:MODULE_OR_FILE.py:CLASS")
    if target.endswith(".py") or "/" in target or os.sep in target:
        path = os.path.normpath(target)
        if not os.path.isfile(path):
            raise BlueprintError(f"blueprint spec {spec!r}: file {target!r} does not exist")
        module = _import_file(spec, path)
        canonical = f"{prefix}:{path}:{attr}"
        source: Optional[str] = path
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as err:
            raise BlueprintError(f"blueprint spec {spec!r}: cannot import module {target!r} "
                                 f"({err}); for a file write {prefix}:PATH.py:{attr}") from None
        except Exception as err:
            raise BlueprintError(f"blueprint spec {spec!r}: importing {target!r} raised "
                                 f"{type(err).__name__}: {err}") from None
        canonical = f"{prefix}:{target}:{attr}"
        source = getattr(module, "__file__", None)
    found: Any = module
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            names = sorted(n for n, v in vars(module).items()
                           if isinstance(v, type) and callable(getattr(v, "act", None)))
            raise BlueprintError(f"blueprint spec {spec!r}: {target!r} has no {attr!r} (classes "
                                 f"with act there: {', '.join(names) or 'none'})")
    return found, canonical, source


def source_fingerprint(found: Any, source: Optional[str]) -> Optional[str]:
    """sha256 of the file that defines `found` (a class: its own source file; else
    `source`, the module's), or None where there is no such file."""
    if isinstance(found, type):
        try:
            source = inspect.getsourcefile(found) or source
        except (TypeError, OSError):
            pass
    return file_sha256(source) if source and os.path.isfile(source) else None


def _import_file(spec: str, path: str):
    """Import a .py file as a module of its own (registered in sys.modules, so its classes
    pickle and dataclasses work), under a name derived from its absolute path."""
    absolute = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:12]
    name = f"{USER_MODULES}.{''.join(c if c.isalnum() else '_' for c in stem)}_{digest}"
    if USER_MODULES not in sys.modules:
        package = importlib.util.module_from_spec(
            importlib.machinery.ModuleSpec(USER_MODULES, None))
        package.__path__ = []
        sys.modules[USER_MODULES] = package
    module_spec = importlib.util.spec_from_file_location(name, absolute)
    assert module_spec is not None and module_spec.loader is not None   # a .py file has them
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[name]
        raise BlueprintError(f"blueprint spec {spec!r}: running {path!r} raised "
                             f"{type(err).__name__}: {err}") from None
    return module
