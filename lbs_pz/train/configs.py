"""The hyper-parameters of every trainer: one dataclass per trainer, one field per
`lbs-pz` option (`lbs_pz.cli.options.add_dataclass_options` turns the fields into options,
the comment after each field into its help). This module needs no torch, so that the
commands' `--help` works without it; the trainers (`lbs_pz.train.belief`, `.value`,
`.blueprint`, `.distill`) import their dataclass from here.

Budget of every run: `minutes` (of this invocation) and `updates` (or `steps`: in total,
over resumed runs), whichever ends first (`lbs_pz.train.loop.Budget`).

The public-LSTM net of `train-blueprint` and `distill` is one named architecture, `arch`
(`ARCH_PRESETS`: the presets of `lbs_pz.agents.public_lstm.ARCHITECTURES`), and its width,
`hidden` (`ARCH_FIELDS`), each None unless set; `lbs_pz.train.common.net_options`
resolves them. Any other combination of the net's options is built in Python
(`PublicLSTMNet.from_preset(name, config, **overrides)`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Optional

from lbs_pz.agents.rule_bots import BOT_NAMES
from lbs_pz.checks import as_choice, as_int, as_real
from lbs_pz.engine.seeds import check_run_seed


def check_budget(minutes: float, updates: int) -> None:
    """ValueError unless a run has a budget: minutes > 0 or updates > 0 (neither < 0)."""
    if minutes < 0 or updates < 0:
        raise ValueError(f"minutes and updates must be >= 0, got {minutes}, {updates}")
    if not (minutes > 0 or updates > 0):
        raise ValueError("give --minutes > 0 or --updates > 0")


SAVE_MINUTES = 5.0
"""Default minutes of training between two checkpoints of any trainer (`--save-minutes`):
a killed run loses at most that much, whatever its --save-every."""


def check_save_minutes(minutes) -> None:
    """ValueError unless --save-minutes is a finite number >= 0 (0: no checkpoint by time)."""
    as_real(minutes, "--save-minutes", lo=0, error=ValueError,
            what="a finite number >= 0 (0: no checkpoint by time)")


MAX_GAMES_HELD = 20_000
"""The most games a trainer holds in memory at once through any one option (games per
step, validation games, actors, a replay buffer): memory grows with each of them."""

HELD_GAMES = {
    "BeliefTrainConfig": ("games_per_step", "val_games"),
    "ValueTrainConfig": ("games_per_step", "val_games"),
    "BlueprintTrainConfig": ("num_actors", "replay_games", "demo_actors", "demo_replay_games",
                             "eval_games", "batch_size", "learning_starts"),
    "DistillConfig": ("num_actors", "buffer_games", "eval_games", "batch_size"),
}
"""The fields of each trainer's config that count games held in memory at once."""


def check_games_held(config) -> None:
    """ValueError unless every field of `HELD_GAMES` of `config`'s class is an int in
    1..MAX_GAMES_HELD, naming the option: checked before anything is allocated."""
    for name in HELD_GAMES[type(config).__name__]:
        as_int(getattr(config, name), f"--{name.replace('_', '-')}", 1, MAX_GAMES_HELD,
               what=f"an int in 1..{MAX_GAMES_HELD:,} (games held in memory at once)",
               error=ValueError)


def curve_path(out: str, curve: str) -> str:
    """Where a run's learning curve CSV goes ("" when off): `curve`, or OUT's stem +
    ".curve.csv" when it is empty, none when it is "none". The PNG has the CSV's stem."""
    if curve.lower() == "none":
        return ""
    if curve:
        return curve
    stem = out[:-3] if out.endswith(".pt") else out
    return stem + ".curve.csv"


def curve_png_path(csv: str) -> str:
    """The learning curve's PNG beside its CSV `csv`: the same stem, ".png"."""
    return (csv[:-4] if csv.endswith(".csv") else csv) + ".png"


# --- the public-LSTM architecture (train-blueprint, distill) --------------------------------------

