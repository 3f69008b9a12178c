"""Counterfactual filtering of any belief's samples through the blueprint.

The other players see the searching seat's hand, and the blueprint they play is
deterministic: a hand under which some partner would have made a different move than it
did is impossible. The exact belief applies this filter to every candidate hand as the
game goes (SPARTA); `FilteredBelief` applies it to the samples of another belief (the
learned one, say) at sampling time: it oversamples, traces every sampled hand back
through the seat's own plays and discards to each past partner decision, and keeps the
hands under which the blueprint repeats every move the partners made.

Sampling from q(h) and keeping the consistent hands draws from q(h | consistent), which
is the true posterior when q is the prior the blueprint's play was conditioned on, and
strictly closer to it than q in general: the filter removes exactly the mass that the
partners' moves rule out. Its cost grows with the history (one C bot call per candidate
and past partner move, about 1 us each for the rule bots) and not with the number of
possible hands, so it works for 7-card hands where the exact belief cannot.

    belief = FilteredBelief(LearnedBelief(), RuleBot("strong"))   # make_belief("learned+cf")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple, cast

import numpy as np

from lbs_pz.agents.base import counterfactual_mask
from lbs_pz.agents.spec import load_blueprint
from lbs_pz.checks import as_real
from lbs_pz.engine import HanabiState
from lbs_pz.search.beliefs.base import Belief, as_rng

if TYPE_CHECKING:
    from typing_extensions import Self


class FilteredBelief(Belief):
    """Args:
        base: the belief proposing hands (its `sample` must return consistent hands).
        blueprint: the policy the other seats play: a blueprint spec ("strong",
            "lstm:NAME"), a RuleBot (C speed) or any Blueprint with `act_batch`.
        oversample: hands drawn from `base` per hand asked for in the first round of a
            sample. Each later round draws what the fraction this sample's rounds kept
            says the missing hands need, with a quarter more: the filter keeps most hands
            early in a game and a few percent late, so fixed rounds would take many.
            Rounds repeat until n hands survive or `max_oversample * n` were drawn.
            `sample(n)` returns the first n survivors, fewer if too few survive (a search
            then falls back). Every hand is drawn independently from `base`, so the round
            sizes change which hands are drawn, not their distribution; they depend on
            the position and the rng alone, never on earlier samples.
        partner_deviation: the probability that a partner's move was not its blueprint's
            (a partner that searches too). 0, the default, judges every explained partner
            move strictly; p > 0 keeps a sampled hand the blueprint contradicts at a
            partner move with probability p, independently at each such move (a hand
            contradicted k times survives with probability p ** k), so that a partner's
            deviation cannot rule out the true hand. Sampling only: `log_prob` and
            `consistent_with_partners` stay strict.

    `blueprint_seats` (attribute, default empty): the partner seats known to play the
    blueprint exactly, set by whoever knows (an evaluation whose seats that do not search
    play the blueprint: `SearchAgent.blueprint_seats`). A move of theirs that no sampled
    hand explains rules the sampled hands out, as it rules the hands out of the exact
    posterior, instead of being ignored: a proposal that cannot reach the hands their
    moves leave yields too few worlds (the search falls back to the blueprint's move)
    rather than worlds their moves contradict. Another seat's unexplained move (a human,
    a searching partner) carries no evidence, as in ExactBelief.

    `card_probabilities` is estimated from filtered samples; `log_prob` is the base's
    log-probability for a consistent hand (not renormalised over the filter) and -inf
    for a hand the filter rules out.
    """

    def __init__(self, base: Belief, blueprint, oversample: int = 4, max_oversample: int = 32,
                 partner_deviation: float = 0.0):
        super().__init__()
        if not isinstance(base, Belief):
            raise TypeError(f"base must be a Belief, got {type(base).__name__}")
        if isinstance(blueprint, str):     # a spec, as everywhere: "strong", "lstm:NAME"
            blueprint = load_blueprint(blueprint)
        if not callable(getattr(blueprint, "act_batch", None)):
            raise TypeError("blueprint must be a blueprint spec (lbs_pz.agents.load_blueprint) "
                            f"or a Blueprint with act_batch, got {type(blueprint).__name__}")
        if not 1 <= oversample <= max_oversample:
            raise ValueError(f"need 1 <= oversample <= max_oversample, got {oversample} "
                             f"and {max_oversample}")
        self.base, self.blueprint = base, blueprint
        self.oversample, self.max_oversample = int(oversample), int(max_oversample)
        self.partner_deviation = as_real(partner_deviation, "partner_deviation", 0.0, 1.0)
        self.name = f"{base.name}+cf"
        self.blueprint_seats: FrozenSet[int] = frozenset()

    # The base tracks the game itself; this class records what the filter needs: every
    # partner decision (the position before it and the move) and the seat's own plays
    # and discards, in order.
    def reset(self, state: HanabiState, seat: int) -> Self:
        self.base.reset(state, seat)
        return super().reset(state, seat)

    def observe(self, state: HanabiState) -> None:
        super().observe(state)
        self.base.observe(state)

    def _reset(self, start: HanabiState) -> None:
        self._events: List[Tuple[str, object, int, int]] = []
        # Per partner decision, the verdicts already computed: {hand key: agrees}. Only
        # for blueprints without a fast counterfactual_mask of their own (a forward pass
        # per call); later decisions re-check the same past hands often.
        self._verdicts: Dict[int, Dict[int, bool]] = {}
        self._memoize = getattr(self.blueprint, "counterfactual_mask", None) is None

    def _update(self, before: HanabiState, after: HanabiState, rec: dict) -> None:
        me, hs = self.seat, self.config.hand_size
        if rec["player"] != me:
            self._events.append(("partner", before, rec["move"], 0))
        elif rec["move"] < 2 * hs:      # a play or discard: the hand changes
            drew = len(after.card_knowledge(me)) == len(before.card_knowledge(me))
            self._events.append(("own", rec["move"] % hs, rec["card"], int(drew)))

    def consistent_with_partners(self, hands: np.ndarray,
                                 skip_unexplained: bool = False) -> np.ndarray:
        """bool (m,): hands (m, hand_len) of the seat now under which the blueprint
        repeats every past partner move. Walks the history backwards, undoing the seat's
        plays and discards to recover each hand as it was at each partner decision.

        skip_unexplained: ignore a partner move that none of the hands still kept
            explains (a partner that was not playing the blueprint, e.g. another
            searching seat), as ExactBelief does; meant for large samples."""
        return self._filter(hands, None if skip_unexplained else frozenset())[0]

    def _filter(self, hands: np.ndarray, ignore: Optional[FrozenSet[int]],
                rng: Optional[np.random.Generator] = None) -> Tuple[np.ndarray, FrozenSet[int]]:
        """(keep, ignored): `consistent_with_partners` for hands (m, hand_len).
        ignore: the partner decisions (indices into the history) that carry no evidence,
        every other one judged strictly; None: those that no hand still kept explains,
        found as the walk goes. ignored: the decisions ignored. A sample's first round
        finds them; its later, smaller rounds ignore exactly those. rng: where given and
        `partner_deviation` > 0, a contradicted hand is kept with that probability."""
        past = np.ascontiguousarray(hands, dtype=np.int8).reshape(len(hands), -1)
        if len(past) > 1 and past.shape[1]:
            # Sampled hands repeat (a belief concentrates its mass): filter each distinct
            # hand once. Equal hands now were equal at every past decision.
            key = past.astype(np.int64) @ (np.int64(self.config.num_card_types)
                                           ** np.arange(past.shape[1], dtype=np.int64))
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            if len(first) < len(past):
                keep, ignored = self._filter(past[first], ignore, rng)
                return keep[inverse], ignored
        keep = np.ones(len(past), dtype=bool)
        skip = set() if ignore is None else set(ignore)
        for index in range(len(self._events) - 1, -1, -1):
            event = self._events[index]
            if not keep.any():
                break
            if event[0] == "own":           # before it: the card back in its slot, no draw
                _, slot, card, drew = event
                kept = past[:, :past.shape[1] - drew]
                past = np.ascontiguousarray(np.concatenate(
                    [kept[:, :slot], np.full((len(past), 1), card, np.int8), kept[:, slot:]],
                    axis=1))
            elif index not in skip:
                _, before, move, _ = event      # a partner's: the position before it
                rows = np.flatnonzero(keep)
                agree = self._agree(index, cast(HanabiState, before), move,
                                    np.ascontiguousarray(past[rows]))
                # A move no remaining hand explains was not the blueprint's (a searching
                # partner deviated): it carries no evidence, as in ExactBelief; unless
                # the partner is known to play the blueprint (the hands are wrong).
                if (agree.any() or ignore is not None
                        or cast(HanabiState, before).current_player in self.blueprint_seats):
                    if rng is not None and self.partner_deviation > 0:
                        agree = agree | (rng.random(len(rows)) < self.partner_deviation)
                    keep[rows] = agree
                else:
                    skip.add(index)
        return keep, frozenset(skip)

    def _agree(self, index: int, before: HanabiState, move: int,
               hands: np.ndarray) -> np.ndarray:
        """bool (m,): the blueprint, acting at partner decision `index` (position `before`),
        makes `move` when the seat holds hands[r]; remembered per decision and hand."""
        if not self._memoize:
            return counterfactual_mask(self.blueprint, before, self.seat, move, hands)
        keys = (hands.astype(np.int64) @ (np.int64(self.config.num_card_types)
                                          ** np.arange(hands.shape[1], dtype=np.int64)))
        known = self._verdicts.setdefault(index, {})   # one hand width per decision
        agree = np.array([known.get(k, -1) for k in keys.tolist()], dtype=np.int8)
        new = np.flatnonzero(agree < 0)
        if new.size:
            fresh = counterfactual_mask(self.blueprint, before, self.seat, move, hands[new])
            agree[new] = fresh
            known.update(zip(keys[new].tolist(), fresh.tolist()))
        return agree.astype(bool)

    def _round_size(self, n: int, survivors: int, proposed: int) -> int:
        """Hands to draw next for n survivors, `survivors` of `proposed` found so far."""
        if not proposed:
            return n * self.oversample
        # the fewest a round may keep is one in max_oversample
        rate = max(survivors / proposed, 1 / self.max_oversample)
        need = int(np.ceil(1.25 * (n - survivors) / rate))
        return max(1, min(need, n * self.max_oversample - proposed))

    def sample(self, n: int, rng) -> np.ndarray:
        return self.sample_weighted(n, rng)[0]

    def sample_weighted(self, n: int, rng) -> Tuple[np.ndarray, np.ndarray]:
        """The base's weighted samples that survive the filter, with their log weights:
        filtering multiplies the exact posterior by the indicator it applies, so a kept
        hand's weight toward the filtered exact posterior is the base's weight."""
        rng = as_rng(rng)
        kept, weights, survivors, proposed = [], [], 0, 0
        # the first round that returns hands finds the unexplained partner moves (None)
        ignore: Optional[FrozenSet[int]] = None
        while survivors < n and proposed < n * self.max_oversample:
            hands, log_w = self.base.sample_weighted(self._round_size(n, survivors, proposed),
                                                     rng)
            proposed += max(self.base.last_proposed, len(hands), 1)
            if len(hands):
                keep, ignore = self._filter(hands, ignore, rng)
                kept.append(hands[keep])
                weights.append(log_w[keep])
                survivors += int(keep.sum())
        hands = np.concatenate(kept) if kept else np.zeros((0, self.hand_len), np.int64)
        log_w = np.concatenate(weights) if weights else np.zeros(0)
        self.last_proposed, self.last_legal = proposed, len(hands)
        return hands[:n], log_w[:n]

    def card_probabilities(self, samples: int = 2000) -> np.ndarray:
        hands = self.sample(samples, np.random.default_rng(12345))
        T = self.config.num_card_types
        if len(hands) == 0:
            return self.base.card_probabilities()
        return np.stack([np.bincount(hands[:, i], minlength=T)[:T] / len(hands)
                         for i in range(hands.shape[1])])

    def log_prob(self, hand) -> float:
        if not self.consistent_with_partners(np.asarray(hand).reshape(1, -1))[0]:
            return -np.inf
        return self.base.log_prob(hand)
