"""Environments: the PettingZoo AEC game and the Gymnasium self-play env."""
