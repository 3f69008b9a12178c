"""Pretrained weights shipped with lbs_pz (package data; see README.md in this folder)."""

import os

MODELS_DIR = os.path.dirname(os.path.abspath(__file__))


def path(name: str) -> str:
    """Absolute path of a shipped model file."""
    return os.path.join(MODELS_DIR, name)
