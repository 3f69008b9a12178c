"""Tests of lbs_pz.search: the SPARTA and LBS agents, beliefs, values, configs and builds."""
