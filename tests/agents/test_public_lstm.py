"""The public-LSTM blueprint (lbs_pz.agents.public_lstm) and its trainer
(lbs_pz.train.blueprint): shapes, masking, the public stream's isolation from private
features, the Blueprint protocol, no peeking, batched rollouts, learning, checkpoints."""

import copy
import hashlib
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers.engine import positions, sample_consistent_hand
from tests.helpers.scripts import load_script
from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents import Blueprint, RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.engine.features import private_features, public_features
from lbs_pz.models.checkpoint import CheckpointError, save_checkpoint

torch = pytest.importorskip("torch")

# These two import torch.
from lbs_pz.agents.public_lstm import (PublicLSTMBlueprint, PublicLSTMNet,  # noqa: E402
                                       epsilon_greedy, masked_greedy)
from lbs_pz.train import blueprint as tb  # noqa: E402

torch.set_num_threads(1)
CONFIG = HanabiConfig()


def make_net(config=CONFIG, hidden=32, seed=0):
    torch.manual_seed(seed)
    return PublicLSTMNet.for_config(config, hidden=hidden)


# --- network ------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [HanabiConfig(), HanabiConfig(players=3)], ids=["2p", "3p"])
def test_shapes(config):
    net = make_net(config)
    k = (config.players - 1) * config.hand_size * 25
    assert (net.pub_dim, net.obs_dim) == (config.encoding_size - k, config.encoding_size)
    B, T, P, M = 3, 7, config.players, config.num_moves
    q, (h, c) = net(torch.zeros(B, T, net.pub_dim), torch.zeros(B, T, P, net.obs_dim))
    assert q.shape == (B, T, P, M + 1)
    assert h.shape == c.shape == (1, B, 32)
    out, _ = net.public(torch.zeros(B, T, net.pub_dim))
    assert out.shape == (B, T, 32)
    bp = PublicLSTMBlueprint(net, config)
    state = HanabiState(config, seed=2)
    one = HanabiBatch.from_states([state])
    assert bp.q_values(one).shape == (1, P, M + 1)
    assert bp.value(one).shape == (1,) and bp.value(one).dtype == np.float32
    with pytest.raises(TypeError, match="HanabiBatch.from_states"):
        bp.value([state])
    with pytest.raises(ValueError):
        PublicLSTMBlueprint(make_net(HanabiConfig(players=4)), config)
    with pytest.raises(ValueError):
        PublicLSTMNet(10, 0, 2, 20)


def test_illegal_moves_are_never_chosen():
    net = make_net()
    with torch.no_grad():          # make every illegal-prone output look best
        net.a_head.bias.copy_(torch.linspace(50, 0, net.num_moves + 1))
    bp = PublicLSTMBlueprint(net, CONFIG)
    states = positions(CONFIG, 3, seed=1, every=4)
    moves = bp.act_batch(HanabiBatch.from_states(states))
    for st, m in zip(states, moves):
        assert m in st.legal_moves()
    q = torch.randn(500, 21)
    mask = np.random.default_rng(0).random((500, 21)) < 0.2
    mask[:, 0] = True
    assert mask[np.arange(500), masked_greedy(q, mask).numpy()].all()
    rng = np.random.default_rng(1)
    assert mask[np.arange(500), epsilon_greedy(q, mask, 1.0, rng)].all()
    assert mask[np.arange(500), epsilon_greedy(q, mask, np.linspace(0, 1, 500), rng)].all()


