"""An agent written against HLE's `rl_env` interface, searched here unchanged.

    lbs-pz eval --blueprint hle:examples/hle_agent.py:CarefulAgent
    lbs-pz compare --blueprint hle:examples/hle_agent.py:CarefulAgent --methods blueprint,lbs-16

`CarefulAgent` reads only the observation dict HLE's `rl_env` gives an agent
(`current_player_offset`, `legal_moves`, `observed_hands`, `card_knowledge`, `fireworks`,
`information_tokens`, `num_players`) and returns a move dict or a move id, so the same class runs inside
HLE (`rl_env.HanabiEnv`) and here as an `hle:` blueprint. It is HLE's `SimpleAgent` made
careful: SimpleAgent plays every card a clue has touched and so loses its third life in
every game (score 0); this one plays a card only when its hints prove it playable.
"""


class CarefulAgent:
    """Play a card whose hints prove it playable, else clue the missing half of a
    partner's playable card, else discard the oldest unclued card (a clue to the next
    player, as a move id, when no discard is legal)."""

    def __init__(self, config=None):
        self.config = config or {}

    @staticmethod
    def _playable(knowledge, fireworks):
        """True if the hinted color and rank prove the card playable."""
        color, rank = knowledge["color"], knowledge["rank"]
        if rank is None:
            return False
        if color is not None:
            return fireworks[color] == rank
        return all(height == rank for height in fireworks.values())

    def act(self, observation):
        if observation["current_player_offset"] != 0:
            return None
        fireworks = observation["fireworks"]
        legal = observation["legal_moves"]
        for slot, knowledge in enumerate(observation["card_knowledge"][0]):
            if self._playable(knowledge, fireworks):
                return {"action_type": "PLAY", "card_index": slot}
        if observation["information_tokens"] > 0:
            for offset in range(1, observation["num_players"]):
                cards = observation["observed_hands"][offset]
                for card, knowledge in zip(cards, observation["card_knowledge"][offset]):
                    if fireworks[card["color"]] != card["rank"]:
                        continue
                    if knowledge["rank"] is None:
                        return {"action_type": "REVEAL_RANK", "rank": card["rank"],
                                "target_offset": offset}
                    if knowledge["color"] is None:
                        return {"action_type": "REVEAL_COLOR", "color": card["color"],
                                "target_offset": offset}
        for slot, knowledge in enumerate(observation["card_knowledge"][0]):
            move = {"action_type": "DISCARD", "card_index": slot}
            if knowledge["color"] is None and knowledge["rank"] is None and move in legal:
                return move
        discards = [m for m in legal if m["action_type"] == "DISCARD"]
        return discards[0] if discards else observation["legal_moves_as_int"][-1]
