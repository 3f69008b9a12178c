"""lbs_pz: a Hanabi research toolkit built around a fast, exact Cython engine.

Importing the package registers the environments and nothing else:
    pettingzoo.make("aec", "lbs_pz/Hanabi-v0", players=3)
    gymnasium.make("lbs_pz/HanabiSelfPlay-v0")
Entry points are strings, so the envs (and the engine) load on first use.
"""

import gymnasium
import pettingzoo

__version__ = "0.1.0"


def _register_envs() -> None:
    if "lbs_pz/Hanabi-v0" not in pettingzoo.aec_registry:
        pettingzoo.register("aec", "lbs_pz/Hanabi-v0", entry_point="lbs_pz.envs.hanabi_v0:env")
    if "lbs_pz/HanabiSelfPlay-v0" not in gymnasium.registry:
        gymnasium.register("lbs_pz/HanabiSelfPlay-v0",
                           entry_point="lbs_pz.envs.self_play:HanabiSelfPlayEnv")


_register_envs()
