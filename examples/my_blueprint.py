"""Bring your own blueprint: a Hanabi player in 20 lines that LBS and SPARTA can search with.

    lbs-pz eval --blueprint py:examples/my_blueprint.py:HintPlayDiscard
    python -c "from lbs_pz.agents import load_blueprint; print(load_blueprint('py:examples/my_blueprint.py:HintPlayDiscard'))"
"""
from lbs_pz.engine import Move, encode_move


class HintPlayDiscard:
    """Play a card known to be playable, else hint a playable card of the next player,
    else discard the oldest card nobody hinted. Reads only `state.view(seat)`."""

    name = "hint-play-discard"

    def act(self, state, seat=None):
        view, config = state.view(seat), state.config
        me, partner = view.player, (view.player + 1) % view.num_players
        playable = lambda c, r: view.fireworks[c] == r  # noqa: E731
        for slot, known in enumerate(view.knowledge[me]):        # 1. a surely playable card
            if all(playable(c, r) for c in known.colors for r in known.ranks):
                return encode_move(config, Move("play", card_index=slot))
        if view.information_tokens > 0:                           # 2. hint a playable card
            for slot, card in enumerate(view.hands[partner]):
                color, rank = divmod(card, config.ranks)
                known = view.knowledge[partner][slot]
                if playable(color, rank) and (known.hinted_rank is None or known.hinted_color is None):
                    kind, value = ("reveal_rank", {"rank": rank}) if known.hinted_rank is None \
                        else ("reveal_color", {"color": color})
                    return encode_move(config, Move(kind, target_offset=1, **value))
        unhinted = [s for s, k in enumerate(view.knowledge[me])   # 3. discard the oldest
                    if k.hinted_color is None and k.hinted_rank is None] or [0]
        discard = encode_move(config, Move("discard", card_index=unhinted[0]))
        return discard if discard in view.legal_moves else view.legal_moves[-1]
