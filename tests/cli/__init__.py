"""Tests of lbs_pz.cli: the `lbs-pz` command and its subcommands, run as a user runs them."""
