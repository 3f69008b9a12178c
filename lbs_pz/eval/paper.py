"""The LBS paper's tables, reproduced and extended: what `lbs-pz paper` runs and builds.

    cells = plan("quick")                       # every (table, variant, blueprint, method) cell
    results = run_cells(cells, "paper/games.jsonl", workers=2)   # resumable
    report = build_report(cells, results)       # tables (Markdown), JSON, figure data

A cell is one search method on one blueprint in one game variant over a number of
evaluation deals (`Cell`). Every cell's games go to ONE compare log through
`lbs_pz.eval.backends.collect`, keyed by method, settings, variant and run seed: a rerun
plays only the games the log lacks, so an interrupted run resumes where it stopped and
its tables equal an uninterrupted run's. The repository keeps a finished run's logs
gzipped (results/paper_full/games.jsonl.gz, lbs_games.jsonl.gz): a report reads one as it
is, and a run with no live log makes it from its .gz first (`lbs_pz.files.seed_log`).

The tables:
1. variants: 5-card, 6-card and 7-card with at most 4 information tokens (the paper's
   Table 1); blueprint, SPARTA and LBS-16 on the strong bot, each mean +- s.e.m. and
   seconds per game, the paired gain over the blueprint on the same deals, the share of
   SPARTA's gain LBS keeps and its speed-up over SPARTA (naming the machines when the
   two were timed on different ones: each game records its own). SPARTA whose exact
   belief would not fit its memory cap is not run: the cell says why (its size and the
   memory it needs).
2. depths and strengths (the paper's Table 2): rows blueprint, SPARTA, LBS-inf, LBS-32 ..
   LBS-1, columns the blueprints of `STRENGTHS`, with this package's default belief and
   with the learned belief alone (the paper's LBS) where one ships for the blueprint.
3. beyond: LBS-16 on every seat against one seat, a fixed test-time budget (depth x
   worlds constant), and the highest score: the search of `HIGHEST_SEARCH` on every
   seat, chosen on deals no figure uses (docs/experiments/highest_score.md).

A full run takes hours, so it plays in passes (`schedule`): first the cells of the
headline figures (Table 1 and the highest score) to all their deals, then every other
cell to 20 deals, then to 100, then to all: a run stopped at any time has tables over
every cell it reached, each saying its deals. Each game
records the machine that timed it; one logged before games did is played again once, to
be timed, and a speed-up compares the two searches on the deals both played on one
machine (`paired_speedup`).

The run's files: every table, figure and cache is written to a temporary file in its
folder and renamed over it (`replaced`, `write_atomic`), so a killed run leaves the
former file whole; the belief curves' cache records what made it (`curves_made_for`)
and a damaged one is an error naming it (`read_curves`); the retrained belief records
its run (`retrained_made_for`) and another run's belief or recorded games in the folder
are refused (`check_retrained`).

`SIZES` holds the deals and worlds of each size; "tiny" runs the same code paths on a
3-colour, 3-rank game in seconds (the tests), "quick" in minutes, "full" is what
RESULTS.md quotes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from lbs_pz.agents import RuleBot, blueprint_identity, load_blueprint
from lbs_pz.checks import as_choice, is_real
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.eval.backends import collect
from lbs_pz.eval.belief_quality import (phase_means, phase_table, plot as plot_belief_curves,
                                        run_quality)
from lbs_pz.eval.report import summarize
from lbs_pz.files import (check_output_path, open_regular, read_lines, readable_log,
                           replaced, seed_log, write_atomic)
from lbs_pz.models import (CheckpointError, check_trained_for, find_model, load_checkpoint,
                           shipped_models)
from lbs_pz.models.checkpoint import describe_game
from lbs_pz.optional import torch_available
from lbs_pz.search.beliefs.exact import DEFAULT_MEMORY_CAP, BeliefMemoryError, ExactBelief
from lbs_pz.search.methods import MethodSpec
from lbs_pz.search.recorded_games import run_key

# The blueprints of Table 2, weakest first (the best neural net plays 2-player 5x5 only).
STRENGTHS = ("weak", "medium", "strong", "lstm:conventions_expert_value_2p")
DEPTHS = ("lbs-inf", "lbs-32", "lbs-16", "lbs-8", "lbs-4", "lbs-2", "lbs-1")
BUDGET_DEPTHS = (1, 4, 16, 64)     # the fixed budget's depths: worlds = budget / depth
ROUNDS = (20, 100)                 # deals per cell after each pass but the last (`schedule`)
HIGHEST_SCORE = "highest score"
# The highest-score row's search (method, blueprint), every seat searching at the run's
# worlds: the best of four candidates on run seed 1's deals by the rule written down in
# docs/experiments/highest_score.md.
HIGHEST_SEARCH = ("lbs-16", "strong")
RETRAINED = "lbs-16, belief retrained on its own games"
RETRAINED_BELIEF = "belief_on_lbs.pt"       # its belief, in the run's folder
RETRAINED_GAMES = "lbs_games.jsonl"         # the games it is retrained on, in the run's folder
CURVES = "belief_curves.json"               # the belief curves' cache, in the run's folder
MAX_CURVES_BYTES = 64 << 20     # the largest curves cache read (a full run's: 0.4 MB)
# made_for fields of the curves cache that caches written before them lack (read as matching)
CURVES_LATER = ("blueprint", "learned")
NOT_PLAYED = "not played yet"     # a cell whose games a run has not reached
UNRECORDED = "an unrecorded machine"    # games logged before the log named the machine
# LBS-16's speed-up over SPARTA in Table 1, as `paired_speedup` gives it
TIMING = ("speedup", "timed_on", "timed_deals")


@dataclasses.dataclass(frozen=True)
class Size:
    """Deals and worlds of one size of the run."""

    base: tuple            # the game every variant starts from, as (name, value) pairs
    hands: tuple           # hand sizes of Table 1's variants (the last with 4 info tokens)
    strengths: tuple       # Table 2's blueprints
    main: int              # deals of the strong bot's 5-card blueprint, SPARTA and LBS-16
    lbs: int               # deals of every other 5-card LBS cell
    sparta: int            # deals of every other SPARTA cell
    variant: int           # deals of each 6- and 7-card cell
    worlds: int            # sampled worlds per decision
    budget: int            # rollout steps per world of the fixed-budget cells (x worlds)
    belief_games: int      # the strong bot's games scored by the belief curves
    best: int              # deals of the highest-score row
    retrain_games: int     # LBS-16's own games (training deals) its belief is retrained on
    retrain_steps: int     # update steps of that retraining


SIZES = {
    "tiny": Size(base=(("colors", 3), ("ranks", 3)), hands=(3, 4, 5),
                 strengths=("weak", "strong"), main=3, lbs=2, sparta=2, variant=2,
                 worlds=8, budget=4, belief_games=1, best=2, retrain_games=4,
                 retrain_steps=2),
    "quick": Size(base=(), hands=(5, 6, 7), strengths=STRENGTHS, main=20, lbs=4, sparta=4,
                  variant=2, worlds=64, budget=16, belief_games=3, best=2,
                  retrain_games=20, retrain_steps=20),
    "full": Size(base=(), hands=(5, 6, 7), strengths=STRENGTHS, main=500, lbs=300,
                 sparta=200, variant=200, worlds=256, budget=16, belief_games=100, best=1000,
                 retrain_games=2000, retrain_steps=600),
}


@dataclasses.dataclass(frozen=True)
class Cell:
    """One method on one blueprint in one variant over `deals` evaluation deals."""

    table: str             # "variants" | "depths" | "beyond"
    variant: str           # e.g. "5-card", "7-card, 4 tokens"
    game: tuple            # HanabiConfig keyword arguments, as (name, value) pairs
    spec: MethodSpec
    deals: int
    row: str               # the row's name in its table
    column: str            # the column's name in its table
    headline: bool = False  # played to all its deals in the first pass (`schedule`)

    @property
    def game_kwargs(self) -> dict:
        return dict(self.game)


def variant_name(hand: int, tokens: Optional[int]) -> str:
    return f"{hand}-card" + (f", {tokens} tokens" if tokens else "")


def variants(size: Size) -> Dict[str, tuple]:
    """{name: game kwargs} of Table 1: the base game with each hand size of `size`, the
    last with at most 4 information tokens (the paper's 7-card setting)."""
    out = {}
    for i, hand in enumerate(size.hands):
        tokens = 4 if i == len(size.hands) - 1 else None
        game = dict(size.base, hand_size=hand)
        if tokens:
            game["max_information_tokens"] = tokens
        out[variant_name(hand, tokens)] = tuple(sorted(game.items()))
    return out


def _plays(blueprint, game: HanabiConfig) -> bool:
    """Whether `blueprint` (loaded) plays `game`: a neural net plays the variant it was
    made for (its `config`), a rule bot any."""
    made_for = getattr(blueprint, "config", None)
    return made_for is None or made_for == game


def retrain_spec(size_name: str) -> MethodSpec:
    """The search whose own games retrain the strong bot's belief: LBS-16 with the
    default belief at the run's worlds per decision (Table 2's strong LBS-16)."""
    return MethodSpec("lbs-16", "strong", rollouts=SIZES[size_name].worlds)


def retrain_game(size_name: str) -> HanabiConfig:
    """The game the retrained belief plays: Table 1's first variant."""
    size = SIZES[size_name]
    return HanabiConfig(**dict(size.base, hand_size=size.hands[0]))


def retrained_made_for(size_name: str, seed: int) -> dict:
    """What makes the retrained belief of a run of size `size_name` and run seed `seed`,
    as its checkpoint records it (info["paper"]): the size, the seed, the search whose
    games it learns from (method and worlds), their number and the update steps."""
    size, spec = SIZES[size_name], retrain_spec(size_name)
    return {"size": size_name, "seed": seed, "method": spec.method, "worlds": spec.rollouts,
            "games": size.retrain_games, "steps": size.retrain_steps}


def _run_text(made: dict) -> str:
    """A run as `retrained_made_for` records it, in words ("a --quick run (seed 0: 20 steps
    on 20 games of lbs-16 at 64 worlds)")."""
    return (f"a --{made.get('size')} run (seed {made.get('seed')}: {made.get('steps')} steps "
            f"on {made.get('games')} games of {made.get('method')} at {made.get('worlds')} "
            f"worlds)")


def check_retrained(out: str, size_name: str, seed: int, play: bool = True) -> None:
    """Check the retrained belief's files in the run folder `out` against a run of size
    `size_name` and run seed `seed`: ValueError (one line naming the file, what made it,
    what this run needs and what to do) if OUT/belief_on_lbs.pt is another run's belief
    (another size, seed, game or strong bot, by fingerprint: it records them; a belief
    retrained before beliefs recorded their run is judged by the steps and seed its info
    holds), or, with `play` and no belief yet, if OUT/lbs_games.jsonl holds another run's
    recorded games (its first line names their run). A run never reuses another's
    belief: the games it plays with it would stand for this run's."""
    path = os.path.join(out, RETRAINED_BELIEF)
    games = readable_log(os.path.join(out, RETRAINED_GAMES))    # or its committed .gz
    fix = f"delete {path} and {games} to retrain it here, or give this run another --out"
    want = retrained_made_for(size_name, seed)
    if os.path.exists(path):
        check_output_path(path, "--out")            # a folder or a FIFO: refused unopened
        try:
            ckpt = load_checkpoint(path, kind="belief")
        except CheckpointError as err:
            raise ValueError(f"{err}; {fix}") from None
        info, problems = ckpt["info"], []
        made = info.get("paper")
        if isinstance(made, dict):
            if made != want:
                problems.append(f"it was retrained by {_run_text(made)}")
        elif (info.get("steps"), info.get("seed")) != (want["steps"], seed):
            sizes = [f"--{n}" for n, z in SIZES.items() if z.retrain_steps == info.get("steps")]
            problems.append(f"it was trained for {info.get('steps')} steps with run seed "
                            f"{info.get('seed')}" + (f" (a {sizes[0]} run's)" if sizes else ""))
        problems += check_trained_for(ckpt, blueprint_identity(RuleBot("strong")),
                                      retrain_game(size_name), allow_mismatch=True)
        if problems:
            raise ValueError(f"--out: {path} is not this run's retrained belief: "
                             f"{'; '.join(problems)}; this is {_run_text(want)} in the game "
                             f"{describe_game(retrain_game(size_name))}; {fix}")
        return
    if not play or not os.path.isfile(games):
        return
    check_output_path(games, "--out")
    run = retrain_run(size_name, seed)
    with os.fdopen(open_regular(games, os.O_RDONLY, "--out"), "rb") as f:
        first = next((line for _, _, line in read_lines(f, games, "--out") if line.strip()),
                     None)
    if first is None:
        return      # no line: nothing recorded yet
    try:
        theirs = json.loads(first)["run"]
    except (TypeError, ValueError, KeyError, IndexError, RecursionError):
        return      # not a recorded game: the reader says so, naming the line
    if theirs == run:
        return
    try:
        spec, game, their_seed = json.loads(theirs)
        text = (f"{spec['method']} at {spec['rollouts']} worlds in the game "
                f"{describe_game(game)}, run seed {their_seed}")
    except (TypeError, ValueError, KeyError, IndexError, RecursionError):
        text = "another search, game or seed"
    raise ValueError(f"--out: {games} holds the recorded games of another run ({text}); "
                     f"this is {_run_text(want)} in the game "
                     f"{describe_game(retrain_game(size_name))}, which records its own there "
                     f"to retrain the belief; delete {games}, or give this run another --out")


def retrain_run(size_name: str, seed: int) -> str:
    """The "run" each game of OUT/lbs_games.jsonl records (`run_key` of the retraining
    search, game and seed)."""
    return run_key(retrain_spec(size_name).to_dict(),
                   dataclasses.asdict(retrain_game(size_name)), seed)


def plan(size_name: str, retrained_belief: Optional[str] = None) -> List[Cell]:
    """Every cell of a run of size `size_name` ("tiny", "quick" or "full").
    retrained_belief: the path of the strong bot's belief retrained on LBS-16's own games
    (the LBS paper's first future direction; `lbs-pz paper` trains it into its folder):
    adds the "beyond" row of LBS-16 with that belief."""
    as_choice(size_name, "size", SIZES)
    size = SIZES[size_name]
    worlds: Dict[str, Any] = {"rollouts": size.worlds}
    named = variants(size)
    first = next(iter(named))
    cells: List[Cell] = []
    for name, game in named.items():            # Table 1
        deals = size.main if name == first else size.variant
        for method in ("blueprint", "sparta", "lbs-16"):
            cells.append(Cell("variants", name, game, MethodSpec(method, "strong", **worlds),
                              deals, method, name, headline=True))
    game = named[first]
    config = HanabiConfig(**dict(game))
    for bp in size.strengths:                   # Table 2
        blueprint = load_blueprint(bp)          # once: a net's file is read here only
        if not _plays(blueprint, config):
            continue
        for method in ("blueprint", "sparta") + DEPTHS:
            main = bp == "strong" and method in ("blueprint", "sparta", "lbs-16")
            deals = size.main if main else (size.sparta if method == "sparta" else size.lbs)
            cells.append(Cell("depths", first, game, MethodSpec(method, bp, **worlds), deals,
                              method, bp, main))
        if find_model("belief", blueprint_identity(blueprint), config) is None:
            continue                            # the paper's LBS needs a learned belief
        for method in DEPTHS:                   # the paper's LBS: the learned belief alone
            cells.append(Cell("depths", first, game,
                              MethodSpec(method, bp, belief="learned", **worlds),
                              size.lbs, f"{method} (learned belief alone)", bp))
    cells.append(Cell("beyond", first, game, MethodSpec("lbs-16", "strong",
                                                        search_seats=(0, 1), **worlds),
                      size.lbs, "lbs-16 on both seats", "strong"))
    steps = size.budget * size.worlds
    for depth in BUDGET_DEPTHS:
        cells.append(Cell("beyond", first, game,
                          MethodSpec(f"lbs-{depth}", "strong", rollouts=max(steps // depth, 1)),
                          size.lbs, f"lbs-{depth} x {max(steps // depth, 1)} worlds "
                          f"(budget {steps} steps)", "strong"))
    if retrained_belief:
        cells.append(Cell("beyond", first, game,
                          MethodSpec("lbs-16", "strong", belief_checkpoint=retrained_belief,
                                     **worlds), size.lbs, RETRAINED, "strong"))
    method, best = HIGHEST_SEARCH
    cells.append(Cell("beyond", first, game, MethodSpec(method, best, search_seats=(0, 1),
                                                        **worlds),
                      size.best, HIGHEST_SCORE, best, headline=True))
    return cells


def _lead(cell: Cell) -> int:
    """The order of the cells that are not headline cells in each pass: the rows beyond
    the paper, then Table 2 (a stable sort keeps `plan`'s order within each)."""
    return 1 if cell.table == "beyond" else 2


def schedule(cells: Sequence[Cell], rounds: Sequence[int] = ROUNDS) -> List[List[tuple]]:
    """The passes of a run, each a list of (cell, deals to have played): first the
    headline cells to all their deals, then every other cell to each of `rounds`, then
    to all its deals (a cell appears in a pass only if the pass adds deals to it). In
    each pass the rows beyond the paper come first (`_lead`), then Table 2. Each
    pass only adds games to the log, so a long run stopped in any pass has every cell at
    the deals of the passes before, and the tables written after each pass are whole."""
    passes = [[(c, c.deals) for c in cells if c.headline]]
    rest = sorted((c for c in cells if not c.headline), key=_lead)
    reached = {c: 0 for c in rest}
    for limit in list(rounds) + [None]:
        step = []
        for c in rest:
            target = c.deals if limit is None else min(c.deals, limit)
            if target > reached[c]:
                step.append((c, target))
                reached[c] = target
        if step:
            passes.append(step)
    return [p for p in passes if p]


def sparta_fits(cell: Cell, seed: int = 0, memory_cap: int = DEFAULT_MEMORY_CAP) -> Optional[str]:
    """None if SPARTA's exact belief over seat 0's hand fits `memory_cap` (SPARTA's own
    cap) at the first deal of `cell`, else the message naming the belief's size and the
    memory it needs (the cell is then not run: a clear line, never an out-of-memory
    kill). The hands are counted before any is stored, so a refusal costs no memory."""
    config = HanabiConfig(**cell.game_kwargs)
    deal = int(next(iter(deal_seeds(EVAL, seed, 0, 1))))
    state = HanabiState(config, seed=deal)
    try:
        hands = ExactBelief(None, memory_cap=memory_cap).initial_count(state, 0)
    except BeliefMemoryError as err:
        return str(err)
    if getattr(load_blueprint(cell.spec.blueprint), "counterfactual_mask", None) is None:
        return (f"SPARTA's exact belief filters its {hands:,} candidate hands "
                f"through the blueprint at every partner move; {cell.spec.blueprint} has no "
                f"C filter (a rule bot's), so that is a forward pass per hand: not run on a "
                f"CPU")
    return None


def run_cells(cells: Sequence[Cell], log: str, seed: int = 0, backend: str = "process",
              workers: Optional[int] = None, progress: bool = True,
              on_cell=None, on_pass=None, rounds: Sequence[int] = ROUNDS,
              play: bool = True) -> Dict[Cell, object]:
    """Play every cell in the passes of `schedule` (games already in `log` are not played
    again, but for those logged without the machine that timed them: see `collect`'s
    `timed`): {cell: list of per-game results, or the str saying why it was not run}.
    on_cell(i, n, cell, deals) is called before each cell of a pass (progress) and
    on_pass(k, passes, results so far) after each pass (write the tables).
    play: False -> play nothing, one pass reading the games `log` holds (the tables of a
    run still under way or stopped; `log` may be gzipped). Playing, a missing `log` is
    first made from its committed copy `log`.gz if there is one (`lbs_pz.files.seed_log`),
    so that a run on a fresh clone continues the run the repository keeps."""
    if play:
        seed_log(log, "game log")
    out: Dict[Cell, object] = {}
    passes = schedule(cells, rounds) if play else [[(c, c.deals) for c in cells]]
    for k, step in enumerate(passes):
        for i, (cell, deals) in enumerate(step):
            if isinstance(out.get(cell), str):
                continue
            if on_cell is not None:
                on_cell(i, len(step), cell, deals)
            if cell.spec.method == "sparta":
                why = sparta_fits(cell, seed)
                if why is not None:
                    out[cell] = why
                    continue
            with warnings.catch_warnings():  # "no value: rollouts to the end" is in the notes
                warnings.filterwarnings("ignore", r"LBS-\d+: .* has no value", UserWarning)
                games = collect([cell.spec], cell.game_kwargs, deals, seed=seed,
                                backend=backend, workers=workers, show_progress=progress,
                                jsonl=log, play=play, timed=True)
            out[cell] = games[cell.spec.label()]
        if on_pass is not None:
            on_pass(k, len(passes), out)
    return out


def curves_made_for(size_name: str, seed: int) -> dict:
    """What the belief curves of a run of size `size_name` and run seed `seed` are made of
    (their cache records it): size, seed, games, the beliefs scored, the strong bot's
    fingerprint and the sha256 of the learned belief (None: not scored)."""
    size = SIZES[size_name]
    config, bot = HanabiConfig(**dict(size.base)), RuleBot("strong")
    identity = blueprint_identity(bot)
    beliefs = ["exact", "grounded"]
    learned = find_model("belief", identity, config) if torch_available() else None
    if learned:
        beliefs.append("learned")
    return {"size": size_name, "seed": seed, "games": size.belief_games, "beliefs": beliefs,
            "blueprint": identity["fingerprint"] or identity["spec"],
            "learned": next((m["sha256"] for m in shipped_models() if m["name"] == learned),
                            None)}


def _made_for_matches(stored, wanted: dict) -> bool:
    """Whether a cache's made_for is `wanted`; one written before the CURVES_LATER fields
    were recorded matches on the others."""
    if not isinstance(stored, dict):
        return False
    if not any(k in stored for k in CURVES_LATER):
        wanted = {k: v for k, v in wanted.items() if k not in CURVES_LATER}
    return stored == wanted


def read_curves(cache: str, made_for: dict) -> Optional[dict]:
    """The belief curves the cache file `cache` holds if it was made for `made_for`; None
    if there is no such file or it was made for another run. ValueError naming the file
    and what to do if it is not a regular file, is larger than MAX_CURVES_BYTES, or is not
    a whole cache of the layout `belief_curves` writes (a file cut by a disk or an old
    run, or edited)."""
    if not os.path.lexists(cache):
        return None
    fix = "delete it to compute the belief curves again"
    try:
        with os.fdopen(open_regular(cache, os.O_RDONLY, "the belief curves' cache"),
                       "rb") as f:
            data = f.read(MAX_CURVES_BYTES + 1)
    except OSError as err:
        raise ValueError(f"{cache}: cannot read the belief curves' cache ({err.strerror}); "
                         f"{fix}") from None
    if len(data) > MAX_CURVES_BYTES:
        raise ValueError(f"{cache}: larger than {MAX_CURVES_BYTES:,} bytes, not a belief "
                         f"curves' cache this program writes; {fix}")
    try:
        stored = json.loads(data)
    except (ValueError, RecursionError) as err:     # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{cache} is not whole JSON ({str(err)[:100]}): a cut or damaged "
                         f"belief curves' cache; {fix}") from None
    if not isinstance(stored, dict) or "made_for" not in stored:
        raise ValueError(f"{cache} is not a belief curves' cache (no made_for); {fix}")
    if not _made_for_matches(stored["made_for"], made_for):
        return None
    beliefs, games = made_for["beliefs"], made_for["games"]

    def numbers(value, length=None) -> bool:
        return isinstance(value, list) and (length is None or len(value) == length) and all(
            is_real(x, finite=True) for x in value)
    ce, seconds = stored.get("ce"), stored.get("seconds")
    if not (isinstance(ce, dict) and isinstance(seconds, dict)
            and numbers(stored.get("scores"), games)
            and all(isinstance(ce.get(b), list) and len(ce[b]) == games
                    and all(numbers(x) for x in ce[b]) for b in beliefs)
            and numbers([seconds.get(b) for b in beliefs])):
        raise ValueError(f"{cache}: its curves are not {games} games' cross-entropies of the "
                         f"beliefs {', '.join(beliefs)} with their seconds and scores; {fix}")
    return {"ce": {b: [np.asarray(x, dtype=float) for x in ce[b]] for b in beliefs},
            "seconds": {b: float(seconds[b]) for b in beliefs},
            "scores": np.asarray(stored["scores"])}


def belief_curves(size_name: str, seed: int = 0, progress: bool = True,
                  cache: Optional[str] = None, play: bool = True) -> Optional[dict]:
    """The belief figure's data: per-card cross-entropy of the true hand after every move
    of the strong bot's games in the base game, for the exact, grounded and (where one
    ships and torch is installed) learned beliefs (`lbs_pz.eval.belief_quality`).
    cache: a JSON file holding them; read if it was made for the same run
    (`curves_made_for`: size, seed, beliefs, the strong bot and the learned belief), else
    written, whole or not at all (`replaced`; the exact belief takes seconds per game); a
    damaged cache is a ValueError naming it (`read_curves`). play: False -> None unless
    the cache holds them."""
    size = SIZES[size_name]
    made_for = curves_made_for(size_name, seed)
    beliefs = made_for["beliefs"]
    if cache:
        curves = read_curves(cache, made_for)
        if curves is not None:
            return curves
    if not play:
        return None
    config, bot = HanabiConfig(**dict(size.base)), RuleBot("strong")
    curves = run_quality(config, bot, size.belief_games, seed, beliefs, progress=progress)
    if cache:
        text = json.dumps({"made_for": made_for, "seconds": curves["seconds"],
                           "scores": curves["scores"].tolist(),
                           "ce": {b: [x.tolist() for x in curves["ce"][b]] for b in beliefs}})
        write_atomic(cache, text.encode("utf-8"))
    return curves


# --- files ----------------------------------------------------------------------------------

def time_score_png(variant: str) -> str:
    """The file name of the score-time figure of `variant`."""
    return f"time_score_{variant.split(',')[0]}.png"


REPORT_FILES = ("paper.md", "paper.json", "belief_quality.png", "fixed_budget.png")


def check_outputs(out: str, cells: Sequence[Cell]) -> None:
    """ValueError naming the file unless every table, figure and cache a run of `cells`
    writes in the folder `out` can be written there (`lbs_pz.files.check_output_path`:
    a regular file or nothing yet), before the run plays a game."""
    for name in REPORT_FILES + (CURVES,) + tuple(dict.fromkeys(
            time_score_png(c.variant) for c in cells)):
        check_output_path(os.path.join(out, name), "--out")


# --- the report -----------------------------------------------------------------------------

def cell_stats(cell: Cell, games, blueprint_games) -> dict:
    """A cell's figures, as compare reports them (`lbs_pz.eval.report.summarize`): deals,
    mean, s.e.m., seconds per game, deviation rate and the paired gain over the blueprint
    on the deals both played ("not_run" says why instead)."""
    out = {"table": cell.table, "variant": cell.variant, "game": cell.game_kwargs,
           "row": cell.row, "column": cell.column, "method": cell.spec.label(),
           "blueprint": cell.spec.blueprint, "worlds": cell.spec.rollouts,
           "deals_asked": cell.deals}
    if isinstance(games, str) or not games:
        return dict(out, not_run=games or NOT_PLAYED)
    base = [] if isinstance(blueprint_games, str) or cell.spec.method == "blueprint" \
        else blueprint_games or []
    game = HanabiConfig(**cell.game_kwargs)
    row = summarize({"blueprint": base, "cell": games}, game.colors * game.ranks)[-1]
    out.update(deals=row["games"], mean=row["mean"], sem=row["sem"],
               seconds_per_game=row["seconds_per_game"], deviation_rate=row["deviation_rate"],
               machines=sorted({g.get("machine", UNRECORDED) for g in games}))
    if "paired_diff" in row:
        out["gain"], out["gain_sem"] = row["paired_diff"], row["paired_diff_se"]
    return out


def build_report(cells: Sequence[Cell], results: Dict[Cell, object]) -> dict:
    """{"cells": [cell_stats...], "variants": rows of Table 1, "markdown": the tables}."""
    blueprint_of = {}
    for cell in cells:
        if cell.spec.method == "blueprint":
            blueprint_of[(cell.game, cell.spec.blueprint)] = results.get(cell)
    stats = [cell_stats(c, results.get(c, NOT_PLAYED),
                        blueprint_of.get((c.game, c.spec.blueprint))) for c in cells]
    default = next((c for c in cells if c.table == "depths" and c.row == "lbs-16"
                    and c.column == "strong"), None)
    for cell, stat in zip(cells, stats):
        if cell.row == RETRAINED and default is not None and "mean" in stat:
            # against LBS-16 with the shipped belief, paired on the deals both played
            versus = cell_stats(cell, results.get(cell), results.get(default))
            if "gain" in versus:
                stat.update(vs_shipped=versus["gain"], vs_shipped_sem=versus["gain_sem"])
        if cell.table == "variants" and cell.row == "lbs-16" and "gain" in stat:
            # the share of SPARTA's gain compares gains on the same deals: SPARTA's,
            # while it has played fewer
            sparta = next((c for c in cells if c.table == "variants" and c.row == "sparta"
                           and c.variant == cell.variant), None)
            ours = results.get(cell)                # played: it has a gain
            theirs = results.get(sparta) if sparta is not None else None
            if isinstance(theirs, list) and isinstance(ours, list):
                timing = paired_speedup(theirs, ours)
                if timing is not None:
                    stat.update(zip(TIMING, timing))
                if len(theirs) < len(ours):
                    on = {g["game"] for g in theirs}
                    common = cell_stats(cell, [g for g in ours if g["game"] in on],
                                        blueprint_of.get((cell.game, cell.spec.blueprint)))
                    if "gain" in common:
                        stat.update(gain_on_sparta_deals=common["gain"])
    rows = variants_rows([s for s in stats if s["table"] == "variants"])
    markdown = "\n\n".join([_variants_table(rows),
                            _grid("Table 2: depths and strengths", stats, "depths"),
                            _grid("Beyond the paper", stats, "beyond")])
    return {"cells": stats, "variants": rows, "markdown": markdown}


def paired_speedup(slow: List[dict], fast: List[dict]) -> Optional[tuple]:
    """(the `slow` games' seconds over the `fast` ones' on the deals both played on one
    machine, that machine, those deals' number), for the machine with the most such deals;
    None when no recorded machine timed a deal of both (a ratio of two CPUs' timings says
    more about the CPUs than about the searches)."""
    best = None
    for where in sorted({g["machine"] for g in slow if "machine" in g}):
        theirs = {g["game"]: g["seconds"] for g in slow if g.get("machine") == where}
        ours = {g["game"]: g["seconds"] for g in fast
                if g.get("machine") == where and g["game"] in theirs}
        if ours and sum(ours.values()) > 0 and (best is None or len(ours) > best[2]):
            best = (sum(theirs[g] for g in ours) / sum(ours.values()), where, len(ours))
    return best


def variants_rows(stats: List[dict]) -> List[dict]:
    """Table 1's rows: per variant the blueprint's, SPARTA's and LBS-16's figures, the
    share of SPARTA's gain LBS-16 keeps (both gains on SPARTA's deals) and its speed-up
    over SPARTA: on the deals both played on one machine (`paired_speedup`; "timed_on"
    names it, "timed_deals" counts them), else the ratio of the two cells' seconds per
    game with "mixed_machines" naming the machines of each (it says little)."""
    by_variant: Dict[str, dict] = {}
    for s in stats:
        by_variant.setdefault(s["variant"], {})[s["row"]] = s
    rows = []
    for variant, row in by_variant.items():
        sparta, lbs = row.get("sparta", {}), row.get("lbs-16", {})
        out = {"variant": variant, **{k: row.get(k, {}) for k in ("blueprint", "sparta", "lbs-16")}}
        if sparta.get("gain") and "gain" in lbs:
            out["share_of_sparta_gain"] = lbs.get("gain_on_sparta_deals", lbs["gain"]) \
                / sparta["gain"]
        if "speedup" in lbs:
            out.update({key: lbs[key] for key in TIMING})
        elif sparta.get("seconds_per_game") and lbs.get("seconds_per_game"):
            out["speedup"] = sparta["seconds_per_game"] / lbs["seconds_per_game"]
            out["mixed_machines"] = (f"SPARTA on {' + '.join(sparta['machines'])}, LBS-16 "
                                     f"on {' + '.join(lbs['machines'])}")
        rows.append(out)
    return rows


def headline(report: dict, curves: Optional[dict] = None) -> str:
    """Table 1, then each figure the issue names against its target, one "figure:" line
    each (reached / NOT reached / not judged yet): LBS-16's share of SPARTA's gain and
    speed-up on the first two variants, its gain on the last, the learned belief against
    the grounded and the exact ones at every stage, and the highest score. A verdict
    resting on a cell with fewer deals than a full run plays says "so far"."""
    rows = report["variants"]
    lines = [_variants_table(rows), ""]
    full = SIZES["full"]

    def verdict(ok, needed=0, *cells):
        if ok is None:
            return "not judged yet"
        short = [c for c in cells if c.get("deals", 0) < needed]
        return ("reached" if ok else "NOT reached") + "".join(
            f" so far ({c['row']}: {c.get('deals', 0)} of the {needed} deals of a full run)"
            for c in short[:1])

    for i, (row, (share, speed)) in enumerate(zip(rows[:2], ((0.8, 4.6), (0.7, 40.0)))):
        have = "share_of_sparta_gain" in row and "speedup" in row
        ok = have and row["share_of_sparta_gain"] >= share and row["speedup"] >= speed
        if have:
            got = (f"{100 * row['share_of_sparta_gain']:.0f}% of SPARTA's gain at "
                   f"{row['speedup']:.1f}x less time ({_timed(row)})")
        elif "gain" in row["sparta"]:
            got = "no share: SPARTA gained 0"
        elif "mean" in row["sparta"] and "mean" in row["lbs-16"]:
            got = "no share yet: a paired gain needs 2 deals"
        else:
            got = "no share: SPARTA or LBS-16 has no games"
        judged = ok if have else False if "gain" in row["sparta"] else None
        said = verdict(judged, full.main if i == 0 else full.variant, row["sparta"],
                       row["lbs-16"])
        lines.append(f"figure: {row['variant']}: LBS-16 keeps {got} (target >= "
                     f"{100 * share:.0f}% at >= {speed:g}x): {said}")
    if len(rows) > 2:
        lbs = rows[-1].get("lbs-16", {})
        have = "gain" in lbs
        z = lbs["gain"] / lbs["gain_sem"] if have and lbs["gain_sem"] > 0 else 0.0
        got = f"{lbs['gain']:+.3f} +- {lbs['gain_sem']:.3f} ({z:.1f} s.e.)" if have else "-"
        lines.append(f"figure: {rows[-1]['variant']}: LBS-16 gains {got} over the blueprint "
                     f"(target > 3 s.e.): {verdict(z > 3 if have else None, full.variant, lbs)}")
    if curves is not None and "learned" in curves["ce"]:
        stages, n = phase_means(curves), len(curves["scores"])
        below = all(m["learned"] < m["grounded"] for _, m, _ in stages)
        gaps = ", ".join(f"{label} {m['learned'] - m['exact']:+.3f}" for label, m, _ in stages)
        lines.append(f"figure: the learned belief's cross-entropy is below the grounded one "
                     f"at every stage of the game ({n} games): "
                     f"{verdict(below, full.belief_games, dict(row='belief curves', deals=n))}"
                     f"; learned minus exact by moves: {gaps}")
    retrained = next((c for c in report["cells"] if c["row"] == RETRAINED), None)
    if retrained is not None and "vs_shipped" in retrained:
        lines.append(f"beyond: {RETRAINED} (a belief trained on LBS-16's games on training "
                     f"deals): {retrained['gain']:+.3f} +- {retrained['gain_sem']:.3f} over the "
                     f"blueprint; minus LBS-16 with its default belief (Table 2) on the same deals "
                     f"{retrained['vs_shipped']:+.3f} +- {retrained['vs_shipped_sem']:.3f} "
                     f"[{retrained['deals']} deals]")
    best = next((c for c in report["cells"] if c["row"] == HIGHEST_SCORE), None)
    if best is not None:
        have = "mean" in best
        got = f"{best['mean']:.3f} +- {best['sem']:.3f} [{best['deals']} deals]" if have \
            else "-"
        lines.append(f"figure: {HIGHEST_SCORE}, {best['method']} of {best['blueprint']} "
                     f"({best['worlds']} worlds): {got} (moonshot: >= "
                     f"24.5 in 2-player Hanabi): "
                     f"{verdict(best['mean'] >= 24.5 if have else None, full.best, best)}")
    return "\n".join(lines)


def _figure(s: dict) -> str:
    """One cell as table text: "mean +- sem (gain +- sem), s/game", or why it did not run."""
    if not s:
        return ""
    if "not_run" in s:
        return s["not_run"] if s["not_run"] == NOT_PLAYED else f"not run: {s['not_run']}"
    text = f"{s['mean']:.2f} +- {s['sem']:.2f}"
    if "gain" in s:
        text += f" ({s['gain']:+.2f} +- {s['gain_sem']:.2f})"
    if s["row"] != "blueprint":
        text += f", {s['seconds_per_game']:.2f} s"
    return text + f" [{s['deals']}]"


def _budget(cells: List[dict]) -> str:
    """The search budget the cells share, as a header says it ("256 worlds per decision, "),
    or "" if they differ."""
    worlds = {c["worlds"] for c in cells if c.get("row") != "blueprint" and c.get("worlds")}
    return f"{worlds.pop()} worlds per decision, " if len(worlds) == 1 else ""


def _variants_table(rows: List[dict]) -> str:
    budget = _budget([r[k] for r in rows for k in ("sparta", "lbs-16") if r.get(k)])
    lines = [f"Table 1: variants (the strong bot, {budget}seat 0 searching; mean +- s.e.m. "
             f"(paired gain over the blueprint +- s.e.m.), seconds per game [deals]; % of "
             f"SPARTA's gain: both gains on the deals SPARTA played; speed-up: SPARTA's "
             f"seconds over LBS-16's on the deals both played on one machine)", "",
             "| variant | blueprint | SPARTA | LBS-16 | % of SPARTA's gain | speed-up |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = f"{100 * r['share_of_sparta_gain']:.0f}%" if "share_of_sparta_gain" in r else ""
        speed = f"{r['speedup']:.1f}x ({_timed(r)})" if "speedup" in r else ""
        lines.append(f"| {r['variant']} | {_figure(r['blueprint'])} | {_figure(r['sparta'])} | "
                     f"{_figure(r['lbs-16'])} | {share} | {speed} |")
    return "\n".join(lines)


def _timed(row: dict) -> str:
    """Where a Table 1 row's speed-up was timed, as its cell says it."""
    if "mixed_machines" in row:
        return f"timed on other machines: {row['mixed_machines']}"
    return f"{row['timed_deals']} deals on {row['timed_on']}"


def _grid(title: str, stats: List[dict], table: str) -> str:
    """A table of rows x columns from the cells of `table`."""
    cells = [s for s in stats if s["table"] == table]
    rows = list(dict.fromkeys(s["row"] for s in cells))
    columns = list(dict.fromkeys(s["column"] for s in cells))
    at = {(s["row"], s["column"]): s for s in cells}
    lines = [f"{title} ({_budget(cells)}mean +- s.e.m. (paired gain over the blueprint), "
             f"seconds per game [deals])", "", "| | " + " | ".join(columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for row in rows:
        # the highest-score row names its search, which a later revision may change
        name = row if row != HIGHEST_SCORE else \
            f"{row}: {next(s['method'] for s in cells if s['row'] == row)}"
        lines.append(f"| {name} | " + " | ".join(_figure(at.get((row, c), {}))
                                                  for c in columns) + " |")
    return "\n".join(lines)


def plot_time_score(stats: List[dict], variant: str, path: str) -> bool:
    """Score against seconds per game (log scale) of every cell of `variant` on the strong
    bot: each LBS depth a labelled point, SPARTA and the blueprint marked. False if no
    cell of it has games."""
    points = [s for s in stats if s["variant"] == variant and s["blueprint"] == "strong"
              and "mean" in s and s["table"] != "beyond"]
    if not points:
        return False
    import matplotlib               # here, not at the top: `lbs-pz --help` stays light
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    seen = set()
    for s in points:
        if s["method"] in seen:
            continue
        seen.add(s["method"])
        marker = {"blueprint": "s", "sparta": "D"}.get(s["row"], "o")
        x = max(s["seconds_per_game"], 1e-3)
        ax.errorbar(x, s["mean"], yerr=s["sem"], fmt=marker, capsize=3)
        ax.annotate(s["row"].replace(" (learned belief alone)", " (L)"), (x, s["mean"]),
                    textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("seconds per game (one core)")
    ax.set_ylabel("mean score")
    ax.set_title(f"strong bot, {variant}: score against search time")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_budget(stats: List[dict], path: str) -> bool:
    """The fixed test-time budget: the paired gain over the blueprint of each LBS depth
    whose worlds per decision keep depth x worlds constant (the "beyond" rows that name a
    budget), against the depth. False if none has a paired gain yet."""
    points = sorted(((int(s["method"].split()[0][4:]), s) for s in stats
                     if s["table"] == "beyond" and "budget" in s["row"] and "gain" in s),
                    key=lambda p: p[0])
    if not points:
        return False
    import matplotlib               # here, not at the top: `lbs-pz --help` stays light
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    depths = [d for d, _ in points]
    ax.errorbar(depths, [s["gain"] for _, s in points], yerr=[s["gain_sem"] for _, s in points],
                fmt="o-", capsize=3)
    for d, s in points:
        ax.annotate(f"{s['row'].split(' (')[0]}\n[{s['deals']}]", (d, s["gain"]),
                    textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("rollout depth (worlds = budget / depth)")
    ax.set_ylabel("paired gain over the blueprint")
    ax.set_title(f"strong bot: a fixed budget of "
                 f"{points[0][1]['row'].split('budget ')[1].rstrip(')')} per decision")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(report: dict, out_dir: str, meta: dict,
                 curves: Optional[dict] = None) -> List[str]:
    """paper.md, paper.json, one time-score PNG per variant with games, fixed_budget.png
    and, with `curves` (belief_curves), belief_quality.png, in `out_dir`, each written
    whole or not at all (`replaced`); the paths written."""
    written = []
    md = os.path.join(out_dir, "paper.md")
    text = report["markdown"] + "\n"
    if curves is not None:
        text += (f"\nBelief quality: per-card cross-entropy (nats) of the true hand, the "
                 f"strong bot's {len(curves['scores'])} games, by move number\n\n"
                 f"```\n{phase_table(curves)}\n```\n")
    write_atomic(md, text.encode("utf-8"))
    written.append(md)
    if curves is not None:
        png = os.path.join(out_dir, "belief_quality.png")
        with replaced(png) as tmp:
            made = plot_belief_curves(curves, tmp, "strong bot: belief cross-entropy per card")
        if made:
            written.append(png)
    js = os.path.join(out_dir, "paper.json")
    write_atomic(js, json.dumps({**meta, "cells": report["cells"],
                                 "variants": report["variants"]}, indent=1).encode("utf-8"))
    written.append(js)
    for variant in dict.fromkeys(s["variant"] for s in report["cells"]):
        png = os.path.join(out_dir, time_score_png(variant))
        with replaced(png) as tmp:
            made = plot_time_score(report["cells"], variant, tmp)
        if made:
            written.append(png)
    png = os.path.join(out_dir, "fixed_budget.png")
    with replaced(png) as tmp:
        made = plot_budget(report["cells"], tmp)
    if made:
        written.append(png)
    return written
