"""Observation wrappers and adapters for RL libraries."""

from lbs_pz.wrappers.public_private import PublicPrivateObservation

__all__ = ["PublicPrivateObservation"]
