"""Distillation of a blueprint into the public-LSTM net (`lbs_pz.train.distill`), the
net's card features and architecture options (`lbs_pz.agents.public_lstm`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from tests.helpers.engine import saved_and_loaded
from tests.helpers.waiting import HANG_SECONDS

from lbs_pz.agents import RuleBot, load_blueprint
from lbs_pz.agents.public_lstm import (ARCHITECTURES, CardFeatures, PublicLSTMBlueprint,
                                       PublicLSTMNet)
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState, game_seeds
from lbs_pz.engine.seeds import EVAL, TRAIN
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.train.distill import DistillConfig, agreement, distill
from lbs_pz.train.games import teacher_games

SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)
REMOVED_FLAGS = ("--fusion concat", "--card-features", "--no-card-features",
                 "--public-features", "--value-hidden 256", "--value-lstm 256",
                 "--conventions", "--hint-head", "--no-hint-head", "--dueling max")
"""Options of the net that distill does not take: the presets (--arch) set them."""


def _states(config, n_games=6, bot="strong"):
    """Positions of rule-bot games (every 7th move), including terminal-near ones."""
    teacher = RuleBot(bot)
    for g in range(n_games):
        state = HanabiState(config, seed=100 + g)
        k = 0
        while not state.is_terminal:
            if k % 7 == 0:
                yield state.clone()
            state.apply(teacher.act(state))
            k += 1


@pytest.mark.parametrize("game", [dict(), SMALL, dict(players=3)])
def test_card_features_match_the_engine(game):
    config = HanabiConfig(**game)
    C, R, H, P = config.colors, config.ranks, config.hand_size, config.players
    cf = CardFeatures(players=P, obs_dim=config.encoding_size, **CardFeatures.game_args(config))
    checked = 0
    for state in _states(config):
        fw = state.fireworks

        def playable(c, r):
            return fw[c] == r

        def useless(c, r):
            return fw[c] > r

        for seat in range(P):
            f = cf(torch.from_numpy(state.encode(seat))).numpy()
            table_p, table_u = f[:C * R], f[C * R:2 * C * R]
            assert table_p.tolist() == [float(playable(c, r)) for c in range(C) for r in range(R)]
            assert table_u.tolist() == [float(useless(c, r)) for c in range(C) for r in range(R)]
            seen = f[2 * C * R:2 * C * R + 2 * (P - 1) * H].reshape(P - 1, H, 2)
            for rel in range(1, P):
                hand = state.hands[(seat + rel) % P]
                for j in range(H):
                    want = (0.0, 0.0) if j >= len(hand) else \
                        (float(playable(*divmod(hand[j], R))), float(useless(*divmod(hand[j], R))))
                    assert tuple(seen[rel - 1, j]) == want
            know = f[2 * C * R + 2 * (P - 1) * H:]
            frac = know[:2 * P * H].reshape(P, H, 2)
            full = know[2 * P * H:4 * P * H].reshape(P, H, 2)
            touched_f = know[4 * P * H:5 * P * H].reshape(P, H)
            chop_f = know[5 * P * H:6 * P * H].reshape(P, H)
            hints = know[6 * P * H:]
            assert len(hints) == 8 * (P - 1) * (C + R) and cf.size == len(f)
            color_hints = hints[:8 * (P - 1) * C].reshape(P - 1, C, 8)
            rank_hints = hints[8 * (P - 1) * C:].reshape(P - 1, R, 8)

            def touched_chop(player):
                kn = state.card_knowledge(player)
                touched = [kn[j][2] >= 0 or kn[j][3] >= 0 for j in range(len(kn))]
                chop = next((j for j in range(len(kn)) if not touched[j]), -1)
                return touched, chop

            for rel in range(P):
                touched, chop = touched_chop((seat + rel) % P)
                assert touched_f[rel, :len(touched)].tolist() == [float(t) for t in touched]
                assert chop_f[rel].tolist() == [float(j == chop) for j in range(H)]
            for rel in range(1, P):
                target = (seat + rel) % P
                hand, kn = state.hands[target], state.card_knowledge(target)
                touched, chop = touched_chop(target)

                def flag(j, which):
                    return float((playable, useless)[which](*divmod(hand[j], R)))

                for table, K, part, slot in ((color_hints, C, 0, 2), (rank_hints, R, 1, 3)):
                    for k in range(K):
                        hit = [j for j, card in enumerate(hand) if divmod(card, R)[part] == k]
                        fresh = [j for j in hit if not touched[j]]
                        focus = chop if chop in hit else (max(fresh) if fresh else None)
                        want = [len(hit), sum(flag(j, 0) for j in hit),
                                sum(flag(j, 1) for j in hit),
                                sum(kn[j][slot] < 0 for j in hit), float(chop in hit),
                                float(bool(fresh)),
                                0.0 if focus is None else flag(focus, 0),
                                0.0 if focus is None else flag(focus, 1)]
                        assert table[rel - 1, k].tolist() == want
            for rel in range(P):
                knowledge = state.card_knowledge((seat + rel) % P)
                for j, (colors, ranks, _, _) in enumerate(knowledge):
                    types = [(c, r) for c in colors for r in ranks]
                    p = sum(playable(c, r) for c, r in types) / len(types)
                    u = sum(useless(c, r) for c, r in types) / len(types)
                    assert frac[rel, j] == pytest.approx([p, u], abs=1e-6)
                    assert full[rel, j].tolist() == [float(p == 1), float(u == 1)]
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("game", [dict(), SMALL, dict(players=4, colors=4),
                                  dict(observation_type="minimal")])
def test_card_features_in_c_equal_the_tensor_version_bit_for_bit(game):
    """Inference on the CPU computes the features in one C loop (`_card_features`);
    training on a GPU, or with gradients, in tensor operations: the same numbers."""
    config = HanabiConfig(**game)
    P = config.players
    cf = CardFeatures(players=P, obs_dim=config.encoding_size, **CardFeatures.game_args(config))
    obs = np.stack([state.encode(seat) for state in _states(config) for seat in range(P)])
    half = len(obs) // 2
    x = torch.from_numpy(obs[:2 * half]).reshape(2, half, -1)          # any leading shape
    c_path = cf(x)
    assert c_path.shape == (2, half, cf.size)
    assert torch.equal(c_path, cf.forward_torch(x))


def test_card_features_kernel_refuses_bad_arrays():
    from lbs_pz.agents._card_features import card_features
    config = HanabiConfig()
    cf = CardFeatures(players=2, obs_dim=config.encoding_size, **CardFeatures.game_args(config))
    obs = np.zeros((4, config.encoding_size), dtype=np.float32)
    args = (2, 5, 5, 5, cf.fw_off, cf.kn_off, True)
    good = np.zeros((4, cf.size), dtype=np.float32)
    assert card_features(obs, good, *args) is not None
    read_only = good.copy()
    read_only.flags.writeable = False
    for out in (np.zeros((4, cf.size - 1), dtype=np.float32), np.zeros((3, cf.size), np.float32),
                np.zeros((4, cf.size), dtype=np.float64), np.zeros((cf.size, 4), np.float32).T,
                read_only):
        with pytest.raises(ValueError):
            card_features(obs, out, *args)
    with pytest.raises(ValueError, match="offsets"):
        card_features(obs, good, 2, 5, 5, 5, cf.fw_off, cf.kn_off + 1, True)
    with pytest.raises(ValueError, match="bad game sizes"):
        card_features(obs, good, 1, 5, 5, 5, cf.fw_off, cf.kn_off, True)
    with pytest.raises(TypeError):
        card_features(None, good, *args)


def test_shipped_checkpoint_loads_and_acts_as_before():
    """The shipped product-fusion checkpoint has no new architecture entries and its
    moves do not depend on the new options (reference: the plain product formula)."""
    bp = load_blueprint("lstm:public_lstm_2p")
    net = bp.net
    assert net.fusion == "product" and net.cards is None
    assert set(net.arch()) == {"pub_dim", "obs_dim", "players", "num_moves", "hidden"}
    assert net.arch() == load_checkpoint("public_lstm_2p", "public_lstm")["architecture"]
    batch = HanabiBatch(HanabiConfig(), 32, seeds=game_seeds(3, 0, 32))
    RuleBot("strong").rollout(batch, max_moves=11)
    enc = torch.from_numpy(batch.encode())
    h, _ = bp._batch_hc(batch, np.arange(32))
    seat = torch.nn.functional.one_hot(torch.from_numpy(batch.current_players().astype(np.int64)),
                                       2).float()
    with torch.no_grad():
        fused = h * net.mlp(torch.cat([enc, seat], -1))
        adv = net.a_head(fused)
        ref = net.v_head(fused) + adv - adv.mean(-1, keepdim=True)
        q = net.q_seat(h, enc, batch.current_players())
    assert torch.allclose(q, ref)
    legal = batch.legal_masks().astype(bool)
    want = ref[:, :20].masked_fill(~torch.from_numpy(legal), -1e9).argmax(-1).numpy()
    assert (bp.act_batch(batch) == want).all()


def test_architecture_options_round_trip(tmp_path):
    config = HanabiConfig(**SMALL)
    net = PublicLSTMNet.for_config(config, 16, fusion="concat", card_features=True,
                                   public_features=True)
    arch = net.arch()
    assert arch["fusion"] == "concat" and arch["card_features"]["ranks"] == 3
    assert arch["card_features"]["public"] is True
    # the LSTM's extra input is a function of the public part only
    obs = torch.from_numpy(HanabiState(config, seed=4).encode(0))
    k = config.encoding_size - net.pub_dim
    assert torch.equal(net.cards.public_features(obs[k:]),
                       torch.cat([net.cards(obs)[:18], net.cards(obs)[18 + 6:18 + 6 + 36]]))
    bp = saved_and_loaded(net, config, tmp_path / "n.pt")
    batch = HanabiBatch(config, 8, seeds=game_seeds(1, 0, 8))
    RuleBot("simple").rollout(batch, max_moves=5)
    mine = PublicLSTMBlueprint(net, config)
    assert (bp.act_batch(batch) == mine.act_batch(batch)).all()
    assert np.allclose(bp.value(batch), mine.value(batch), atol=1e-5)
    with pytest.raises(ValueError, match="fusion"):
        PublicLSTMNet.for_config(config, 16, fusion="sum")


def test_value_mlp_round_trips_and_never_changes_a_move(tmp_path):
    """value_hidden > 0: V is an MLP of its own; the architecture round-trips through a
    checkpoint, and the moves are those of the same net with any other value head (they
    are the argmax of A alone), while the value does depend on the head."""
    from lbs_pz.models.checkpoint import save_checkpoint
    from lbs_pz.train.distill import init_net
    config = HanabiConfig(**SMALL)
    net = PublicLSTMNet.for_config(config, 16, card_features=True, value_hidden=8)
    assert net.arch()["value_hidden"] == 8
    path = str(tmp_path / "v.pt")
    save_checkpoint(path, "public_lstm", config, net.arch(), net.state_dict(),
                    trained_for=None, info={})
    loaded = load_checkpoint(path, "public_lstm")
    linear = init_net(loaded, 0)                     # the same policy, a linear value head
    assert "value_hidden" not in linear.arch()
    for name, w in linear.state_dict().items():
        if not name.startswith("v_head."):
            assert torch.equal(w, net.state_dict()[name])
    a, b = PublicLSTMBlueprint.load(path), PublicLSTMBlueprint(linear, config)
    assert a.net.arch() == net.arch()
    batch = HanabiBatch(config, 32, seeds=game_seeds(2, 0, 32))
    step = 0
    while not batch.terminals().all():
        moves = a.act_batch(batch)
        assert (moves == b.act_batch(batch)).all()
        if step == 4:
            assert not np.allclose(a.value(batch), b.value(batch))
        batch.step(moves)
        step += 1
    assert step > 4                 # the value comparison ran
    with pytest.raises(ValueError, match="value_hidden"):
        PublicLSTMNet.for_config(config, 16, value_hidden=-1)


def test_a_value_stream_of_its_own_changes_the_value_and_never_a_move(tmp_path):
    """value_lstm: V reads a public LSTM of its own. The recurrent state is H + Hv wide
    (the policy's first) in every path that carries it (the history cache, batched
    rollouts, bfloat16); the moves are those of the same policy without it, the value is
    not; `rollout_value` equals `rollout` then `value`; a new stream as wide as the
    policy's starts as a copy of it (`init_net`)."""
    from lbs_pz.models.checkpoint import save_checkpoint
    from lbs_pz.train.distill import init_net
    config = HanabiConfig(**SMALL)
    torch.manual_seed(3)
    plain = PublicLSTMNet.for_config(config, 16, card_features=True, value_hidden=8,
                                     dueling="max")
    path = str(tmp_path / "plain.pt")
    save_checkpoint(path, "public_lstm", config, plain.arch(), plain.state_dict(),
                    trained_for=None, info={})
    own = init_net(load_checkpoint(path, "public_lstm"), 8, value_lstm=12)
    assert own.arch()["value_lstm"] == 12 and own.state_width == 28
    assert own.zero_state(3)[0].shape == (1, 3, 28)
    copied = init_net(load_checkpoint(path, "public_lstm"), 8, value_lstm=16)
    assert torch.equal(copied.v_lstm.weight_ih_l0, copied.lstm.weight_ih_l0)
    assert torch.equal(copied.v_pub_in[0].weight, copied.pub_in[0].weight)
    path2 = str(tmp_path / "own.pt")
    save_checkpoint(path2, "public_lstm", config, own.arch(), own.state_dict(),
                    trained_for=None, info={})
    a, b = PublicLSTMBlueprint(plain, config), PublicLSTMBlueprint.load(path2)
    assert b.net.arch() == own.arch()
    batch = HanabiBatch(config, 24, seeds=game_seeds(4, 0, 24))
    step = 0
    while not batch.terminals().all():
        moves = a.act_batch(batch)
        assert (moves == b.act_batch(batch)).all()
        if step == 3:
            assert not np.allclose(a.value(batch), b.value(batch))
            state = batch.get_state(0)
            h, c = b.public_state(state)
            assert h.shape == c.shape == (28,)
            b.clear_cache()                         # replayed from the deal: the same state
            assert torch.allclose(b.public_state(state)[0], h, atol=1e-6)
            mixed = False
            for bp in (b, b.with_precision("bfloat16")):
                for moves_on in (2, 12):
                    x, y = batch.copy(), batch.copy()
                    bp.rollout(x, moves_on)
                    v = bp.value(x)
                    assert np.allclose(bp.rollout_value(y, moves_on), v, atol=1e-4)
                    # the value stream run once at the end over the kept inputs equals
                    # its replay from the deal, also where some worlds ended on the way
                    bp.clear_cache()
                    assert np.allclose(bp.value(x), v, atol=2e-2 if bp is not b else 1e-5)
                    mixed |= 0 < x.terminals().sum() < len(x)
            assert mixed
        batch.step(moves)
        step += 1
    assert step > 3
    with pytest.raises(ValueError, match="value_lstm"):
        PublicLSTMNet.for_config(config, 16, value_lstm=8)          # needs value_hidden


