"""Beliefs over the searching seat's own hand, behind one interface (`Belief`):

    ExactBelief(blueprint)   SPARTA's exact belief: all consistent hands, counterfactually
                             filtered through the blueprint partner (C speed for rule bots)
    GroundedBelief()         per card, proportional to unseen copies allowed by the hints
    LearnedBelief(path)      encoder LSTM + auto-regressive decoder (torch); the default
                             checkpoint ships with the package (2p, 5 cards, strong bot)

    >>> import numpy as np
    >>> from lbs_pz.engine import HanabiConfig, HanabiState
    >>> state = HanabiState(HanabiConfig(players=2), seed=0)
    >>> belief = GroundedBelief().reset(state, seat=0)
    >>> belief.sample(3, np.random.default_rng(0)).shape
    (3, 5)

See `lbs_pz.search.beliefs.base` for what a belief may read.
"""

from lbs_pz.search.beliefs.base import Belief, SeatInfo
from lbs_pz.search.beliefs.exact import BeliefMemoryError, ExactBelief
from lbs_pz.search.beliefs.grounded import GroundedBelief


def __getattr__(name):  # torch is imported only when the learned belief is used
    if name in ("LearnedBelief", "default_checkpoint"):
        from lbs_pz.search.beliefs import learned
        return getattr(learned, name)
    raise AttributeError(name)


def make_belief(kind: str, blueprint=None, checkpoint=None, **kwargs) -> Belief:
    """A belief by name: "exact" (needs the blueprint for counterfactual filtering),
    "grounded" or "learned" (checkpoint: default the shipped one)."""
    if kind == "exact":
        return ExactBelief(blueprint, **kwargs)
    if kind == "grounded":
        return GroundedBelief()
    if kind == "learned":
        from lbs_pz.search.beliefs.learned import LearnedBelief
        return LearnedBelief(checkpoint, **kwargs)
    raise ValueError(f"unknown belief {kind!r}; choose exact, grounded or learned")


__all__ = ["Belief", "SeatInfo", "ExactBelief", "GroundedBelief", "LearnedBelief",
           "BeliefMemoryError", "default_checkpoint", "make_belief"]
