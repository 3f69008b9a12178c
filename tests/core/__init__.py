"""Tests of what every layer shares: lbs_pz.checks, lbs_pz.optional, the fuzzing of the public
API and of what lbs_pz reads from files, misuses across layers."""
