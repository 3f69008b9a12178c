"""Small helpers shared by the engine tests: random configs and states, full snapshots
of a state, and the card bookkeeping that must hold in every Hanabi position."""

from __future__ import annotations

import collections
import pickle
import random

from hypothesis import strategies as st

from lbs_pz.engine import HanabiConfig, HanabiState, game_seeds

from lbs_pz.agents.rule_bots import _bots as bots

COMMON_CONFIGS = [
    HanabiConfig(players=2),
    HanabiConfig(players=3),
    HanabiConfig(players=4),
    HanabiConfig(players=5),
    HanabiConfig(players=2, colors=2, ranks=3, hand_size=2),
    HanabiConfig(players=3, observation_type="minimal"),
    HanabiConfig(players=4, observation_type="seer"),
    HanabiConfig(players=2, max_information_tokens=3, max_life_tokens=1),
    HanabiConfig(players=5, max_information_tokens=12, max_life_tokens=5, random_start_player=True),
    HanabiConfig(players=2, hand_size=8),
]


def deck_size_of(colors: int, ranks: int) -> int:
    """Cards in a full deck, counted independently of the engine: 3 ones, 1 top card,
    2 of every other rank."""
    per_color = 3 if ranks == 1 else 3 + 2 * (ranks - 2) + 1
    return colors * per_color


