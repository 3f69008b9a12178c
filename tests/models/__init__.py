"""Tests of lbs_pz.models: the checkpoint layout and loader, the manifest of shipped models."""