ARCH_PRESETS = {
    "paper": "the LBS paper's public-LSTM: LSTM over the public features, MLP over the "
             "seat's input, fused by a product, mean-centred dueling head (train-blueprint's "
             "default; the shipped public_lstm_2p is --arch paper --hidden 128)",
    "card_features": "paper whose MLP also reads each card's exact playability and "
                     "uselessness: what imitation starts from (distill's default)",
    "conventions": "card_features whose MLP also reads the strong bot's conventions, with a "
                   "hint head: to imitate a convention player",
    "conventions_maxq": "conventions with Q centred on the best legal move, so that the "
                        "net's value (score + sum of V) can bootstrap a search; distill "
                        "--init START --value-only --arch conventions_maxq re-centres a "
                        "conventions START (distill only)",
    "conventions_value": "conventions_maxq whose V is an MLP (256 wide, whatever --hidden) "
                         "on a public LSTM of its own (256 wide), fitted after the policy, "
                         "every move unchanged: distill --init START --value-only --arch "
                         "conventions_value (distill only)",
}
"""Every preset name of `lbs_pz.agents.public_lstm.ARCHITECTURES` (in its order) and what
it is for: the choices of `--arch`. Here, not imported from there, so that this module
needs no torch."""

ARCH_FIELDS = ("arch", "hidden")
"""The fields of `BlueprintTrainConfig` and `DistillConfig` that name the net: a preset of
`ARCH_PRESETS` and the width of its LSTM and MLP (each None unless set), the options
`--arch` and `--hidden`."""

MAX_CENTRED = ("conventions_maxq", "conventions_value")
"""The presets whose Q is centred on the best legal move (dueling "max"): distill makes
them; train-blueprint cannot (Q-learning takes every seat's Q without legal masks)."""


def check_arch(config, default_arch: Optional[str] = None) -> None:
    """ValueError unless a run's `arch` (None or "": `default_arch`) names a preset of
    ARCH_PRESETS and its `hidden` is None or an int >= 1."""
    arch = config.arch or default_arch
    as_choice(arch, "arch", ARCH_PRESETS)
    if config.hidden is not None:
        as_int(config.hidden, "hidden", lo=1, error=ValueError)


# --- train-belief -------------------------------------------------------------------------------

@dataclasses.dataclass
class BeliefTrainConfig:
    """Every hyper-parameter of a `lbs-pz train-belief` run."""
    blueprint: str = "strong"        # blueprint spec (any kind: the spec list below)
    players: int = 2                 # players of the game variant
    hand_size: Optional[int] = None  # cards per hand (none: 5, or 4 with 4+ players)
    colors: int = 5                  # colors of the game variant
    ranks: int = 5                   # ranks of the game variant
    max_information_tokens: int = 8  # information tokens of the game variant
    max_life_tokens: int = 3         # life tokens of the game variant
    games_per_step: int = 32         # fresh games per optimisation step (x players sequences)
    steps: int = 0                   # 0: until the time budget is spent
    minutes: float = 30.0            # wall-clock budget (0: no limit)
    lr: float = 1e-3                 # Adam learning rate at the start
    lr_final: float = 1e-4           # cosine decay to this over the budget
    # held-out games (from the end of the run's TRAIN stream) for validation
    val_games: int = 128
    val_every: int = 100             # steps between validations
    seed: int = 0                    # run seed of the TRAIN deal stream
    embed: int = 256                 # width of the observation embedding
    hidden: int = 256                # LSTM width
    layers: int = 1                  # LSTM layers
    decoder: int = 128               # width of the auto-regressive decoder
    prior: bool = True               # decoder logits on top of the grounded prior
    threads: int = 0                 # torch threads (0: torch default)
    device: str = "auto"             # "cpu", "cuda" or "auto"
    out: str = "belief.pt"           # checkpoint file written
    # minutes of training between two checkpoints (0: none by time; a killed run loses at most that
    # much)
    save_minutes: float = SAVE_MINUTES
    half: bool = False               # store float16 weights (half the file size)
    # start from this belief (path or shipped name; its architecture and variant), e.g. the one of
    # the net the blueprint was fine-tuned from
    init: str = ""
    # a search's recorded games (lbs-pz search-games) with this blueprint: part of every step
    # replays them, so the belief also learns the positions the search leads to
    search_games: str = ""
    # with --search-games: the fraction of each step's games replayed from them (the last tenth of
    # them is held out for validation)
    search_fraction: float = 0.5
    # where the training games are played: inline (this process) | ray (Ray workers stream them: the
    # same games and results)
    backend: str = "inline"
    # with --backend ray: workers playing games (0: every CPU of the cluster)
    workers: int = 0
    # with --backend ray: the Ray cluster's address (none: a local Ray)
    address: str = ""
    # a checkpoint of an earlier train-belief run (not --half) to continue
    resume: str = ""
    # learning curve CSV (+ PNG); "": OUT stem + .curve.csv; "none": off
    curve: str = ""
    # TensorBoard folder: the curve's rows, the losses and the throughput as scalars, the update
    # count the step ("": off; the [tensorboard] extra)
    tensorboard: str = ""
    progress: bool = True            # a progress bar


