"""Beliefs and values for games of more than two players: `train-belief` and `train-value`
take every variant option, what they make is used by LBS in that game, and a model made
for another game is refused with a message naming both."""

import numpy as np
import pytest

pytest.importorskip("torch")

from lbs_pz.agents import RuleBot  # noqa: E402
from lbs_pz.cli import main  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.models import load_checkpoint  # noqa: E402
from lbs_pz.models.checkpoint import CheckpointMismatchError  # noqa: E402
from lbs_pz.search.agents import LBSAgent  # noqa: E402
from lbs_pz.search.beliefs import GroundedBelief  # noqa: E402

SMALL_3P = dict(players=3, colors=3, ranks=3, hand_size=3, max_information_tokens=4)
OPTIONS = [f"--{k.replace('_', '-')}={v}" for k, v in SMALL_3P.items()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models3p")
    belief, value = str(folder / "belief.pt"), str(folder / "value.pt")
    common = ["--blueprint", "weak", "--steps", "4", "--minutes", "0", "--val-games", "8",
              "--games-per-step", "4", "--no-progress", "--curve", "none"] + OPTIONS
    assert main(["train-belief", *common, "--val-every", "2", "--threads", "1",
                 "--out", belief]) in (0, None)
    assert main(["train-value", *common, "--out", value]) in (0, None)
    return belief, value


def test_trainers_take_every_variant_option(trained):
    for path in trained:
        game = load_checkpoint(path)["game"]
        assert {k: game[k] for k in SMALL_3P} == SMALL_3P
        assert load_checkpoint(path)["trained_for"]["spec"] == "weak"


def test_lbs_searches_a_three_player_game_with_them(trained):
    belief, value = trained
    game = HanabiConfig(**SMALL_3P)
    agent = LBSAgent(RuleBot("weak"), game=game, belief="learned", belief_checkpoint=belief,
                     value_checkpoint=value, rollouts=8, depth=4)
    assert agent.depth == 4
    state = HanabiState(game, seed=3)
    for _ in range(6):
        move = agent.act(state) if state.current_player == 0 else RuleBot("weak").act(state)
        assert move in state.legal_moves()
        state.apply(move)
        if state.is_terminal:
            break


def test_a_two_player_model_is_refused_for_a_three_player_game():
    with pytest.raises(CheckpointMismatchError, match="2p.*3p|3p.*2p|players"):
        LBSAgent(RuleBot("strong"), game=HanabiConfig(players=3), belief="learned",
                 belief_checkpoint="belief_strong_2p")


def test_models_made_for_another_game_are_refused_when_the_agent_is_built(trained):
    belief, value = trained
    with pytest.raises(CheckpointMismatchError, match="3p"):
        LBSAgent(RuleBot("weak"), belief_checkpoint=belief, rollouts=8)
    with pytest.raises(CheckpointMismatchError, match="3p"):
        LBSAgent(RuleBot("weak"), belief="grounded", value_checkpoint=value, rollouts=8)


def test_the_belief_argument_takes_a_kind_or_a_belief():
    agent = LBSAgent(RuleBot("strong"), belief="grounded+cf", rollouts=8)
    assert agent.config.belief == "grounded+cf"
    with pytest.raises(TypeError, match="belief must be a belief object"):
        LBSAgent(RuleBot("strong"), belief=5, rollouts=8)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_resolve_picks_the_models_shipped_for_each_player_count(players):
    """`LBSAgent(RuleBot("strong"))` in an N-player game finds the belief and the value
    made for that game, with no flags; LBS-16 then stops after 16 moves."""
    agent = LBSAgent(RuleBot("strong"), game=HanabiConfig(players=players), rollouts=8)
    assert agent.depth == 16 and agent.value is not None
    assert agent.defaults[0].startswith(f"belief: learned+cf (shipped 'belief_strong_{players}p'")
    assert agent.defaults[1] == f"value: shipped 'value_strong_{players}p'"
    assert agent.belief.name.startswith("learned")


def test_a_two_player_value_is_refused_for_a_three_player_game():
    with pytest.raises(CheckpointMismatchError, match="2p.*3p|3p.*2p|players"):
        LBSAgent(RuleBot("strong"), game=HanabiConfig(players=3), belief="grounded",
                 value_checkpoint="value_strong_2p")


def test_the_three_player_search_never_peeks_at_the_seats_own_cards():
    """The default search at 3 players (shipped learned belief and value): the same view
    and seed with another own hand and another deck give the same move and estimates."""
    game, bot = HanabiConfig(players=3), RuleBot("strong")
    rng = np.random.default_rng(0)
    checked, state = 0, HanabiState(game, seed=4)
    while not state.is_terminal and checked < 4:
        if state.num_moves_played % 5 == 3:
            seat = state.current_player
            hands = GroundedBelief().reset(state, seat).sample(64, rng)
            others = [h for h in hands if list(h) != state.hand(seat)]
            if others:
                other = state.clone()
                other.set_hand(seat, others[0], seed=int(rng.integers(1 << 30)))
                assert other.deck != state.deck
                a = LBSAgent(bot, game=game, rollouts=32, seed=11).search(state)
                b = LBSAgent(bot, game=game, rollouts=32, seed=11).search(other)
                assert a.move == b.move
                np.testing.assert_allclose(a.means, b.means)
                checked += 1
        state.apply(bot.act(state))
    assert checked == 4
