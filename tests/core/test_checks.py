"""lbs_pz.checks: the one check of an int, a real number, a bool, a choice and a path."""

from __future__ import annotations

import enum
import math
import pathlib

import numpy as np
import pytest

from lbs_pz.agents.rule_bots._bots import act as bot_act
from lbs_pz.checks import as_bool, as_choice, as_int, as_path, as_real, is_int, is_real, shown
from lbs_pz.engine import HanabiConfig, HanabiState


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@pytest.mark.parametrize("value", [0, 7, -3, 2**70, np.int8(5), np.uint64(2**63), np.int64(-1)])
def test_as_int_accepts_ints_and_numpy_integers(value):
    out = as_int(value, "n")
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 1.0, np.float64(2.0), "3",
                                   None, [1], np.array(3), 1 + 0j])
def test_as_int_refuses_other_types_with_a_type_error(value):
    with pytest.raises(TypeError, match=r"^n must be an int, got .+ \(\w+\)$"):
        as_int(value, "n")
    assert not is_int(value)


def test_as_int_ranges():
    assert as_int(1, "rollouts", lo=1) == 1
    assert as_int(5, "players", 2, 5) == 5
    assert as_int(1, "seat", lo=0, below=2) == 1
    assert as_int(-9, "x", hi=0) == -9
    for value, kwargs, words in [
            (0, {"lo": 1}, "rollouts must be an int >= 1, got 0"),
            (6, {"lo": 2, "hi": 5}, r"rollouts must be an int in \[2, 5\], got 6"),
            (2, {"lo": 0, "below": 2}, r"rollouts must be an int in \[0, 2\), got 2"),
            (1, {"hi": 0}, "rollouts must be an int <= 0, got 1"),
            (3, {"below": 3}, "rollouts must be an int < 3, got 3"),
            (np.int64(-1), {"lo": 0}, "rollouts must be an int >= 0, got -1")]:
        with pytest.raises(ValueError, match=f"^{words}$"):
            as_int(value, "rollouts", **kwargs)


def test_as_int_words_and_error():
    with pytest.raises(TypeError, match=r"^max_moves must be an int \(negative: to the end\), "
                                        r"got 'x' \(str\)$"):
        as_int("x", "max_moves", what="an int (negative: to the end)")
    # one exception for both failures: a class, or any callable building one
    with pytest.raises(ValueError, match="seed must be an int >= 0, got True"):
        as_int(True, "seed", lo=0, error=ValueError)
    with pytest.raises(ApiError, match=r"turn must be an int in \[0, 3\], got 9") as err:
        as_int(9, "turn", 0, 3, error=lambda message: ApiError(400, message))
    assert err.value.status == 400


@pytest.mark.parametrize("value", [0, 1.5, -2, np.float32(0.25), np.int16(3)])
def test_as_real_accepts_numbers(value):
    out = as_real(value, "x")
    assert out == float(value) and type(out) is float
    assert is_real(value) and is_real(value, finite=True)


@pytest.mark.parametrize("value", [True, np.bool_(False), "1", None, 1j, [1.0]])
def test_as_real_refuses_other_types(value):
    with pytest.raises(TypeError, match="^x must be a finite number, got "):
        as_real(value, "x")
    assert not is_real(value)


def test_as_real_finite_and_ranges():
    for bad in (math.nan, math.inf, -math.inf, np.float64("nan")):
        with pytest.raises(ValueError, match="delta must be a finite number >= 0, got"):
            as_real(bad, "delta", lo=0)
        assert not is_real(bad, finite=True) and is_real(bad)
    assert as_real(math.inf, "x", finite=False) == math.inf
    with pytest.raises(ValueError, match="x must be a number >= 0, got nan"):
        as_real(math.nan, "x", lo=0, finite=False)
    with pytest.raises(ValueError, match=r"seconds must be a finite number > 0, got 0"):
        as_real(0, "seconds", above=0)
    with pytest.raises(ValueError, match=r"p must be a finite number in \[0, 1\], got 1.5"):
        as_real(1.5, "p", 0, 1)
    with pytest.raises(ValueError, match=r"p must be a finite number in \(0, 1\], got 0"):
        as_real(0.0, "p", hi=1, above=0)
    assert as_real(1, "p", hi=1, above=0) == 1.0
    with pytest.raises(ValueError, match="t must be a positive number, got 'x' \\(str\\)"):
        as_real("x", "t", above=0, what="a positive number", error=ValueError)


def test_as_bool():
    assert as_bool(True, "b") is True and as_bool(np.bool_(False), "b") is False
    for bad in (0, 1, "True", None, np.int64(1)):
        with pytest.raises(TypeError, match="^b must be True or False, got "):
            as_bool(bad, "b")
    with pytest.raises(ValueError, match="public must be a bool"):
        as_bool(1, "public", what="a bool", error=ValueError)


def test_as_choice():
    assert as_choice("ray", "backend", ("inline", "ray")) == "ray"
    assert as_choice(2, "n", {1: "a", 2: "b"}) == 2
    with pytest.raises(ValueError, match="^backend must be one of inline, ray, got 'process'$"):
        as_choice("process", "backend", ("inline", "ray"))
    with pytest.raises(ValueError, match="kind must be one of a or b, got None"):
        as_choice(None, "kind", ["a", "b"], what="one of a or b")


def test_as_path(tmp_path):
    assert as_path("a/b.pt", "out") == "a/b.pt"
    out = as_path(pathlib.Path(tmp_path) / "x.pt", "out")
    assert type(out) is str and out.endswith("x.pt")
    for bad in (None, 3, b"a/b", pathlib.PurePath):
        with pytest.raises(TypeError, match=r"^out must be a path \(str or os.PathLike\), got "):
            as_path(bad, "out")


def test_shown_is_short_and_safe():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no")
    assert shown(Hostile()).startswith("<Hostile")
    assert len(shown("x" * 10_000)) < 80
    assert len(shown(list(range(10_000)))) < 80
    assert shown(np.zeros((2, 3))) == "array of shape (2, 3) and dtype float64"
    with pytest.raises(TypeError, match="<Hostile.*Hostile"):
        as_int(Hostile(), "n")


class Seat(enum.IntEnum):
    FIRST = 0


@pytest.mark.parametrize("value", [0, np.int8(0), np.uint64(0), Seat.FIRST, True, False,
                                   np.True_, 0.0, np.float32(0), "0", None, [0],
                                   np.array(0)])
def test_the_engine_takes_the_ints_is_int_takes(value):
    """The compiled modules' int checks (the engine's int_arg) answer as is_int does."""
    state = HanabiState(HanabiConfig(), seed=0)
    assert state.is_legal(value) == (is_int(value) and int(value) in state.legal_moves())
    assert any(state.is_legal(m) for m in (np.int16(move) for move in state.legal_moves()))
    if is_int(value):
        assert bot_act(0, state, value) >= 0
    elif value is not None:                      # None: the player to move
        with pytest.raises(TypeError, match="seat must be an int or None"):
            bot_act(0, state, value)