def test_public_stream_never_sees_private_features():
    net = make_net()
    g = torch.Generator().manual_seed(0)
    k = net.obs_dim - net.pub_dim
    pub = (torch.rand(2, 9, net.pub_dim, generator=g) < 0.3).float()
    obs_a = torch.cat([(torch.rand(2, 9, 2, k, generator=g) < 0.3).float(),
                       pub[:, :, None].expand(2, 9, 2, net.pub_dim)], -1)
    obs_b = obs_a.clone()
    obs_b[..., :k] = (torch.rand(2, 9, 2, k, generator=g) < 0.3).float()   # private part only
    q_a, (h_a, c_a) = net(pub, obs_a)
    q_b, (h_b, c_b) = net(pub, obs_b)
    assert torch.equal(h_a, h_b) and torch.equal(c_a, c_b)
    assert not torch.allclose(q_a, q_b)           # the private stream does matter
    # on real games: re-dealing the other player's hand changes the private features of
    # the player to move, never the public ones or the LSTM state of the history
    bp = PublicLSTMBlueprint(net, CONFIG)
    rng = random.Random(0)
    checked = 0
    for state in positions(CONFIG, 2, seed=5, every=4):
        other = 1 - state.current_player
        hand = sample_consistent_hand(state, other, rng)
        if hand is None or hand == state.hand(other):
            continue
        alt = state.clone()
        alt.set_hand(other, hand)
        assert not np.array_equal(private_features(alt, state.current_player),
                                  private_features(state, state.current_player))
        assert np.array_equal(public_features(alt), public_features(state))
        fresh = PublicLSTMBlueprint(net, CONFIG)        # no cache shared with bp
        h1, c1 = bp.public_state(state)
        h2, c2 = fresh.public_state(alt)
        assert torch.allclose(h1, h2, atol=1e-6) and torch.allclose(c1, c2, atol=1e-6)
        checked += 1
    assert checked > 5


def test_public_state_replays_only_past_the_longest_cached_prefix():
    """A history whose earlier position is cached (a search's previous root, two moves
    back) continues from that state: the same (h, c) as replaying from the deal, and
    every position in between is cached on the way."""
    net = make_net()
    game = positions(CONFIG, 2, seed=9, every=1)
    root, later = game[20], game[26]
    assert later.move_history[:20] == root.move_history
    bp, scratch = PublicLSTMBlueprint(net, CONFIG), PublicLSTMBlueprint(net, CONFIG)
    bp.public_state(root)
    assert len(bp._cache) == 21                   # the deal and every move of the root
    h1, c1 = bp.public_state(later)
    assert len(bp._cache) == 27                   # only the six positions past the root
    h2, c2 = scratch.public_state(later)
    assert torch.allclose(h1, h2, atol=1e-6) and torch.allclose(c1, c2, atol=1e-6)
    for t in (21, 25):
        h, c = scratch.public_state(game[t])
        assert torch.allclose(bp._cache[game[t].public_history_key()][0], h, atol=1e-6)
    empty = PublicLSTMBlueprint(net, CONFIG)       # a history of no moves at all
    assert empty.public_state(game[0])[0].shape == (net.hidden,)


# --- the Blueprint adapter ------------------------------------------------------------------

def test_blueprint_protocol_and_value():
    bp = PublicLSTMBlueprint(make_net(), CONFIG)
    assert isinstance(bp, Blueprint)
    assert bp.deterministic and bp.has_value and not bp.has_private_memory
    assert not PublicLSTMBlueprint(make_net(), CONFIG, epsilon=0.1).deterministic
    states = positions(CONFIG, 2, seed=3, every=10)
    q = bp.q_values(HanabiBatch.from_states(states))
    v = bp.value(HanabiBatch.from_states(states))
    for st, qs, val in zip(states, q, v):       # score + mover's best legal Q + others' no-op
        cur = st.current_player
        expect = st.score + max(qs[cur][m] for m in st.legal_moves()) + \
            sum(qs[p][CONFIG.num_moves] for p in range(CONFIG.players) if p != cur)
        assert val == pytest.approx(expect, abs=1e-4)
    done = HanabiBatch.from_states([HanabiState(CONFIG, seed=0)])
    RuleBot("strong").rollout(done)
    assert bp.value(done)[0] == done.scores()[0]
    assert bp.act(done.get_state(0)) == -1 and list(bp.act_batch(done)) == [-1]
    assert list(bp.rollout(done)) == [0]
    # act_batch's mover-only Q agrees with the Q of every seat
    batch = HanabiBatch.from_states(states)
    cur = batch.current_players()
    legal = batch.legal_masks().astype(bool)
    best = np.where(legal, q[np.arange(len(states)), cur, :CONFIG.num_moves], -np.inf).argmax(1)
    assert np.array_equal(bp.act_batch(batch), best)
    live = HanabiState(CONFIG, seed=0)
    with pytest.raises(ValueError):
        bp.act(live, seat=1 - live.current_player)
    with pytest.raises(ValueError):
        PublicLSTMBlueprint(make_net(), CONFIG, epsilon=2.0)


