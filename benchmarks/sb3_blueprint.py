#!/usr/bin/env python
"""LBS on top of a Stable-Baselines3 blueprint: a saved MaskablePPO (or PPO / DQN) policy,
alone and with search on seat 0, on the same 2-player deals, through `lbs-pz compare
--blueprint sb3:PATH`.

    python benchmarks/sb3_blueprint.py --games 200 --rollouts 64 --methods blueprint,lbs-1,lbs-4
    python benchmarks/sb3_blueprint.py --model my_dqn.zip --methods blueprint,lbs-inf

The policy is loaded with `lbs_pz.agents.sb3_policy.SB3Blueprint` (greedy, legal moves
only, its critic as the bootstrap value of LBS-k). The belief defaults to the grounded one,
which needs no training: the shipped learned belief models the strong rule bot, not this
policy. Every other option is `lbs-pz compare`'s (see `lbs-pz compare --help`).
"""

import sys
from pathlib import Path


from lbs_pz.cli import main

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "results" / "maskable_ppo_2p" / "model.zip"
DEFAULTS = {"--methods": "blueprint,lbs-1", "--games": "300", "--rollouts": "128",
            "--belief": "grounded"}

if __name__ == "__main__":
    user = sys.argv[1:]
    model = DEFAULT_MODEL
    if "--model" in user:
        i = user.index("--model")
        model = Path(user[i + 1])
        del user[i:i + 2]
    if not model.is_file():
        sys.exit(f"{model} does not exist; train it with\n    python examples/train_maskable_ppo.py "
                 f"--minutes 30 --out results/maskable_ppo_2p\nor pass --model PATH")
    extra = [x for key, value in DEFAULTS.items() if key not in user for x in (key, value)]
    sys.exit(main(["compare", "--blueprint", f"sb3:{model}", *extra, *user]))
