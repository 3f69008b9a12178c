"""Beliefs and values for games of more than two players: `train-belief` and `train-value`
take every variant option, what they make is used by LBS in that game, and a model made
for another game is refused with a message naming both."""

import pytest

pytest.importorskip("torch")

from lbs_pz.agents import RuleBot  # noqa: E402
from lbs_pz.cli import main  # noqa: E402
from lbs_pz.engine import HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.models import load_checkpoint  # noqa: E402
from lbs_pz.models.checkpoint import CheckpointMismatchError  # noqa: E402
from lbs_pz.search.agents import LBSAgent  # noqa: E402

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
