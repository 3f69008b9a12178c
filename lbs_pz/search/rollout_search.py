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
from typing import Callable, Optional, Sequence, Tuple, Union

import numpy as np

from lbs_pz.engine import HanabiBatch, HanabiState
from lbs_pz.search.config import SearchConfig
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
    # The deviation test as it ran: the move whose gain was tested (the best candidate
    # still alive; -1: no test), that gain (`verify_gain` where verified), the margin it had
    # to clear besides `delta` (`confidence` standard errors of that gain, the s.e. of at
    # most `margin_worlds` worlds: 0, no cap, for a verified gain), and the bar
    # max(delta, margin). Per candidate: the margin of its own search gain and whether that
    # gain clears both (`clears`).
    delta: float = float("nan")
    confidence: float = float("nan")
    margin_worlds: int = 0
    tested_move: int = -1
    tested_gain: float = float("nan")
    margin: float = float("nan")
    bar: float = float("nan")
    margins: Optional[np.ndarray] = None
    clears: Optional[np.ndarray] = None
    depth: int = -1                # blueprint moves after each candidate (-1: to the end)


# Why a search fell back to the blueprint's move (`SearchResult.fallback_reason`).
FEW_WORLDS = "too few sampled hands (or, weighted, too small an effective sample)"
NON_FINITE = "a non-finite return (NaN or inf) from the value or the rollouts"


def _world_returns(worlds: HanabiBatch, blueprint, depth: int,
                   value: Optional[ValueFn]) -> Tuple[np.ndarray, int]:
    """Roll `worlds` forward in place with the blueprint; return (each world's return,
    float64 (N,), and how many value estimates were clipped). A world's return is its
    score if the game ended, else value(world) (or the score, without a value), bounded
    to [0, what the world can still score] (`HanabiBatch.max_scores`): a regression
    value can overshoot a position's ceiling, and an estimate above 25 is bias no
    number of worlds averages away."""
    own_value = depth > 0 and value is not None \
        and getattr(value, "__self__", None) is blueprint and hasattr(blueprint, "rollout_value")
    if own_value:
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


def build_worlds(state: HanabiState, seat: int, moves: Union[Sequence[int], np.ndarray],
                 hands: np.ndarray, world_seeds: np.ndarray) -> HanabiBatch:
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