def test_a_value_only_fit_leaves_out_the_random_moves_own_q():
    """With the advantages frozen, the Q of an explore game's random move is V plus an
    imitation logit gap: `value_errors(teacher_moves_only=True)` leaves exactly those
    positions out and keeps every other value-valid one."""
    from lbs_pz.train.distill import collate, value_errors
    config = HanabiConfig(**SMALL)
    net = PublicLSTMNet.for_config(config, 16)
    games = teacher_games(config, RuleBot("simple"), 8, 0, explore=1.0)
    b = collate(games[:8], "cpu", seats=8)
    off = b["value_valid"] & (b["taken"] != b["action"])
    assert int(off.sum()) == sum(int((g["taken"] != g["action"]).any()) for g in games[:8]) > 0
    with torch.no_grad():
        every, kept = value_errors(net, b), value_errors(net, b, teacher_moves_only=True)
    assert len(every) == int(b["value_valid"].sum()) and len(kept) == len(every) - int(off.sum())


@pytest.mark.parametrize("explore", [0.0, 1.0])
def test_teacher_labels_line_up_with_observations(explore):
    """Each stored label is the teacher's move in the stored position: replaying a game's
    played moves from its deal gives the stored vectors, legal masks, movers and scores.
    With explore, a game's one random move is at "value_from": played there, never the
    teacher's; every other move played is the teacher's."""
    config = HanabiConfig(**SMALL)
    teacher = RuleBot("strong")
    games = teacher_games(config, teacher, 4, seed=5, stream=TRAIN, explore=explore)
    from lbs_pz.engine.seeds import deal_seeds
    seeds = deal_seeds(TRAIN, 5, 0, 8).tolist()
    perturbed = 0
    for game in games:
        assert game["deal"] in seeds
        batch = HanabiBatch(config, 1, seeds=[game["deal"]])
        differs = np.flatnonzero(game["taken"] != game["action"])
        assert len(differs) <= 1 and (explore or len(differs) == 0)
        if len(differs):
            assert differs[0] == game["value_from"]
            perturbed += 1
        for t in range(len(game["action"])):
            for p in range(config.players):
                assert (batch.encode(players=np.full(1, p, np.int64))[0]
                        == game["seat_obs"][t, p]).all()
            assert game["score"][t] == batch.scores()[0]
            assert (batch.encode(players=np.zeros(1, np.int64))[0, -game["pub"].shape[1]:]
                    == game["pub"][t]).all()
            assert batch.current_players()[0] == game["cur"][t]
            assert int(teacher.act_batch(batch)[0]) == game["action"][t]
            assert batch.legal_masks()[0, game["taken"][t]]
            batch.step(np.array([game["taken"][t]]))
        assert batch.terminals()[0]
        assert game["final"] == batch.scores()[0]
    assert perturbed >= (2 if explore else 0)


