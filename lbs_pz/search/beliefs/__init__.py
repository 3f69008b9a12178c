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

from lbs_pz.search.beliefs.base import Belief, SeatInfo, importance_weights
from lbs_pz.search.beliefs.exact import BeliefMemoryError, ExactBelief
from lbs_pz.search.beliefs.filtered import FilteredBelief
from lbs_pz.search.beliefs.grounded import GroundedBelief


def __getattr__(name):
    if name in ("LearnedBelief", "default_checkpoint"):
        # Deliberately lazy (allow-listed in tests/test_layers.py): the learned belief
        # imports torch at its top, and the other beliefs must work without it.
        from lbs_pz.search.beliefs import learned
        return getattr(learned, name)
    raise AttributeError(name)


BELIEF_KINDS = ("exact", "grounded", "learned", "grounded+cf", "learned+cf")


def make_belief(kind: str, blueprint=None, checkpoint=None, **kwargs) -> Belief:
    """A belief by name: "exact" (needs the blueprint for counterfactual filtering),
    "grounded" or "learned" (checkpoint: path or shipped name; default the shipped belief
    trained for `blueprint`, checked against it: `LearnedBelief`); a "+cf" suffix
    filters the samples counterfactually through the blueprint (`FilteredBelief`)."""
    if kind.endswith("+cf"):
        if blueprint is None:
            raise ValueError(f"belief {kind!r} needs the blueprint the partners play")
        base = make_belief(kind[:-3], blueprint, checkpoint, **kwargs)
        return FilteredBelief(base, blueprint)
    if kind == "exact":
        return ExactBelief(blueprint, **kwargs)
    if kind == "grounded":
        return GroundedBelief()
    if kind == "learned":
        # Deliberately lazy (allow-listed in tests/test_layers.py): torch only for this kind.
        from lbs_pz.search.beliefs.learned import LearnedBelief
        return LearnedBelief(checkpoint, blueprint=blueprint, **kwargs)
    raise ValueError(f"unknown belief {kind!r}; choose one of {', '.join(BELIEF_KINDS)}")


__all__ = ["Belief", "SeatInfo", "importance_weights", "ExactBelief", "FilteredBelief", "GroundedBelief", "LearnedBelief", "BELIEF_KINDS",
           "BeliefMemoryError", "default_checkpoint", "make_belief"]
