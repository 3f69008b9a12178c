"""Evaluation never replays training deals: the EVAL and TRAIN deal streams are disjoint,
and what eval / compare / demo play comes from EVAL."""

import numpy as np
import pytest

from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import EVAL, MAX_SEED, TRAIN, deal_seeds
from lbs_pz.eval.evaluate import evaluate

RUN_SEEDS = (0, 1, 2, 12345, MAX_SEED - 1)
GAMES = 100_000


def test_eval_and_train_seed_sets_are_disjoint_for_many_runs():
    evals = np.concatenate([deal_seeds(EVAL, s, 0, GAMES) for s in RUN_SEEDS])
    trains = np.concatenate([deal_seeds(TRAIN, s, 0, GAMES) for s in RUN_SEEDS])
    assert len(np.unique(evals)) == len(evals)          # no repeats within a stream either
    assert len(np.unique(trains)) == len(trains)
    assert np.intersect1d(evals, trains).size == 0


def test_same_run_and_game_in_both_streams_deals_different_decks():
    config = HanabiConfig()
    n = 2000
    ev = HanabiBatch(config, n, seeds=deal_seeds(EVAL, 0, 0, n))
    tr = HanabiBatch(config, n, seeds=deal_seeds(TRAIN, 0, 0, n))
    ev_hands = np.array([ev.get_state(i).hand(0) + ev.get_state(i).hand(1) for i in range(n)])
    tr_hands = np.array([tr.get_state(i).hand(0) + tr.get_state(i).hand(1) for i in range(n)])
    assert not np.any(np.all(ev_hands == tr_hands, axis=1))     # game i differs in every i
    assert len({tuple(h) for h in ev_hands} & {tuple(h) for h in tr_hands}) == 0


def test_evaluation_plays_the_eval_stream():
    """evaluate's game i is deal_seeds(EVAL, seed, i, 1): the same scores as playing
    those deals directly, and other scores than the TRAIN deals."""
    config, n = HanabiConfig(), 300
    result = evaluate(RuleBot("strong"), config, games=n, seed=7)
    batch = HanabiBatch(config, n, seeds=deal_seeds(EVAL, 7, 0, n))
    RuleBot("strong").rollout(batch)
    assert result.histogram == np.bincount(batch.scores(), minlength=26).tolist()
    train = HanabiBatch(config, n, seeds=deal_seeds(TRAIN, 7, 0, n))
    RuleBot("strong").rollout(train)
    assert not np.array_equal(batch.scores(), train.scores())


@pytest.mark.parametrize("seed", [-1, MAX_SEED, 1.5, "3", True])
def test_bad_run_seeds_are_rejected(seed):
    with pytest.raises(ValueError, match="seed"):
        evaluate(RuleBot("strong"), games=1, seed=seed)
