# cython: language_level=3
"""C kernels of the exact belief: enumerate, filter, re-weight and expand candidate
hands.

A candidate set is an int8 array (N, n) of card ids, one row per ordered hand (slot 0 =
oldest card). `plaus` is a uint32 array (n,) of per-slot bitmasks over card types (bit t
set: type t is allowed by the seat's card knowledge); `unseen` an int32 array (T,) of the
copies of each type the seat cannot see (deck + own hand).

Every kernel checks its inputs at the Python boundary (ValueError naming the argument):
1-D / 2-D C-contiguous arrays of the dtypes above (Cython refuses other dtypes and
strided arrays), at most MAX_HAND slots and MAX_CARD_TYPES (25) card types, card ids in
[0, T), no negative counts; the C loops then never index out of bounds.
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, int32_t, uint32_t, int64_t
from libc.string cimport memcpy

from lbs_pz.engine._core cimport MAX_CARD_TYPES, MAX_HAND

cnp.import_array()


cdef int _check_sizes(int n, int T, str what) except -1:
    """n slots in [0, MAX_HAND], T card types in [1, MAX_CARD_TYPES] (plaus bitmasks are
    32 bits wide)."""
    if n > MAX_HAND:
        raise ValueError(f"{what}: hands of {n} cards; at most {MAX_HAND} slots")
    if not 1 <= T <= MAX_CARD_TYPES:
        raise ValueError(f"{what}: unseen must hold one count per card type, 1 to "
                         f"{MAX_CARD_TYPES} types, got {T}")
    return 0


cdef int _check_unseen(const int32_t[::1] unseen, str what) except -1:
    cdef int t
    for t in range(unseen.shape[0]):
        if unseen[t] < 0:
            raise ValueError(f"{what}: unseen[{t}] = {unseen[t]} is negative; counts must "
                             f"be >= 0")
    return 0


cdef int _check_cards(const int8_t[:, ::1] hands, int T, str what) except -1:
    """Every card id of `hands` in [0, T): one vectorised pass (as uint8, a negative id
    is >= 128 > T)."""
    if hands.shape[0] == 0 or hands.shape[1] == 0:
        return 0
    raw = np.asarray(hands).view(np.uint8)
    if raw.max() >= T:
        r, i = np.unravel_index(int(np.argmax(raw >= T)), raw.shape)
        raise ValueError(f"{what}: hands[{r}, {i}] = {hands[r, i]} is not a card id in "
                         f"[0, {T})")
    return 0


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


def count_hands(const uint32_t[::1] plaus not None, const int32_t[::1] unseen not None,
                int64_t limit):
    """Number of ordered hands allowed by `plaus` (uint32 (n,)) and `unseen` (int32 (T,))
    (stops counting once it exceeds `limit` >= 0, returning a value > limit)."""
    cdef int n = plaus.shape[0], T = unseen.shape[0], t
    _check_sizes(n, T, "count_hands")
    _check_unseen(unseen, "count_hands")
    if limit < 0:
        raise ValueError(f"count_hands: limit must be >= 0, got {limit}")
    cdef int32_t left[MAX_CARD_TYPES]
    for t in range(T):
        left[t] = unseen[t]
    cdef int64_t c
    with nogil:
        c = _count(0, n, &plaus[0], left, T, limit, 0)
    return c


cdef int64_t _fill(int slot, int n, const uint32_t* plaus, int32_t* left, int T,
                   int8_t* cur, int8_t* out, int64_t row, int64_t rows) noexcept nogil:
    """Write the hands in order into out (rows x n); rows beyond `rows` are counted, not
    written, and the count stops just past `rows`."""
    cdef int t, i
    if slot == n:
        if row < rows:
            for i in range(n):
                out[row * n + i] = cur[i]
        return row + 1
    for t in range(T):
        if (plaus[slot] >> t) & 1 and left[t] > 0:
            left[t] -= 1
            cur[slot] = t
            row = _fill(slot + 1, n, plaus, left, T, cur, out, row, rows)
            left[t] += 1
            if row > rows:
                return row
    return row


def enumerate_hands(const uint32_t[::1] plaus not None, const int32_t[::1] unseen not None,
                    int64_t count):
    """All ordered hands allowed by `plaus` and `unseen`: int8 (count, n), in
    lexicographic order. `count` must be count_hands(...) (ValueError otherwise; nothing
    is written past the `count` rows allocated)."""
    cdef int n = plaus.shape[0], T = unseen.shape[0], t
    _check_sizes(n, T, "enumerate_hands")
    _check_unseen(unseen, "enumerate_hands")
    if count < 0:
        raise ValueError(f"enumerate_hands: count must be >= 0, got {count}")
    cdef int32_t left[MAX_CARD_TYPES]
    cdef int8_t cur[MAX_HAND]
    for t in range(T):
        left[t] = unseen[t]
    cdef cnp.ndarray out = np.empty((count, n), dtype=np.int8)
    cdef int64_t rows
    if n == 0:
        if count != 1:
            raise ValueError(f"enumerate_hands: count = {count}, but there is exactly one "
                             f"empty hand (count_hands)")
        return out
    with nogil:
        rows = _fill(0, n, &plaus[0], left, T, cur, <int8_t*>cnp.PyArray_DATA(out), 0, count)
    if rows != count:
        raise ValueError(f"enumerate_hands: count = {count}, but "
                         f"{'more' if rows > count else rows} hands fit; pass count_hands(...)")
    return out


def feasible_mask(const int8_t[:, ::1] hands not None, const uint32_t[::1] plaus not None,
                  const int32_t[::1] unseen not None):
    """uint8 (N,): 1 where the hand (int8 (N, n)) fits every slot's knowledge (plaus
    uint32 (n,)) and needs no more copies of any type than remain unseen (int32 (T,))."""
    cdef int64_t N = hands.shape[0], r
    cdef int n = hands.shape[1], i, j, c, k
    if plaus.shape[0] != n:
        raise ValueError(f"feasible_mask: plaus has {plaus.shape[0]} slots, hands have {n}")
    _check_sizes(n, unseen.shape[0], "feasible_mask")
    _check_cards(hands, unseen.shape[0], "feasible_mask")
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


def hand_weights(const int8_t[:, ::1] hands not None, const int32_t[::1] unseen not None):
    """float64 (N,): multiplicity of each ordered hand (int8 (N, n)), prod_i (unseen[h_i]
    - #{j<i: h_j = h_i}), the number of ways to pick its physical cards among the unseen
    ones (int32 (T,))."""
    cdef int64_t N = hands.shape[0], r
    cdef int n = hands.shape[1], i, j, c, k
    _check_sizes(n, unseen.shape[0], "hand_weights")
    _check_cards(hands, unseen.shape[0], "hand_weights")
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


def remove_slot(const int8_t[:, ::1] hands not None, int slot, int card):
    """Keep the hands (int8 (N, n)) whose card at `slot` (in [0, n)) is `card` (in [0,
    MAX_CARD_TYPES)); return them without that slot, int8 (M, n - 1)."""
    cdef int64_t N = hands.shape[0], r, m = 0
    cdef int n = hands.shape[1], i, k
    if not 0 <= slot < n:
        raise ValueError(f"remove_slot: slot {slot} out of range [0, {n})")
    if not 0 <= card < MAX_CARD_TYPES:
        raise ValueError(f"remove_slot: card {card} is not a card id in [0, {MAX_CARD_TYPES})")
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


def append_draw(const int8_t[:, ::1] hands not None, const int32_t[::1] unseen not None,
                uint32_t allowed, int64_t max_rows):
    """Every hand (int8 (N, n)) extended by a new last card of each type in `allowed`
    (bitmask over the T types of unseen, int32 (T,)) that a copy is still unseen for
    (beyond those the hand holds): int8 (M, n + 1). Raises MemoryError if the result
    would exceed `max_rows` rows (checked before allocating)."""
    cdef int64_t N = hands.shape[0], r, m = 0
    cdef int n = hands.shape[1], T = unseen.shape[0], i, t, k
    _check_sizes(n + 1, T, "append_draw")
    _check_unseen(unseen, "append_draw")
    _check_cards(hands, T, "append_draw")
    if max_rows < 0:
        raise ValueError(f"append_draw: max_rows must be >= 0, got {max_rows}")
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
