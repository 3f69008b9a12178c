"""lbs_pz.models: the one checkpoint layout, the loader by name or path, the shipped models."""

import os

import numpy as np
import pytest
import torch

from lbs_pz.engine import HanabiConfig
from lbs_pz.models import (FORMAT, VERSION, CheckpointError, CheckpointMismatchError,
                           check_trained_for, find_model, game_to_dict, load_checkpoint,
                           save_checkpoint, shipped_models)
from lbs_pz.models import checkpoint as ck

STRONG = {"spec": "strong", "fingerprint": None}


def _tiny(path, kind="value", trained_for=STRONG, game=HanabiConfig(), **kw):
    net = torch.nn.Linear(3, 2)
    return net, save_checkpoint(str(path), kind, game, {"inputs": 3}, net.state_dict(),
                                trained_for=trained_for, info={"steps": 7}, **kw)


def test_layout_round_trip_and_atomic_write(tmp_path):
    path = tmp_path / "m.pt"
    net, written = _tiny(path, half=True)
    assert sorted(os.listdir(tmp_path)) == ["m.pt"]          # no temporary file left
    raw = torch.load(path, weights_only=True)                 # a plain dict, no code
    assert sorted(raw) == ["architecture", "format", "game", "info", "kind", "trained_for",
                           "version", "weights"]
    assert raw["format"] == FORMAT == "lbs_pz" and raw["version"] == VERSION
    assert raw["game"] == game_to_dict(HanabiConfig()) and raw["trained_for"] == STRONG
    assert raw["weights"]["weight"].dtype == torch.float16
    loaded = load_checkpoint(str(path), "value")
    assert loaded["path"] == str(path) and loaded["info"] == {"steps": 7}
    np.testing.assert_allclose(loaded["weights"]["weight"].float(), net.weight.detach(),
                               atol=1e-3)
    assert ck.game_of(loaded) == HanabiConfig()


def test_bad_files_are_checkpoint_errors(tmp_path):
    _tiny(tmp_path / "v.pt")
    cases = {
        "missing.pt": None,
        "garbage.pt": b"not a checkpoint",
        "foreign.pt": {"format": "something", "weights": {}},
        "future.pt": {"format": "lbs_pz", "version": 99},
        "old.pt": {"format": "lbs_pz.value", "version": 1},
        "no_game.pt": {"format": "lbs_pz", "version": 1, "kind": "value", "architecture": {},
                       "weights": {}, "info": {}, "trained_for": None},
        "bad_game.pt": {"format": "lbs_pz", "version": 1, "kind": "value", "game": {"players": 9},
                        "architecture": {}, "weights": {}, "info": {}, "trained_for": None},
        "code.pt": {"format": "lbs_pz", "obj": HanabiConfig()},
    }
    messages = {"missing.pt": "does not exist", "garbage.pt": "not a readable",
                "foreign.pt": "no format='lbs_pz'", "future.pt": "version 99",
                "old.pt": "old 'lbs_pz.value' layout", "no_game.pt": "valid 'game'",
                "bad_game.pt": "bad game variant", "code.pt": "weights_only=True"}
    for name, content in cases.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            torch.save(content, path)
        with pytest.raises(CheckpointError, match=messages[name]):
            load_checkpoint(str(path), "value")
    with pytest.raises(CheckpointError, match="holds a 'value' model, not a 'belief'"):
        load_checkpoint(str(tmp_path / "v.pt"), "belief")
    with pytest.raises(CheckpointError, match="shipped model: .*belief_strong_2p"):
        load_checkpoint("no_such_model")
    with pytest.raises(ValueError, match="kind must be one of"):
        save_checkpoint(str(tmp_path / "x.pt"), "policy", HanabiConfig(), {}, {})
    with pytest.raises(ValueError, match="trained_for"):
        save_checkpoint(str(tmp_path / "x.pt"), "value", HanabiConfig(), {}, {},
                        trained_for="strong")


