"""The one training loop: `run(trainer, budget, out, ...)` drives every trainer of lbs_pz.train.

A trainer (`Trainer`) supplies what is its own: one update (`update(clock) -> losses`), its
evaluation (`evaluate() -> metrics`), the pieces of its checkpoint (`checkpoint()`: the
arguments of `lbs_pz.models.checkpoint.make_checkpoint`), its optimizer and its counters
(`progress`). `run` owns the rest, the same for every trainer:

- the budget (`Budget`): minutes of this invocation or updates in total (counted over
  resumed runs), whichever ends first; `Clock.fraction()` says how much of it is spent
  (what a learning-rate schedule reads);
- resume: `read_resume(path, kind, command)` reads a checkpoint that `run` wrote; the
  trainer builds its nets from it (architecture, weights, a target network ...) and
  `run(..., resume=ckpt)` restores the optimizer state (keeping this run's learning rate)
  and the counters (info["progress"]);
- checkpoints in the one lbs_pz layout (`save_checkpoint`, written atomically: a
  temporary file renamed over `out`) to `out`: once `save_minutes` (every trainer's
  --save-minutes, default SAVE_MINUTES) of training have passed since the last one (or
  the start; checked after every update), after every `save_every`-th update, at
  the end and on Ctrl-C: the first SIGINT stops the run after the update in progress,
  saves, and raises KeyboardInterrupt (the CLI exits with status 130); a second one
  interrupts at once. A write that fails (a full disk, a file-size limit) is one
  ValueError naming the file; the checkpoint there before stays as it was. `slim_out`
  also gets a float16 copy without the resume state;
- one run per `out` (`claim_output`; a trainer claims it first, `claims_out`): the run
  holds the lock of `out` + ".lock" while it trains; a second run on the same `out` is
  refused at once, naming the path;
- evaluation every `eval_every` updates (before the first update of a fresh run too,
  with `Trainer.eval_at_start`; at the end if the last update was not evaluated): each
  evaluation appends a row (minutes, updates, then the metrics) to progress["curve"] and
  rewrites the curve CSV `curve` and a PNG with the same stem;
- TensorBoard (`tensorboard`: a folder, "" off; `lbs_pz.train.board.TrainingBoard`): the
  same curve rows, the updates' losses and the throughput, the update count the step (a
  resumed run appends to the folder, its steps going on);
- the tqdm progress bar: updates, recent losses and the last evaluation.

The checkpoint's info["progress"] holds the counters: "updates", "seconds" (training
time over every resumed run), "curve" (the rows) and "curve_columns", and whatever the
trainer counts (games, moves ...); its "resume" entry holds "optimizer" and the trainer's
own pieces.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import os
import signal
import textwrap
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import matplotlib
import numpy as np
import torch
from tqdm import tqdm

from lbs_pz.files import open_locked
from lbs_pz.models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from lbs_pz.train.board import LOSS_EVERY, TrainingBoard, check_board
from lbs_pz.train.configs import SAVE_MINUTES, check_budget, check_save_minutes, curve_png_path

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the Agg backend is chosen)

LOCK_SUFFIX = ".lock"
"""`claim_output` locks the file OUT + LOCK_SUFFIX beside the checkpoint OUT (the
checkpoint itself is replaced by a rename at every save, which a lock would not survive)."""


@dataclasses.dataclass
class Budget:
    """When a run stops: whichever of the two ends first (0: no limit of that kind)."""
    minutes: float = 0.0     # wall-clock minutes of this invocation
    updates: int = 0         # updates in total, counted over resumed runs

    def check(self) -> None:
        check_budget(self.minutes, self.updates)


class Clock:
    """Where a run stands: its updates (over resumed runs), its time, its budget."""

    def __init__(self, budget: Budget, progress: dict):
        self.budget, self.progress = budget, progress
        self.start = time.perf_counter()
        self.first_update = progress["updates"]
        self.seconds_before = float(progress["seconds"])

    @property
    def updates(self) -> int:
        return self.progress["updates"]

    def elapsed(self) -> float:
        """Seconds of this invocation."""
        return time.perf_counter() - self.start

    def seconds(self) -> float:
        """Training seconds over every resumed run."""
        return self.seconds_before + self.elapsed()

    def fraction(self) -> float:
        """How much of the budget is spent, in [0, 1]: the larger of this invocation's
        share of `minutes` and the share of `updates` done (over resumed runs)."""
        done = self.elapsed() / (self.budget.minutes * 60) if self.budget.minutes > 0 else 0.0
        if self.budget.updates:
            done = max(done, self.updates / self.budget.updates)
        return min(done, 1.0)

    def done(self) -> bool:
        return bool((self.budget.minutes > 0 and self.elapsed() >= self.budget.minutes * 60)
                    or (self.budget.updates and self.updates >= self.budget.updates))


@dataclasses.dataclass
class Trainer:
    """What a trainer supplies to `run`."""
    name: str                                          # its command, e.g. "train-belief"
    kind: str                                          # its checkpoint kind
    # one update; returns its losses (None: nothing to learn from yet, not counted)
    update: Callable[[Clock], Optional[Dict[str, float]]]
    # `make_checkpoint`'s arguments (no progress, no optimizer)
    checkpoint: Callable[[], dict]
    optimizer: Optional[torch.optim.Optimizer] = None  # restored on resume, saved in "resume"
    # counters (info["progress"])
    progress: Dict[str, Any] = dataclasses.field(default_factory=dict)
    # the metrics of one curve row
    evaluate: Optional[Callable[[Clock], Dict[str, Optional[float]]]] = None
    eval_at_start: bool = False         # evaluate before the first update of a fresh run
    plot: Sequence[str] = ()            # curve columns in the PNG (X_mean with X_sem: error bars)
    plot_start: bool = False            # draw the first row's level of plot[0] (and 0.5 below it)
    # called after the last update, before the last checkpoint
    finish: Optional[Callable[[], None]] = None


def read_resume(path: str, kind: str, command: str) -> dict:
    """A checkpoint of `kind` that `run` can continue: it has a "resume" entry with the
    optimizer state (a slim, weights-only copy has none)."""
    ckpt = load_checkpoint(path, kind)
    if not isinstance(ckpt.get("resume"), dict) or "optimizer" not in ckpt["resume"]:
        raise CheckpointError(f"--resume {path}: a slim (weights-only) checkpoint cannot be "
                              f"resumed; use the full one that `lbs-pz {command} --out` "
                              f"writes")
    return ckpt


def write(path: str, pieces: dict, progress: dict, optimizer=None,
          option: str = "--out") -> dict:
    """Write one checkpoint: `pieces` (make_checkpoint's arguments) with info["progress"]
    and, unless the file is a slim one (half=True without resume), the optimizer state in
    "resume". A write that fails (OSError, or torch's RuntimeError for a stream that
    failed: a full disk, a file-size limit) is one ValueError naming `option` and `path`;
    the file there before is left as it was (`save_checkpoint` renames a complete
    temporary file over it)."""
    pieces = dict(pieces)
    pieces["info"] = dict(pieces.get("info") or {}, progress=progress)
    if not pieces.get("half") and optimizer is not None:
        pieces["resume"] = dict(pieces.get("resume") or {}, optimizer=optimizer.state_dict())
    elif pieces.get("half"):
        pieces["resume"] = None
    try:
        return save_checkpoint(path, **pieces)
    except (OSError, RuntimeError) as err:
        reason = (err.strerror if isinstance(err, OSError) and err.strerror
                  else " ".join(str(err).split())[:160])
        kept = ("the checkpoint there before is unchanged" if os.path.exists(path)
                else "nothing was written there")
        raise ValueError(f"{option} {path!r}: writing the checkpoint failed "
                         f"({type(err).__name__}: {reason}); {kept}; make room (free disk "
                         f"space, a larger file-size limit) and run again") from None


_CLAIMS: Dict[str, object] = {}     # real path of a claimed out -> its open lock file


@contextlib.contextmanager
def claim_output(out: str, option: str = "--out") -> Iterator[None]:
    """The checkpoint file `out` claimed by this process for the block: it holds the lock
    (`lbs_pz.files.open_locked`) of `out` + LOCK_SUFFIX, so that a second run on the same
    `out` (in another process) is refused at once with a ValueError naming `option` and
    the path, instead of both runs writing over each other. Claims nest: `run` claims its
    `out`, and a trainer claims it before it builds anything (`claims_out`), so that the
    second run is refused before any work. The lock file is removed when the outermost
    claim ends (a killed run leaves it, unlocked, for the next run)."""
    if not isinstance(out, str) or not out:
        raise ValueError(f"give {option} PATH (the checkpoint file to write), got {out!r}")
    key = os.path.realpath(out)
    if key in _CLAIMS:              # claimed by an enclosing block: its lock holds
        yield
        return
    lock = out + LOCK_SUFFIX
    while True:
        held = open_locked(lock, f"{option} {out!r}: its lock file")
        try:        # locked, but the file a finished run removed? lock the new one
            same = os.path.samestat(os.fstat(held.fileno()), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        held.close()
    _CLAIMS[key] = held
    try:
        yield
    finally:
        del _CLAIMS[key]
        with contextlib.suppress(OSError):
            os.remove(lock)
        held.close()


def claims_out(train: Callable) -> Callable:
    """A trainer function `train(config, ...)` that claims `config.out` (`claim_output`)
    before it does anything else: a second run on the same file is refused before it
    loads a blueprint, plays a game or starts Ray. Its --save-minutes and --tensorboard
    (`check_board`) are checked first."""
    @functools.wraps(train)
    def claiming(config, *args, **kwargs):
        check_save_minutes(config.save_minutes)     # a bad value fails before any work
        check_board(config.tensorboard)
        with claim_output(config.out):
            return train(config, *args, **kwargs)
    return claiming


def write_curve(path: str, columns: Sequence[str], rows: List[list], plot: Sequence[str] = (),
                start: Optional[float] = None, title: str = "") -> None:
    """The learning curve: CSV (`columns`, one row per evaluation) at `path`, written
    atomically, and a PNG with the same stem: one panel per column of `plot` against the
    training minutes (a column X_mean with an X_sem beside it gets error bars; with
    `start`, that level and start - 0.5 drawn as lines in the first panel)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)
                        for v in row])
    os.replace(tmp, path)
    plot = [c for c in plot if c in columns] or [c for c in columns[2:]][:1]
    if not plot:
        return
    x = np.array([r[0] for r in rows], dtype=float)
    fig, axes = plt.subplots(len(plot), 1, figsize=(7, 1 + 3 * len(plot)), squeeze=False)
    for i, (ax, name) in enumerate(zip(axes[:, 0], plot)):
        def col(c):
            k = list(columns).index(c)
            return np.array([np.nan if r[k] is None else r[k] for r in rows], dtype=float)
        sem = name[:-5] + "_sem" if name.endswith("_mean") else ""
        if sem in columns:
            ax.errorbar(x, col(name), yerr=col(sem), marker="o", ms=3, capsize=2, label=name)
        else:
            ax.plot(x, col(name), marker="o", ms=3, label=name)
        if i == 0 and start is not None:
            ax.axhline(start, color="grey", lw=0.8, label=f"start {start:.2f}")
            ax.axhline(start - 0.5, color="red", lw=0.8, ls="--", label="start - 0.5")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("training minutes")
    if title:
        axes[0, 0].set_title("\n".join(textwrap.wrap(title, 110)[:3]), fontsize=7)
    fig.tight_layout()
    fig.savefig(curve_png_path(path), dpi=100)
    plt.close(fig)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run after its checkpoint was written; `note` says where."""

    def __init__(self, note: str):
        super().__init__(note)
        self.note = note


class _StopRequest:
    """While active (main thread only): the first SIGINT sets `requested` (the loop stops
    after the update in progress); a second one raises KeyboardInterrupt at once."""

    def __init__(self):
        self.requested = False
        self.previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


def _restore(trainer: Trainer, resume: Optional[dict], log: Callable[[str], None]) -> None:
    """Set the counters of `trainer.progress` (zero, or those of the checkpoint `resume`)
    and, resuming, the optimizer's state, each parameter group keeping this run's
    learning rate."""
    progress = trainer.progress
    progress.setdefault("updates", 0)
    progress.setdefault("seconds", 0.0)
    if resume is not None:
        if trainer.optimizer is not None:
            lrs = [group["lr"] for group in trainer.optimizer.param_groups]
            trainer.optimizer.load_state_dict(resume["resume"]["optimizer"])
            for group, lr in zip(trainer.optimizer.param_groups, lrs):
                group["lr"] = lr
        progress.update(resume["info"].get("progress", {}))
        log(f"resumed from {resume['path']} at update {progress['updates']}")
    progress.setdefault("curve", [])


class _Session:
    """One invocation of `run`, from its first update to its last checkpoint: the clock,
    the recent losses and last metrics the progress bar shows, when it last saved and
    which update it last evaluated, and its TensorBoard scalars (`board`)."""

    def __init__(self, trainer: Trainer, budget: Budget, out: str, eval_every: int,
                 save_every: int, save_minutes: float, curve: str, slim_out: str, title: str,
                 progress_bar: bool, board: TrainingBoard):
        self.trainer, self.out, self.slim_out, self.board = trainer, out, slim_out, board
        self.curve, self.title = curve, title
        self.eval_every, self.save_every = eval_every, save_every
        self.save_seconds = 60.0 * save_minutes
        self.progress = progress = trainer.progress
        self.clock = Clock(budget, progress)
        self.recent: Dict[str, List[float]] = {}        # each loss's last 100 values
        self.last: Dict[str, Optional[float]] = {}      # the last evaluation's metrics
        self.saved_at = 0.0         # this invocation's seconds at the last checkpoint
        self.bar = tqdm(total=budget.updates or None, initial=progress["updates"], unit="upd",
                        desc=trainer.name, disable=not progress_bar, dynamic_ncols=True)
        self.evaluated_at = progress["curve"][-1][1] if progress["curve"] else None

    def save(self) -> None:
        """Write the checkpoint to `out` (and its slim copy to `slim_out`)."""
        self.saved_at = self.clock.elapsed()
        self.progress["seconds"] = round(self.clock.seconds(), 1)
        pieces = self.trainer.checkpoint()
        write(self.out, pieces, self.progress, self.trainer.optimizer)
        if self.slim_out:
            write(self.slim_out, dict(pieces, resume=None, half=True), self.progress,
                  option="--slim-out")

    def evaluate(self) -> None:
        """Evaluate now: one more row of the curve (started afresh when the metrics are
        not those of the rows before), the curve's files rewritten, the row on the board,
        `last` updated."""
        progress, trainer = self.progress, self.trainer
        assert trainer.evaluate is not None         # called only for a trainer that has one
        metrics = trainer.evaluate(self.clock)
        self.last.clear()
        self.last.update(metrics)
        columns = ["minutes", "updates"] + list(metrics)
        if progress.get("curve_columns", columns) != columns:
            progress["curve"] = []          # a resumed run of another layout: start afresh
        progress["curve_columns"] = columns
        progress["curve"].append([round(self.clock.seconds() / 60, 3), progress["updates"]]
                                 + list(metrics.values()))
        self.board.curve(columns, progress["curve"][-1])
        if self.curve:
            first = progress["curve"][0][2 + list(metrics).index(trainer.plot[0])] \
                if trainer.plot_start and trainer.plot and trainer.plot[0] in metrics else None
            write_curve(self.curve, columns, progress["curve"], trainer.plot, first,
                        self.title)
        self.evaluated_at = progress["updates"]

    def step(self) -> None:
        """One update of the trainer, then what follows it: the counters, an evaluation
        and a checkpoint when they are due, the board, the progress bar."""
        losses = self.trainer.update(self.clock)
        if losses is None:                 # nothing to learn from yet
            return
        self.progress["updates"] += 1
        u = self.progress["updates"]
        for key, value in losses.items():
            self.recent.setdefault(key, []).append(value)
            del self.recent[key][:-100]
        if self.trainer.evaluate is not None and self.eval_every and u % self.eval_every == 0:
            self.evaluate()
        if (self.save_every and u % self.save_every == 0) or \
                (self.save_seconds and self.clock.elapsed() - self.saved_at >= self.save_seconds):
            self.save()
        self.board.update(losses, due=u % LOSS_EVERY == 0 or self.evaluated_at == u)
        self.bar.update(1)
        if u % 20 == 0 or self.evaluated_at == u:
            shown = {k: f"{np.mean(v):.3f}" for k, v in self.recent.items() if v}
            shown.update({k: f"{v:.3f}" for k, v in self.last.items() if isinstance(v, float)})
            self.bar.set_postfix(shown, refresh=False)

    def train(self, fresh: bool) -> None:
        """Update until the budget is spent (evaluating first when the trainer asks and the
        run is `fresh` with no curve yet). On Ctrl-C: save, then raise `Interrupted`."""
        trainer, progress = self.trainer, self.progress
        try:
            with _StopRequest() as stop:
                if trainer.evaluate is not None and trainer.eval_at_start and fresh \
                        and not progress["curve"]:
                    self.evaluate()
                while not self.clock.done() and not stop.requested:
                    self.step()
                if stop.requested:
                    raise KeyboardInterrupt
        except KeyboardInterrupt:
            self.bar.close()
            self.save()
            raise Interrupted(f"checkpoint of update {progress['updates']} saved to "
                              f"{self.out} (--resume {self.out} goes on)") from None
        self.bar.close()

    def finish(self) -> None:
        """After the last update: evaluate it (unless done), the trainer's `finish`, the
        last checkpoint."""
        if self.trainer.evaluate is not None and self.evaluated_at != self.progress["updates"]:
            self.evaluate()
        if self.trainer.finish is not None:
            self.trainer.finish()
        self.save()


def run(trainer: Trainer, budget: Budget, out: str, *, resume: Optional[dict] = None,
        eval_every: int = 0, save_every: int = 0, save_minutes: float = SAVE_MINUTES,
        curve: str = "", slim_out: str = "", title: str = "", progress_bar: bool = True,
        tensorboard: str = "", log: Callable[[str], None] = print) -> dict:
    """Train until the budget is spent (or Ctrl-C); returns trainer.progress.

    resume: the checkpoint (`read_resume`) this run continues: the optimizer state (each
    group keeps this run's learning rate) and the counters come from it. eval_every: updates
    between evaluations (0: only at the end). Checkpoints go to `out` (claimed for the run,
    `claim_output`: a second run on it is refused) once `save_minutes` of training have
    passed since the last one (checked after every update; 0: none by time), after every
    `save_every`-th update (0: none by count), at the end and on Ctrl-C. curve: the CSV
    path of the learning curve ("" none). title: the PNG's title. tensorboard: the folder
    of the run's TensorBoard scalars ("" none; `lbs_pz.train.board.TrainingBoard`). On
    Ctrl-C the checkpoint is written and KeyboardInterrupt raised."""
    budget.check()
    check_save_minutes(save_minutes)
    check_board(tensorboard)
    with claim_output(out):
        _restore(trainer, resume, log)
        with TrainingBoard(tensorboard, trainer.progress) as board:
            session = _Session(trainer, budget, out, eval_every, save_every, save_minutes,
                               curve, slim_out, title, progress_bar, board)
            session.train(fresh=resume is None)
            session.finish()
        return trainer.progress
