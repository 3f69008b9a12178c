"""`lbs-pz paper`: the LBS paper's tables, reproduced and extended, in one command.

Table 1 (variants: 5-card, 6-card, 7-card with at most 4 information tokens; blueprint,
SPARTA and LBS-16 on the strong bot, with the share of SPARTA's gain LBS keeps and its
speed-up), Table 2 (rows blueprint, SPARTA, LBS-inf, LBS-32 .. LBS-1; columns blueprints
of increasing strength; the default belief and, where one ships, the learned belief
alone), the rows beyond the paper (LBS on both seats; a fixed budget of rollout steps
split between depth and worlds), and the beliefs' cross-entropy over the course of the
strong bot's games (exact, grounded, learned). See `lbs_pz.eval.paper`.

    lbs-pz paper --quick                    # minutes: a few deals per cell
    lbs-pz paper --full --workers 2         # hours; what RESULTS.md quotes
    lbs-pz paper --tiny                     # seconds: a 3-colour game, the same code paths

Every game goes to OUT/games.jsonl: run the same command again after an interrupt and
only the missing games are played; the tables, OUT/paper.json and the figures
(OUT/time_score_*.png, OUT/belief_quality.png) are rebuilt from the log. SPARTA whose exact belief would not fit
its memory cap is not run, and its cell says why.
"""

from __future__ import annotations

import argparse
import os
import time

from lbs_pz.cli.options import add_seed_option, check_output_path, interrupted, one_interrupt
from lbs_pz.eval.backends import BACKENDS
from lbs_pz.eval.belief_quality import phase_table
from lbs_pz.eval.paper import SIZES, belief_curves, build_report, plan, run_cells, write_report


def run(args) -> int:
    size = "full" if args.full else "tiny" if args.tiny else "quick"
    out = args.out or os.path.join("results", f"paper_{size}")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "games.jsonl")
    check_output_path(log, "--out")
    cells = plan(size)
    start = time.perf_counter()

    def on_cell(i, n, cell):
        if not args.no_progress:
            print(f"[{i + 1}/{n}] {cell.table}: {cell.spec.label()} on {cell.spec.blueprint}, "
                  f"{cell.variant}, {cell.deals} deals ({time.perf_counter() - start:.0f} s)",
                  flush=True)
    try:
        with one_interrupt():
            results = run_cells(cells, log, seed=args.seed, backend=args.backend,
                                workers=args.workers, progress=not args.no_progress,
                                on_cell=on_cell)
    except KeyboardInterrupt:
        return interrupted("paper", f"the games finished are in {log}; run the same command "
                                    f"again to continue")
    report = build_report(cells, results)
    print(report["markdown"])
    curves = belief_curves(size, args.seed, progress=not args.no_progress)
    print(f"\nBelief quality, the strong bot's {len(curves['scores'])} games:\n"
          f"{phase_table(curves)}")
    meta = {"size": size, "seed": args.seed, "sizes": SIZES[size].__dict__,
            "seconds": time.perf_counter() - start}
    for path in write_report(report, out, meta, curves):
        print(f"wrote {path}")
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("paper", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              help="the LBS paper's tables and figures, reproduced and extended "
                                   "(resumable)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a few deals per cell (default)")
    size.add_argument("--full", action="store_true",
                      help="the deals RESULTS.md quotes (hours; resumable)")
    size.add_argument("--tiny", action="store_true",
                      help="a 3-colour, 3-rank game, 2-3 deals per cell (seconds)")
    p.add_argument("--out", default="", metavar="DIR",
                   help="folder of the games log, tables, JSON and figures (default "
                        "results/paper_SIZE)")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="process",
                   help="where games run (default process)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default: every core)")
    add_seed_option(p, "run seed of the evaluation deals")
    p.add_argument("--no-progress", action="store_true", help="no progress lines or bars")
    p.set_defaults(func=run)
    return p
