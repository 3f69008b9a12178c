"""Public/private split, the Gymnasium self-play env and the SB3 VecEnv."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import lbs_pz  # noqa: F401  (registers the environments)
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.features import private_features, public_features
from lbs_pz.envs import hanabi_v0
from lbs_pz.wrappers import PublicPrivateObservation


def _random_states(config, games=20, seed=0):
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = HanabiState(config, seed=g)
        for _ in range(int(rng.integers(0, 40))):
            if state.is_terminal:
                break
            state.apply(int(rng.choice(state.legal_moves())))
        yield state


@pytest.mark.parametrize("players", [2, 3, 5])
def test_public_part_is_shared_and_private_part_is_the_other_hands(players):
    config = HanabiConfig(players=players)
    bits = config.num_card_types
    for state in _random_states(config):
        public = public_features(state)
        for seat in range(players):
            np.testing.assert_array_equal(public, public_features(state))
            private = private_features(state, seat).reshape(players - 1, config.hand_size, bits)
            for rel in range(1, players):
                hand = state.hand((seat + rel) % players)
                expected = np.zeros((config.hand_size, bits), np.float32)
                expected[np.arange(len(hand)), hand] = 1
                np.testing.assert_array_equal(private[rel - 1], expected)


def test_own_cards_never_reach_a_seats_observation():
    config = HanabiConfig()
    for state in _random_states(config, games=30, seed=1):
        seat = state.current_player
        hand = state.hand(seat)
        other = state.clone()
        # Re-deal the seat's hand with another consistent one (the current hand reversed
        # is consistent only if knowledge allows; fall back to the unchanged hand).
        swapped = hand[::-1]
        try:
            other.set_hand(seat, swapped)
        except ValueError:
            continue
        np.testing.assert_array_equal(public_features(state), public_features(other))
        np.testing.assert_array_equal(private_features(state, seat), private_features(other, seat))
        np.testing.assert_array_equal(state.encode(seat), other.encode(seat))


def test_wrapper_passes_api_test_and_exposes_the_view():
    env = PublicPrivateObservation(hanabi_v0.env(players=3))
    api_test(env, num_cycles=100)
    env.reset(seed=0)
    obs = [env.observe(a) for a in env.agents]
    assert all(np.array_equal(obs[0]["public"], o["public"]) for o in obs)
    view = env.view("player_1")
    assert view.player == 1 and all(card is None for card in view.hands[1])


def test_self_play_env_passes_gymnasium_and_sb3_checks():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gymnasium.make("lbs_pz/HanabiSelfPlay-v0").unwrapped
    check_env(env)
    sb3_check_env(gymnasium.make("lbs_pz/HanabiSelfPlay-v0", players=3).unwrapped)
    obs, info = env.reset(seed=3)
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, again)
    assert env.action_masks().dtype == bool and env.action_masks().sum() == len(info["legal_moves"])


def test_self_play_env_illegal_actions():
    env = gymnasium.make("lbs_pz/HanabiSelfPlay-v0").unwrapped
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(0)  # discard with full tokens: illegal
    assert terminated and reward == -1 and info["illegal_action"]
    with pytest.raises(ValueError, match="game is over"):
        env.step(5)
    strict = gymnasium.make("lbs_pz/HanabiSelfPlay-v0", illegal_action="raise").unwrapped
    strict.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 0 \(Discard 0\)"):
        strict.step(0)
    with pytest.raises(ValueError, match="illegal_action"):
        gymnasium.make("lbs_pz/HanabiSelfPlay-v0", illegal_action="ignore")


def test_vec_env_matches_the_engine_and_resets_finished_games():
    from lbs_pz.wrappers.vec_env import HanabiVecEnv

    env = HanabiVecEnv(8, seed=0)
    obs = env.reset()
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(300):
        masks = env.action_masks()
        assert masks.shape == (8, 20) and masks.any(axis=1).all()
        before = [env.batch.get_state(i) for i in range(8)]
        np.testing.assert_array_equal(obs, np.stack([s.encode() for s in before]))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        for i, state in enumerate(before):
            score = state.score
            state.apply(int(actions[i]))
            assert rewards[i] == state.score - score
            assert dones[i] == state.is_terminal
            if dones[i]:
                episodes += 1
                np.testing.assert_array_equal(infos[i]["terminal_observation"], state.encode())
                assert infos[i]["episode"]["score"] == state.score
    assert episodes > 0


def test_maskable_ppo_trains_on_the_vec_env_and_plays_only_legal_moves():
    import torch
    from sb3_contrib import MaskablePPO

    from lbs_pz.wrappers.vec_env import HanabiVecEnv

    torch.manual_seed(0)
    env = HanabiVecEnv(32, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, n_epochs=2, seed=0,
                        policy_kwargs=dict(net_arch=[64]))
    model.learn(4096)
    obs = env.reset()
    for _ in range(200):
        masks = env.action_masks()
        actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
        assert masks[np.arange(len(actions)), actions].all()
        obs, _, _, _ = env.step(actions)


class _FirstLegalMove:
    """A deterministic partner: always the lowest legal move id."""

    name = "first-legal"

    def act(self, state, seat=None):
        return state.legal_moves()[0]


def test_self_play_env_with_a_partner_agent_plays_only_the_learners_seat():
    env = gymnasium.make("lbs_pz/HanabiSelfPlay-v0", players=3, partner=_FirstLegalMove(),
                         seat=2).unwrapped
    check_env(env)
    rng = np.random.default_rng(0)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        mirror = HanabiState(env.config, deck=env.game.deck, start_player=0)
        learner_moves = 0
        while True:
            assert env.game.current_player == 2
            np.testing.assert_array_equal(obs, env.game.encode(2))
            move = int(rng.choice(info["legal_moves"]))
            # Replay the same game by hand: the partner's moves, then the learner's.
            while mirror.current_player != 2:
                mirror.apply(mirror.legal_moves()[0])
            before = mirror.score
            mirror.apply(move)
            while not mirror.is_terminal and mirror.current_player != 2:
                mirror.apply(mirror.legal_moves()[0])
            obs, reward, terminated, _, info = env.step(move)
            learner_moves += 1
            assert reward == mirror.score - before and terminated == mirror.is_terminal
            if terminated:
                break
        assert learner_moves > 0 and env.game.move_history == mirror.move_history
    with pytest.raises(ValueError, match="partner"):
        gymnasium.make("lbs_pz/HanabiSelfPlay-v0", partner="bot")
    with pytest.raises(ValueError, match="seat"):
        gymnasium.make("lbs_pz/HanabiSelfPlay-v0", partner=_FirstLegalMove(), seat=2)
