"""Tests of lbs_pz.eval: game logs, recorded search games and the paper's tables."""
