"""What `compare` plays: a `MethodSpec` names a method and everything needed to build it
in any process (a worker rebuilds the agents from the spec), and `build_agent` builds it.

Methods: "blueprint", "sparta", "lbs-K" (K blueprint moves, then a value) and "lbs-inf"
(rollouts to the end). The blueprint is a spec string (`lbs_pz.agents.load_blueprint`:
NAME | sb3:PATH | lstm:PATH | py:MODULE_OR_FILE.py:CLASS). LBS defaults follow
`lbs_pz.search.agents.LBSAgent`: a learned belief trained for this blueprint if one ships,
else grounded+cf; for lbs-K the blueprint's own value, else a value trained for it,
else rollouts to the end (said in the log). `--belief-checkpoint` / `--value-checkpoint`
load trained ones; a checkpoint made for another blueprint or game is a
`CheckpointMismatchError` unless `allow_mismatch`.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import List, Optional, Tuple

from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig
from lbs_pz.search.beliefs import BELIEF_KINDS, make_belief

METHOD_HELP = ("blueprint | sparta | lbs-K (K blueprint moves, then a value: the "
               "blueprint's own, --value-checkpoint, or one shipped for it; e.g. lbs-1, "
               "lbs-16) | lbs-inf (rollouts to the end)")


PAPER_DELTA = 0.05          # the paper's deviation threshold: the default of --delta


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A method and everything needed to build it in any process."""

    method: str                          # see METHOD_HELP
    blueprint: str = "strong"            # a blueprint spec
    belief: Optional[str] = None         # lbs-*: one of BELIEF_KINDS; None: LBS's default
    rollouts: int = 256
    search_seats: tuple = (0,)
    seed: int = 0
    verify: int = 0                      # extra worlds re-measuring a proposed deviation
    confidence: float = 2.0              # standard errors a deviation's gain must exceed
    delta: float = PAPER_DELTA           # and the gain itself must exceed
    belief_checkpoint: Optional[str] = None
    value_checkpoint: Optional[str] = None
    allow_mismatch: bool = False
    pruning: str = "means"               # search's pruning rule: means | paired | threshold | off
    precision: str = "float32"           # lbs-*: the rollouts' precision (bfloat16: lstm:)

    def label(self) -> str:
        if self.method == "blueprint":
            return self.method
        details = []
        if self.method != "sparta":
            belief = self.belief or ("learned+cf" if self.belief_checkpoint else "default belief")
            details.append(f"{belief}: {self.belief_checkpoint}" if self.belief_checkpoint
                           else belief)
            if self.value_checkpoint and self.method != "lbs-inf":
                details.append(f"value {self.value_checkpoint}")
        if self.search_seats != (0,):
            details.append(f"seats {','.join(str(s) for s in self.search_seats)}")
        if self.pruning != "means":
            details.append(f"pruning {self.pruning}")
        if self.precision != "float32":
            details.append(self.precision)
        if self.delta != PAPER_DELTA:
            details.append(f"delta {self.delta:g}")
        return f"{self.method} ({', '.join(details)})" if details else self.method


def parse_method(method: str) -> str:
    """A method name in its one spelling (lower-cased, "lbs-016" -> "lbs-16");
    ValueError naming the choices otherwise."""
    m = method.strip().lower() if isinstance(method, str) else ""
    if m in ("blueprint", "sparta", "lbs-inf"):
        return m
    if m.startswith("lbs-") and m[4:].isascii() and m[4:].isdigit() and int(m[4:]) > 0:
        return f"lbs-{int(m[4:])}"      # one spelling per method: lbs-016 is lbs-16
    raise ValueError(f"unknown method {method!r}; expected {METHOD_HELP}")


def method_depth(method: str) -> int:
    """Rollout depth of an LBS method (-1: to the end)."""
    return -1 if method == "lbs-inf" else int(method[4:])


def build_agent(spec: MethodSpec, config: Optional[HanabiConfig] = None) -> Tuple[object, object]:
    """(blueprint, searcher or None) for `spec` in the game `config` (default 2p)."""
    from lbs_pz.search.agents import LBSAgent, SpartaAgent

    config = HanabiConfig() if config is None else config
    blueprint = load_blueprint(spec.blueprint)
    if spec.method == "blueprint":
        return blueprint, None
    if spec.method == "sparta":
        return blueprint, SpartaAgent(blueprint, rollouts=spec.rollouts, verify=spec.verify,
                                      confidence=spec.confidence, delta=spec.delta,
                                      seed=spec.seed, pruning=spec.pruning,
                                      precision=spec.precision)
    belief = None
    kind = spec.belief or ("learned+cf" if spec.belief_checkpoint else None)
    if kind is not None:
        if kind not in BELIEF_KINDS:
            raise ValueError(f"unknown belief {kind!r}; choose one of {', '.join(BELIEF_KINDS)}")
        if spec.belief_checkpoint and not kind.startswith("learned"):
            raise ValueError(f"--belief-checkpoint loads a learned belief, but the belief is "
                             f"{kind!r}: use learned or learned+cf")
        belief = make_search_belief(kind, blueprint, config, spec.belief_checkpoint,
                                    spec.allow_mismatch)
    value = None
    depth = method_depth(spec.method)
    if spec.value_checkpoint and depth > 0:
        from lbs_pz.search.value import CentralValue   # torch, on use

        value = CentralValue(spec.value_checkpoint, blueprint=blueprint,
                             allow_mismatch=spec.allow_mismatch)
    return blueprint, LBSAgent(blueprint, belief, value=value, rollouts=spec.rollouts,
                               depth=depth, game=config, verify=spec.verify,
                               confidence=spec.confidence, delta=spec.delta, seed=spec.seed,
                               pruning=spec.pruning, precision=spec.precision)


def make_search_belief(kind: str, blueprint, game: HanabiConfig,
                       checkpoint: Optional[str] = None, allow_mismatch: bool = False):
    """A belief of `kind`; a learned one from `checkpoint` (default: one shipped for the
    blueprint and game, else a clear error), checked against the blueprint and game."""
    if not kind.startswith("learned"):
        return make_belief(kind, blueprint=blueprint)
    if checkpoint is None:
        from lbs_pz.agents import blueprint_identity
        from lbs_pz.models import find_model, path

        found = find_model("belief", blueprint_identity(blueprint), game)
        if found is None:
            raise ValueError(f"no learned belief ships for blueprint {blueprint.name!r} in "
                             f"this game: train one with `lbs-pz train-belief --blueprint "
                             f"SPEC` and pass --belief-checkpoint PATH, or use --belief "
                             f"grounded+cf")
        checkpoint = path(found)
    from lbs_pz.search.beliefs import FilteredBelief
    from lbs_pz.search.beliefs.learned import LearnedBelief

    base = LearnedBelief(checkpoint, blueprint=blueprint, allow_mismatch=allow_mismatch)
    return FilteredBelief(base, blueprint) if kind.endswith("+cf") else base


def describe(spec: MethodSpec, config: HanabiConfig) -> List[str]:
    """Builds the agent of `spec` (so a bad blueprint, belief or checkpoint fails here,
    before any game) and returns what its defaults chose, one line each."""
    with warnings.catch_warnings():     # the notes below say it
        warnings.simplefilter("ignore")
        _, searcher = build_agent(spec, config)
    notes = list(getattr(searcher, "defaults", []) or [])
    reason = getattr(searcher, "depth_reason", None)
    return notes + ([reason] if reason else [])
