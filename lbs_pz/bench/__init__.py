"""Benchmarks of lbs_pz (throughput measurements; run them via the scripts in benchmarks/)."""