def test_no_peeking_at_own_hand():
    """Re-dealing the acting seat's own cards (consistently with its knowledge) never
    changes the move: the net sees the public history and the other players' cards only."""
    bp = PublicLSTMBlueprint(make_net(hidden=64, seed=3), CONFIG)
    rng = random.Random(1)
    checked = 0
    for state in positions(CONFIG, 3, seed=7, every=4):
        seat = state.current_player
        before = bp.act(state)
        for _ in range(2):
            hand = sample_consistent_hand(state, seat, rng)
            if hand is None or hand == state.hand(seat):
                continue
            other = state.clone()
            other.set_hand(seat, hand)
            assert PublicLSTMBlueprint(bp.net, CONFIG).act(other) == before
            assert bp.act(other) == before
            checked += 1
    assert checked > 20


def test_history_key_is_the_public_history_only():
    """The LSTM-state cache key (HanabiState.public_history_key): start player, then
    (move, card played/discarded, hinted slots) per move; prefixes are earlier positions;
    re-dealing hidden cards (own hand, deck) leaves it unchanged."""
    state = positions(CONFIG, 1, seed=4, every=30)[-1]
    recs = state.move_records()
    expect = bytes([state.start_player]) + b"".join(
        bytes([r["move"], r["card"] & 0xFF, r["reveal"]]) for r in recs)
    key = state.public_history_key()
    assert key == expect and len(key) == 1 + 3 * len(recs)
    replay = HanabiState(CONFIG, deck=state.deck, start_player=state.start_player, seed=0)
    for t, move in enumerate(state.move_history):
        assert replay.public_history_key() == key[:1 + 3 * t]
        replay.apply(move)
    alt = state.clone()
    alt.shuffle_deck(seed=3)
    assert alt.public_history_key() == key


def test_batched_rollout_matches_acting_one_world_at_a_time():
    net = make_net(hidden=64, seed=4)
    roots = positions(CONFIG, 2, seed=11, every=15)[:6]
    for depth in (5, -1):
        worlds = []
        for root in roots:                     # several worlds per history, as in search
            for s in range(3):
                w = root.clone()
                w.shuffle_deck(seed=s)
                worlds.append(w)
        batched = HanabiBatch.from_states(worlds)
        rolled_bp = PublicLSTMBlueprint(net, CONFIG)
        made = rolled_bp.rollout(batched, depth)
        assert made.dtype == np.int32 and made.shape == (len(worlds),)
        # the states the rollout cached give the same values as replaying every history
        assert np.allclose(rolled_bp.value(batched),
                           PublicLSTMBlueprint(net, CONFIG).value(batched), atol=1e-4)
        single_bp = PublicLSTMBlueprint(net, CONFIG)
        for i, (w, n) in enumerate(zip(worlds, made)):
            steps = 0
            while not w.is_terminal and (depth < 0 or steps < depth):
                w.apply(single_bp.act(w))
                steps += 1
            assert n == steps
            assert w.move_history == batched.get_state(i).move_history


# --- training --------------------------------------------------------------------------------

def test_actor_epsilons_follow_the_paper():
    eps = tb.actor_epsilons(8)
    assert eps[0] == pytest.approx(0.4) and eps[-1] == pytest.approx(0.4 ** 8)
    assert np.all(np.diff(eps) < 0)


def test_actors_record_whole_games_and_shape_misplays():
    cfg = HanabiConfig(players=2)
    actors = tb.Actors(cfg, 16, seed=0, epsilons=np.ones(16), life_penalty=1.0)
    games = []
    while len(games) < 8:
        games += actors.step(make_net())
    misplays = 0
    for g in games:
        n = len(g["action"])
        assert g["obs"].shape == (n, 2, cfg.encoding_size) and g["legal"].shape == (n, 20)
        assert g["legal"][np.arange(n), g["action"]].all()
        assert np.array_equal(g["cur"][1:], 1 - g["cur"][:-1])
        plays = (g["action"] >= 5) & (g["action"] < 10)
        assert np.all((g["reward"][plays] == 1) | (g["reward"][plays] <= -1))
        assert np.all(g["reward"][~plays] >= 0)
        misplays += int(np.sum(g["reward"][plays] <= -1))
    assert misplays > 0


