"""`compare`'s reports: one row per method (mean +- s.e.m., the paired difference to the
blueprint on the same deals, perfect-game rate, seconds per game, rollouts per second,
fallback and deviation rates), as a markdown table, JSON, and a plot of score against
seconds per game (the LBS paper's Figure 3).
"""

from __future__ import annotations

import json
import os
from typing import Dict, List

import numpy as np

from lbs_pz.files import write_atomic
from lbs_pz.search.stats import mean_sem


def summarize(results: Dict[str, List[dict]], max_score: int) -> List[dict]:
    """One row per method with games; the paired difference is against "blueprint" on
    the deals both played."""
    base = results.get("blueprint")
    rows = []
    for label, games in results.items():
        if not games:       # e.g. a method not yet in a logged run
            continue
        scores = np.array([g["score"] for g in games], dtype=np.float64)
        seconds = np.array([g["seconds"] for g in games])
        decisions = int(sum(g["decisions"] for g in games))
        mean, sem = mean_sem(scores)
        if label.startswith("lbs-") and not label.startswith("lbs-inf") and \
                any(g.get("depth") == -1 for g in games):
            label += " [no value for this blueprint: rollouts to the end]"
        row = {
            "method": label, "games": len(games), "mean": mean, "sem": sem,
            "perfect_rate": float(np.mean(scores == max_score)),
            "seconds_per_game": float(seconds.mean()),
            "rollouts_per_second": float(sum(g["rollouts"] for g in games)
                                         / max(seconds.sum(), 1e-9)),
            "decisions": decisions,
            "fallback_rate": float(sum(g["fallbacks"] for g in games) / max(1, decisions)),
            "deviation_rate": float(sum(g["deviations"] for g in games) / max(1, decisions)),
        }
        base_scores = {g["game"]: g["score"] for g in base or []}
        shared = [g for g in games if g["game"] in base_scores]
        if len(shared) > 1:   # paired on the deals both played
            diff = np.array([g["score"] - base_scores[g["game"]] for g in shared], dtype=np.float64)
            row["paired_diff"], row["paired_diff_se"] = mean_sem(diff)
        rows.append(row)
    return rows


def format_markdown(rows: List[dict]) -> str:
    lines = ["| method | games | mean +- s.e.m. | vs blueprint (paired) | perfect | s/game | "
             "rollouts/s | fallback | deviations |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        paired = (f"{r['paired_diff']:+.3f} +- {r['paired_diff_se']:.3f}"
                  if "paired_diff" in r and r["method"] != "blueprint" else "")
        lines.append(
            f"| {r['method']} | {r['games']} | {r['mean']:.3f} +- {r['sem']:.3f} | {paired} | "
            f"{100 * r['perfect_rate']:.1f}% | {r['seconds_per_game']:.2f} | "
            f"{r['rollouts_per_second']:,.0f} | {100 * r['fallback_rate']:.1f}% | "
            f"{100 * r['deviation_rate']:.1f}% |")
    return "\n".join(lines)


def check_plot_format(path: str, option: str = "plot") -> None:
    """ValueError unless matplotlib can write `path`'s format (its extension; none: png):
    checked before a run, so that the plot cannot fail at its end."""
    extension = os.path.splitext(path)[1][1:].lower()
    if not extension:
        return
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    if extension not in formats:
        raise ValueError(f"{option} {path!r}: matplotlib cannot write .{extension} files; "
                         f"use one of {', '.join(sorted(formats))}")


def plot(rows: List[dict], path: str) -> None:
    """Score against seconds per game (log scale), one point per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        ax.errorbar(max(r["seconds_per_game"], 1e-4), r["mean"], yerr=r["sem"], fmt="o", capsize=3)
        ax.annotate(r["method"], (max(r["seconds_per_game"], 1e-4), r["mean"]),
                    textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("seconds per game")
    ax.set_ylabel("mean score")
    ax.set_title("score vs search time")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_json(path: str, rows: List[dict], results: Dict[str, List[dict]], **meta) -> None:
    """The rows, the per-game results and `meta` (config, games, seed, ...) as JSON, written
    whole or not at all (`lbs_pz.files.write_atomic`)."""
    write_atomic(path, json.dumps({**meta, "rows": rows, "per_game": results},
                                  indent=1).encode("utf-8"), "--json")
