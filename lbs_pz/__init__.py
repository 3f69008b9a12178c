"""lbs_pz: a Hanabi research toolkit built around a fast, exact Cython engine.

Importing the package stays light: subpackages are imported on first use.
"""

__version__ = "0.1.0"