# --- train-value --------------------------------------------------------------------------------

@dataclasses.dataclass
class ValueTrainConfig:
    """Every hyper-parameter of a `lbs-pz train-value` run (one option each)."""
    blueprint: str = "strong"     # blueprint spec (any kind: the spec list below)
    players: int = 2              # players of the game variant
    hand_size: int = 0            # 0: the standard rule
    colors: int = 5               # colors of the game variant
    ranks: int = 5                # ranks of the game variant
    max_information_tokens: int = 8  # information tokens of the game variant
    max_life_tokens: int = 3      # life tokens of the game variant
    minutes: float = 10.0         # wall-clock budget (0: no limit)
    steps: int = 0                # 0: until the time budget
    games_per_step: int = 64      # fresh self-play games of the blueprint per step
    batch_size: int = 1024        # positions per optimisation step
    lr: float = 1e-3              # Adam learning rate
    hidden: int = 256             # width of the two hidden layers
    # fraction of games with one random move, whose later positions are trained on (the
    # positions a search asks about after a move the blueprint would not make)
    off_policy: float = 0.0
    val_games: int = 200          # held-out games for the validation MSE
    seed: int = 0                 # run seed of the TRAIN deal stream
    threads: int = 1              # torch threads
    out: str = "value.pt"         # checkpoint file written
    # minutes of training between two checkpoints (0: none by time; a killed run loses at most that
    # much)
    save_minutes: float = SAVE_MINUTES
    resume: str = ""              # a checkpoint of an earlier train-value run to continue
    # where the training games are played: inline (this process) | ray (Ray workers stream them: the
    # same games and results)
    backend: str = "inline"
    # with --backend ray: workers playing games (0: every CPU of the cluster)
    workers: int = 0
    # with --backend ray: the Ray cluster's address (none: a local Ray)
    address: str = ""
    # learning curve CSV (+ PNG); "": OUT stem + .curve.csv; "none": off
    curve: str = ""
    # TensorBoard folder: the curve's rows, the losses and the throughput as scalars, the update
    # count the step ("": off; the [tensorboard] extra)
    tensorboard: str = ""
    progress: bool = True         # a progress bar


# --- train-blueprint ----------------------------------------------------------------------------