def test_a_teacher_game_depends_on_its_index_alone():
    """teacher_games' games are the same whatever the chunks they are played in: the
    exploring move and the belief's world of a game come from that game's own RNG."""
    from lbs_pz.search.beliefs.grounded import GroundedBelief
    config = HanabiConfig(**SMALL)
    kw = dict(seed=4, explore=0.7, world_belief=GroundedBelief(), world_fraction=0.5)
    whole = teacher_games(config, RuleBot("strong"), 12, **kw)
    parts = (teacher_games(config, RuleBot("strong"), 5, first_game=0, **kw)
             + teacher_games(config, RuleBot("strong"), 7, first_game=5, **kw))
    assert sum(g["redealt"] for g in whole) >= 1 and sum(g["value_from"] > 0 for g in whole) >= 4
    for a, b in zip(whole, parts):
        assert a.keys() == b.keys()
        assert all(np.array_equal(a[k], b[k]) for k in a)
    other_seed = teacher_games(config, RuleBot("strong"), 12, **dict(kw, seed=5))
    assert [g["deal"] for g in other_seed] != [g["deal"] for g in whole]
    with pytest.raises(ValueError, match="n must be >= 1"):
        teacher_games(config, RuleBot("strong"), 0, seed=0)


def test_teacher_games_go_on_in_a_world_the_belief_drew():
    """With world_belief, the explore games marked "redealt" go on from "value_from" in a
    world whose mover holds a hand the belief drew: the partner sees other cards there
    than in the deal's own game, the mover's own view and the public part are unchanged,
    and every later move is the teacher's."""
    from lbs_pz.search.beliefs.grounded import GroundedBelief
    config = HanabiConfig(**SMALL)
    teacher = RuleBot("strong")
    games = teacher_games(config, teacher, 8, seed=5, stream=TRAIN, explore=1.0,
                          world_belief=GroundedBelief(), world_fraction=1.0)
    redealt = [g for g in games if g["redealt"]]
    assert len(redealt) >= 6                  # all but games that ended before their time
    changed = 0
    for game in redealt:
        t0 = game["value_from"]
        state = HanabiState(config, seed=game["deal"])
        for move in game["taken"][:t0]:
            state.apply(int(move))
        mover = state.current_player
        assert game["cur"][t0] == mover
        assert (game["seat_obs"][t0, mover] == state.encode(mover)).all()
        assert (game["pub"][t0] == state.encode(0)[-game["pub"].shape[1]:]).all()
        changed += not (game["seat_obs"][t0, 1 - mover] == state.encode(1 - mover)).all()
        assert (game["taken"][t0 + 1:] == game["action"][t0 + 1:]).all()
    assert changed >= len(redealt) // 2


