"""Tests of lbs_pz.train: the training loop, the trainers, their game sources and boards."""
