"""`lbs-pz improve`: a public-LSTM blueprint improved by its own search, in rounds (expert
iteration, Anthony et al. 2017), every step resumable.

    lbs-pz improve --out results/improve --rounds 5 --workers 2
    lbs-pz improve --out results/improve --rounds 5 --workers 2   # again: goes on
    lbs-pz improve --student lstm:mine.pt --out DIR

Round K (K = 1, 2, ...) starts from the last kept student (round 0: --student) and
1. teacher_games: records --games-per-round games of the teacher search (--teacher, lbs-16
   by default, 32 worlds, the other search options resolved) over --teacher-blueprint
   ('student' by default: the current student, searched with its own belief, so that
   every move the search keeps is the student's own and its deviations are what the
   student should change; or a fixed blueprint, whose search must then play every seat)
   on TRAINING deals (K-1)*G .. K*G-1 of run --seed
   (`lbs_pz.eval.search_games.record_search_games`: the search at --search-seats, one
   seat by default, turned by the game's index, the student at the others) into
   OUT/round_K/teacher_games.jsonl (gzipped once the round is over);
2. distill: distils the teacher's games of round K and of the latest rounds before it,
   up to DISTILL_GAMES = 1,500 games (as many as the hand-run round distilled), into the
   student (`lbs_pz.train.distill`), starting from its weights: half of every batch the
   search's games with its deviations weighted, the other half the student's own
   self-play (its own moves: the anchor for positions the search never reached):
   OUT/round_K/student.train.pt (the trainer's checkpoint, which a step cut short
   resumes from) and its slim float16 copy OUT/round_K/student.pt, the student that is
   evaluated, searched, shipped and started from. The defaults (--deviation-weight 30,
   --search-fraction 0.5, --lr 3e-4, --updates 600) are
   those of the one round run by hand (docs/experiments/expert_iteration.md);
3. eval: greedy self-play of the new student on EVALUATION deals 0 .. --eval-games - 1 of
   run --seed, paired with the last kept student on the same deals (OUT/round_K/eval.json).
   It is also played on TUNING deals (the evaluation deals of run --seed + 1), paired the
   same way; the round is kept if its paired gain THERE is > 0 (so the reported scores
   are not the ones a round was chosen on); otherwise the next round starts from the last
   kept student again, and the run stops after --patience rounds in a row without a gain;
4. belief (kept rounds only): trains the new student's learned belief
   (`lbs_pz.train.belief`) from the previous one (the last kept round's, else the one
   given or shipped for --student; none: from scratch): OUT/round_K/belief.train.pt and
   its slim copy OUT/round_K/belief.pt, the belief
   a search over this student uses (given explicitly to the next round's teacher with
   --teacher-blueprint student). No value is trained: a public-LSTM net carries its own
   value head (distill fits it), which LBS bootstraps with.

OUT/improve.json is written whole after every step: the command, the settings, each
finished step of each round (its CPU seconds: this process and its waited-for children;
not Ray workers) and per round its score, paired gain +- s.e., games, core-hours and
whether it was kept. At the end: OUT/rounds.md (the round table) and OUT/rounds.png (the
score per round). With --tensorboard DIR, each round's score, gains, games, core-hours and
whether it was kept are scalars in DIR (`tensorboard --logdir DIR`; the round the step;
every finished round written again by each invocation), and its distill and train-belief
write theirs to DIR/round_K/distill and DIR/round_K/belief. `lbs-pz improve --out OUT
--report-only` prints the table from improve.json alone (no other option needed; nothing
is played).

Resume: run the same command again. Finished steps are skipped (a finished round is never
replayed); a step cut short continues: the games log plays only the missing games, and
distill and train-belief go on from their last checkpoint (--resume of the partial
OUT/round_K/student.train.pt or belief.train.pt; a checkpoint is written every few
minutes and on Ctrl-C). A finished round keeps only what later rounds and a reader need
(`Improve.tidy`): its slim student and belief, its evaluation, its teacher's games
gzipped. --rounds and --patience may be raised to go on with more rounds, and --workers,
--backend, --address changed; any other option that differs from the run in OUT is
refused, naming it. Every path (the rounds' students) is recorded as --out spells it:
resume from the same folder with the same --out.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import resource
import shlex
import sys
import time
import warnings
from typing import Callable, List, Optional

import numpy as np

from lbs_pz.agents import blueprint_identity, load_blueprint
from lbs_pz.cli.options import (add_backend_options, add_game_options, add_search_options,
                                add_search_seats_option, add_seed_option, check_backend,
                                finite_float_at_least, game_from, int_at_least, interrupted,
                                one_interrupt, search_config, search_seats_from)
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.evaluate import played_chunks
from lbs_pz.eval.search_games import record_search_games
from lbs_pz.files import gzip_log, open_locked, open_log, readable_log, replaced, write_atomic
from lbs_pz.models import find_model
from lbs_pz.models.checkpoint import describe_game, same_game, slim_copy
from lbs_pz.search.build import describe
from lbs_pz.search.methods import MethodSpec, parse_method
from lbs_pz.search.recorded_games import read_search_games
from lbs_pz.search.stats import mean_sem
from lbs_pz.train.board import Board, check_board
from lbs_pz.train.configs import BeliefTrainConfig, DistillConfig

STATE = "improve.json"
LOCK = "improve.lock"       # held (flock) while a run works in OUT
# options that may change between two invocations of one run: they do not change the
# results of a round (every backend plays the same games; --out is the run itself), or
# only how far the run goes (--rounds, --patience)
FREE_OPTIONS = ("rounds", "patience", "out", "workers", "backend", "address", "no_progress",
                "tensorboard", "report_only", "func", "command", "improve_parser")
# the round run by hand, docs/experiments/expert_iteration.md
EXPERT_ITERATION = dict(deviation_weight=30.0, search_fraction=0.5, lr=3e-4, updates=600)
STUDENT = "student"      # --teacher-blueprint: the teacher searches over the current student
# recorded games a round distils at most: as many as the hand-run round distilled, 1,475
# (expert_iteration.md); about 210 KB of features a game in memory
DISTILL_GAMES = 1500
# the teacher's worlds per decision: the hand-run round's (LBS-16 over the net at 256 worlds
# takes about 100 s a game on one core, at 32 about 15 s: benchmarks/train_sources.py)
TEACHER_ROLLOUTS = 32
BELIEF_MINUTES = 15.0   # belief_conventions_expert_2p's train-belief run (manifest command)
# a round's record written to --tensorboard (as "round/NAME", the round the step; and
# "round/kept", 1 or 0)
ROUND_SCALARS = ("score", "gain", "tuning_gain", "games", "core_hours")


# --- the run's record --------------------------------------------------------------------------

def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (process workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def settings_of(args) -> dict:
    """The options that define a run (all but FREE_OPTIONS), as JSON."""
    return {k: v for k, v in sorted(vars(args).items()) if k not in FREE_OPTIONS}


def load_state(out: str, args) -> dict:
    """OUT/improve.json of this run, or a new one; ValueError (one line) if OUT holds a
    run of other options, naming them."""
    path = os.path.join(out, STATE)
    settings = settings_of(args)
    if not os.path.exists(path):
        return {"command": command_of(args), "settings": settings, "rounds": {},
                "stopped": None}
    try:
        with open(path) as f:
            state = json.load(f)
        held = state["settings"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"--out {out!r}: {path} is not a run record of lbs-pz improve "
                         f"({type(err).__name__}); delete it or give another --out") from None
    differ = [k for k in sorted(set(held) | set(settings)) if held.get(k) != settings.get(k)]
    if differ:
        shown = ", ".join(f"--{k.replace('_', '-')} {held.get(k)!r} there, {settings.get(k)!r} "
                          f"now" for k in differ)
        raise ValueError(f"--out {out!r} holds a run of other options ({shown}); run its "
                         f"command ({state.get('command')}) to continue it, or give another "
                         f"--out")
    state["command"] = command_of(args)
    return state


# spelled out in a run's command even at their defaults: what the run teaches and how much,
# so that the command still names the run after a default changes
SPELLED_OUT = ("out", "student", "teacher", "teacher_blueprint", "search_seats", "rollouts",
               "games_per_round", "eval_games")


def command_of(args) -> str:
    """The `lbs-pz improve` line of `args`: SPELLED_OUT and the options that differ from
    their defaults."""
    defaults = vars(args.improve_parser.parse_args([]))
    parts = ["lbs-pz improve"]
    for key, value in vars(args).items():
        if key in ("func", "command", "improve_parser") or (
                value == defaults.get(key) and key not in SPELLED_OUT):
            continue
        flag = "--" + key.replace("_", "-")
        parts.append(flag if value is True else f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def save_state(out: str, state: dict) -> None:
    write_atomic(os.path.join(out, STATE), (json.dumps(state, indent=1) + "\n").encode())


def round_dir(out: str, k: int) -> str:
    return os.path.join(out, f"round_{k}")


# --- checks before any work ---------------------------------------------------------------------

def check_variant(spec: str, game: HanabiConfig, option: str) -> None:
    """ValueError (one line) if the blueprint `spec` is a net made for another variant than
    `game` (a rule bot plays any)."""
    made_for = getattr(load_blueprint(spec), "config", None)
    if isinstance(made_for, HanabiConfig) and not same_game(made_for, game):
        raise ValueError(f"{option} {spec}: a net for the game {describe_game(made_for)}, this "
                         f"run plays {describe_game(game)}: give a net of this variant, or "
                         f"the game options of the net's")


def check_args(args, game: HanabiConfig) -> None:
    if not args.student.startswith("lstm:") or not args.student[len("lstm:"):]:
        raise ValueError(f"--student {args.student!r}: the student is a public-LSTM net, "
                         f"lstm:PATH or lstm:NAME (`lbs-pz models`)")
    if parse_method(args.teacher) == "blueprint":
        raise ValueError("--teacher must be a search: sparta or lbs-K")
    if search_seats_from(args.search_seats, game.players) != ("all",) \
            and args.teacher_blueprint != STUDENT:
        raise ValueError(f"--search-seats {args.search_seats} with --teacher-blueprint "
                         f"{args.teacher_blueprint}: the moves of the seats that do not "
                         f"search would be {args.teacher_blueprint}'s, taught to the student "
                         f"as the teacher's; give --search-seats all, or --teacher-blueprint "
                         f"{STUDENT}")
    check_backend(args)
    if not args.belief_steps and not args.belief_minutes > 0:
        raise ValueError("give --belief-steps > 0 or --belief-minutes > 0")
    # the distillation's settings, checked before the teacher's games are played
    DistillConfig(lr=args.lr, deviation_weight=args.deviation_weight,
                  search_fraction=args.search_fraction, updates=args.updates, minutes=0.0,
                  device=args.device, seed=args.seed).check()
    check_variant(args.student, game, "--student")
    if args.teacher_blueprint != STUDENT:
        check_variant(args.teacher_blueprint, game, "--teacher-blueprint")
    if os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out {args.out!r} is a file, not a folder")
    check_board(args.tensorboard)


# --- one round's steps --------------------------------------------------------------------------

class Improve:
    """The run in OUT: `state` (improve.json), the trainers (`distill`, `train_belief`:
    imported by `run`, they need torch)."""

    def __init__(self, args, game: HanabiConfig, distill: Callable, train_belief: Callable):
        self.args, self.game, self.out = args, game, args.out
        self.distill_fn, self.train_belief_fn = distill, train_belief
        self.state = load_state(args.out, args)
        self.log = (lambda *_: None) if args.no_progress else print
        self.board = Board("")      # --tensorboard's, while `run` runs

    # where a round starts from
    def kept_before(self, k: int) -> int:
        """The last kept round before round `k` (0: the start)."""
        kept = [j for j in range(1, k) if self.state["rounds"].get(str(j), {}).get("kept")]
        return kept[-1] if kept else 0

    def student(self, j: int) -> str:
        return self.args.student if j == 0 else \
            "lstm:" + os.path.join(round_dir(self.out, j), "student.pt")

    def belief(self, j: int) -> Optional[str]:
        """The learned belief of round j's student: the round's, else the one given or
        shipped for the start (None: none)."""
        if j > 0:
            path = os.path.join(round_dir(self.out, j), "belief.pt")
            return path if os.path.isfile(path) else None
        if self.args.belief_checkpoint and self.args.teacher_blueprint == STUDENT:
            return self.args.belief_checkpoint      # the search's belief: the student's
        return find_model("belief", blueprint_identity(load_blueprint(self.args.student)),
                          self.game)

    def round(self, k: int) -> dict:
        return self.state["rounds"].setdefault(str(k), {"round": k, "steps": {}})

    def teacher_spec(self, k: int) -> MethodSpec:
        """Round k's search: over --teacher-blueprint, or ('student') over the last kept
        student with that student's belief (a trained one passed explicitly)."""
        search = search_config(self.args)
        seats = search_seats_from(self.args.search_seats, self.game.players)
        if self.args.teacher_blueprint != STUDENT:
            return MethodSpec(self.args.teacher, blueprint=self.args.teacher_blueprint,
                              search=search, search_seats=seats)
        j = self.kept_before(k)
        if j > 0:       # the belief made for this student; the net's own value
            belief = self.belief(j)
            search = search.replace(belief_checkpoint=belief, value_checkpoint=None,
                                    belief=None if belief else search.belief)
        return MethodSpec(self.args.teacher, blueprint=self.student(j), search=search,
                          search_seats=seats)

    # the steps
    def step(self, k: int, name: str, work: Callable[[], dict]) -> dict:
        """Round k's step `name`: its record if done, else `work()` run (its record), the
        attempt and the result written to improve.json around it."""
        steps = self.round(k)["steps"]
        record = steps.setdefault(name, {"done": False, "attempts": 0, "cpu_seconds": 0.0})
        if record["done"]:
            return record
        record["attempts"] += 1
        save_state(self.out, self.state)
        start = cpu_seconds()
        self.log(f"round {k}: {name}" + (f" (attempt {record['attempts']}: going on)"
                                         if record["attempts"] > 1 else ""))

        def spent() -> float:       # an attempt stopped by Ctrl-C counts too (not a kill)
            return round(record["cpu_seconds"] + cpu_seconds() - start, 1)
        try:
            result = work()
        except BaseException:
            record["cpu_seconds"] = spent()
            save_state(self.out, self.state)
            raise
        record.update(result, done=True, cpu_seconds=spent())
        save_state(self.out, self.state)
        return record

    def teacher_games(self, k: int) -> dict:
        spec = self.teacher_spec(k)
        path = os.path.join(round_dir(self.out, k), "teacher_games.jsonl")
        for note in describe(spec, self.game):      # builds the agent: bad input fails now
            self.log(f"round {k}: {spec.label()} on {spec.blueprint}: {note}")
        g = self.args.games_per_round
        record_search_games(spec, g, path, dataclasses.asdict(self.game), seed=self.args.seed,
                            first_game=(k - 1) * g, workers=self.args.workers or
                            os.cpu_count() or 1, log=self.log, option="--out",
                            backend=self.args.backend, address=self.args.address)
        deviations = sum(len(g["deviated"]) for g in read_search_games(path))
        return {"teacher": spec.to_dict(), "label": spec.label(), "games": g,
                "first_game": (k - 1) * g, "deviations": deviations}

    def trainer_backend(self) -> dict:
        ray = self.args.backend == "ray"
        return dict(backend="ray" if ray else "inline",
                    workers=(self.args.workers or 0) if ray else 0,
                    address=(self.args.address or "") if ray else "")

    def distill_games(self, k: int) -> tuple:
        """(path, games) of the recorded games round k distils: the teacher's games of
        round k and of the latest rounds before it, up to DISTILL_GAMES games (several
        rounds: OUT/round_K/distill_games.jsonl, made again when needed)."""
        own = os.path.join(round_dir(self.out, k), "teacher_games.jsonl")
        per_round = self.args.games_per_round
        rounds = min(k, max(1, DISTILL_GAMES // per_round))
        if rounds == 1:
            return own, per_round
        path = os.path.join(round_dir(self.out, k), "distill_games.jsonl")
        parts = []
        for j in range(k - rounds + 1, k + 1):
            games = os.path.join(round_dir(self.out, j), "teacher_games.jsonl")
            # round k's, or one not tidied yet; else its gzipped copy
            with open_log(readable_log(games), "--out") as f:
                parts.append(f.read())
        write_atomic(path, b"".join(parts))
        return path, rounds * per_round

    def distill(self, k: int) -> dict:
        a, j = self.args, self.kept_before(k)
        out = os.path.join(round_dir(self.out, k), "student.train.pt")
        games, n_games = self.distill_games(k)
        dc = DistillConfig(         # the teacher of the self-play half: the student itself
            teacher=self.student(j), init=self.student(j)[len("lstm:"):], out=out,
            search_games=games,
            deviation_weight=a.deviation_weight, search_fraction=a.search_fraction, lr=a.lr,
            updates=a.updates, minutes=0.0, eval_every=0, eval_games=min(200, a.eval_games),
            seed=a.seed, device=a.device, resume=out if os.path.isfile(out) else "",
            players=self.game.players, colors=self.game.colors, ranks=self.game.ranks,
            hand_size=self.game.hand_size, tensorboard=self.board_dir(k, "distill"),
            **self.trainer_backend())
        self.distill_fn(dc, log=self.log, progress_bar=not a.no_progress)
        slim_copy(out, self.student(k)[len("lstm:"):])
        return {"from": self.student(j), "out": self.student(k), "checkpoint": out,
                "resumed": bool(dc.resume), "search_games": games, "teacher_games": n_games}

    def train_belief(self, k: int) -> dict:
        a, j = self.args, self.kept_before(k)
        out = os.path.join(round_dir(self.out, k), "belief.train.pt")
        start = self.belief(j) or ""
        tc = BeliefTrainConfig(
            blueprint=self.student(k), init=start, out=out,
            resume=out if os.path.isfile(out) else "",
            steps=a.belief_steps, minutes=0.0 if a.belief_steps else a.belief_minutes,
            lr=3e-4 if start else 1e-3, lr_final=3e-5 if start else 1e-4,
            val_every=max(1, a.belief_steps // 5) if a.belief_steps else 250,
            games_per_step=a.belief_games_per_step, val_games=min(128, a.eval_games),
            seed=a.seed, device=a.device, progress=not a.no_progress,
            players=self.game.players, colors=self.game.colors, ranks=self.game.ranks,
            hand_size=self.game.hand_size, tensorboard=self.board_dir(k, "belief"),
            **self.trainer_backend())
        self.train_belief_fn(tc, log=self.log)
        slim = os.path.join(round_dir(self.out, k), "belief.pt")
        slim_copy(out, slim)
        return {"from": start or None, "out": slim, "checkpoint": out,
                "resumed": bool(tc.resume)}

    def evaluate(self, k: int) -> dict:
        """Round k's student (round 0: the start) in greedy self-play on two sets of deals,
        each paired with the last kept student before it: the TUNING deals (evaluation
        deals 0 .. --eval-games - 1 of run --seed + 1) decide whether the round is kept
        (its paired gain there > 0); the evaluation deals of run --seed, which decide
        nothing, give the round's reported score and gain (OUT/round_K/eval.json)."""
        a = self.args
        student = load_blueprint(self.student(k))
        scores = {name: self_play_scores(student, self.game, a.eval_games, seed)
                  for name, seed in (("scores", a.seed), ("tuning_scores", a.seed + 1))}
        mean, sem = mean_sem(scores["scores"])
        result = {"student": self.student(k), "games": a.eval_games, "seed": a.seed,
                  "tuning_seed": a.seed + 1, "mean": mean, "sem": sem}
        if k > 0:
            j = self.kept_before(k)
            base = self.eval_record(j)
            gain, gain_sem = mean_sem(np.subtract(scores["scores"], base["scores"]))
            tune, tune_sem = mean_sem(np.subtract(scores["tuning_scores"],
                                                  base["tuning_scores"]))
            result.update(base_round=j, gain=gain, gain_sem=gain_sem, tuning_gain=tune,
                          tuning_gain_sem=tune_sem, kept=bool(tune > 0))
        folder = round_dir(self.out, k)
        os.makedirs(folder, exist_ok=True)
        write_atomic(os.path.join(folder, "eval.json"),
                     (json.dumps(dict(result, **scores)) + "\n").encode())
        self.log(f"round {k}: {self.student(k)} scores {mean:.3f} +- {sem:.3f} on "
                 f"{a.eval_games} evaluation deals" + (
                     f"; {result['gain']:+.3f} +- {result['gain_sem']:.3f} over round "
                     f"{result['base_round']} (on the tuning deals, which decide: "
                     f"{tune:+.3f} +- {tune_sem:.3f})" if k > 0 else ""))
        return result

    def eval_record(self, j: int) -> dict:
        with open(os.path.join(round_dir(self.out, j), "eval.json")) as f:
            return json.load(f)

    # the run
    def play_round(self, k: int) -> None:
        os.makedirs(round_dir(self.out, k), exist_ok=True)
        rec = self.round(k)
        if "kept" in rec:
            self.log(f"round {k}: finished before ({'kept' if rec['kept'] else 'not kept'})")
            self.tidy(k)
            return
        self.step(k, "teacher_games", lambda: self.teacher_games(k))
        self.step(k, "distill", lambda: self.distill(k))
        ev = self.step(k, "eval", lambda: self.evaluate(k))
        if ev["kept"]:          # a student no round starts from needs no belief
            self.step(k, "belief", lambda: self.train_belief(k))
        cpu = sum(s.get("cpu_seconds", 0.0) for s in rec["steps"].values())
        rec.update(score=ev["mean"], sem=ev["sem"], gain=ev["gain"], gain_sem=ev["gain_sem"],
                   tuning_gain=ev["tuning_gain"], tuning_gain_sem=ev["tuning_gain_sem"],
                   base_round=ev["base_round"], kept=ev["kept"],
                   games=rec["steps"]["teacher_games"]["games"],
                   core_hours=round(cpu / 3600, 4), student=self.student(k))
        save_state(self.out, self.state)
        self.board_round(k)
        self.tidy(k)
        if not ev["kept"]:
            self.log(f"round {k} not kept: no gain over round {ev['base_round']} on the "
                     f"tuning deals ({ev['tuning_gain']:+.3f} +- {ev['tuning_gain_sem']:.3f}); "
                     f"the next round starts "
                     f"from round {ev['base_round']}'s student")

    def tidy(self, k: int) -> None:
        """A finished round keeps its teacher's games gzipped (teacher_games.jsonl.gz, about
        a sixteenth of the size) and drops distill_games.jsonl (made again from the rounds'
        games when needed) and the trainers' checkpoints (*.train.pt: only a step cut short
        resumes from them; student.pt and belief.pt are their slim copies)."""
        folder = round_dir(self.out, k)
        for name in ("student.train.pt", "belief.train.pt"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, name))
        games = os.path.join(folder, "teacher_games.jsonl")
        if os.path.isfile(games):
            gzip_log(games)
            os.remove(games)
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(folder, "distill_games.jsonl"))

    def board_dir(self, k: int, step: str) -> str:
        """The --tensorboard folder of round k's trainer `step` ("": none)."""
        return os.path.join(self.args.tensorboard, f"round_{k}", step) \
            if self.args.tensorboard else ""

    def board_round(self, k: int) -> None:
        """Round k's record (ROUND_SCALARS, kept) on the board, at step k."""
        rec = self.state["rounds"][str(k)]
        scalars = {f"round/{name}": rec.get(name) for name in ROUND_SCALARS}
        scalars["round/kept"] = float(rec["kept"])
        self.board.write(k, scalars)

    def without_gain(self, k: int) -> int:
        """Rounds in a row without a gain, up to round k."""
        n = 0
        for j in range(k, 0, -1):
            if self.state["rounds"].get(str(j), {}).get("kept", True):
                break
            n += 1
        return n

    def run(self) -> None:
        """Round 0's evaluation, then the rounds up to --rounds (or --patience), the
        tables; with --tensorboard, the finished rounds on its board first (written
        again: the board hides what earlier invocations wrote), each new one as it ends."""
        with Board(self.args.tensorboard) as self.board:
            self.play_rounds()

    def play_rounds(self) -> None:
        start = self.step(0, "eval", lambda: self.evaluate(0))
        self.round(0).update(score=start["mean"], sem=start["sem"], kept=True, games=0,
                             core_hours=round(start["cpu_seconds"] / 3600, 4),
                             student=self.student(0))
        save_state(self.out, self.state)
        for r in finished_rounds(self.state):
            self.board_round(r["round"])
        self.state["stopped"] = None
        for k in range(1, self.args.rounds + 1):
            finished = "kept" in self.state["rounds"].get(str(k), {})   # never undone
            if not finished and self.without_gain(k - 1) >= self.args.patience:
                self.state["stopped"] = (f"stopped before round {k}: no gain in the last "
                                         f"{self.args.patience} round(s) (--patience "
                                         f"{self.args.patience})")
                break
            self.play_round(k)
        save_state(self.out, self.state)
        write_tables(self.out, self.state)
        if self.state["stopped"]:
            print(self.state["stopped"])
        best = self.kept_before(max(int(j) for j in self.state["rounds"]) + 1)
        print(f"best student: {self.student(best)} (round {best}); "
              f"{os.path.join(self.out, 'rounds.md')}, {os.path.join(self.out, 'rounds.png')}")


def self_play_scores(blueprint, game: HanabiConfig, games: int, seed: int) -> List[int]:
    """Greedy self-play scores of `blueprint` on evaluation deals 0 .. games-1 of run
    `seed` (`lbs_pz.eval.evaluate.played_chunks`), one per deal, in deal order."""
    return [int(s) for batch, _ in played_chunks(blueprint, game, games, seed)
            for s in batch.scores()]


# --- the round table ----------------------------------------------------------------------------

def finished_rounds(state: dict) -> List[dict]:
    rounds = [r for r in state["rounds"].values() if "score" in r]
    return sorted(rounds, key=lambda r: r["round"])


def round_table(state: dict) -> str:
    """The markdown table of the finished rounds (round 0: the start)."""
    lines = [f"Command: `{state['command']}`", "",
             f"Score: greedy self-play on the evaluation deals of run seed "
             f"{state['settings']['seed']}; a round is kept if its paired gain on the tuning "
             f"deals (run seed {state['settings']['seed'] + 1}) is > 0.", "",
             "| round | score +- s.e. | gain over the previous kept round +- s.e. | "
             "tuning gain (decides) | games | core-hours | kept |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for r in finished_rounds(state):
        gain, tune = ((f"{r['gain']:+.3f} +- {r['gain_sem']:.3f} (round {r['base_round']})",
                       f"{r['tuning_gain']:+.3f} +- {r['tuning_gain_sem']:.3f}")
                      if "gain" in r else ("(start)", ""))
        lines.append(f"| {r['round']} | {r['score']:.3f} +- {r['sem']:.3f} | {gain} | {tune} | "
                     f"{r['games']} | {r['core_hours']:.3f} | "
                     f"{'yes' if r['kept'] else 'no'} |")
    if state.get("stopped"):
        lines += ["", state["stopped"]]
    return "\n".join(lines) + "\n"


def write_tables(out: str, state: dict) -> None:
    """OUT/rounds.md and OUT/rounds.png, each written whole."""
    write_atomic(os.path.join(out, "rounds.md"), round_table(state).encode())
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rounds = finished_rounds(state)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for kept, colour, label in ((True, "C0", "kept"), (False, "C3", "not kept")):
        rs = [r for r in rounds if bool(r["kept"]) == kept]
        if rs:
            ax.errorbar([r["round"] for r in rs], [r["score"] for r in rs],
                        yerr=[r["sem"] for r in rs], fmt="o", color=colour, capsize=3,
                        label=label)
    ax.set_xticks([r["round"] for r in rounds])
    ax.set_xlabel("round (0: the start)")
    ax.set_ylabel("greedy self-play score")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with replaced(os.path.join(out, "rounds.png")) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


# --- the command --------------------------------------------------------------------------------

def report(out: str) -> int:
    """--report-only: the round table of the run in `out`, from its improve.json alone."""
    path = os.path.join(out, STATE)
    try:
        with open(path) as f:
            state = json.load(f)
        table = round_table(state)
    except FileNotFoundError:
        raise ValueError(f"--report-only: no run in --out {out!r} ({path} does not "
                         f"exist)") from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"--out {out!r}: {path} is not a run record of lbs-pz improve "
                         f"({type(err).__name__})") from None
    print(table, end="")
    return 0


def run(args) -> int:
    if args.report_only:
        return report(args.out)
    from lbs_pz.train.belief import train_belief     # torch: only when the command runs
    from lbs_pz.train.distill import distill
    game = game_from(args)
    check_args(args, game)
    os.makedirs(args.out, exist_ok=True)
    # one run per folder: a second one would write improve.json over this one's
    lock = open_locked(os.path.join(args.out, LOCK), "--out")
    run_ = Improve(args, game, distill, train_belief)
    try:
        with lock, one_interrupt(), warnings.catch_warnings():
            warnings.showwarning = lambda message, *rest: print(
                f"lbs-pz improve: warning: {message}", file=sys.stderr)
            run_.run()
    except KeyboardInterrupt:
        return interrupted("improve", f"the finished steps are recorded in "
                                      f"{os.path.join(args.out, STATE)}; run the same "
                                      f"command again to continue")
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("improve", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              help="rounds of a search's games distilled into a public-LSTM "
                                   "net (expert iteration; resumable)")
    p.add_argument("--student", default="lstm:conventions_expert_value_2p", metavar="SPEC",
                   help="the net to improve, lstm:PATH or lstm:NAME (default "
                        "lstm:conventions_expert_value_2p, the best shipped network)")
    p.add_argument("--teacher", default="lbs-16", metavar="METHOD",
                   help="the search whose games are distilled: lbs-K | lbs-inf | sparta "
                        "(default lbs-16)")
    p.add_argument("--teacher-blueprint", default=STUDENT, metavar="SPEC",
                   help="the blueprint the teacher searches over: 'student' (default: each "
                        "round's current student, with its belief) or a fixed one, e.g. "
                        "strong, searched at every seat (its moves are not the student's: "
                        "docs/experiments/improve.md found no gain from it)")
    add_search_seats_option(p, "0", "seats where the teacher searches, turned by the game's "
                                    "index")
    p.add_argument("--rounds", type=int_at_least(1), default=5,
                   help="rounds to play (default 5; may be raised to go on)")
    p.add_argument("--out", default=os.path.join("results", "improve"), metavar="DIR",
                   help="the run's folder (default results/improve)")
    p.add_argument("--games-per-round", type=int_at_least(1), default=500, metavar="G",
                   help="teacher games per round (default 500: about 70 minutes on 2 cores; "
                        "a round distils the latest rounds' games, up to 1,500)")
    p.add_argument("--updates", type=int_at_least(1), default=EXPERT_ITERATION["updates"],
                   help="distill updates per round (default 600, as "
                        "docs/experiments/expert_iteration.md)")
    p.add_argument("--lr", type=finite_float_at_least(0), default=EXPERT_ITERATION["lr"],
                   help="distill learning rate (default 3e-4, as expert_iteration.md)")
    p.add_argument("--deviation-weight", type=finite_float_at_least(0),
                   default=EXPERT_ITERATION["deviation_weight"],
                   help="weight of the moves where the search left the blueprint's "
                        "(default 30, as expert_iteration.md)")
    p.add_argument("--search-fraction", type=finite_float_at_least(0),
                   default=EXPERT_ITERATION["search_fraction"],
                   help="fraction of each batch from the teacher's games, the rest the "
                        "student's own self-play (default 0.5, as expert_iteration.md)")
    p.add_argument("--belief-steps", type=int_at_least(0), default=0,
                   help="train-belief steps per round (default 0: --belief-minutes)")
    p.add_argument("--belief-minutes", type=finite_float_at_least(0), default=BELIEF_MINUTES,
                   help="train-belief minutes per invocation without --belief-steps "
                        "(default 15, as the shipped belief_conventions_expert_2p)")
    p.add_argument("--belief-games-per-step", type=int_at_least(1), default=32,
                   help="train-belief games per step (default 32)")
    p.add_argument("--eval-games", type=int_at_least(2), default=10000,
                   help="evaluation deals per round, and as many tuning deals, which decide "
                        "whether it is kept (default 10000: a paired s.e. of about 0.02, "
                        "where a round gains 0.05-0.15; about 75 CPU-seconds for both)")
    p.add_argument("--patience", type=int_at_least(1), default=2,
                   help="rounds in a row without a gain before the run stops (default 2)")
    add_backend_options(p, "processes or Ray workers playing the teacher's games (default: "
                           "every core); with --backend ray the trainers' games too")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where distill and train-belief train (default cpu)")
    add_seed_option(p, "run seed of the training deals, the search and the evaluation deals")
    p.add_argument("--no-progress", action="store_true", help="no progress lines or bars")
    p.add_argument("--tensorboard", default="", metavar="DIR",
                   help="write each round's scalars to DIR and its trainers' to "
                        "DIR/round_K/distill and DIR/round_K/belief, for `tensorboard "
                        "--logdir DIR` (default: none; the [tensorboard] extra)")
    p.add_argument("--report-only", action="store_true",
                   help="print the round table of the run in --out (its improve.json) and "
                        "play nothing")
    add_search_options(p, defaults={"rollouts": TEACHER_ROLLOUTS})
    add_game_options(p)
    p.set_defaults(func=run, improve_parser=p)
    return p