def _run(tmp_path, **kw):
    out = str(tmp_path / "d.pt")
    dc = DistillConfig(teacher="strong", out=out, threads=1, eval_games=100, **SMALL)
    for k, v in kw.items():
        setattr(dc, k, v)
    distill(dc, log=lambda s: None, progress_bar=False)
    return out, load_checkpoint(out, "public_lstm")


def test_distill_small_variant_reaches_90_percent(tmp_path):
    """The issue's test: >= 90% held-out agreement with a rule bot within a minute on one
    core: 1000 updates (~7 s unloaded, 98% then), stopped at one minute whatever the load."""
    out, ckpt = _run(tmp_path, teacher="simple", updates=1000, minutes=1.0, hidden=64,
                     eval_every=0, num_actors=64, act_steps=4, buffer_games=1024)
    acc = ckpt["info"]["progress"]["evals"][-1][3]
    assert acc >= 0.90, ckpt["info"]["progress"]["evals"]
    assert ckpt["architecture"]["card_features"] is not None
    assert ckpt["info"]["teacher"]["spec"] == "simple"
    # the checkpoint is a blueprint: `lstm:PATH` plays the same moves as the trained net
    bp = load_blueprint(f"lstm:{out}")
    net = PublicLSTMNet(**ckpt["architecture"])
    net.load_state_dict(ckpt["weights"])
    config = HanabiConfig(**SMALL)
    held = teacher_games(config, RuleBot("simple"), 50, 0, stream=EVAL)
    assert agreement(bp.net, held) == pytest.approx(agreement(net, held))
    batch = HanabiBatch(config, 64, seeds=game_seeds(9, 0, 64))
    RuleBot("strong").rollout(batch, max_moves=9)
    assert (bp.act_batch(batch) == PublicLSTMBlueprint(net, config).act_batch(batch)).all()
    # value_weight puts the net's own value on the score scale (LBS-k bootstraps with it):
    # at the deal its mean is the net's mean self-play score on those deals
    deals = game_seeds(11, 0, 300)
    start = HanabiBatch(config, 300, seeds=deals)
    predicted = bp.value(start)
    played = HanabiBatch(config, 300, seeds=deals)
    bp.rollout(played)
    assert abs(predicted.mean() - played.scores().mean()) < 0.75, \
        (predicted.mean(), played.scores().mean())


