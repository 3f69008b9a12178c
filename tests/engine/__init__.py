"""Tests of lbs_pz.engine: the state, the batch, moves and views, records, seeds, HLE replays."""
