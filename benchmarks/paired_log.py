"""Paired differences between every two searches in a `lbs-pz compare --jsonl` log: for
each pair of logged searches of the same blueprint, game and run seed (methods or settings
differ), the mean of the per-deal score differences +- its s.e.m. over their shared deals.

    python benchmarks/paired_log.py results/margin_strong.jsonl
    python benchmarks/paired_log.py results/multiplayer_3p.jsonl --table

--table: one row per logged method instead (the blueprint's included): its deals, mean
score +- s.e.m., paired difference with the blueprint and with the first search logged
(the reference), seconds per game and deviation rate.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations

import numpy as np

from lbs_pz.eval.backends import read_log
from lbs_pz.files import readable_log
from lbs_pz.search.methods import MethodSpec


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="a compare --jsonl log")
    parser.add_argument("--table", action="store_true",
                        help="one row per method against the blueprint, then each search "
                             "against the first search logged")
    args = parser.parse_args(argv)
    if args.table:
        return table(read_log(readable_log(args.log)))
    scores = {}
    for entry in read_log(readable_log(args.log)):
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


def _label(spec: dict) -> str:
    method = MethodSpec.from_dict(spec)
    return "blueprint" if spec["method"] == "blueprint" else \
        f"{method.label()}, {method.rollouts} worlds"


def table(entries) -> int:
    """The --table report of the log's `entries`, one block per blueprint, game and seed:
    per method its deals, score, paired gain over the blueprint and paired difference
    with the first search logged (the reference), seconds per game and deviations."""
    groups = {}
    for entry in entries:
        spec, config, seed = json.loads(entry["key"])
        group = groups.setdefault((spec["blueprint"], config["players"], seed), {})
        group.setdefault(_label(spec), {})[entry["game"]] = entry["result"]
    for (blueprint, players, seed), methods in groups.items():
        searches = [label for label in methods if label != "blueprint"]
        reference = searches[0] if searches else "blueprint"
        print(f"{blueprint}, {players} players, run seed {seed}; paired on shared deals "
              f"with the blueprint and with {reference}:")
        print("| method | deals | score | vs blueprint | vs reference | s/game | deviations |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, results in methods.items():
            scores = np.array([r["score"] for r in results.values()], dtype=float)
            decisions = sum(r["decisions"] for r in results.values())
            print(f"| {label} | {len(scores)} | {_mean_sem(scores)} | "
                  f"{_paired(results, methods.get('blueprint', {}), label == 'blueprint')} | "
                  f"{_paired(results, methods[reference], label in ('blueprint', reference))} | "
                  f"{np.mean([r['seconds'] for r in results.values()]):.2f} | "
                  f"{sum(r['deviations'] for r in results.values()) / max(decisions, 1):.1%} |")
        print()
    return 0


def _paired(results: dict, base: dict, skip: bool) -> str:
    """mean +- s.e.m. of results' score minus base's over their shared deals."""
    if skip:
        return ""
    shared = sorted(set(results) & set(base))
    return _mean_sem(np.array([results[g]["score"] - base[g]["score"] for g in shared],
                              dtype=float), "+")


def _mean_sem(x: np.ndarray, sign: str = "") -> str:
    if len(x) < 2:
        return f"{x.mean():{sign}.3f}" if len(x) else "-"
    return f"{x.mean():{sign}.3f} +- {x.std(ddof=1) / np.sqrt(len(x)):.3f}"


def _pair(group: str, a: str, b: str, scores_a: dict, scores_b: dict) -> None:
    shared = sorted(set(scores_a) & set(scores_b))
    if len(shared) < 2:
        return
    d = np.array([scores_a[g] - scores_b[g] for g in shared], dtype=float)
    print(f"| {group} | {a} | {b} | {len(d)} | {d.mean():+.3f} +- "
          f"{d.std(ddof=1) / np.sqrt(len(d)):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
