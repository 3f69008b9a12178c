"""Beliefs over the searching seat's own hand, behind one interface (`Belief`):

    ExactBelief(blueprint)   SPARTA's exact belief: all consistent hands, counterfactually
                             filtered through the blueprint partner (C speed for rule bots)
    GroundedBelief()         per card, proportional to unseen copies allowed by the hints
    LearnedBelief(path)      encoder LSTM + auto-regressive decoder (torch); the default
                             checkpoint ships with the package (2p, 5 cards, strong bot)
    FilteredBelief(base, bp) any belief's samples, counterfactually filtered through the
                             blueprint ("learned+cf", "grounded+cf")

    >>> import numpy as np
    >>> from lbs_pz.engine import HanabiConfig, HanabiState
    >>> state = HanabiState(HanabiConfig(players=2), seed=0)
    >>> belief = GroundedBelief().reset(state, seat=0)
    >>> belief.sample(3, np.random.default_rng(0)).shape
    (3, 5)

See `lbs_pz.search.beliefs.base` for what a belief may read.
"""

import dataclasses
from typing import Callable, Tuple

from lbs_pz.search.beliefs.base import Belief, SeatInfo, importance_weights
from lbs_pz.search.beliefs.exact import BeliefMemoryError, ExactBelief
from lbs_pz.search.beliefs.filtered import FilteredBelief
from lbs_pz.search.beliefs.grounded import GroundedBelief


def __getattr__(name):
    if name in ("LearnedBelief", "default_checkpoint"):
        # Deliberately lazy (allow-listed in tests/repo/test_layers.py): the learned belief
        # imports torch at its top, and the other beliefs must work without it.
        from lbs_pz.search.beliefs import learned
        return getattr(learned, name)
    raise AttributeError(name)


@dataclasses.dataclass(frozen=True)
class BeliefKind:
    """One kind of belief a search names (`make_belief`, --belief)."""
    name: str
    make: Callable[..., Belief]     # (blueprint, checkpoint, **kwargs) -> the belief
    reads_checkpoint: bool = False  # a trained model (--belief-checkpoint, a shipped one)
    filterable: bool = True         # KIND+cf exists: samples filtered through the blueprint


def _learned(blueprint, checkpoint, **kwargs) -> Belief:
    # Deliberately lazy (allow-listed in tests/repo/test_layers.py): torch only for this kind.
    from lbs_pz.search.beliefs.learned import LearnedBelief
    return LearnedBelief(checkpoint, blueprint=blueprint, **kwargs)


BELIEF_BASES = {k.name: k for k in (
    # the exact belief filters its candidates through the blueprint already
    BeliefKind("exact", lambda blueprint, checkpoint, **kw: ExactBelief(blueprint, **kw),
               filterable=False),
    BeliefKind("grounded", lambda blueprint, checkpoint, **kw: GroundedBelief()),
    BeliefKind("learned", _learned, reads_checkpoint=True),
)}
FILTERED = "+cf"        # KIND+cf: KIND's samples counterfactually filtered (FilteredBelief)
BELIEF_KINDS = tuple(BELIEF_BASES) + tuple(k + FILTERED for k, b in BELIEF_BASES.items()
                                           if b.filterable)


def parse_belief(kind: str) -> Tuple[BeliefKind, bool]:
    """(the base kind, whether its samples are filtered) of a belief name of
    `BELIEF_KINDS`; ValueError naming the choices otherwise."""
    base, filtered = (kind[:-len(FILTERED)], True) if isinstance(kind, str) \
        and kind.endswith(FILTERED) else (kind, False)
    found = BELIEF_BASES.get(base) if isinstance(base, str) else None
    if found is None or (filtered and not found.filterable):
        raise ValueError(f"unknown belief {kind!r}; choose one of {', '.join(BELIEF_KINDS)}")
    return found, filtered


def make_belief(kind: str, blueprint=None, checkpoint=None, **kwargs) -> Belief:
    """A belief by name: "exact" (needs the blueprint for counterfactual filtering),
    "grounded" or "learned" (checkpoint: path or shipped name; default the shipped belief
    trained for `blueprint`, checked against it: `LearnedBelief`); a "+cf" suffix
    filters the samples counterfactually through the blueprint (`FilteredBelief`)."""
    base, filtered = parse_belief(kind)
    if filtered and blueprint is None:
        raise ValueError(f"belief {kind!r} needs the blueprint the partners play")
    belief = base.make(blueprint, checkpoint, **kwargs)
    return FilteredBelief(belief, blueprint) if filtered else belief


__all__ = ["Belief", "SeatInfo", "importance_weights", "ExactBelief", "FilteredBelief",
           "GroundedBelief", "LearnedBelief", "BELIEF_KINDS", "BELIEF_BASES", "BeliefKind",
           "BeliefMemoryError", "default_checkpoint", "make_belief", "parse_belief"]