def test_resume_continues_the_run(tmp_path):
    out, first = _run(tmp_path, updates=6, minutes=0, hidden=16, eval_every=0, save_every=3,
                      num_actors=16, batch_size=4, buffer_games=32)
    assert first["info"]["progress"]["updates"] == 6
    _, second = _run(tmp_path, updates=10, minutes=0, hidden=16, eval_every=0, save_every=3,
                     num_actors=16, batch_size=4, buffer_games=32, resume=out)
    progress = second["info"]["progress"]
    assert progress["updates"] == 10 and progress["games"] > first["info"]["progress"]["games"]
    assert [e[0] for e in progress["evals"]] == [6, 10]
    with pytest.raises(ValueError, match="made for"):
        _run(tmp_path, updates=12, minutes=0, hidden=32, resume=out)
    # a checkpoint of another trainer (same net, no teacher recorded) is refused
    from lbs_pz.models.checkpoint import save_checkpoint
    other = str(tmp_path / "other.pt")
    save_checkpoint(other, "public_lstm", HanabiConfig(**SMALL), second["architecture"],
                    second["weights"], trained_for=None,
                    info={"progress": {"evals": [], "updates": 1}},
                    resume={"optimizer": second["resume"]["optimizer"]})
    with pytest.raises(ValueError, match="not a checkpoint of `lbs-pz distill`"):
        _run(tmp_path, updates=12, minutes=0, hidden=16, resume=other, num_actors=16,
             batch_size=4, buffer_games=32)


def test_a_resumed_run_makes_the_updates_of_a_run_never_stopped(tmp_path):
    """6 updates at once, or 3 then 3 more from the checkpoint (a constant learning rate:
    the schedule follows each invocation's budget), the ring of games wrapped (16 games
    kept) and a quarter of every batch from recorded search games: the same weights."""
    config = HanabiConfig(**SMALL)
    records = tmp_path / "searched.jsonl"
    with open(records, "w") as f:
        for i, g in enumerate(teacher_games(config, RuleBot("simple"), 8, seed=5, stream=TRAIN)):
            f.write(json.dumps({"game": i, "deal": g["deal"], "seat": 0,
                                "moves": g["taken"].tolist(),
                                "searched": list(range(len(g["taken"]))),
                                "deviated": [0], "score": g["final"]}) + "\n")
    kw = dict(minutes=0, hidden=16, eval_every=0, eval_games=8, num_actors=8, act_steps=4,
              batch_size=8, buffer_games=16, lr_final=1.0, search_games=str(records),
              search_fraction=0.25, deviation_weight=5.0)
    whole = tmp_path / "whole"
    half = tmp_path / "half"
    whole.mkdir(), half.mkdir()
    _, a = _run(whole, updates=6, **kw)
    out, _ = _run(half, updates=3, **kw)
    _, b = _run(half, updates=6, resume=out, **kw)
    assert b["info"]["progress"]["updates"] == 6
    assert b["info"]["progress"]["games"] == a["info"]["progress"]["games"] > 16
    for name, w in a["weights"].items():
        assert torch.equal(w, b["weights"][name]), name


