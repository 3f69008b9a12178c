"""Tests of lbs_pz.agents: the protocols, blueprint specs, rule bots, features and every
kind of blueprint (public-LSTM, HLE, RLlib, SB3, a user's Python class)."""