def test_shipped_models_load_by_name_and_say_what_they_are_for():
    # the list: tests/models/test_manifest.py
    by_name = {m["name"]: m for m in shipped_models()}
    assert by_name["belief_strong_2p"]["kind"] == "belief"
    assert by_name["value_strong_2p"]["kind"] == "value"
    assert by_name["public_lstm_2p"]["kind"] == "public_lstm"
    assert by_name["public_lstm_2p"]["trained_for"] is None
    for name in ("belief_strong_2p", "value_strong_2p"):
        ckpt = load_checkpoint(name)
        assert ckpt["trained_for"]["spec"] == "strong"
        assert ckpt["game"] == game_to_dict(HanabiConfig())
        assert ckpt["info"]["command"].startswith(f"lbs-pz train-{ckpt['kind']}")
        assert "deals" in ckpt["info"]
        assert load_checkpoint(name + ".pt")["path"] == ckpt["path"]
    belief = load_checkpoint("belief_strong_2p", "belief")
    assert belief["architecture"]["hidden"] == 256 and belief["architecture"]["prior"]
    assert belief["info"]["steps"] == 3543 and belief["info"]["games"] == 113376
    assert sum(v.numel() for v in belief["weights"].values()) == 955_645   # 0.96M (README)
    assert all(v.dtype == torch.float16 for v in belief["weights"].values()
               if v.is_floating_point())
    lstm = load_checkpoint("public_lstm_2p", "public_lstm")
    assert lstm["info"]["progress"]["updates"] == 9621 and "resume" not in lstm



def _shipped_with_its_own_belief(name: str, games: int, steps: int, val_below: float):
    """The shipped net `name` and its belief `belief_<name>`: the belief names the net by
    spec and fingerprint, records its training, and `find_model` and `LBSAgent(bp)` find it.
    Returns the net's checkpoint and the agent."""
    from lbs_pz.agents import blueprint_identity, load_blueprint
    from lbs_pz.search.agents import LBSAgent

    net = load_checkpoint(name, "public_lstm")
    assert net["trained_for"] is None and "resume" not in net
    assert net["architecture"]["hidden"] == 256 and net["architecture"]["card_features"]
    belief = load_checkpoint(f"belief_{name}", "belief")
    bp = load_blueprint(f"lstm:{name}")
    assert belief["trained_for"] == {"spec": f"lstm:{name}",
                                     "fingerprint": blueprint_identity(bp)["fingerprint"]}
    assert belief["info"]["games"] == games and belief["info"]["steps"] == steps
    assert belief["info"]["val_loss"] < val_below
    assert find_model("belief", blueprint_identity(bp), HanabiConfig()) == f"belief_{name}"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # the defaults need no warning
        agent = LBSAgent(bp, rollouts=8)
    assert agent.defaults[0].startswith(f"belief: learned+cf (shipped 'belief_{name}'")
    assert agent.defaults[1].startswith("value: ") and "own" in agent.defaults[1]
    return net, agent


def test_the_expert_blueprint_with_a_value_of_its_own_ships_with_its_belief():
    """The manifest: conventions_expert_value_2p is conventions_expert_2p (retired) with
    every weight of its moves unchanged and a value that reads a public LSTM of its own
    (value_lstm), fitted with --value-only; the start's belief carried over after the
    same-moves check; its value predicts scores."""
    from lbs_pz.agents import load_blueprint
    from lbs_pz.engine import HanabiBatch, game_seeds
    name = "conventions_expert_value_2p"
    net, _ = _shipped_with_its_own_belief(name, games=86400, steps=2700, val_below=1.51)
    arch = net["architecture"]
    assert arch["value_hidden"] == 256 and arch["value_lstm"] == 256
    assert arch["conventions"] == 161 and arch["hint_head"] is True
    config = net["info"]["train_config"]
    assert config["value_only"] is True and config["value_lstm"] == 256
    assert config["init"] == "conventions_expert_2p"
    belief = load_checkpoint(f"belief_{name}", "belief")
    assert belief["info"]["carried_over"]["from"]["spec"] == "lstm:conventions_expert_2p"
    assert belief["info"]["carried_over"]["same_moves_in_positions"] > 13000
    bp = load_blueprint(f"lstm:{name}")
    batch = HanabiBatch(HanabiConfig(), 16, seeds=game_seeds(9, 0, 16))
    bp.rollout(batch, max_moves=12)
    moves, values = bp.act_batch(batch), bp.value(batch)
    assert ((moves >= 0) & (moves < 20)).all()
    assert values.shape == (16,) and np.isfinite(values).all()
    assert 5 < values.mean() < 25                   # a score, not a logit margin
    # the manifest's recommendation reaches the search it was chosen for, and only it
    from lbs_pz.search.agents import LBSAgent
    assert LBSAgent(bp, rollouts=8, depth=1).config.delta == 0.75
    assert LBSAgent(bp, rollouts=8, depth=1, delta=0.3).config.delta == 0.3
    assert LBSAgent(bp, rollouts=8, depth=16).config.delta != 0.75