def test_config_checks():
    for bad in (dict(players=7), dict(lr=0), dict(arch="sum"), dict(hidden=0), dict(minutes=0),
                dict(batch_size=64, buffer_games=8), dict(teacher=" "),
                dict(world_fraction=1.5), dict(world_belief="b.pt", explore=0.0),
                dict(deviation_weight=0), dict(search_fraction=0)):
        with pytest.raises(ValueError):
            DistillConfig(**bad).check()


def _cli(*args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "lbs_pz.cli", "distill", *args],
                          capture_output=True, text=True, env=env,
                          timeout=HANG_SECONDS)


def test_cli_help_and_bad_input(tmp_path):
    r = _cli("--help")
    assert r.returncode == 0 and "--teacher" in r.stdout
    assert "--arch {paper," in r.stdout and "--hidden N" in r.stdout
    assert not [flag for flag in REMOVED_FLAGS if flag.split()[0] in r.stdout]
    for removed in ("--fusion concat", "--value-hidden 256", "--dueling max"):
        r = _cli(*removed.split(), "--out", str(tmp_path / "x.pt"))
        assert r.returncode == 2 and "unrecognized arguments" in r.stderr, removed
    r = _cli("--teacher", "nonsense", "--out", str(tmp_path / "x.pt"))
    assert r.returncode == 2 and "unknown blueprint" in r.stderr
    r = _cli("--teacher", "strong", "--players", "9", "--out", str(tmp_path / "x.pt"))
    assert r.returncode == 2 and "players" in r.stderr
    assert not (tmp_path / "x.pt").exists()


