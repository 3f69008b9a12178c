"""`lbs-pz paper`: the LBS paper's tables, reproduced and extended, in one command.

Table 1 (variants: 5-card, 6-card, 7-card with at most 4 information tokens; blueprint,
SPARTA and LBS-16 on the strong bot, with the share of SPARTA's gain LBS keeps and its
speed-up), Table 2 (rows blueprint, SPARTA, LBS-inf, LBS-32 .. LBS-1; columns blueprints
of increasing strength; the default belief and, where one ships, the learned belief
alone), the rows beyond the paper (LBS on both seats; a fixed budget of rollout steps
split between depth and worlds; the highest score: the search chosen for it on deals no
figure uses, on every seat), and the beliefs' cross-entropy over the course of the strong
bot's games (exact, grounded, learned). See `lbs_pz.eval.paper`.

    lbs-pz paper --quick                    # ~15 minutes on 2 cores: a few deals per cell
    lbs-pz paper --full --workers 2         # many hours; what RESULTS.md quotes
    lbs-pz paper --full --report-only       # the tables of the games played so far
    lbs-pz paper --tiny                     # seconds: a 3-colour game, the same code paths

Every game goes to OUT/games.jsonl: run the same command again after an interrupt and
only the missing games are played. A finished run's log is kept gzipped
(OUT/games.jsonl.gz, as results/paper_full/ in the repository): --report-only reads it
when OUT/games.jsonl is missing, and a run starts OUT/games.jsonl from it. The cells
play in passes: first those of the headline figures to all their deals, then the others
to 20, to 100, then to all; after each pass the tables (OUT/paper.md), OUT/paper.json and
the figures (OUT/time_score_*.png, OUT/belief_quality.png) are rewritten, so a long run
stopped at any point has every table. At the end it prints Table 1 and each figure the
run is judged by against its target. SPARTA whose exact belief would not fit its memory
cap is not run, and its cell says why. Every table, figure and cache is written whole or
not at all (a temporary file renamed over it), so a run killed at any moment resumes.

OUT belongs to one run (size and seed): the belief it retrains on LBS-16's games
(OUT/belief_on_lbs.pt) records the run, the game and the strong bot it was made for, and
a run finding another run's belief there, or another run's recorded games
(OUT/lbs_games.jsonl) when it has no belief yet, stops at once saying whose they are;
delete them to retrain here, or give the run another --out. A damaged cache of the
belief curves (OUT/belief_curves.json) stops the run the same way: delete it to compute
the curves again.

Each game records the machine that timed it (a game logged before games did is played
again once, to be timed), and Table 1's speed-up divides SPARTA's seconds by LBS-16's
on the deals both played on one machine, naming it: timings depend on the CPU (the nets
run several times faster with AMX).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

from lbs_pz.agents import RuleBot, blueprint_identity
from lbs_pz.cli.options import add_seed_option, check_output_path, interrupted, one_interrupt
from lbs_pz.eval.backends import BACKENDS
from lbs_pz.eval.belief_quality import phase_table
from lbs_pz.eval.paper import (CURVES, RETRAINED_BELIEF, RETRAINED_GAMES, SIZES, belief_curves,
                               build_report, check_outputs, check_retrained, headline, plan,
                               retrain_game, retrain_spec, retrained_made_for, run_cells,
                               write_report)
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.files import make_folder, readable_log
from lbs_pz.models import find_model
from lbs_pz.models.checkpoint import read as read_checkpoint, write as write_checkpoint
from lbs_pz.optional import torch_available
from lbs_pz.train.configs import BeliefTrainConfig


def retrain_belief(size: str, out: str, seed: int, workers, progress: bool) -> None:
    """OUT/belief_on_lbs.pt: the strong bot's belief retrained on LBS-16's own games (the
    LBS paper's first future direction: the search leads its games where the blueprint's
    never go, so a belief trained on the blueprint's games alone is off there). LBS-16
    (`retrain_spec`) plays `retrain_games` training deals into OUT/lbs_games.jsonl
    (resumable); then `lbs-pz train-belief` starts from the shipped belief (none ships
    for the tiny game: from scratch) and replays those games in half of each of
    `retrain_steps` steps (`--search-games`). The checkpoint records the run that made it
    (info["paper"], `retrained_made_for`). Nothing is done when the belief exists: the
    run checked it at its start (`check_retrained`)."""
    path = os.path.join(out, RETRAINED_BELIEF)
    if os.path.exists(path):
        return
    from lbs_pz.train.belief import train_belief    # torch: only when a run trains
    sz = SIZES[size]
    game = retrain_game(size)
    games = os.path.join(out, RETRAINED_GAMES)
    record_search_games(retrain_spec(size), sz.retrain_games, games, dataclasses.asdict(game),
                        seed=seed, workers=workers or os.cpu_count() or 1,
                        log=print if progress else (lambda *_: None))
    start = find_model("belief", blueprint_identity(RuleBot("strong")), game)
    tc = BeliefTrainConfig(
        blueprint="strong", players=game.players, hand_size=game.hand_size,
        colors=game.colors, ranks=game.ranks, steps=sz.retrain_steps, minutes=0.0,
        lr=3e-4 if start else 1e-3, lr_final=3e-5 if start else 1e-4,
        val_every=max(1, sz.retrain_steps // 5), seed=seed, init=start or "",
        search_games=games, out=path + ".partial", half=True, curve="none",
        progress=progress)
    train_belief(tc, log=print if progress else (lambda *_: None))
    ckpt = read_checkpoint(tc.out, "lbs_pz belief")
    ckpt["info"] = dict(ckpt["info"], paper=retrained_made_for(size, seed))
    try:                                        # whole or absent: a stopped run retrains
        write_checkpoint(path, ckpt)
    except (OSError, RuntimeError) as err:      # torch says a failed write in RuntimeError
        reason = (str(err).splitlines() or [type(err).__name__])[0][:120]
        raise ValueError(f"--out {path!r}: writing the retrained belief failed ({reason}); "
                         f"run again to retrain it") from None
    os.remove(tc.out)


def run_folder(out: str, report_only: bool) -> None:
    """The run's folder `out`, made if missing: ValueError (one line) if something other
    than a folder is there or it cannot be made; SystemExit with --report-only if it holds
    no games log."""
    if os.path.lexists(out) and not os.path.isdir(out):
        raise ValueError(f"--out {out!r} is a file, not a folder: paper writes its games log, "
                         f"tables and figures into a folder; give the path of a folder (new "
                         f"or existing)")
    log = os.path.join(out, "games.jsonl")
    if report_only and not os.path.isfile(readable_log(log)):
        raise SystemExit(f"lbs-pz paper: error: --report-only reads {log}, which does not "
                         f"exist: run without --report-only first")
    make_folder(out, "--out")


def run(args) -> int:
    size = "full" if args.full else "tiny" if args.tiny else "quick"
    out = args.out or os.path.join("results", f"paper_{size}")
    log = os.path.join(out, "games.jsonl")
    run_folder(out, args.report_only)
    check_output_path(log, "--out")
    # in OUT: the log keys it as "<log folder>/belief_on_lbs.pt", so a moved run resumes
    retrained = os.path.join(out, RETRAINED_BELIEF) if torch_available() else None
    cells = plan(size, retrained)
    # every file the run writes, and the artefacts it resumes from, before a game is played
    check_outputs(out, cells)
    if retrained:
        check_retrained(out, size, args.seed, play=not args.report_only)
    curves = belief_curves(size, args.seed, progress=False, cache=os.path.join(out, CURVES),
                           play=False)
    start = time.perf_counter()
    curves_done = False

    def on_cell(i, n, cell, deals):
        if not args.no_progress:
            print(f"[{i + 1}/{n}] {cell.table}: {cell.spec.label()} on {cell.spec.blueprint}, "
                  f"{cell.variant}, playing to {deals} of {cell.deals} deals "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)

    def on_pass(k, n, results):
        nonlocal curves, curves_done
        if not curves_done:     # after the headline cells: the figure they are judged with
            curves_done = True
            if curves is None and not args.report_only:
                curves = belief_curves(size, args.seed, progress=not args.no_progress,
                                       cache=os.path.join(out, CURVES))
            if retrained and not args.report_only:      # before the pass that plays it
                retrain_belief(size, out, args.seed, args.workers, not args.no_progress)
        report = build_report(cells, results)
        meta = {"size": size, "seed": args.seed, "sizes": SIZES[size].__dict__,
                "passes_done": k + 1, "passes": n, "seconds": time.perf_counter() - start}
        written = write_report(report, out, meta, curves)
        if k + 1 < n:
            if not args.no_progress:
                print(f"pass {k + 1} of {n} done: tables so far in {written[0]}", flush=True)
            return
        print(headline(report, curves))
        if curves is not None:
            print(f"\nBelief quality, the strong bot's {len(curves['scores'])} games:\n"
                  f"{phase_table(curves)}\n")
        for path in written:
            print(f"wrote {path}")
    try:
        with one_interrupt():
            run_cells(cells, readable_log(log) if args.report_only else log, seed=args.seed,
                      backend=args.backend, workers=args.workers,
                      progress=not args.no_progress, on_cell=on_cell, on_pass=on_pass,
                      play=not args.report_only)
    except KeyboardInterrupt:
        return interrupted("paper", f"the games finished are in {log}; run the same command "
                                    f"again to continue")
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
    p.add_argument("--report-only", action="store_true",
                   help="play nothing: the tables and figures of the games OUT/games.jsonl "
                        "holds (a run still under way or stopped)")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="process",
                   help="where games run (default process)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default: every core)")
    add_seed_option(p, "run seed of the evaluation deals")
    p.add_argument("--no-progress", action="store_true", help="no progress lines or bars")
    p.set_defaults(func=run)
    return p