def test_td_loss_goes_down():
    """A few hundred updates on stored games of the strong bot: the TD loss against a
    frozen target network falls, and the margin loss on the demonstrations too."""
    torch.manual_seed(0)
    cfg = HanabiConfig(players=2)
    actors = tb.Actors(cfg, 16, seed=0, bot="strong")
    replay = tb.GameReplay(64, actors.max_len, 658, 2, 20)
    while len(replay) < 24:
        for game in actors.step():
            replay.add(game)
    tc = tb.BlueprintTrainConfig(demo_bot="strong", lr=2e-3)
    net = make_net(hidden=32)
    target = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    everything = replay.batch(np.arange(len(replay)))
    ones, demo = np.ones(len(replay), np.float32), np.ones(len(replay), bool)

    def losses():
        with torch.no_grad():
            _, td, margin, _ = tb.vdn_loss(net, target, everything, ones, demo, tc)
        return td, margin

    td0, m0 = losses()
    rng = np.random.default_rng(0)
    for _ in range(200):
        idx, w = replay.sample(4, rng, tc.priority_exponent, tc.is_exponent)
        loss, _, _, prio = tb.vdn_loss(net, target, replay.batch(idx), w, demo[:4], tc)
        opt.zero_grad()
        loss.backward()
        opt.step()
        replay.priority[idx] = prio
    td1, m1 = losses()
    assert td1 < 0.5 * td0, (td0, td1)
    assert m1 < 0.9 * m0, (m0, m1)


def test_train_checkpoint_resume_and_load(tmp_path):
    out, slim = str(tmp_path / "bp.pt"), str(tmp_path / "bp_slim.pt")
    small = dict(hidden=16, num_actors=8, batch_size=4, learning_starts=4, act_steps=2,
                 replay_games=32, eval_every=0, eval_games=8, save_every=1000, minutes=0,
                 demo_bot="strong", demo_actors=4, demo_replay_games=16, out=out, slim_out=slim)
    logs = []
    progress = tb.train_blueprint(tb.BlueprintTrainConfig(updates=5, **small), log=logs.append,
                        progress_bar=False)
    assert progress["updates"] == 5 and progress["env_steps"] > 0
    assert "greedy self-play" in logs[-1]
    ckpt = torch.load(out, weights_only=True)
    assert ckpt["format"] == "lbs_pz" and ckpt["kind"] == "public_lstm"
    assert ckpt["info"]["progress"]["updates"] == 5 and ckpt["trained_for"] is None
    for path in (out, slim):
        bp = PublicLSTMBlueprint.load(path)
        assert isinstance(bp, PublicLSTMBlueprint) and bp.net.hidden == 16
        state = HanabiState(CONFIG, seed=9)
        assert bp.act(state) in state.legal_moves()
    full = PublicLSTMBlueprint.load(out)
    net = PublicLSTMNet(**ckpt["architecture"])
    net.load_state_dict(ckpt["weights"])
    states = HanabiBatch.from_states(positions(CONFIG, 1, seed=2, every=10))
    assert np.allclose(full.q_values(states), PublicLSTMBlueprint(net, CONFIG).q_values(states))
    assert np.allclose(PublicLSTMBlueprint.load(slim).q_values(states), full.q_values(states),
                       atol=0.05)
    # the agents layer loads the same file itself, and through a blueprint spec
    direct = PublicLSTMBlueprint.load(out)
    assert np.allclose(direct.q_values(states), full.q_values(states), atol=1e-6)
    assert direct.spec == f"lstm:{os.path.normpath(out)}"
    assert direct.fingerprint == hashlib.sha256(open(out, "rb").read()).hexdigest()
    from lbs_pz.agents import blueprint_identity, load_blueprint
    by_spec = load_blueprint(f"lstm:{out}")
    assert blueprint_identity(by_spec) == {"spec": direct.spec, "fingerprint": direct.fingerprint}
    assert blueprint_identity(by_spec) != blueprint_identity(load_blueprint(f"lstm:{slim}"))
    assert os.path.getsize(slim) < os.path.getsize(out)
    resumed = tb.train_blueprint(tb.BlueprintTrainConfig(updates=8, resume=out, **small),
                                 log=logs.append, progress_bar=False)
    assert resumed["updates"] == 8 and any("resumed" in line for line in logs)
    with pytest.raises(ValueError, match="slim"):
        tb.train_blueprint(tb.BlueprintTrainConfig(updates=9, resume=slim, **small),
                           progress_bar=False)