def move_returns(state: HanabiState, seat: int, moves: Union[Sequence[int], np.ndarray],
                 hands: np.ndarray, world_seeds: np.ndarray, blueprint, depth: int,
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


def search_move(state: HanabiState, seat: int, blueprint, hands: np.ndarray,
                config: Optional[SearchConfig] = None, *, depth: int = -1,
                value: Optional[ValueFn] = None, rollout_blueprint=None,
                verify_hands: Optional[np.ndarray] = None, weights: Optional[np.ndarray] = None,
                verify_weights: Optional[np.ndarray] = None, min_worlds: int = 1,
                min_samples: int = 32, seed: int = 0) -> SearchResult:
    """Evaluate every legal move of `seat` (the player to move) in the worlds given by
    `hands` (int array (m, hand_len) of own hands, each consistent with what the seat
    knows) and pick the move as SPARTA/LBS do.

    config: the search's settings (`SearchConfig`; None: the default one), its knobs
        left None at their general default (`SearchConfig.with_defaults`; `resolve`
        chooses them for a blueprint). Of them the search reads delta, confidence,
        margin_worlds, pruning, batch_size, refill and time_budget (what each does:
        `lbs_pz.search.config`'s docstring); the agent (`lbs_pz.search.agents`) reads
        the others (how many worlds, the belief, the precision, the seed).
    depth: blueprint moves after the candidate move (-1: to the end of the game).
    value: bootstrap at depth (ignored when rolling out to the end).

    The call's own inputs:
    verify_hands: optional second sample of own hands (v, hand_len). The best move is
        then chosen on `hands` and its gain over the blueprint's move is measured again
        on these fresh worlds, rolled out to the end of the game whatever `depth` (so
        neither the value's bias nor the winner's curse of the choice is in it); delta
        and confidence apply to that second estimate (`verify_gain`, `verify_sem`), its
        margin uncapped (`margin_worlds` guards against biases it does not have; weighted
        by `verify_weights`, the belief's neither). Only the two moves are rolled out, so a
        large second sample is cheap (the agent samples `SearchConfig.verify` of them).
    min_worlds: fewer sampled hands than this (with `weights`: a smaller effective sample
        size) -> fall back to the blueprint's move (`fallback_reason` FEW_WORLDS).
    min_samples: worlds every candidate must have before pruning may drop one.
    seed: seeds the decks of the worlds (`build_worlds`).
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
    config = (SearchConfig() if config is None else config).with_defaults()
    assert config.delta is not None and config.confidence is not None \
        and config.margin_worlds is not None                    # with_defaults() set them
    if seat != state.current_player or state.is_terminal:
        raise ValueError(f"search for seat {seat}, but the player to move is "
                         f"{state.current_player}{' (game over)' if state.is_terminal else ''}")
    decision = _Decision(state, seat, blueprint, hands, config, depth, value,
                         blueprint if rollout_blueprint is None else rollout_blueprint,
                         _check_weights(weights, len(hands), "weights"), seed)
    if decision.usable() < max(min_worlds, 1) or decision.k == 1:
        return decision.result(decision.blueprint_move, fallback=decision.k > 1,
                               reason=FEW_WORLDS)
    if not decision.roll_out(min_samples, verify_hands is not None):
        return decision.result(decision.blueprint_move, fallback=True, reason=NON_FINITE)
    best, gain, gain_sem, n = decision.best()
    if verify_hands is not None and len(verify_hands) > 1 and best != decision.bp_index \
            and gain > config.delta:
        verified = decision.verify(best, verify_hands, verify_weights)
        if verified is None:
            return decision.result(decision.blueprint_move, fallback=True, reason=NON_FINITE)
        gain, gain_sem, n = verified
        cap = 0
    else:
        cap = int(config.margin_worlds)
    margin = _margin(config, gain_sem, n, cap)
    decision.tested = (int(decision.legal[best]), float(gain), float(margin), cap)
    deviate = gain > config.delta and gain > margin
    return decision.result(decision.legal[best] if deviate else decision.blueprint_move,
                           fallback=False, ess=n)


def _margin(config: SearchConfig, gain_sem, n, cap: Optional[int] = None):
    """`confidence` standard errors of a gain measured on n (effective) worlds, the s.e.
    scaled to that of at most `cap` worlds (default `margin_worlds`; 0: no cap): what
    the gain must clear besides delta (scalars or per-candidate arrays)."""
    assert config.confidence is not None and config.margin_worlds is not None
    cap = config.margin_worlds if cap is None else cap
    if cap > 0:
        gain_sem = gain_sem * np.sqrt(np.maximum(n / cap, 1.0))
    return config.confidence * gain_sem


class _Decision:
    """One `search_move` in progress: the candidates, the worlds rolled out so far and their
    running estimates, so that each step of the search (roll out, prune, verify, decide)
    reads one object."""

    def __init__(self, state: HanabiState, seat: int, blueprint, hands, config: SearchConfig,
                 depth: int, value: Optional[ValueFn], rollout_blueprint,
                 weights: Optional[np.ndarray], seed: int):
        self.start = time.perf_counter()
        self.state, self.seat, self.config = state, seat, config
        self.depth, self.value, self.rollout_blueprint = depth, value, rollout_blueprint
        self.legal = np.array(state.legal_moves(), dtype=np.int64)         # (k,)
        self.blueprint_move = int(blueprint.act(state, seat))
        self.refill = bool(getattr(rollout_blueprint, "wide_batches", False)) \
            if config.refill is None else config.refill
        self.k = len(self.legal)
        self.hands = np.asarray(hands, dtype=np.int64).reshape(len(hands), -1) \
            if len(hands) else hands                                        # (m, hand_len)
        self.weights = weights                                              # (m,) or None
        self.moves_tally = _Tally(self.k, weights is not None)
        self.gains_tally = _Tally(self.k, weights is not None)
        self.verified = [np.nan, np.nan, 0]                 # gain, its s.e., rollouts
        self.tested = (-1, np.nan, np.nan, 0)               # move, gain, margin, its cap
        self.clipped = 0
        self.used = 0                                       # worlds rolled out
        self.seeds = np.random.default_rng(seed)

    def usable(self) -> float:
        """Worlds the decision can use: the sampled hands, or their effective number."""
        return len(self.hands) if self.weights is None else weights_ess(self.weights)

    def result(self, move, fallback: bool, reason: str = "",
               ess: float = float("nan")) -> SearchResult:
        means, sems = self.moves_tally.mean_sem()
        gains, gain_sems = self.gains_tally.mean_sem()
        return SearchResult(
            move=int(move), blueprint_move=self.blueprint_move,
            deviated=int(move) != self.blueprint_move, fallback=fallback, moves=self.legal,
            means=means, sems=sems, counts=self.moves_tally.counts, gains=gains,
            gain_sems=gain_sems, worlds=self.used if reason != FEW_WORLDS else 0,
            rollouts=int(self.moves_tally.counts.sum()) + int(self.verified[2]),
            seconds=time.perf_counter() - self.start,
            verify_gain=self.verified[0], verify_sem=self.verified[1],
            fallback_reason=reason if fallback else "", ess=float(ess),
            value_clipped=self.clipped, depth=self.depth, **self._test_record(gains, gain_sems))

    def _test_record(self, gains: np.ndarray, gain_sems: np.ndarray) -> dict:
        """The deviation test's fields of a `SearchResult` (its docstring)."""
        config = self.config
        assert config.delta is not None and config.confidence is not None \
            and config.margin_worlds is not None                # with_defaults() set them
        margins = _margin(config, gain_sems, self.gains_tally.ess())
        with np.errstate(invalid="ignore"):
            clears = (gains > config.delta) & (gains > margins)
        move, gain, margin, cap = self.tested
        return dict(delta=float(config.delta), confidence=float(config.confidence),
                    margin_worlds=cap if move >= 0 else int(config.margin_worlds),
                    tested_move=move,
                    tested_gain=gain, margin=margin,
                    bar=max(config.delta, margin) if move >= 0 else float("nan"),
                    margins=margins, clears=clears)

    def roll_out(self, min_samples: int, verifying: bool) -> bool:
        """Roll every candidate still alive out in batches of worlds, pruning after each,
        until the worlds, the candidates or the time budget run out. False: a return was
        not finite."""
        self.bp_index = int(np.flatnonzero(self.legal == self.blueprint_move)[0])
        self.alive = np.ones(self.k, dtype=bool)
        m = len(self.hands)
        world_seeds = self.seeds.integers(0, 2**63, size=m)
        self.returns = np.full((self.k, m), np.nan)   # per move and world ("paired")
        budget = self.config.time_budget
        while self.used < m:
            candidates = np.flatnonzero(self.alive)
            # once moves are pruned, a batch takes more worlds so that it still rolls out
            # about k * batch_size (move, world) pairs: a neural blueprint's forward costs
            # several times more per row at 64 rows than at 512
            worlds = self.config.batch_size * (
                max(1, self.k // len(candidates)) if self.used and self.refill else 1)
            chunk = slice(self.used, min(self.used + worlds, m))
            per_move, over = move_returns(self.state, self.seat, self.legal[candidates],
                                          self.hands[chunk], world_seeds[chunk],
                                          self.rollout_blueprint, self.depth, self.value)
            self.clipped += over
            if not np.isfinite(per_move).all():
                return False
            w = None if self.weights is None else self.weights[chunk]
            self.moves_tally.add(candidates, per_move, w)
            reference = per_move[candidates.tolist().index(self.bp_index)]
            self.gains_tally.add(candidates, per_move - reference, w)
            self.returns[candidates, chunk] = per_move
            self.used = chunk.stop
            if self.config.pruning != "off" and \
                    self.moves_tally.counts[candidates].min() >= min_samples:
                self.alive &= ~self._dropped(candidates, verifying)
            if self.alive.sum() <= 1:
                break
            if budget is not None and time.perf_counter() - self.start > budget:
                break
        return True

    def _dropped(self, candidates: np.ndarray, verifying: bool) -> np.ndarray:
        """bool (k,): the candidates the pruning rule drops now (never the blueprint's
        move: it is the reference)."""
        rule, delta = self.config.pruning, self.config.delta
        margin, confidence = self.config.margin_worlds, self.config.confidence
        assert delta is not None and margin is not None and confidence is not None  # defaults
        means, se = self.moves_tally.mean_sem()
        best = candidates[np.argmax(means[candidates])]
        if rule == "means":
            dropped = self.alive & (means + 2 * se < means[best] - 2 * se[best])
        else:
            # every alive move has every world so far: the best's differences
            used = self.used
            d_mean, d_sem = _rows_mean_sem(
                self.returns[candidates, :used] - self.returns[best, :used],
                None if self.weights is None else self.weights[:used])
            dropped = np.zeros(self.k, dtype=bool)
            dropped[candidates] = d_mean + 2 * d_sem < 0
            if rule == "threshold":     # cannot clear the bar: never played
                g_mean, g_sem = self.gains_tally.mean_sem()
                bar = delta
                if margin > 0 and not verifying:
                    # the capped margin of the final test is at least this, at any number
                    # of worlds
                    spread = g_sem * np.sqrt(np.maximum(self.gains_tally.ess(), 1))
                    bar = np.maximum(delta, confidence * spread / np.sqrt(margin))
                dropped |= self.alive & (g_mean + 2 * g_sem < bar)
        dropped[self.bp_index] = False
        return dropped

    def best(self) -> Tuple[int, float, float, float]:
        """(index of the best candidate still alive, its paired gain over the blueprint's
        move, that gain's s.e., the effective worlds behind it)."""
        means = self.moves_tally.mean_sem()[0]
        contenders = np.flatnonzero(self.alive)
        best = int(contenders[np.argmax(means[contenders])])
        gains, gain_sems = self.gains_tally.mean_sem()
        return best, gains[best], gain_sems[best], float(self.gains_tally.ess()[best])

    def verify(self, best: int, verify_hands, verify_weights
               ) -> Optional[Tuple[float, float, float]]:
        """The best move's gain over the blueprint's move re-measured on fresh worlds,
        rolled out to the end of the game: (gain, s.e., effective worlds); None: a return
        was not finite."""
        verify_hands = np.asarray(verify_hands, dtype=np.int64).reshape(len(verify_hands), -1)
        verify_weights = _check_weights(verify_weights, len(verify_hands), "verify_weights")
        pair, over = move_returns(self.state, self.seat, [self.legal[best], self.blueprint_move],
                                  verify_hands,
                                  self.seeds.integers(0, 2**63, size=len(verify_hands)),
                                  self.rollout_blueprint, -1, None)
        self.clipped += over
        if not np.isfinite(pair).all():
            return None
        diff = pair[0] - pair[1]
        if verify_weights is None:
            gain, gain_sem = mean_sem(diff)
            n = float(len(diff))
        else:
            gain, gain_sem = weighted_mean_sem(diff, verify_weights)
            n = weights_ess(verify_weights)
        self.verified[:] = [gain, gain_sem, pair.size]
        return gain, gain_sem, n


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
