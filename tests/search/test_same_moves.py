"""Refactors keep every move: the strong bot's LBS-16 as `compare` builds it, and the
self-play of every rule bot and shipped neural blueprint, on fixed evaluation deals, play
the moves recorded in tests/data/golden_moves.json (a digest of each game's move list)."""

from __future__ import annotations

import hashlib
import json
import os
import warnings

import pytest

from tests.helpers.paths import DATA
from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.search.build import build_agent
from lbs_pz.search.methods import MethodSpec

GOLDEN = json.load(open(os.path.join(DATA, "golden_moves.json")))


def _deal(i: int) -> int:
    return int(deal_seeds(EVAL, 0, i, 1)[0])


def _game(seed: int, act) -> dict:
    state = HanabiState(HanabiConfig(), seed=seed)
    while not state.is_terminal:
        state.apply(act(state))
    moves = hashlib.sha256(json.dumps(state.move_history).encode()).hexdigest()[:16]
    return {"score": state.score, "moves": moves}


def _search_games(blueprint: str, rollouts: int, deals, **settings) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bp, lbs = build_agent(MethodSpec("lbs-16", blueprint=blueprint, rollouts=rollouts,
                                         seed=0, **settings), HanabiConfig())
    return [_game(_deal(i), lambda s: lbs.act(s) if s.current_player == 0 else bp.act(s))
            for i in deals]


def test_strong_bot_lbs16_plays_the_recorded_moves():
    assert _search_games("strong", 32, GOLDEN["deals"]) == \
        GOLDEN["search"]["strong lbs-16 rollouts=32 seed=0"]


def test_neural_lbs16_plays_the_recorded_moves():
    # the settings the recording was made with (a neural net's defaults are now faster)
    assert _search_games("lstm:conventions_expert_value_2p", 8, [0], pruning="means",
                         precision="float32") == \
        GOLDEN["search"]["lstm:conventions_expert_value_2p lbs-16 rollouts=8 seed=0"]


@pytest.mark.parametrize("spec", sorted(GOLDEN["self_play"]))
def test_self_play_plays_the_recorded_moves(spec):
    blueprint = load_blueprint(spec)
    games = [_game(_deal(i), blueprint.act) for i in range(len(GOLDEN["self_play"][spec]))]
    assert games == GOLDEN["self_play"][spec]