@dataclasses.dataclass
class BlueprintTrainConfig:
    """Every hyper-parameter of a run (the `lbs-pz train-blueprint` options)."""
    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: int = 0            # 0: the standard rule (5, or 4 with 4+ players)
    # start: PATH (distill / train-blueprint) | lstm:PATH | distill:SPEC
    init: str = ""
    init_minutes: float = 3.0     # with --init distill:SPEC: minutes of that distillation first
    minutes: float = 30.0         # wall-clock budget of this invocation
    updates: int = 0              # stop after this many updates in total (0: no limit)
    # the net's architecture (unset: paper; with --init PATH: the start's, which --arch must match;
    # with --init distill:SPEC: the net distilled, unset: distill's default)
    arch: Optional[str] = None
    # width of the LSTM and the MLP (unset: the preset's, 256; with --init PATH: the start's, which
    # --hidden must match)
    hidden: Optional[int] = None
    num_actors: int = 64          # games played at once
    act_steps: int = 2            # batched moves of every actor between two updates
    batch_size: int = 32          # games per update
    lr: Optional[float] = None    # None: SCRATCH 2.5e-4, or FINETUNE's with --init
    adam_eps: float = 1.5e-5
    gamma: float = 0.999
    n_step: int = 3
    target_every: int = 250       # updates between target-network copies
    grad_clip: float = 5.0
    eps: Optional[float] = None   # actor 0's epsilon (None: SCRATCH 0.4, or FINETUNE's with --init)
    eps_alpha: Optional[float] = None  # actor i: eps ** (1 + alpha i / (N - 1)) (None: preset)
    anchor_weight: Optional[float] = None  # hinge toward the start net's greedy move (None: preset)
    anchor_margin: float = 0.5    # margin of that hinge (points of Q)
    anchor_half_life: float = 0.0  # updates over which the anchor weight halves (0: constant)
    replay_games: int = 4000
    learning_starts: int = 64     # own games stored before batches use them
    priority_exponent: float = 0.9
    priority_eta: float = 0.9
    is_exponent: float = 0.6
    demo_bot: str = ""            # "" (off) or a rule bot: random simple weak medium strong
    demo_fraction: float = 0.25
    margin: float = 0.8
    life_penalty: float = 0.0     # training reward shaping: points lost per misplay (0: off)
    demo_weight: float = 1.0
    demo_actors: int = 64
    pretrain_updates: int = 0     # updates on demonstrations only before the agent acts
    demo_replay_games: int = 2000
    eval_every: int = 500         # updates (0: only at the end)
    eval_games: int = 500
    save_every: int = 500
    # minutes of training between two checkpoints (0: none by time; a killed run loses at most that
    # much)
    save_minutes: float = SAVE_MINUTES
    seed: int = 0
    threads: int = 1
    device: str = "cpu"
    resume: str = ""
    out: str = "public_lstm.pt"
    slim_out: str = ""
    curve: str = ""               # curve CSV (+ PNG); "": OUT stem + .curve.csv; "none": off
    # TensorBoard folder: the curve's rows, the losses and the throughput as scalars, the update
    # count the step ("": off; the [tensorboard] extra)
    tensorboard: str = ""

    def __post_init__(self) -> None:
        self.arch = self.arch or None       # "": unset

    def resolved(self) -> "BlueprintTrainConfig":
        """A copy whose None fields take their preset: FINETUNE with `init`, SCRATCH without."""
        preset = FINETUNE if self.init else SCRATCH
        return dataclasses.replace(self, **{k: v for k, v in preset.items()
                                            if getattr(self, k) is None})

    def curve_path(self) -> str:
        """Where the learning curve's CSV goes ("" when off); the PNG has the same stem."""
        return curve_path(self.out, self.curve)

    def check(self) -> None:
        def need(ok, msg):
            if not ok:
                raise ValueError(msg)
        self = self.resolved()
        # resolved: the presets have filled these
        assert self.lr is not None and self.eps is not None and self.eps_alpha is not None \
            and self.anchor_weight is not None
        need(self.players in (2, 3, 4, 5), f"players must be 2..5, got {self.players}")
        need(1 <= self.colors <= 5 and 1 <= self.ranks <= 5,
             f"colors and ranks must be 1..5, got {self.colors}, {self.ranks}")
        need(self.hand_size >= 0, f"hand_size must be >= 0, got {self.hand_size}")
        need(isinstance(self.init, str), f"init must be a string, got {self.init!r}")
        if self.init.startswith("distill:"):
            need(self.init[len("distill:"):].strip() != "",
                 "--init distill:SPEC needs a teacher blueprint spec after 'distill:'")
            need(self.init_minutes > 0, f"init_minutes must be > 0, got {self.init_minutes}")
        need(self.anchor_weight >= 0, f"anchor_weight must be >= 0, got {self.anchor_weight}")
        need(self.anchor_margin >= 0, f"anchor_margin must be >= 0, got {self.anchor_margin}")
        need(self.anchor_half_life >= 0,
             f"anchor_half_life must be >= 0, got {self.anchor_half_life}")
        need(self.anchor_weight == 0 or self.init or self.resume,
             "anchor_weight > 0 needs a start net: give --init")
        check_arch(self, BLUEPRINT_ARCH)
        need(self.arch not in MAX_CENTRED,
             f"--arch {self.arch} centres Q on the best legal move; Q-learning trains "
             f"mean-centred heads: choose one of "
             f"{', '.join(a for a in ARCH_PRESETS if a not in MAX_CENTRED)}")
        check_games_held(self)
        check_run_seed(self.seed)
        check_budget(self.minutes, self.updates)
        for name in ("num_actors", "act_steps", "batch_size", "n_step", "target_every",
                     "replay_games", "learning_starts", "eval_games", "save_every",
                     "demo_actors", "demo_replay_games", "threads"):
            need(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        need(self.learning_starts <= self.replay_games,
             f"learning_starts ({self.learning_starts}) must be <= replay_games "
             f"({self.replay_games})")
        need(self.batch_size <= self.replay_games, "batch_size must be <= replay_games")
        need(self.lr > 0, f"lr must be > 0, got {self.lr}")
        need(0 < self.gamma <= 1, f"gamma must be in (0, 1], got {self.gamma}")
        need(0 <= self.eps <= 1, f"eps must be in [0, 1], got {self.eps}")
        need(self.eps_alpha >= 0, f"eps_alpha must be >= 0, got {self.eps_alpha}")
        need(0 <= self.demo_fraction <= 1,
             f"demo_fraction must be in [0, 1], got {self.demo_fraction}")
        need(self.margin >= 0, f"margin must be >= 0, got {self.margin}")
        need(self.life_penalty >= 0, f"life_penalty must be >= 0, got {self.life_penalty}")
        need(self.eval_every >= 0 and self.updates >= 0 and self.pretrain_updates >= 0,
             "eval_every, updates and pretrain_updates must be >= 0")
        need(self.device == "cpu" or self.device.startswith("cuda"),
             f"device must be cpu or cuda[:i], got {self.device!r}")
        if self.demo_bot:
            need(self.demo_bot in BOT_NAMES,
                 f"demo_bot must be one of {', '.join(BOT_NAMES)} (or empty), "
                 f"got {self.demo_bot!r}")


# The values of the None fields of BlueprintTrainConfig but the architecture's: from
# scratch, and fine-tuning a start (--init).
SCRATCH: Dict[str, Any] = dict(lr=2.5e-4, eps=0.4, eps_alpha=7.0, anchor_weight=0.0)
FINETUNE: Dict[str, Any] = dict(lr=5e-5, eps=0.05, eps_alpha=3.0, anchor_weight=1.0)
BLUEPRINT_ARCH = "paper"      # the architecture of a new train-blueprint net (arch None)
DISTILL_ARCH = "card_features"  # the architecture of a new distill net (arch None)


# --- distill ------------------------------------------------------------------------------------

@dataclasses.dataclass
class DistillConfig:
    """Every hyper-parameter of a run (the `lbs-pz distill` options)."""
    teacher: str = "strong"       # blueprint spec of the teacher (any kind: the spec list below)
    out: str = "distilled.pt"
    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: int = 0            # 0: the standard rule (5, or 4 with 4+ players)
    minutes: float = 30.0         # wall-clock budget of this invocation
    updates: int = 0              # stop after this many updates in total (0: no limit)
    # the net's architecture (unset: card_features; with --init: the start's, or a preset that
    # differs from it only in the value head, i.e. dueling, value_hidden, value_lstm, to give the
    # start that head)
    arch: Optional[str] = None
    # width of the LSTM and the MLP (unset: the preset's, 256; with --init: the start's, which
    # --hidden must match)
    hidden: Optional[int] = None
    lr: float = 1e-3
    lr_final: float = 0.1         # the learning rate falls linearly to lr * lr_final over the run
    value_weight: float = 0.05    # weight of the return-to-go regression of the VDN Q-sum (0: off)
    # fraction of teacher games with one random move (Q off the teacher's path)
    explore: float = 0.5
    # a learned belief for the teacher (path or shipped name): in --world-fraction of the explore
    # games, the mover's hand is first re-dealt from it, as in a search's worlds
    world_belief: str = ""
    # with --world-belief: the fraction of explore games played on in a belief's world
    world_fraction: float = 0.5
    # a search's recorded games (lbs_pz.eval.search_games): part of every batch imitates the
    # search's moves
    search_games: str = ""
    # with --search-games: the fraction of each batch's games taken from them
    search_fraction: float = 0.5
    # with --search-games: the cross-entropy weight of the moves where the search left the
    # blueprint's
    deviation_weight: float = 1.0
    init: str = ""                # start from this public-LSTM checkpoint (path or shipped name)
    # fit the value head alone (the moves stay exactly the same): the start's, or the new one of
    # --arch (e.g. --arch conventions_value over a conventions_maxq start)
    value_only: bool = False
    batch_size: int = 32          # games per update
    # teacher games played together (one block; split among the workers with --backend ray)
    num_actors: int = 256
    # teacher moves per actor between two updates (act_steps x num_actors moves, in whole games)
    act_steps: int = 8
    buffer_games: int = 4096      # finished games kept in memory to draw batches from
    grad_clip: float = 5.0
    eval_every: int = 200         # updates between held-out evaluations (0: only at the end)
    eval_games: int = 200         # EVAL-stream deals for agreement and self-play
    save_every: int = 500         # updates between checkpoints
    # minutes of training between two checkpoints (0: none by time; a killed run loses at most that
    # much)
    save_minutes: float = SAVE_MINUTES
    seed: int = 0
    threads: int = 1
    device: str = "cpu"
    # where the teacher's games are played: inline (this process) | ray (Ray workers stream them:
    # the same games and results)
    backend: str = "inline"
    # with --backend ray: workers playing games (0: every CPU of the cluster)
    workers: int = 0
    # with --backend ray: the Ray cluster's address (none: a local Ray)
    address: str = ""
    resume: str = ""              # a checkpoint of an earlier distill run to continue
    # learning curve CSV (+ PNG); "": OUT stem + .curve.csv; "none": off
    curve: str = ""
    # TensorBoard folder: the curve's rows, the losses and the throughput as scalars, the update
    # count the step ("": off; the [tensorboard] extra)
    tensorboard: str = ""

    def __post_init__(self) -> None:
        self.arch = self.arch or None       # "": unset

    def check(self) -> None:
        def need(ok, msg):
            if not ok:
                raise ValueError(msg)
        need(isinstance(self.teacher, str) and self.teacher.strip() != "",
             "give --teacher SPEC (a blueprint spec)")
        need(self.players in (2, 3, 4, 5), f"players must be 2..5, got {self.players}")
        need(1 <= self.colors <= 5 and 1 <= self.ranks <= 5,
             f"colors and ranks must be 1..5, got {self.colors}, {self.ranks}")
        check_run_seed(self.seed)
        check_budget(self.minutes, self.updates)
        check_arch(self, DISTILL_ARCH)
        check_games_held(self)
        for name in ("batch_size", "num_actors", "act_steps", "buffer_games",
                     "eval_games", "save_every", "threads"):
            need(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        need(self.batch_size <= self.buffer_games, "batch_size must be <= buffer_games")
        need(self.lr > 0, f"lr must be > 0, got {self.lr}")
        need(0 < self.lr_final <= 1, f"lr_final must be in (0, 1], got {self.lr_final}")
        need(self.value_weight >= 0, f"value_weight must be >= 0, got {self.value_weight}")
        need(0 <= self.explore <= 1, f"explore must be in [0, 1], got {self.explore}")
        need(0 <= self.world_fraction <= 1,
             f"world_fraction must be in [0, 1], got {self.world_fraction}")
        need(0 < self.search_fraction <= 1,
             f"search_fraction must be in (0, 1], got {self.search_fraction}")
        need(self.deviation_weight > 0,
             f"deviation_weight must be > 0, got {self.deviation_weight}")
        need(not self.search_games or os.path.isfile(self.search_games),
             f"--search-games {self.search_games}: no such file")
        need(not (self.search_games and self.value_only),
             "--search-games teaches moves; --value-only keeps every move: use one")
        need(not self.world_belief or self.explore > 0,
             "--world-belief re-deals hands in the explore games: give --explore > 0")
        need(not self.value_only or self.init or self.resume,
             "--value-only fits the value head of an existing net: give --init CHECKPOINT")
        need(self.grad_clip > 0, f"grad_clip must be > 0, got {self.grad_clip}")
        need(self.eval_every >= 0 and self.updates >= 0 and self.hand_size >= 0,
             "eval_every, updates and hand_size must be >= 0")
        need(self.device == "cpu" or self.device.startswith("cuda"),
             f"device must be cpu or cuda[:i], got {self.device!r}")
        need(bool(self.out), "give --out PATH")
