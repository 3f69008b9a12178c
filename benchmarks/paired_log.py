"""Paired differences between every two searches in a `lbs-pz compare --jsonl` log: for
each pair of logged searches of the same blueprint, game and run seed (methods or settings
differ), the mean of the per-deal score differences +- its s.e.m. over their shared deals.

    python benchmarks/paired_log.py results/margin_strong.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations

import numpy as np

from lbs_pz.eval.backends import read_log
from lbs_pz.search.methods import MethodSpec


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="a compare --jsonl log")
    args = parser.parse_args(argv)
    scores = {}
    for entry in read_log(args.log):
        spec, config, seed = json.loads(entry["key"])
        if spec["method"] == "blueprint":
            continue
        method = MethodSpec.from_dict(spec)
        group = (spec["blueprint"], json.dumps(config, sort_keys=True), seed)
        label = f"{method.label()}, {method.rollouts} worlds"
        scores.setdefault(group, {}).setdefault(label, {})[entry["game"]] = \
            entry["result"]["score"]
    print("| blueprint | A | B | deals | A - B (paired) |")
    print("|---|---|---|---:|---:|")
    for (blueprint, _, seed), searches in scores.items():
        for a, b in combinations(sorted(searches), 2):
            _pair(f"{blueprint} (seed {seed})", a, b, searches[a], searches[b])
    return 0


def _pair(group: str, a: str, b: str, scores_a: dict, scores_b: dict) -> None:
    shared = sorted(set(scores_a) & set(scores_b))
    if len(shared) < 2:
        return
    d = np.array([scores_a[g] - scores_b[g] for g in shared], dtype=float)
    print(f"| {group} | {a} | {b} | {len(d)} | {d.mean():+.3f} +- "
          f"{d.std(ddof=1) / np.sqrt(len(d)):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
