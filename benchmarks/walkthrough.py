#!/usr/bin/env python
"""The README's "bring your own blueprint" walk-through, timed step by step.

Runs, as shell commands, exactly what the README shows for
`py:examples/my_blueprint.py:HintPlayDiscard`: its self-play score (`lbs-pz eval`), a learned
belief and a value trained for it (`train-belief`, `train-value`), then `lbs-pz compare`
of the blueprint against LBS-16 using both, on the same evaluation deals. Prints each
step's command, wall-clock seconds and output.

    python benchmarks/walkthrough.py --quick           # a few minutes: tiny sizes
    python benchmarks/walkthrough.py                   # the README's sizes: about 17 minutes
"""

import argparse
import os
import shlex
import subprocess
import sys
import time

SPEC = "py:examples/my_blueprint.py:HintPlayDiscard"


def step(title: str, command: str) -> float:
    print(f"\n### {title}\n\n$ {command}", flush=True)
    start = time.perf_counter()
    proc = subprocess.run(command, shell=True, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    print(proc.stdout.rstrip())
    print(f"[{seconds:.1f} s, exit code {proc.returncode}]", flush=True)
    if proc.returncode != 0:
        sys.exit(f"step failed: {command}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--eval-games", type=int, default=1000)
    parser.add_argument("--belief-minutes", type=float, default=10.0)
    parser.add_argument("--value-minutes", type=float, default=5.0)
    parser.add_argument("--games", type=int, default=20, help="compare: games per method")
    parser.add_argument("--rollouts", type=int, default=64, help="compare: worlds per decision")
    parser.add_argument("--out", default="results/walkthrough", help="folder for the checkpoints")
    args = parser.parse_args(argv)
    if args.quick:
        args.eval_games, args.belief_minutes, args.value_minutes = 200, 0.5, 0.5
        args.games, args.rollouts = 1, 16
    os.makedirs(args.out, exist_ok=True)
    belief, value = (shlex.quote(os.path.join(args.out, name))
                     for name in ("my_belief.pt", "my_value.pt"))
    threads = "--threads 1 --no-progress"
    times = {
        "eval": step("1. the blueprint's self-play score",
                     f"lbs-pz eval --blueprint {SPEC} --games {args.eval_games} --no-progress"),
        "train-belief": step("2. a learned belief for it",
                             f"lbs-pz train-belief --blueprint {SPEC} --minutes "
                             f"{args.belief_minutes} {threads} --out {belief}"),
        "train-value": step("3. a value for it",
                            f"lbs-pz train-value --blueprint {SPEC} --minutes "
                            f"{args.value_minutes} {threads} --out {value}"),
        "compare": step("4. LBS-16 on top of it, same evaluation deals",
                        f"lbs-pz compare --blueprint {SPEC} --methods blueprint,lbs-16 "
                        f"--games {args.games} --rollouts {args.rollouts} --backend inline "
                        f"--no-progress --belief-checkpoint {belief} --value-checkpoint {value}"),
    }
    print("\n| step | seconds |\n|---|---:|")
    for name, seconds in times.items():
        print(f"| {name} | {seconds:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
