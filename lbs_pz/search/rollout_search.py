"""Monte Carlo move evaluation over sampled worlds: the engine shared by SPARTA and LBS.

For the searching seat, each sampled own hand defines a world: a copy of the real game
in which that seat holds the hand and the undrawn deck is re-dealt from a per-world seed
(`set_hands(..., seeds=)`), so a world depends only on what the seat sees. The worlds of
a chunk (candidate moves x sampled hands) are one `HanabiBatch`, built, stepped, rolled
out and scored in C; the value sees the still open ones as one batch. Every candidate
move is played in the same worlds (common random numbers), the blueprint plays every seat
for `depth` moves (or to the end), and the return is the final score, or a value estimate
at depth k, never above what the world can still score (`HanabiState.max_score`).
Candidates are pruned UCB-style once they are clearly worse than the best, and the
blueprint's move is replaced only when another move beats it by more than `delta`. With
importance weights on the worlds (a belief's `sample_weighted`), every mean, gain and
standard error is self-normalised importance-weighted, so the estimates converge to the
exact posterior's however the worlds were proposed.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from lbs_pz.engine import HanabiBatch, HanabiState
from lbs_pz.search.stats import (effective_sample_size, mean_sem, weighted_mean_sem,
                                 weighted_mean_sem_from_sums, weighted_rows_mean_sem,
                                 weights_ess)
from lbs_pz.search.stats import mean_sem_from_sums as _mean_sem

# value(worlds) -> expected final score of each world of a HanabiBatch, float array (N,),
# for bootstrapping (a blueprint's `value`, or a `CentralValue`).
ValueFn = Callable[[HanabiBatch], np.ndarray]


@dataclasses.dataclass
class SearchResult:
    """What one search decided and why.

    moves, means, sems, counts: per candidate move id (all legal moves), its mean return,
    standard error and number of rollouts (pruned moves stop accumulating).
    """

    move: int                      # the move to play
    blueprint_move: int
    deviated: bool                 # move != blueprint_move
    fallback: bool                 # the blueprint's move was played as a fallback (fallback_reason)
    moves: np.ndarray
    means: np.ndarray
    sems: np.ndarray
    counts: np.ndarray
    gains: np.ndarray              # paired mean gain of each move over the blueprint's move
    gain_sems: np.ndarray          # and its standard error (same worlds: common random numbers)
    worlds: int                    # sampled worlds used
    rollouts: int                  # (move, world) rollouts run, verification included
    seconds: float
    verify_gain: float = float("nan")  # the best move's gain re-measured on fresh worlds
    verify_sem: float = float("nan")   # (nan: no verification ran)
    fallback_reason: str = ""      # why: FEW_WORLDS or NON_FINITE ("" without a fallback)
    ess: float = float("nan")      # effective worlds behind the chosen move's gain (= its
                                   # worlds when unweighted; Kish's ESS under `weights`)
    value_clipped: int = 0         # bootstrap estimates above what their world could still
                                   # score (`HanabiBatch.max_scores`), clipped to it


PRUNING_RULES = ("means", "paired", "threshold", "off")
# Why a search fell back to the blueprint's move (`SearchResult.fallback_reason`).
FEW_WORLDS = "too few sampled hands (or, weighted, too small an effective sample)"
NON_FINITE = "a non-finite return (NaN or inf) from the value or the rollouts"


def pruning_rule(pruning) -> str:
    """A pruning setting in its one spelling: one of PRUNING_RULES, True ("means") or
    False ("off"); ValueError otherwise."""
    if isinstance(pruning, (bool, np.bool_)):
        return "means" if pruning else "off"
    if pruning not in PRUNING_RULES:
        raise ValueError(f"pruning must be one of {', '.join(PRUNING_RULES)} (or True / False), "
                         f"got {pruning!r}")
    return pruning


def _world_returns(worlds: HanabiBatch, blueprint, depth: int,
                   value: Optional[ValueFn]) -> Tuple[np.ndarray, int]:
    """Roll `worlds` forward in place with the blueprint; return (each world's return,
    float64 (N,), and how many value estimates were clipped). A world's return is its
    score if the game ended, else value(world) (or the score, without a value), bounded
    to [0, what the world can still score] (`HanabiBatch.max_scores`): a regression
    value can overshoot a position's ceiling, and an estimate above 25 is bias no
    number of worlds averages away."""
    if depth > 0 and value is not None and getattr(value, "__self__", None) is blueprint \
            and hasattr(blueprint, "rollout_value"):
        # the blueprint's own value: one pass, the value from the states the rollout carried
        returns = np.asarray(blueprint.rollout_value(worlds, depth), dtype=np.float64)
        return _bounded(returns, worlds)
    blueprint.rollout(worlds, depth)
    scores = worlds.scores().astype(np.float64)
    if value is None or depth < 0:
        return scores, 0
    open_games = np.flatnonzero(~worlds.terminals())
    if len(open_games):
        # no copy when every world is still open (the worlds are not used after this)
        asked = worlds if len(open_games) == len(worlds) else worlds.take(open_games)
        estimates = np.asarray(value(asked), dtype=np.float64)
        if estimates.shape != (len(open_games),):
            raise ValueError(f"value returned shape {estimates.shape} for "
                             f"{len(open_games)} worlds")
        scores[open_games] = estimates
    return _bounded(scores, worlds)


def _bounded(returns: np.ndarray, worlds: HanabiBatch) -> Tuple[np.ndarray, int]:
    """(returns clipped to [0, worlds.max_scores()], how many were above the ceiling).
    A finished world's score is its ceiling, so only estimates are ever clipped; NaN
    stays NaN (the caller falls back on it)."""
    ceiling = worlds.max_scores()
    over = int(np.count_nonzero(returns > ceiling))
    return np.clip(returns, 0.0, ceiling), over


def build_worlds(state: HanabiState, seat: int, moves: Sequence[int], hands: np.ndarray,
                 world_seeds: np.ndarray) -> HanabiBatch:
    """The worlds of `move_returns` before the rollouts: a HanabiBatch of
    len(moves) * len(hands) games, world m * len(hands) + j being the real game with
    `seat` holding hands[j], the deck re-dealt from world_seeds[j], after moves[m]."""
    hands = np.asarray(hands)
    W, M = len(hands), len(moves)
    base = HanabiBatch.from_state(state, W)
    base.set_hands(seat, hands, seeds=np.asarray(world_seeds))
    worlds = base.take(np.tile(np.arange(W), M)) if M > 1 else base
    worlds.step(np.repeat(np.asarray(moves, dtype=np.int64), W))
    return worlds


def move_returns(state: HanabiState, seat: int, moves: Sequence[int], hands: np.ndarray,
                 world_seeds: np.ndarray, blueprint, depth: int,
                 value: Optional[ValueFn]) -> Tuple[np.ndarray, int]:
    """(return of every move in every world, float64 (len(moves), len(hands)); the number
    of value estimates clipped to their world's ceiling). World j is the real game with
    `seat` holding hands[j] (int (W, hand_len)) and the deck re-dealt from
    world_seeds[j] (int (W,)); every move is played in the same worlds (common random
    numbers). All len(moves) * W worlds are one HanabiBatch."""
    worlds = build_worlds(state, seat, moves, hands, world_seeds)
    returns, clipped = _world_returns(worlds, blueprint, depth, value)
    return returns.reshape(len(moves), len(hands)), clipped


class _Tally:
    """Running sums of one estimate per candidate move over the worlds rolled out so far:
    plain means (weights None) or self-normalised importance-weighted ones."""

    def __init__(self, k: int, weighted: bool):
        self.weighted = weighted
        self.counts = np.zeros(k, dtype=np.int64)
        self.sums, self.sq_sums = np.zeros(k), np.zeros(k)       # sum w x, sum x^2
        if weighted:                                              # sum w, w^2, w^2 x, w^2 x^2
            self.w1, self.w2, self.w2x, self.w2x2 = (np.zeros(k) for _ in range(4))

    def add(self, rows: np.ndarray, x: np.ndarray, w: Optional[np.ndarray]) -> None:
        """x: float64 (len(rows), n), the returns of moves `rows` in n new worlds of
        weights w (n,) (None: unweighted)."""
        self.counts[rows] += x.shape[1]
        if w is None:
            self.sums[rows] += x.sum(axis=1)
            self.sq_sums[rows] += (x ** 2).sum(axis=1)
            return
        ww = w * w
        self.sums[rows] += x @ w
        self.w1[rows] += w.sum()
        self.w2[rows] += ww.sum()
        self.w2x[rows] += x @ ww
        self.w2x2[rows] += (x * x) @ ww

    def mean_sem(self) -> Tuple[np.ndarray, np.ndarray]:
        if not self.weighted:
            return _mean_sem(self.sums, self.sq_sums, self.counts)
        return weighted_mean_sem_from_sums(self.sums, self.w2x, self.w2x2, self.w1, self.w2)

    def ess(self) -> np.ndarray:
        """Effective worlds per move (the world count when unweighted)."""
        if not self.weighted:
            return self.counts.astype(np.float64)
        return effective_sample_size(self.w1, self.w2)


def _rows_mean_sem(x: np.ndarray, w: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Mean and s.e. of each row of x (r, n), under weights w (n,) or unweighted."""
    if w is None:
        return _mean_sem(x.sum(axis=1), (x ** 2).sum(axis=1), x.shape[1])
    return weighted_rows_mean_sem(x, w)


def search_move(state: HanabiState, seat: int, blueprint, hands: np.ndarray, *,
                depth: int = -1, value: Optional[ValueFn] = None, delta: float = 0.05,
                confidence: float = 0.0, verify_hands: Optional[np.ndarray] = None,
                pruning="means", min_samples: int = 32, batch_size: int = 32,
                refill: Optional[bool] = None, min_worlds: int = 1,
                time_budget: Optional[float] = None, margin_worlds: int = 0,
                rollout_blueprint=None, seed: int = 0,
                weights: Optional[np.ndarray] = None,
                verify_weights: Optional[np.ndarray] = None) -> SearchResult:
    """Evaluate every legal move of `seat` (the player to move) in the worlds given by
    `hands` (int array (m, hand_len) of own hands, each consistent with what the seat
    knows) and pick the move as SPARTA/LBS do.

    depth: blueprint moves after the candidate move (-1: to the end of the game).
    value: bootstrap at depth (ignored when rolling out to the end).
    delta, confidence: deviate from the blueprint's move only if the best move's paired
        gain over it exceeds delta and `confidence` standard errors of that gain. The
        paper's rule is confidence 0 (with 10K rollouts); with a few hundred rollouts
        the best of ~15 noisy estimates beats the blueprint by chance (the winner's
        curse), which confidence ~2 guards against.
    margin_worlds: if > 0, the standard error in the `confidence` test is that of at most
        this many worlds (the measured one times sqrt(worlds / margin_worlds)): more
        worlds still sharpen the estimate of every gain but never loosen the margin a
        deviation must clear. The belief's and the value's bias does not shrink with more
        worlds while the standard error does, so without this cap more worlds let
        deviations through on biased estimates.
    verify_hands: optional second sample of own hands (v, hand_len). The best move is
        then chosen on `hands` and its gain over the blueprint's move is measured again
        on these fresh worlds, where it is unbiased; delta and confidence apply to that
        second estimate (`verify_gain`, `verify_sem`). Only the two moves are rolled out,
        so a large second sample is cheap.
    pruning: stop rolling out a move once it is clearly worse than the best (after
        min_samples worlds; the blueprint's move is never dropped, it is the reference):
        "means" (or True): its mean + 2 s.e. < the best mean - 2 s.e.;
        "paired": its paired difference with the best move over the same worlds (common
        random numbers) is below 0 by more than 2 s.e. of that difference. Most of the
        spread of returns comes from the worlds, which pairing cancels, so this drops
        weak moves after far fewer worlds;
        "threshold": as "paired", and a move is also dropped once its paired gain over
        the blueprint's move is 2 s.e. below `delta` (with `margin_worlds`, below the
        larger of delta and the capped margin): it can no longer be played, since a
        deviation must clear both. This drops the moves that tie with the
        blueprint's (equivalent discards and hints), which "paired" keeps to the end;
        "off" (or False): every move gets every world.
    batch_size: worlds rolled out together in the first batch (every legal move in each);
        pruning is checked after each batch.
    refill: later batches take batch_size * (k // moves still alive) worlds (k legal
        moves), so that each rolls out about as many (move, world) pairs as the first;
        False: batch_size worlds each (more pruning checks, smaller batches). None: the
        rollout blueprint's `wide_batches` (a neural blueprint's batched forward is several
        times cheaper per world at 512 worlds than at 64; a rule bot's rollouts cost the
        same per world, and later pruning only adds rollouts).
    min_worlds: fewer sampled hands than this (with `weights`: a smaller effective sample
        size) -> fall back to the blueprint's move (`fallback_reason` FEW_WORLDS).
    time_budget: seconds; the search stops after the batch that exceeds it.
    rollout_blueprint: plays the rollouts (default: `blueprint`), e.g. the blueprint in a
        faster precision (`PublicLSTMBlueprint.with_precision`); `blueprint` still gives
        the reference move.

    weights, verify_weights: optional importance weights of `hands` and `verify_hands`
        (float (m,), >= 0; `lbs_pz.search.beliefs.importance_weights`): every mean, gain
        and standard error becomes self-normalised importance-weighted, so a belief
        whose samples come from a proposal (a learned or grounded belief) estimates the
        returns under the exact posterior, and the world counts of `margin_worlds`,
        `min_worlds` and the pruning bar become effective sample sizes.

    Every return is bounded by what its world can still score (`_bounded`); the
    estimates that had to be clipped are counted in `value_clipped`.

    A return that is not finite (a value estimate or a blueprint's `rollout_value` that is
    NaN or infinite) cannot rank moves: the search stops and falls back to the
    blueprint's move (`fallback_reason` NON_FINITE), counted with the other fallbacks.
    """
    start = time.perf_counter()
    pruning = pruning_rule(pruning)
    if seat != state.current_player or state.is_terminal:
        raise ValueError(f"search for seat {seat}, but the player to move is "
                         f"{state.current_player}{' (game over)' if state.is_terminal else ''}")
    legal = np.array(state.legal_moves(), dtype=np.int64)
    blueprint_move = int(blueprint.act(state, seat))
    rollout_blueprint = blueprint if rollout_blueprint is None else rollout_blueprint
    if refill is None:
        refill = bool(getattr(rollout_blueprint, "wide_batches", False))
    k = len(legal)
    hands = np.asarray(hands, dtype=np.int64).reshape(len(hands), -1) if len(hands) else hands
    weights = _check_weights(weights, len(hands), "weights")
    moves_tally, gains_tally = _Tally(k, weights is not None), _Tally(k, weights is not None)
    verified = [np.nan, np.nan, 0]                        # gain, its s.e., rollouts
    clipped = [0]

    def result(move, fallback, worlds_used, reason="", ess=float("nan")):
        means, sems = moves_tally.mean_sem()
        gains, gain_sems = gains_tally.mean_sem()
        return SearchResult(
            move=int(move), blueprint_move=blueprint_move, deviated=int(move) != blueprint_move,
            fallback=fallback, moves=legal, means=means, sems=sems,
            counts=moves_tally.counts, gains=gains, gain_sems=gain_sems, worlds=worlds_used,
            rollouts=int(moves_tally.counts.sum()) + verified[2],
            seconds=time.perf_counter() - start,
            verify_gain=verified[0], verify_sem=verified[1],
            fallback_reason=reason if fallback else "", ess=float(ess),
            value_clipped=clipped[0])

    usable = len(hands) if weights is None else weights_ess(weights)
    if usable < max(min_worlds, 1) or k == 1:
        return result(blueprint_move, fallback=k > 1, worlds_used=0, reason=FEW_WORLDS)

    bp_index = int(np.flatnonzero(legal == blueprint_move)[0])
    alive = np.ones(k, dtype=bool)
    seeds = np.random.default_rng(seed)
    world_seeds = seeds.integers(0, 2**63, size=len(hands))
    returns = np.full((k, len(hands)), np.nan)           # per move and world ("paired")
    used = 0
    lo = 0
    while lo < len(hands):
        candidates = np.flatnonzero(alive)
        # once moves are pruned, a batch takes more worlds so that it still rolls out about
        # k * batch_size (move, world) pairs: a neural blueprint's forward costs several
        # times more per row at 64 rows than at 512
        worlds = batch_size * (max(1, k // len(candidates)) if lo and refill else 1)
        chunk = slice(lo, min(lo + worlds, len(hands)))
        per_move, over = move_returns(state, seat, legal[candidates], hands[chunk],
                                      world_seeds[chunk], rollout_blueprint, depth, value)
        clipped[0] += over
        if not np.isfinite(per_move).all():
            return result(blueprint_move, fallback=True, worlds_used=used, reason=NON_FINITE)
        w = None if weights is None else weights[chunk]
        moves_tally.add(candidates, per_move, w)
        gains_tally.add(candidates, per_move - per_move[list(candidates).index(bp_index)], w)
        returns[candidates, chunk] = per_move
        used = lo = chunk.stop
        if pruning != "off" and moves_tally.counts[candidates].min() >= min_samples:
            means, se = moves_tally.mean_sem()
            best = candidates[np.argmax(means[candidates])]
            if pruning == "means":
                dropped = alive & (means + 2 * se < means[best] - 2 * se[best])
            else:
                # every alive move has every world so far: the best's differences
                d_mean, d_sem = _rows_mean_sem(returns[candidates, :used] - returns[best, :used],
                                               None if weights is None else weights[:used])
                dropped = np.zeros(k, dtype=bool)
                dropped[candidates] = d_mean + 2 * d_sem < 0
                if pruning == "threshold":     # cannot clear the bar: never played
                    g_mean, g_sem = gains_tally.mean_sem()
                    bar = delta
                    if margin_worlds > 0 and verify_hands is None:
                        # the capped margin of the final test is at least this, at any
                        # number of worlds
                        spread = g_sem * np.sqrt(np.maximum(gains_tally.ess(), 1))
                        bar = np.maximum(delta, confidence * spread / np.sqrt(margin_worlds))
                    dropped |= alive & (g_mean + 2 * g_sem < bar)
            dropped[bp_index] = False     # the blueprint's move is the reference
            alive &= ~dropped
        if alive.sum() <= 1:
            break
        if time_budget is not None and time.perf_counter() - start > time_budget:
            break

    means = moves_tally.mean_sem()[0]
    contenders = np.flatnonzero(alive)
    best = contenders[np.argmax(means[contenders])]
    gains, gain_sems = gains_tally.mean_sem()
    gain, gain_sem = gains[best], gain_sems[best]
    n = float(gains_tally.ess()[best])
    if verify_hands is not None and len(verify_hands) > 1 and best != bp_index and gain > delta:
        verify_hands = np.asarray(verify_hands, dtype=np.int64).reshape(len(verify_hands), -1)
        verify_weights = _check_weights(verify_weights, len(verify_hands), "verify_weights")
        pair, over = move_returns(state, seat, [legal[best], blueprint_move], verify_hands,
                                  seeds.integers(0, 2**63, size=len(verify_hands)),
                                  rollout_blueprint, depth, value)
        clipped[0] += over
        if not np.isfinite(pair).all():
            return result(blueprint_move, fallback=True, worlds_used=used, reason=NON_FINITE)
        diff = pair[0] - pair[1]
        if verify_weights is None:
            gain, gain_sem = mean_sem(diff)
            n = float(len(diff))
        else:
            gain, gain_sem = weighted_mean_sem(diff, verify_weights)
            n = weights_ess(verify_weights)
        verified[:] = [gain, gain_sem, pair.size]
    if margin_worlds > 0 and n > margin_worlds:
        gain_sem = gain_sem * np.sqrt(n / margin_worlds)
    deviate = gain > delta and gain > confidence * gain_sem
    return result(legal[best] if deviate else blueprint_move, fallback=False, worlds_used=used,
                  ess=n)


def _check_weights(weights, m: int, name: str) -> Optional[np.ndarray]:
    """weights as float64 (m,), finite and >= 0 with a positive sum; None stays None."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape != (m,):
        raise ValueError(f"{name}: one weight per sampled hand ({m}), got {w.size}")
    if m and (not np.isfinite(w).all() or (w < 0).any() or not w.sum() > 0):
        raise ValueError(f"{name} must be finite, >= 0 and not all 0")
    return w