def test_cli_runs_and_saves(tmp_path):
    out = tmp_path / "c.pt"
    r = _cli("--teacher", "simple", "--out", str(out), "--updates", "3", "--minutes", "0",
             "--hidden", "16", "--colors", "2", "--ranks", "3", "--hand-size", "3",
             "--eval-games", "20", "--num-actors", "8", "--batch-size", "4", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "held-out agreement" in r.stdout
    assert load_blueprint(f"lstm:{out}").config == HanabiConfig(players=2, colors=2, ranks=3,
                                                                hand_size=3)


def test_cli_arch_changes_only_the_value_head_of_a_start(tmp_path):
    """distill --init START --value-only --arch PRESET: over a "conventions" start,
    conventions_maxq re-centres Q on the best legal move; over that one,
    conventions_value gives V an MLP on a public LSTM of its own (both 256 wide, whatever
    --hidden); every policy weight stays the start's. An --arch or --hidden that differs
    from the start in anything else is an error naming what differs, and writes nothing."""
    tiny = ["--colors", "2", "--ranks", "3", "--hand-size", "3", "--updates", "2",
            "--minutes", "0", "--eval-games", "10", "--num-actors", "8", "--batch-size", "4",
            "--no-progress"]
    paths = {name: str(tmp_path / f"{name}.pt") for name in ("start", "maxq", "value")}
    r = _cli("--teacher", "strong", "--arch", "conventions", "--hidden", "16",
             "--out", paths["start"], *tiny)
    assert r.returncode == 0, r.stderr
    for name, start, arch in (("maxq", "start", "conventions_maxq"),
                              ("value", "maxq", "conventions_value")):
        r = _cli("--teacher", f"lstm:{paths['start']}", "--init", paths[start], "--value-only",
                 "--arch", arch, "--out", paths[name], *tiny)
        assert r.returncode == 0, r.stderr
    nets = {name: load_checkpoint(path, "public_lstm") for name, path in paths.items()}
    base = nets["start"]["architecture"]
    assert base["hidden"] == 16 and base["conventions"] and base["hint_head"]
    assert nets["maxq"]["architecture"] == dict(base, dueling="max")
    assert nets["value"]["architecture"] == dict(base, dueling="max", value_hidden=256,
                                                 value_lstm=256)
    for name in ("maxq", "value"):
        weights = nets[name]["weights"]
        for key, w in nets["start"]["weights"].items():
            if not key.startswith("v_"):
                assert torch.equal(w, weights[key]), (name, key)
    bad = tmp_path / "bad.pt"
    for options, named in ((["--arch", "card_features"],
                            "has conventions True, hint_head True, this run asks for "
                            "conventions False, hint_head False (--arch card_features)"),
                           (["--hidden", "32"], "has hidden 16, this run asks for hidden 32"),
                           (["--arch", "conventions_value", "--hidden", "8"],
                            "has hidden 16, this run asks for hidden 8 (--hidden 8)")):
        r = _cli("--teacher", "strong", "--init", paths["start"], *options,
                 "--out", str(bad), *tiny)
        assert r.returncode == 2 and named in r.stderr, r.stderr
        assert "the start sets the architecture" in r.stderr and not bad.exists()


@pytest.mark.parametrize("start,arch", [("card_features", None),
                                        ("conventions", "conventions_maxq"),
                                        ("conventions", "conventions_value")])
def test_value_only_keeps_every_move_and_fits_the_nets_own_returns(tmp_path, start, arch):
    """--value-only --init A --teacher lstm:A: policy evaluation of A (a net of the preset
    `start`) on its own games. The moves (argmax of the advantage head) are unchanged;
    the value then predicts A's own self-play score, on average over every position of
    A's games (A's value was never trained: value_weight 0). Without --arch the head is A's;
    --arch conventions_maxq re-centres the same weights, so the value is score + the seats'
    V; --arch conventions_value replaces the linear head by a new MLP on a public LSTM of its
    own, trained with it, every other weight A's."""
    a_path, _ = _run(tmp_path, teacher="simple", arch=start, updates=300, minutes=0,
                     hidden=32, eval_every=0, value_weight=0.0, num_actors=64, act_steps=4,
                     buffer_games=512)
    b_path = str(tmp_path / "b.pt")
    distill(DistillConfig(teacher=f"lstm:{a_path}", init=a_path, value_only=True, arch=arch,
                          explore=0.5, updates=300, minutes=0, lr=3e-3, eval_every=0,
                          eval_games=50, num_actors=64, act_steps=4, buffer_games=512,
                          out=b_path, threads=1, **SMALL),
            log=lambda s: None, progress_bar=False)
    config = HanabiConfig(**SMALL)
    a, b = load_blueprint(f"lstm:{a_path}"), load_blueprint(f"lstm:{b_path}")
    head = ARCHITECTURES[arch or start]
    assert (b.net.dueling, b.net.value_hidden, b.net.value_lstm) == (
        head["dueling"], head["value_hidden"], head["value_lstm"])
    assert a.net.dueling == "mean" and b.net.hidden == a.net.hidden == 32
    for name, w in a.net.state_dict().items():
        if not name.startswith("v_"):
            assert torch.equal(w, b.net.state_dict()[name]), name
    batch = HanabiBatch(config, 300, seeds=game_seeds(12, 0, 300))
    values = {"a": [], "b": []}          # every position of A's own games, its value
    while not batch.terminals().all():
        live = ~batch.terminals()
        for name, bp in (("a", a), ("b", b)):
            values[name].append(np.where(live, bp.value(batch), np.nan))
        moves = a.act_batch(batch)
        assert (moves == b.act_batch(batch)).all()
        batch.step(moves)
    final = batch.scores()
    error = {name: float(np.nanmean(np.array(v) - final[None])) for name, v in values.items()}
    assert abs(error["b"]) < 0.5 and abs(error["a"]) > 2.0, error
    assert load_checkpoint(b_path)["info"]["train_config"]["value_only"] is True
    with pytest.raises(ValueError, match="--init"):
        DistillConfig(value_only=True).check()


def test_a_belief_carries_over_only_to_a_net_with_the_same_moves(tmp_path):
    from lbs_pz.train.belief import BeliefTrainConfig, train_belief
    from lbs_pz.train.distill import carry_belief_over

    def net(name, **kw):
        out = str(tmp_path / f"{name}.pt")
        distill(DistillConfig(teacher="simple", out=out, updates=3, minutes=0, hidden=16,
                              eval_every=0, eval_games=10, num_actors=16, batch_size=4,
                              buffer_games=16, threads=1, **kw),
                log=lambda s: None, progress_bar=False)
        return out
    a, other = net("a"), net("other", seed=1)
    b = str(tmp_path / "b.pt")
    distill(DistillConfig(teacher=f"lstm:{a}", init=a, value_only=True, updates=3, minutes=0,
                          eval_every=0, eval_games=10, num_actors=16, batch_size=4,
                          buffer_games=16, out=b, threads=1),
            log=lambda s: None, progress_bar=False)
    belief = str(tmp_path / "belief.pt")
    train_belief(BeliefTrainConfig(blueprint=f"lstm:{a}", steps=2, games_per_step=4, minutes=0,
                                   val_games=4, embed=16, hidden=16, decoder=16, threads=1,
                                   device="cpu", out=belief, progress=False),
                 log=lambda *x: None)
    carried = carry_belief_over(belief, f"lstm:{a}", f"lstm:{b}", str(tmp_path / "c.pt"),
                                games=20)
    from lbs_pz.agents import blueprint_identity
    assert carried["trained_for"]["fingerprint"] == blueprint_identity(f"lstm:{b}")["fingerprint"]
    # every position of the 20 games compared (a game lasts 3 moves at the least: 3 bombs)
    assert carried["info"]["carried_over"]["same_moves_in_positions"] >= 20 * 3
    with pytest.raises(ValueError, match="differ"):
        carry_belief_over(belief, f"lstm:{a}", f"lstm:{other}", str(tmp_path / "d.pt"),
                          games=20)
    with pytest.raises(Exception, match="trained for|mismatch"):
        carry_belief_over(belief, f"lstm:{other}", f"lstm:{b}", str(tmp_path / "e.pt"),
                          games=20)


def _mid_game_batch(config, n=24, moves=7, seed=5):
    batch = HanabiBatch(config, n, seeds=game_seeds(seed, 0, n))
    RuleBot("simple").rollout(batch, max_moves=moves)
    return batch


def test_max_dueling_makes_the_greedy_q_the_value_head_and_keeps_every_move(tmp_path):
    """dueling="max": Q = V + A - max over the seat's legal moves of A. The same weights
    make the same moves as under "mean" (the argmax of A); every seat's greedy legal Q is
    V exactly, so the blueprint's value is score + sum of the seats' V; the checkpoint
    round-trips; Q without the legal moves is an error, not a silently wrong number."""
    from lbs_pz.agents.public_lstm import seat_masks
    from lbs_pz.models.checkpoint import save_checkpoint
    from lbs_pz.train.distill import init_net
    config = HanabiConfig(**SMALL)
    torch.manual_seed(0)
    mean_net = PublicLSTMNet.for_config(config, 16, card_features=True)
    path = str(tmp_path / "m.pt")
    save_checkpoint(path, "public_lstm", config, mean_net.arch(), mean_net.state_dict(),
                    trained_for=None, info={})
    max_net = init_net(load_checkpoint(path, "public_lstm"), None, "max")
    assert max_net.arch() == dict(mean_net.arch(), dueling="max")
    assert "dueling" not in mean_net.arch()          # old checkpoints load as "mean"
    a, b = PublicLSTMBlueprint(mean_net, config), PublicLSTMBlueprint(max_net, config)
    batch = _mid_game_batch(config)
    live = ~batch.terminals()
    assert live.sum() > 10
    assert (a.act_batch(batch) == b.act_batch(batch)).all()
    q = b.q_values(batch)                                             # (N, P, M + 1)
    mask = seat_masks(batch.legal_masks(), batch.current_players(), config.players)
    h, _ = b._batch_hc(batch, np.arange(len(batch)))
    from lbs_pz.agents.public_lstm import encode_batch
    enc = torch.from_numpy(encode_batch(batch, False))
    with torch.no_grad():
        x = max_net._private_in(enc, torch.eye(2).expand(len(batch), 2, 2))
        v = max_net.v_head(max_net._fused(h.unsqueeze(-2), max_net.mlp(x)))[..., 0].numpy()
    greedy = np.where(mask, q, -np.inf).max(-1)                       # (N, P)
    assert np.allclose(greedy[live], v[live], atol=1e-5)
    assert np.allclose(b.value(batch)[live], batch.scores()[live] + v[live].sum(-1), atol=1e-4)
    # the mean-centred value carries the advantage's margin; the re-centred one does not
    assert not np.allclose(a.value(batch)[live], b.value(batch)[live], atol=1e-2)
    loaded = saved_and_loaded(max_net, config, tmp_path / "x.pt")
    assert loaded.net.dueling == "max"
    assert np.allclose(loaded.value(batch), b.value(batch), atol=1e-5)
    with pytest.raises(ValueError, match="legal"):
        max_net.q(h, enc)
    with pytest.raises(ValueError, match="legal must be bool"):
        max_net.q(h, enc, torch.ones(len(batch), 2, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match="dueling"):
        PublicLSTMNet.for_config(config, 16, dueling="min")


def test_q_learning_refuses_a_max_centred_start(tmp_path):
    """train-blueprint's TD targets take every seat's Q without legal masks: a net whose Q
    is centred on the best legal move is refused at the start, with the reason."""
    from lbs_pz.models.checkpoint import CheckpointError, save_checkpoint
    from lbs_pz.train.blueprint import BlueprintTrainConfig, init_checkpoint
    config = HanabiConfig()
    net = PublicLSTMNet.for_config(config, 16, dueling="max")
    path = str(tmp_path / "max.pt")
    save_checkpoint(path, "public_lstm", config, net.arch(), net.state_dict(),
                    trained_for=None, info={})
    with pytest.raises(CheckpointError, match="mean-centred"):
        init_checkpoint(BlueprintTrainConfig(init=path, hidden=16), config, log=lambda *a: None)


def test_a_new_value_head_starts_levelled():
    """level_value_head shifts the value head's bias so that the Q-sum's mean error on the
    batch's positions that a value-only fit uses (the teacher's own moves) is 0; it moves
    nothing but that bias."""
    from lbs_pz.train.distill import collate, level_value_head, value_errors
    config = HanabiConfig(**SMALL)
    torch.manual_seed(1)
    net = PublicLSTMNet.for_config(config, 16, dueling="max")
    games = teacher_games(config, RuleBot("simple"), 8, 0, explore=0.5)
    b = collate(games, "cpu", seats=8)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        assert abs(float(value_errors(net, b).mean())) > 1.0
    shift = level_value_head(net, b)
    with torch.no_grad():
        assert abs(float(value_errors(net, b, teacher_moves_only=True).mean())) < 1e-3
    changed = [k for k, v in net.state_dict().items() if not torch.equal(v, before[k])]
    assert changed == ["v_head.bias"] and abs(shift) > 1.0
