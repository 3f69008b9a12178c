# cython: language_level=3
"""C kernels of the exact belief: enumerate, filter, re-weight and expand candidate
hands.

A candidate set is an int8 array (N, n) of card ids, one row per ordered hand (slot 0 =
oldest card). `plaus` is a uint32 array (n,) of per-slot bitmasks over card types (bit t
set: type t is allowed by the seat's card knowledge); `unseen` an int32 array (T,) of the
copies of each type the seat cannot see (deck + own hand).
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, int32_t, uint32_t, int64_t
from libc.string cimport memcpy

from lbs_pz.engine._core cimport GameState, GameConfig, MAX_CARD_TYPES, MAX_HAND
from lbs_pz.engine.state cimport HanabiState

cnp.import_array()


cdef int64_t _count(int slot, int n, const uint32_t* plaus, int32_t* left, int T,
                    int64_t limit, int64_t acc) noexcept nogil:
    cdef int t
    if slot == n:
        return acc + 1
    for t in range(T):
        if (plaus[slot] >> t) & 1 and left[t] > 0:
            left[t] -= 1
            acc = _count(slot + 1, n, plaus, left, T, limit, acc)
            left[t] += 1
            if acc > limit:
                return acc
    return acc


def count_hands(const uint32_t[::1] plaus, const int32_t[::1] unseen, int64_t limit):
    """Number of ordered hands allowed by `plaus` and `unseen` (stops counting once it
    exceeds `limit`, returning a value > limit)."""
    cdef int n = plaus.shape[0], T = unseen.shape[0], t
    cdef int32_t left[MAX_CARD_TYPES]
    for t in range(T):
        left[t] = unseen[t]
    cdef int64_t c
    with nogil:
        c = _count(0, n, &plaus[0], left, T, limit, 0)
    return c


cdef int64_t _fill(int slot, int n, const uint32_t* plaus, int32_t* left, int T,
                   int8_t* cur, int8_t* out, int64_t row) noexcept nogil:
    cdef int t, i
    if slot == n:
        for i in range(n):
            out[row * n + i] = cur[i]
        return row + 1
    for t in range(T):
        if (plaus[slot] >> t) & 1 and left[t] > 0:
            left[t] -= 1
            cur[slot] = t
            row = _fill(slot + 1, n, plaus, left, T, cur, out, row)
            left[t] += 1
    return row


def enumerate_hands(const uint32_t[::1] plaus, const int32_t[::1] unseen, int64_t count):
    """All ordered hands allowed by `plaus` and `unseen`: int8 (count, n), in
    lexicographic order. `count` must be count_hands(...)."""
    cdef int n = plaus.shape[0], T = unseen.shape[0], t
    cdef int32_t left[MAX_CARD_TYPES]
    cdef int8_t cur[MAX_HAND]
    for t in range(T):
        left[t] = unseen[t]
    cdef cnp.ndarray out = np.empty((count, n), dtype=np.int8)
    cdef int64_t rows
    if count == 0 or n == 0:
        return out
    with nogil:
        rows = _fill(0, n, &plaus[0], left, T, cur, <int8_t*>cnp.PyArray_DATA(out), 0)
    if rows != count:
        raise RuntimeError(f"enumerate_hands: {rows} hands, expected {count}")
    return out


def feasible_mask(const int8_t[:, ::1] hands, const uint32_t[::1] plaus,
                  const int32_t[::1] unseen):
    """uint8 (N,): 1 where the hand fits every slot's knowledge and needs no more copies
    of any type than remain unseen."""
    cdef int64_t N = hands.shape[0], r
    cdef int n = hands.shape[1], i, j, c, k
    cdef cnp.ndarray out = np.empty(N, dtype=np.uint8)
    cdef uint8_t* o = <uint8_t*>cnp.PyArray_DATA(out)
    cdef uint8_t ok
    with nogil:
        for r in range(N):
            ok = 1
            for i in range(n):
                c = hands[r, i]
                if not ((plaus[i] >> c) & 1):
                    ok = 0
                    break
                k = 1
                for j in range(i):
                    if hands[r, j] == c:
                        k += 1
                if k > unseen[c]:
                    ok = 0
                    break
            o[r] = ok
    return out


def hand_weights(const int8_t[:, ::1] hands, const int32_t[::1] unseen):
    """float64 (N,): multiplicity of each ordered hand, prod_i (unseen[h_i] - #{j<i:
    h_j = h_i}), the number of ways to pick its physical cards among the unseen ones."""
    cdef int64_t N = hands.shape[0], r
    cdef int n = hands.shape[1], i, j, c, k
    cdef cnp.ndarray out = np.empty(N, dtype=np.float64)
    cdef double* o = <double*>cnp.PyArray_DATA(out)
    cdef double w
    with nogil:
        for r in range(N):
            w = 1.0
            for i in range(n):
                c = hands[r, i]
                k = 0
                for j in range(i):
                    if hands[r, j] == c:
                        k += 1
                w *= unseen[c] - k
            o[r] = w if w > 0 else 0.0
    return out


def remove_slot(const int8_t[:, ::1] hands, int slot, int card):
    """Keep the hands whose card at `slot` is `card`; return them without that slot."""
    cdef int64_t N = hands.shape[0], r, m = 0
    cdef int n = hands.shape[1], i, k
    with nogil:
        for r in range(N):
            if hands[r, slot] == card:
                m += 1
    cdef cnp.ndarray out = np.empty((m, n - 1), dtype=np.int8)
    cdef int8_t* o = <int8_t*>cnp.PyArray_DATA(out)
    m = 0
    with nogil:
        for r in range(N):
            if hands[r, slot] == card:
                k = 0
                for i in range(n):
                    if i != slot:
                        o[m * (n - 1) + k] = hands[r, i]
                        k += 1
                m += 1
    return out


def append_draw(const int8_t[:, ::1] hands, const int32_t[::1] unseen, uint32_t allowed,
                int64_t max_rows):
    """Every hand extended by a new last card of each type in `allowed` that a copy is
    still unseen for (beyond those the hand holds). Raises MemoryError if the result
    would exceed `max_rows` rows (checked before allocating)."""
    cdef int64_t N = hands.shape[0], r, m = 0
    cdef int n = hands.shape[1], T = unseen.shape[0], i, t, k
    with nogil:
        for r in range(N):
            for t in range(T):
                if (allowed >> t) & 1:
                    k = 0
                    for i in range(n):
                        if hands[r, i] == t:
                            k += 1
                    if k < unseen[t]:
                        m += 1
    if m > max_rows:
        raise MemoryError(m)
    cdef cnp.ndarray out = np.empty((m, n + 1), dtype=np.int8)
    cdef int8_t* o = <int8_t*>cnp.PyArray_DATA(out)
    m = 0
    with nogil:
        for r in range(N):
            for t in range(T):
                if (allowed >> t) & 1:
                    k = 0
                    for i in range(n):
                        if hands[r, i] == t:
                            k += 1
                    if k < unseen[t]:
                        for i in range(n):
                            o[m * (n + 1) + i] = hands[r, i]
                        o[m * (n + 1) + n] = t
                        m += 1
    return out
