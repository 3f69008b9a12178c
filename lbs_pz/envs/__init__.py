"""Environments: the PettingZoo AEC game (`hanabi_v0`), the Gymnasium self-play env
(`self_play`), and the argument checks every interface shares (`checks`: actions, seeds,
illegal-move handling, render modes)."""