@st.composite
def any_config(draw):
    """Any valid variant, odd ones included (1 color, 1 rank, 8-card hands...)."""
    players = draw(st.integers(2, 5))
    colors = draw(st.integers(1, 5))
    ranks = draw(st.integers(1, 5))
    max_hand = min(8, deck_size_of(colors, ranks) // players)
    if max_hand < 1:
        colors, ranks, max_hand = 5, 5, 5
    return HanabiConfig(
        players=players, colors=colors, ranks=ranks,
        hand_size=draw(st.integers(1, max_hand)),
        max_information_tokens=draw(st.integers(1, 16)),
        max_life_tokens=draw(st.integers(1, 8)),
        random_start_player=draw(st.booleans()),
        observation_type=draw(st.sampled_from(["minimal", "card_knowledge", "seer"])),
    )


configs = st.one_of(st.sampled_from(COMMON_CONFIGS), any_config())
seeds = st.integers(0, 2**64 - 1)


def play_random(state: HanabiState, moves: int, rng: random.Random) -> HanabiState:
    """Apply up to `moves` uniformly random legal moves (fewer if the game ends)."""
    for _ in range(moves):
        legal = state.legal_moves()
        if not legal:
            break
        state.apply(rng.choice(legal))
    return state


@st.composite
def states(draw, config_strategy=configs, max_moves=120):
    """A game after a random number of random legal moves (terminal games included)."""
    config = draw(config_strategy)
    state = HanabiState(config, seed=draw(seeds))
    play_random(state, draw(st.integers(0, max_moves)), random.Random(draw(st.integers(0, 2**32))))
    return state


def full_deck(config: HanabiConfig) -> collections.Counter:
    return collections.Counter({card: config.card_count(card)
                                for card in range(config.num_card_types)})


def played_cards(state: HanabiState) -> list:
    """Card ids sitting on the fireworks (color c holds ranks 0 .. fireworks[c]-1)."""
    ranks = state.config.ranks
    return [c * ranks + r for c, height in enumerate(state.fireworks) for r in range(height)]


def undrawn(state: HanabiState) -> list:
    return state.deck[state.config.deck_size - state.deck_size:]


def assert_cards_conserved(state: HanabiState):
    """Hands + discards + fireworks + undrawn deck == the full deck, and the dealt part of
    the deck order holds exactly the cards that left the deck."""
    config = state.config
    in_hands = [card for hand in state.hands for card in hand]
    seen = in_hands + state.discard_pile + played_cards(state)
    assert collections.Counter(seen + undrawn(state)) == full_deck(config)
    assert collections.Counter(state.deck) == full_deck(config)
    dealt = state.deck[:config.deck_size - state.deck_size]
    assert collections.Counter(dealt) == collections.Counter(seen)


def assert_draws_match_deck(state: HanabiState):
    """The cards recorded as drawn after plays/discards are the deck's cards after the
    opening deal, in order: the record (deck + history) is a valid deal."""
    config = state.config
    drawn = [r["drawn"] for r in state.move_records() if r["drawn"] >= 0]
    opening = config.players * config.hand_size
    assert drawn == state.deck[opening:opening + len(drawn)]


def snapshot(state: HanabiState) -> dict:
    """Everything observable about a state, for before/after comparisons."""
    players = range(state.config.players)
    return dict(
        pickled=pickle.dumps(state),
        deck=state.deck,
        deck_size=state.deck_size,
        hands=state.hands,
        discards=state.discard_pile,
        fireworks=state.fireworks,
        tokens=(state.information_tokens, state.life_tokens),
        current_player=state.current_player,
        terminal=state.is_terminal,
        score=state.score,
        turns_to_play=state.turns_to_play,
        records=state.move_records(),
        knowledge=[state.card_knowledge(p) for p in players],
        legal=state.legal_moves(),
        mask=state.legal_mask().tolist(),
        encodings=[state.encode(p).tobytes() for p in players],
        views=[state.view(p) for p in players],
    )


# --- positions and re-deals for the no-peeking tests -----------------------------------

def unseen_counts(state, seat):
    """Copies of each card type the seat cannot see (deck + its own hand)."""
    cfg = state.config
    left = [cfg.card_count(t) for t in range(cfg.num_card_types)]
    for t in state.discard_pile:
        left[t] -= 1
    for c, f in enumerate(state.fireworks):
        for r in range(f):
            left[c * cfg.ranks + r] -= 1
    for p, hand in enumerate(state.hands):
        if p != seat:
            for t in hand:
                left[t] -= 1
    return left


def sample_consistent_hand(state, seat, rng, tries=50):
    """A hand the seat cannot tell from its real one: slot by slot, a card type its card
    knowledge allows and of which an unseen copy remains."""
    cfg = state.config
    knowledge = state.card_knowledge(seat)
    for _ in range(tries):
        left = unseen_counts(state, seat)
        hand = []
        for colors, ranks, _, _ in knowledge:
            options = [c * cfg.ranks + r for c in colors for r in ranks
                       if left[c * cfg.ranks + r] > 0]
            if not options:
                break
            card = rng.choice(options)
            left[card] -= 1
            hand.append(card)
        else:
            return hand
    return None


def positions(config, num_games, seed, driver="strong", every=3):
    """Positions from self-play games of `driver` (every `every`-th move)."""
    rng = random.Random(seed)
    out = []
    for s in game_seeds(seed, 0, num_games):
        state = HanabiState(config, seed=int(s))
        while not state.is_terminal:
            if rng.randrange(every) == 0:
                out.append(state.clone())
            state.apply(bots.act(driver, state))
    return out


def self_play(blueprint, config, num_games, seed=0, first_game=0):
    """Self-play of `blueprint` on evaluation deals first_game .. (one HanabiBatch rolled
    out to the end): dict of arrays (num_games,): score, moves, lives."""
    import numpy as np

    from lbs_pz.engine import HanabiBatch
    from lbs_pz.engine.seeds import EVAL, deal_seeds

    batch = HanabiBatch(config, num_games, seeds=deal_seeds(EVAL, seed, first_game, num_games))
    moves = blueprint.rollout(batch)
    lives = np.array([batch.get_state(i).life_tokens for i in range(num_games)], np.int32)
    return {"score": batch.scores().copy(), "moves": np.asarray(moves), "lives": lives}


def saved_and_loaded(net, config, path):
    """`net` (a PublicLSTMNet) written as a public-LSTM checkpoint at `path`, then loaded
    back as a blueprint: the round trip every architecture option must survive."""
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.models.checkpoint import save_checkpoint

    save_checkpoint(str(path), "public_lstm", config, net.arch(), net.state_dict(),
                    trained_for=None, info={})
    bp = PublicLSTMBlueprint.load(str(path))
    assert bp.net.arch() == net.arch()
    return bp
