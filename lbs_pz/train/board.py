"""A run's scalars for TensorBoard: `--tensorboard DIR` of every trainer and of `lbs-pz
improve` (`tensorboard --logdir DIR` shows them).

`Board` writes scalars, each at a step, to the folder DIR (through
`torch.utils.tensorboard.SummaryWriter`, the [tensorboard] extra, gated by
`lbs_pz.optional.require_tensorboard`); with DIR "" it is off and writes nothing.
`TrainingBoard` is the board of one run of the training loop (`lbs_pz.train.loop.run`),
its step the update count (over resumed runs):

- "curve/COLUMN": every evaluation's row of the learning curve, the same columns and values
  as the curve CSV (minutes, updates, then the trainer's metrics; an empty cell is no point);
- "train/LOSS": each loss of the trainer's updates, its mean over the updates since the
  last write, written every LOSS_EVERY updates, at every evaluation and at the end;
- "throughput/updates_per_second" (and "throughput/games_per_second" for a trainer that
  counts its games), over the same updates.

A resumed run appends to the same DIR and its steps go on from the checkpoint's update
count: its events start with a purge step (TensorBoard hides the events of an earlier
run in DIR at that step or later: those of a run killed after its last checkpoint), the
update after the checkpoint's; a fresh run's is 0, so that DIR shows this run only.
This module needs no torch at import (the commands check DIR before any training).
"""

from __future__ import annotations

import time
from typing import Any, Dict, Mapping, TypeVar

from lbs_pz.checks import is_int, is_real
from lbs_pz.files import make_folder
from lbs_pz.optional import require_tensorboard

B = TypeVar("B", bound="Board")

LOSS_EVERY = 20
"""Updates between two writes of the losses and the throughput (the progress bar's
cadence), besides every evaluation and the end of a run."""


def check_board(path: str, option: str = "--tensorboard") -> None:
    """Before any work: nothing for `path` "" (off); else MissingDependency (naming the
    [tensorboard] extra) unless TensorBoard's writer imports, and ValueError (one line
    naming `option`) unless `path` is a folder this process can write in (made if
    missing)."""
    if not path:
        return
    require_tensorboard(f"{option} {path}")
    make_folder(path, option, "TensorBoard writes its event files in a folder")


class Board:
    """Scalars written to the TensorBoard folder `path` ("": off, every call does nothing);
    `purge_step`: TensorBoard hides the events of earlier runs in `path` at that step or
    later. A context manager: the file is flushed and closed at the end."""

    def __init__(self, path: str, purge_step: int = 0, option: str = "--tensorboard"):
        self.writer: Any = None
        if path:
            check_board(path, option)
            self.writer = require_tensorboard(f"{option} {path}").SummaryWriter(
                log_dir=path, purge_step=purge_step)

    def write(self, step: int, scalars: Mapping[str, Any]) -> None:
        """Each of `scalars` ({tag: number}) at `step`; None and non-numbers are skipped."""
        if self.writer is None:
            return
        for tag, value in scalars.items():
            if is_real(value):
                self.writer.add_scalar(tag, float(value), global_step=step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def __enter__(self: B) -> B:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class TrainingBoard(Board):
    """The board of one run of the training loop: its learning curve's rows (`curve`), its
    losses and throughput (`update`, `flush`); `progress` is the trainer's counters
    (updates, games), restored before the board is made. Leaving it writes what is
    pending (`flush`) and closes it."""

    def __init__(self, path: str, progress: Dict[str, Any]):
        resumed = bool(progress["updates"] or progress.get("curve"))
        super().__init__(path, progress["updates"] + 1 if resumed else 0)
        self.progress = progress
        self.sums: Dict[str, float] = {}
        self.count = 0
        self.since = self._mark()

    def _mark(self) -> tuple:
        return time.perf_counter(), self.progress["updates"], self.progress.get("games")

    def curve(self, columns, row) -> None:
        """One row of the learning curve (`columns`: minutes, updates, the metrics), at
        its update count."""
        self.write(int(row[1]), {f"curve/{c}": v for c, v in zip(columns, row)})

    def update(self, losses: Mapping[str, float], due: bool) -> None:
        """One update's losses, added to the pending means; with `due`, written (`flush`)."""
        if self.writer is None:
            return
        for key, value in losses.items():
            self.sums[key] = self.sums.get(key, 0.0) + float(value)
        self.count += 1
        if due:
            self.flush()

    def flush(self) -> None:
        """The pending losses' means and the throughput since the last write, at the
        current update count (nothing if no update is pending)."""
        if self.writer is None or not self.count:
            return
        now, updates, games = self._mark()
        seconds = max(now - self.since[0], 1e-9)
        scalars = {f"train/{k}": v / self.count for k, v in self.sums.items()}
        scalars["throughput/updates_per_second"] = (updates - self.since[1]) / seconds
        if is_int(games) and is_int(self.since[2]):
            scalars["throughput/games_per_second"] = (games - self.since[2]) / seconds
        self.write(updates, scalars)
        self.sums.clear()
        self.count = 0
        self.since = (now, updates, games)

    def __exit__(self, *exc) -> None:
        if self.writer is not None:
            self.flush()
        super().__exit__(*exc)
