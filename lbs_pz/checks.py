"""The one check of a scalar argument: an int (never a bool), a real number, a bool, one of
a few choices, a path. Below every layer: any module may import it (the engine included),
and it imports nothing of lbs_pz, only NumPy.

Each `as_*` returns the value in its plain Python type, or raises one exception whose
message names the parameter and the bad value ("seat must be an int in [0, 2), got 5";
"rollouts must be an int >= 1, got 1.5 (float)"):

- a value of the wrong type (a bool or a float for an int, a str for a number, ...):
  TypeError;
- a value of the right type outside its range (or NaN / inf for a finite number):
  ValueError;
- `error=`: one exception class (or any callable from the message to an exception, such
  as the web API's 400 error) raised for both, for the checks whose contract is a single
  ValueError;
- `what=`: the words after "must be", where the generated ones ("an int >= 1") say less
  than the caller should ("a positive number of seconds or None (no limit)").

    rollouts = as_int(rollouts, "rollouts", lo=1)
    seat = as_int(seat, "seat", lo=0, below=players)            # [0, players)
    delta = as_real(delta, "delta", lo=0)                         # finite, >= 0
    seconds = as_real(seconds, "read_seconds", above=0, error=ValueError)
    backend = as_choice(backend, "backend", BACKENDS)

`is_int` and `is_real` are the same tests as predicates, for a check that reports in its
own words (a record's field, a list of layer sizes).
"""

from __future__ import annotations

import math
import os
import reprlib
from typing import Any, Callable, Iterable, NoReturn, Optional, TypeGuard, TypeVar, Union

import numpy as np

Choice = TypeVar("Choice")     # one of the choices `as_choice` is given

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 2, 60, 60, 6, 4


def shown(value: Any) -> str:
    """`value` as an error message quotes it: a short repr that never recurses deeply and
    survives a hostile __repr__ (an array by its shape and dtype)."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    try:
        return _REPR.repr(value)
    except Exception:  # a hostile __repr__: name the type only
        return f"<{type(value).__name__}>"


def is_int(value: Any) -> TypeGuard[Union[int, np.integer]]:
    """True for a Python int or a NumPy integer; False for a bool (and anything else).
    The one "an int but not a bool" test of lbs_pz: the compiled modules ask it through
    the engine's `int_arg` (lbs_pz/engine/state.pyx), which answers a plain int or a NumPy
    integer in C and calls this for anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_real(value: Any, finite: bool = False) -> bool:
    """True for an int, a float or a NumPy number (integer or floating), never a bool;
    `finite`: and neither NaN nor infinite."""
    if not (is_int(value) or isinstance(value, (float, np.floating))):
        return False
    return not finite or math.isfinite(value)


def _raise(error: Optional[Callable[[str], BaseException]], default: type, name: str,
           what: str, got: str) -> NoReturn:
    raise (error or default)(f"{name} must be {what}, got {got}")


def _wrong_type(value: Any) -> str:
    return f"{shown(value)} ({type(value).__name__})"


def _bounds(lo, hi, below, above) -> str:
    low = f"[{lo}" if lo is not None else f"({above}" if above is not None else None
    high = f"{hi}]" if hi is not None else f"{below})" if below is not None else None
    if low and high:
        return f" in {low}, {high}"
    if low:
        return f" >= {lo}" if lo is not None else f" > {above}"
    if high:
        return f" <= {hi}" if hi is not None else f" < {below}"
    return ""


def _real_words(lo, hi, above, finite: bool) -> str:
    return ("a finite number" if finite else "a number") + _bounds(lo, hi, None, above)


def as_int(value: Any, name: str, lo: Optional[int] = None, hi: Optional[int] = None, *,
           below: Optional[int] = None, what: Optional[str] = None,
           error: Optional[Callable[[str], BaseException]] = None) -> int:
    """`value` as a Python int: an int or a NumPy integer, never a bool (TypeError
    otherwise), in [lo, hi] (inclusive) and below `below` (exclusive) where given
    (ValueError otherwise). `what`, `error`: see the module docstring."""
    if type(value) is int:                    # the common case first
        number = value
    elif is_int(value):
        number = int(value)
    else:
        _raise(error, TypeError, name, what or "an int" + _bounds(lo, hi, below, None),
               _wrong_type(value))
    if (lo is not None and number < lo) or (hi is not None and number > hi) \
            or (below is not None and number >= below):
        _raise(error, ValueError, name, what or "an int" + _bounds(lo, hi, below, None),
               str(number))
    return number


def as_real(value: Any, name: str, lo: Optional[float] = None, hi: Optional[float] = None, *,
            above: Optional[float] = None, finite: bool = True, what: Optional[str] = None,
            error: Optional[Callable[[str], BaseException]] = None) -> float:
    """`value` as a Python float: an int, a float or a NumPy number, never a bool
    (TypeError otherwise); finite unless `finite=False`, in [lo, hi] (inclusive) and above
    `above` (exclusive) where given (ValueError otherwise; NaN is outside every range).
    `what`, `error`: see the module docstring."""
    if not is_real(value):
        _raise(error, TypeError, name, what or _real_words(lo, hi, above, finite),
               _wrong_type(value))
    number = float(value)
    if (finite and not math.isfinite(number)) or (lo is not None and not number >= lo) \
            or (hi is not None and not number <= hi) \
            or (above is not None and not number > above):
        _raise(error, ValueError, name, what or _real_words(lo, hi, above, finite),
               shown(value))
    return number


def as_bool(value: Any, name: str, *, what: Optional[str] = None,
            error: Optional[Callable[[str], BaseException]] = None) -> bool:
    """`value` as a Python bool: True or False (a NumPy bool too), never 0, 1 or a str
    (TypeError otherwise). `what`, `error`: see the module docstring."""
    if not isinstance(value, (bool, np.bool_)):
        _raise(error, TypeError, name, what or "True or False", _wrong_type(value))
    return bool(value)


def as_choice(value: Any, name: str, choices: Iterable[Choice], *, what: Optional[str] = None,
              error: Optional[Callable[[str], BaseException]] = None) -> Choice:
    """`value` itself if it is one of `choices` (`value in choices`), else ValueError
    listing them. `what`, `error`: see the module docstring."""
    if value not in choices:
        _raise(error, ValueError, name,
               what or "one of " + ", ".join(str(c) for c in choices), shown(value))
    return value


def as_path(value: Any, name: str, *, what: Optional[str] = None,
            error: Optional[Callable[[str], BaseException]] = None) -> str:
    """`value` as a str path: a str or an os.PathLike of one (TypeError otherwise, bytes
    included). `what`, `error`: see the module docstring."""
    path = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(path, str):
        _raise(error, TypeError, name, what or "a path (str or os.PathLike)", _wrong_type(value))
    return path