def test_bad_or_foreign_checkpoints(tmp_path):
    good = str(tmp_path / "good.pt")
    net = make_net(hidden=8)
    save_checkpoint(good, "public_lstm", CONFIG, net.arch(), net.state_dict(), half=True)
    raw = open(good, "rb").read()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(raw[: len(raw) // 2])
    foreign = str(tmp_path / "foreign.pt")
    torch.save({"format": "something.else", "version": 1}, foreign)
    code = str(tmp_path / "code.pt")
    torch.save({"format": "lbs_pz", "obj": CheckpointError("pickled object")}, code)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    for path in (str(truncated), foreign, code, str(garbage), str(tmp_path / "missing.pt")):
        with pytest.raises(CheckpointError):
            PublicLSTMBlueprint.load(path)
        with pytest.raises(CheckpointError):
            PublicLSTMBlueprint.load(path)
    wrong = str(tmp_path / "wrong.pt")
    ckpt = torch.load(good, weights_only=True)
    ckpt["architecture"]["hidden"] = 9
    torch.save(ckpt, wrong)
    with pytest.raises(CheckpointError):
        PublicLSTMBlueprint.load(wrong)


def test_bad_arguments_are_value_errors():
    for bad in (dict(batch_size=0), dict(gamma=0.0), dict(demo_bot="nobody"),
                dict(demo_fraction=1.5), dict(device="tpu"), dict(life_penalty=-1),
                dict(minutes=0, updates=0)):
        with pytest.raises(ValueError):
            tb.BlueprintTrainConfig(**bad).check()
    from lbs_pz.cli import main
    assert main(["train-blueprint", "--batch-size", "0", "--no-progress"]) == 2


def test_cli_help_and_light_import():
    out = subprocess.run([sys.executable, "-m", "lbs_pz.cli", "train-blueprint", "--help"],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0 and "--demo-bot" in out.stdout and "--resume" in out.stdout
    probe = subprocess.run([sys.executable, "-c", "import sys, lbs_pz.agents; "
                            "print('torch' in sys.modules)"], capture_output=True, text=True,
                           timeout=HANG_SECONDS)
    assert probe.stdout.strip() == "False"


@pytest.mark.slow
def test_shipped_checkpoint_scores_as_documented():
    """lbs_pz/models/README.md: 5.01 +- 0.06 over the first 1,000 evaluation deals."""
    from lbs_pz.eval import evaluate

    bp = PublicLSTMBlueprint.load()
    assert bp.net.hidden == 128 and bp.spec == "lstm:public_lstm_2p"
    assert abs(evaluate(bp, games=1000, seed=0).mean - 5.008) < 0.01

# --- precision ---------------------------------------------------------------------------------

def test_bfloat16_copy_plays_almost_every_move_of_float32_with_its_own_cache():
    """with_precision("bfloat16") shares the net, spec and fingerprint, keeps an LSTM-state
    cache of its own (float32 states stay exact), and on the shipped expert net makes
    the float32 move in >= 99% of the positions of its own games (measured: all of them),
    with values within a few hundredths of a point."""
    bp = PublicLSTMBlueprint.load("conventions_expert_value_2p")
    b16 = bp.with_precision("bfloat16")
    assert b16 is bp.with_precision("bfloat16") and bp.with_precision("float32") is bp
    assert b16.net is bp.net and b16.precision == "bfloat16" and bp.precision == "float32"
    assert (b16.spec, b16.fingerprint) == (bp.spec, bp.fingerprint)
    batch = HanabiBatch(CONFIG, 24, seeds=np.arange(24) + 1000)
    agree = total = 0
    gaps = []
    while not batch.terminals().all():
        a32, a16 = bp.act_batch(batch), b16.act_batch(batch)
        live = a32 >= 0
        agree += int((a32[live] == a16[live]).sum())
        total += int(live.sum())
        gaps.append(np.abs(bp.value(batch) - b16.value(batch))[live])
        batch.step(a32)
    assert agree / total >= 0.99
    assert np.concatenate(gaps).mean() < 0.1
    assert b16._cache is not bp._cache
    assert all(h.dtype == torch.float32 and c.dtype == torch.float32
               for cache in (bp._cache, b16._cache) for h, c in cache.values())
    # rollouts where worlds end at different times (the per-world state update)
    worlds = HanabiBatch(CONFIG, 16, seeds=np.arange(16) + 2000)
    made = b16.rollout(worlds)
    assert worlds.terminals().all() and made.min() > 0 and made.max() > made.min()
    with pytest.raises(ValueError, match="precision must be one of"):
        PublicLSTMBlueprint(make_net(), CONFIG, precision="float16")


def test_bf16_products_times_both_precisions(capsys):
    """docs/experiments/bf16_products.py: one row per product with both times and their ratio,
    and a size below 1 is a usage error."""
    bf16_products = load_script("docs/experiments/bf16_products.py")

    assert bf16_products.main(["--rows", "64", "--repeats", "2"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()
            if line.startswith(("| LSTM step", "| linear layer"))]
    assert len(rows) == 2
    for row in rows:
        f32, b16, ratio = float(row[2]), float(row[3]), float(row[4].strip().rstrip("x"))
        # the times are printed to 0.01 ms and the ratio to 0.01: it lies within their rounding
        assert f32 > 0 and b16 > 0
        low, high = (b16 - 0.005) / (f32 + 0.005), (b16 + 0.005) / (f32 - 0.005)
        assert low - 0.005 <= ratio <= high + 0.005
    with pytest.raises(SystemExit) as exit_info:
        bf16_products.main(["--rows", "0"])
    assert exit_info.value.code == 2 and "must be >= 1" in capsys.readouterr().err


def test_bfloat16_weights_are_the_autocast_rounding_and_follow_the_net():
    """The bfloat16 copy computes with its wide layers' weights stored in bf16: exactly
    the rounding autocast applies to float32 weights at every call, here done once. The
    heads stay float32. When the net's weights change (training, load_state_dict), the
    copy follows at its next call."""
    net = make_net(hidden=32, seed=4)
    bp = PublicLSTMBlueprint(net, CONFIG)
    b16 = bp.with_precision("bfloat16")
    batch = HanabiBatch(CONFIG, 12, seeds=np.arange(12) + 300)
    for _ in range(6):
        batch.step(bp.act_batch(batch))

    def rounded_as_autocast(copy):
        wide = ("pub_in.", "lstm.", "mlp.")
        for (name, p), (name2, q) in zip(net.named_parameters(), copy.named_parameters()):
            assert name == name2
            want = p.to(torch.bfloat16) if name.startswith(wide) else p
            assert q.dtype == want.dtype and torch.equal(q, want), name

    before = b16.q_values(batch)
    rounded_as_autocast(b16._net)
    assert b16._net is b16._net                     # made once, while the net is unchanged
    with torch.no_grad():
        net.mlp[0].weight.mul_(1.5)
    b16.clear_cache()
    after = b16.q_values(batch)
    rounded_as_autocast(b16._net)
    assert not np.array_equal(after, before)
    fresh = PublicLSTMBlueprint(net, CONFIG, precision="bfloat16")   # never saw the old net
    np.testing.assert_array_equal(after, fresh.q_values(batch))


def test_search_rolls_out_in_bfloat16_but_plays_the_exact_blueprint_move():
    from lbs_pz.search.agents import LBSAgent
    from lbs_pz.search.beliefs import make_belief
    bp = PublicLSTMBlueprint(make_net(hidden=32, seed=2), CONFIG)
    agent = LBSAgent(bp, make_belief("grounded", blueprint=bp), rollouts=16, depth=3,
                     precision="bfloat16")
    assert agent.rollout_blueprint is bp.with_precision("bfloat16")
    assert agent.value.__self__ is agent.rollout_blueprint     # the bootstrap, in bf16 too
    for state in positions(CONFIG, 1, seed=3, every=9)[:4]:
        result = agent.search(state)
        assert result.blueprint_move == bp.act(state)            # float32's move
        assert result.move in state.legal_moves()
    with pytest.raises(ValueError, match="no settable precision"):
        LBSAgent(RuleBot("simple"), make_belief("grounded"), rollouts=4, depth=-1,
                 precision="bfloat16")
