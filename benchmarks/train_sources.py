"""train-belief's games per second with its games played in this process and on 1 and 2
Ray workers (a local Ray), the same run otherwise (`lbs_pz.train.games.GameSource`); with
--teacher-games N, `lbs-pz improve`'s teacher games instead.

    OMP_NUM_THREADS=1 python benchmarks/train_sources.py --steps 40
    OMP_NUM_THREADS=1 python benchmarks/train_sources.py \
        --blueprint lstm:conventions_expert_value_2p
    OMP_NUM_THREADS=1 python benchmarks/train_sources.py --teacher-games 8

The learner runs in this process either way; the workers play the next steps' games while
it updates, so they help as far as playing the games, not the update, is the cost (a rule
bot's games are cheap next to the update; a neural blueprint's are not) and as far as
cores are free beside the learner.

Each row is one `train_belief` run of --steps steps of --games-per-step games on the
strong bot (torch on one thread, no validation between the first and the last step);
games per second counts the training games over the run's own clock. The final weights
of every run are compared with the in-process run's: the sources give the same data.

--teacher-games N: improve's default teacher (LBS-16 at 32 worlds over the default student,
lstm:conventions_expert_value_2p, one seat turned by the game's index, every other setting
resolved) records training games 0 .. N-1 of run seed 0
(`lbs_pz.eval.search_games.record_search_games`) in this process, on 2 worker processes
and on 2 workers of a local Ray; games per second over each run's wall clock (the
workers' start included), and whether each run recorded the in-process run's games.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time

import torch

from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.cli.improve import TEACHER_ROLLOUTS
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import read_search_games
from lbs_pz.train.belief import train_belief
from lbs_pz.train.configs import BeliefTrainConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=40, help="update steps per run")
    parser.add_argument("--games-per-step", type=int, default=32)
    parser.add_argument("--blueprint", default="strong")
    parser.add_argument("--teacher-games", type=int, default=0, metavar="N",
                        help="time improve's teacher games instead (N games per run)")
    args = parser.parse_args()
    if args.teacher_games:
        return teacher_games(args.teacher_games)
    runs = [("inline", 0), ("ray", 1), ("ray", 2)]
    rows, weights = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, workers in runs:
            out = os.path.join(tmp, f"{backend}{workers}.pt")
            train_belief(BeliefTrainConfig(
                blueprint=args.blueprint, steps=args.steps, minutes=0.0,
                games_per_step=args.games_per_step, val_every=args.steps, val_games=32,
                threads=1, backend=backend, workers=workers, out=out, curve="none",
                progress=False), log=lambda s: None)
            info = load_checkpoint(out)["info"]
            weights[(backend, workers)] = load_checkpoint(out)["weights"]
            rows.append((backend, workers, info["games"], info["seconds"]))
    base = weights[("inline", 0)]
    print(f"\n{args.blueprint}, {args.steps} steps of {args.games_per_step} games:\n")
    print("| source | workers | games | seconds | games/s | same weights as in-process |")
    print("|---|---:|---:|---:|---:|---|")
    for backend, workers, games, seconds in rows:
        same = all(torch.equal(base[k], v) for k, v in weights[(backend, workers)].items())
        print(f"| {backend} | {workers or '-'} | {games} | {seconds:.1f} | "
              f"{games / seconds:.1f} | {'yes' if same else 'NO'} |")



def teacher_games(games: int) -> None:
    """improve's teacher games per second from each source (see the module)."""
    blueprint = "lstm:conventions_expert_value_2p"
    spec = MethodSpec("lbs-16", blueprint=blueprint, search=SearchConfig(rollouts=TEACHER_ROLLOUTS))
    game = dataclasses.asdict(HanabiConfig())
    rows, recorded = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, workers in (("inline", 1), ("process", 2), ("ray", 2)):
            out = os.path.join(tmp, f"{backend}{workers}.jsonl")
            start = time.perf_counter()
            record_search_games(spec, games, out, game, workers=workers, backend=backend,
                                log=lambda s: None)
            seconds = time.perf_counter() - start
            recorded[backend] = sorted((g["game"], g["moves"]) for g in read_search_games(out))
            rows.append((backend, workers, seconds))
    print(f"\nimprove's teacher, {spec.label()} on {blueprint}, {games} training games:\n")
    print("| source | workers | seconds | games/s | same games as in-process |")
    print("|---|---:|---:|---:|---|")
    for backend, workers, seconds in rows:
        same = recorded[backend] == recorded["inline"]
        print(f"| {backend} | {workers} | {seconds:.1f} | {games / seconds:.2f} | "
              f"{'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