def test_find_model_matches_blueprint_and_variant():
    assert find_model("belief", STRONG) == "belief_strong_2p"
    assert find_model("value", STRONG, HanabiConfig()) == "value_strong_2p"
    assert find_model("value", STRONG, HanabiConfig(random_start_player=True)) == "value_strong_2p"
    assert find_model("belief", STRONG, HanabiConfig(hand_size=4)) is None
    assert find_model("belief", {"spec": "simple", "fingerprint": None}) is None
    assert find_model("belief", None) is None
    with pytest.raises(ValueError, match="kind"):
        find_model("policy", STRONG)


def test_rule_bot_identity_finds_the_shipped_models():
    agents = pytest.importorskip("lbs_pz.agents")
    if not hasattr(agents, "blueprint_identity"):
        pytest.skip("lbs_pz.agents.blueprint_identity is not available")
    identity = agents.blueprint_identity(agents.RuleBot("strong"))
    assert find_model("belief", identity, HanabiConfig()) == "belief_strong_2p"
    assert find_model("value", identity, HanabiConfig()) == "value_strong_2p"
    weak = agents.blueprint_identity(agents.RuleBot("weak"))
    assert find_model("value", weak) == "value_weak_2p"
    assert find_model("belief", weak) == "belief_weak_2p"
    assert find_model("value", weak, HanabiConfig(players=3)) is None


def test_check_trained_for_names_both_sides_and_the_fix():
    ckpt = {"kind": "belief", "game": game_to_dict(HanabiConfig()),
            "trained_for": {"spec": "py:a.py:A", "fingerprint": "ab" * 32}}
    same_file_elsewhere = {"spec": "py:/elsewhere/a.py:A", "fingerprint": "ab" * 32}
    assert check_trained_for(ckpt, same_file_elsewhere, HanabiConfig()) == []
    other = {"spec": "py:a.py:A", "fingerprint": "cd" * 32}
    with pytest.raises(CheckpointMismatchError) as err:
        check_trained_for(ckpt, other, HanabiConfig(players=3))
    text = str(err.value)
    assert "'py:a.py:A' (fingerprint abababababab)" in text and "cdcdcdcdcdcd" in text
    assert "game 2p 5-card 5x5, not 3p 5-card 5x5" in text
    assert "lbs-pz train-belief --blueprint SPEC" in text and "--allow-mismatch" in text
    problems = check_trained_for(ckpt, other, None, allow_mismatch=True)
    assert len(problems) == 1 and "not for" in problems[0]


def test_upgrade_legacy_keeps_the_weights(tmp_path):
    net = torch.nn.Linear(4, 1)
    old = tmp_path / "old.pt"
    torch.save({"format": "lbs_pz.value", "version": 1, "game_config": game_to_dict(HanabiConfig()),
                "net_config": {"inputs": 4, "hidden": 8}, "blueprint": "weak",
                "state_dict": net.state_dict(), "info": {"steps": 3}}, old)
    with pytest.raises(CheckpointError, match="old"):
        load_checkpoint(str(old))
    ck.upgrade_legacy(str(old), str(tmp_path / "new.pt"), info={"command": "x"})
    new = load_checkpoint(str(tmp_path / "new.pt"), "value")
    assert new["trained_for"] == {"spec": "weak", "fingerprint": None}
    assert new["info"] == {"steps": 3, "command": "x"}
    assert new["architecture"] == {"inputs": 4, "hidden": 8}
    assert torch.equal(new["weights"]["weight"], net.weight.detach())


USER_BLUEPRINT = '''
class PlayKnownOrHint:
    """Plays a card known to be playable, else hints, else discards its oldest card."""
    name = "play-known-or-hint"

    def act(self, state, seat=None):
        view = state.view(seat)
        me, legal = view.player, view.legal_moves
        hand_size = len(view.knowledge[me])
        for slot, k in enumerate(view.knowledge[me]):
            if len(k.colors) == 1 and len(k.ranks) == 1 \\
                    and view.fireworks[k.colors[0]] == k.ranks[0] and hand_size + slot in legal:
                return hand_size + slot
        hints = [m for m in legal if m >= 2 * hand_size]
        return hints[len(view.history) % len(hints)] if hints else min(legal)
'''


@pytest.fixture
def user_blueprint_spec(tmp_path):
    path = tmp_path / "user_bp.py"
    path.write_text(USER_BLUEPRINT)
    return f"py:{path}:PlayKnownOrHint"


def test_belief_and_value_for_a_user_python_blueprint(tmp_path, user_blueprint_spec):
    agents = pytest.importorskip("lbs_pz.agents")
    if not hasattr(agents, "load_blueprint"):
        pytest.skip("lbs_pz.agents.load_blueprint is not available")
    from lbs_pz.agents import RuleBot, blueprint_identity, load_blueprint
    from lbs_pz.engine import HanabiBatch, HanabiState
    from lbs_pz.search.beliefs import make_belief
    from lbs_pz.search.beliefs.learned import LearnedBelief
    from lbs_pz.search.value import CentralValue
    from lbs_pz.train.belief import BeliefTrainConfig, train_belief
    from lbs_pz.train.value import ValueTrainConfig, train_value

    out = str(tmp_path / "user_belief.pt")
    tc = BeliefTrainConfig(blueprint=user_blueprint_spec, games_per_step=2, steps=2, minutes=0,
                           val_games=2, val_every=100, embed=16, hidden=16, decoder=8,
                           threads=1, out=out, progress=False)
    train_belief(tc, log=lambda *a: None)
    user = load_blueprint(user_blueprint_spec)
    belief = LearnedBelief(out, blueprint=user)
    assert belief.trained_for == blueprint_identity(user)
    assert belief.trained_for["fingerprint"] and belief.trained_for["spec"].startswith("py:")
    state = HanabiState(HanabiConfig(players=2), seed=3)
    assert belief.reset(state, 0).sample(20, np.random.default_rng(0)).shape[1] == 5
    with pytest.raises(CheckpointMismatchError, match="PlayKnownOrHint.*not for 'strong'"):
        LearnedBelief(out, blueprint=RuleBot("strong"))
    with pytest.raises(CheckpointMismatchError, match="PlayKnownOrHint"):
        make_belief("learned+cf", blueprint=RuleBot("strong"), checkpoint=out)
    assert LearnedBelief(out, blueprint=RuleBot("strong"), allow_mismatch=True).mismatches

    out = str(tmp_path / "user_value.pt")
    train_value(ValueTrainConfig(blueprint=user_blueprint_spec, steps=2, games_per_step=2,
                                 val_games=2, hidden=16, out=out, progress=False),
                log=lambda *a: None)
    value = CentralValue(out, blueprint=load_blueprint(user_blueprint_spec))
    assert value.trained_for == blueprint_identity(user)
    assert value(HanabiBatch(HanabiConfig(), 3, seeds=[1, 2, 3])).shape == (3,)
    with pytest.raises(CheckpointMismatchError, match="PlayKnownOrHint.*not for 'strong'"):
        CentralValue(out, blueprint=RuleBot("strong"))
    assert CentralValue(out, blueprint=RuleBot("strong"), allow_mismatch=True).mismatches


def test_blueprint_training_deals_come_from_the_train_stream():
    from lbs_pz.engine import HanabiBatch
    from lbs_pz.engine.seeds import TRAIN, deal_seeds
    from lbs_pz.train.blueprint import Actors

    config = HanabiConfig()
    actors = Actors(config, 4, seed=9, bot="simple", deal_seed=3, first_game=10)
    same = HanabiBatch(config, 4, seeds=deal_seeds(TRAIN, 3, 10, 4))
    for p in range(2):
        np.testing.assert_array_equal(actors.batch.hands(p), same.hands(p))
    finished = []
    while not finished:
        finished = actors.step()
    assert actors.next_game == 14 + len(finished)     # the next deals follow on


def test_a_checkpoint_without_trained_for_cannot_be_checked(tmp_path):
    from lbs_pz.search.value import CentralValue, make_value_net, ValueNetConfig

    net_cfg = ValueNetConfig(inputs=658 + 125, hidden=8)
    save_checkpoint(str(tmp_path / "v.pt"), "value", HanabiConfig(), {"inputs": 783, "hidden": 8},
                    make_value_net(net_cfg).state_dict())
    CentralValue(str(tmp_path / "v.pt"))                   # no blueprint given: nothing to check
    with pytest.raises(CheckpointMismatchError, match="does not record the blueprint"):
        CentralValue(str(tmp_path / "v.pt"), blueprint="strong")
