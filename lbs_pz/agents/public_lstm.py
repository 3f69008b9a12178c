"""The paper's public-LSTM Q-network and its Blueprint adapter.

Network (`PublicLSTMNet`, after Hu et al., "Learned Belief Search", section 4):

    public features (B, T, Dpub) -> Linear + ReLU -> LSTM ----------------> h (B, T, H)
    each seat's observation (B, T, P, E) + seat one-hot -> MLP (2 x Linear + ReLU) -> m (B, T, P, H)
    fused = h[:, :, None] * m          (element-wise product, one row per seat)
    dueling head: Q = V(fused) + A(fused) - mean_a A(fused)          -> (B, T, P, M + 1)

`Dpub` is the public part of HLE's canonical vector (`lbs_pz.engine.features`, taken
from seat 0's vector): the LSTM never sees a private feature, so its state is a function
of the public history alone and is the same for every seat and for every world a search
samples. The MLP gets the seat's whole canonical vector (E floats: its private features,
the other players' cards, followed by the public features in the seat's own frame) and a
one-hot of the seat. The M + 1 outputs are the M moves in HLE order
plus a "no-op" (index M), the only legal move of the players who are not to move; the
training objective is VDN's sum over players (`lbs_pz.train.blueprint`), so

    value(state) = score + sum over seats p of max over p's legal moves of Q_p

estimates the expected final score (the paper bootstraps LBS-k rollouts the same way).

`PublicLSTMBlueprint` wraps a trained net as a `Blueprint` (`lbs_pz.agents.base`):
greedy, deterministic, no private memory (its recurrent state is rebuilt from the public
history, and cached per history), batched `act_batch` / `rollout` / `value` with one
forward per step over all running worlds.

>>> from lbs_pz.engine import HanabiConfig, HanabiState
>>> bp = PublicLSTMBlueprint(PublicLSTMNet.for_config(HanabiConfig(), hidden=32))
>>> state = HanabiState(HanabiConfig(), seed=1)
>>> bp.act(state) in state.legal_moves()
True
"""

from __future__ import annotations

import collections
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from lbs_pz.agents.base import States
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.engine.features import private_size

NEG = -1e9          # Q given to masked (illegal) moves before the argmax

# --- features ---------------------------------------------------------------------------


def public_part(enc: np.ndarray, config: HanabiConfig) -> np.ndarray:
    """Per-seat canonical vectors (..., P, E) -> the public features (..., Dpub), taken
    from seat 0's vector (Dpub = E - Dpriv; `lbs_pz.engine.features`)."""
    return enc[..., 0, private_size(config):]


def encode_batch(batch: HanabiBatch) -> np.ndarray:
    """Every seat's canonical vector of every game of a batch: float32 (N, P, E)."""
    n, players = len(batch), batch.config.players
    return np.stack([batch.encode(players=np.full(n, p, dtype=np.int64))
                     for p in range(players)], axis=1)


def seat_masks(legal: np.ndarray, current: np.ndarray, players: int) -> np.ndarray:
    """Legal outputs of every seat, bool (N, P, M + 1): the player to move has its legal
    moves (`legal`, (N, M)), every other seat only the no-op (index M)."""
    n, m = legal.shape
    out = np.zeros((n, players, m + 1), dtype=bool)
    out[:, :, m] = True
    rows = np.arange(n)
    out[rows, current] = False
    out[rows, current, :m] = legal.astype(bool)
    return out


# --- the network --------------------------------------------------------------------------


class PublicLSTMNet(nn.Module):
    """Public-LSTM Q-network (see the module docstring for the data flow and shapes).

    Args:
        pub_dim: public feature size Dpub (533 for the 2-player game).
        obs_dim: canonical observation size E (658 for the 2-player game).
        players: P.
        num_moves: M (20 for the 2-player game); the net outputs M + 1 values.
        hidden: H, width of the LSTM and of the MLP.
    """

    def __init__(self, pub_dim: int, obs_dim: int, players: int, num_moves: int,
                 hidden: int = 256):
        super().__init__()
        for name, v in (("pub_dim", pub_dim), ("obs_dim", obs_dim), ("players", players),
                        ("num_moves", num_moves), ("hidden", hidden)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        self.pub_dim, self.obs_dim, self.players = pub_dim, obs_dim, players
        self.num_moves, self.hidden = num_moves, hidden
        self.pub_in = nn.Sequential(nn.Linear(pub_dim, hidden), nn.ReLU())
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(obs_dim + players, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU())
        self.v_head = nn.Linear(hidden, 1)
        self.a_head = nn.Linear(hidden, num_moves + 1)

    @classmethod
    def for_config(cls, config: HanabiConfig, hidden: int = 256) -> "PublicLSTMNet":
        e = config.encoding_size
        return cls(e - private_size(config), e, config.players, config.num_moves, hidden)

    def arch(self) -> dict:
        """Constructor arguments (plain numbers: stored in checkpoints)."""
        return dict(pub_dim=self.pub_dim, obs_dim=self.obs_dim, players=self.players,
                    num_moves=self.num_moves, hidden=self.hidden)

    def zero_state(self, batch: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """LSTM state of an empty history: (h, c), each (1, batch, H)."""
        z = torch.zeros(1, batch, self.hidden)
        return z, z.clone()

    def public(self, pub: torch.Tensor, hc=None):
        """Run the public stream. pub (B, T, Dpub) -> out (B, T, H), (h, c) each (1, B, H).
        `hc` is the state before the first step (None: empty history)."""
        return self.lstm(self.pub_in(pub), hc)

    def q(self, h: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """Q-values of every seat. h (..., H) from `public`, obs (..., P, E) every seat's
        canonical vector -> (..., P, M + 1)."""
        players = self.players
        seat = torch.eye(players, dtype=obs.dtype, device=obs.device)
        x = torch.cat([obs, seat.expand(*obs.shape[:-2], players, players)], dim=-1)
        fused = h.unsqueeze(-2) * self.mlp(x)
        adv = self.a_head(fused)
        return self.v_head(fused) + adv - adv.mean(dim=-1, keepdim=True)

    def forward(self, pub: torch.Tensor, obs: torch.Tensor, hc=None):
        """Whole sequences: pub (B, T, Dpub), obs (B, T, P, E) -> Q (B, T, P, M + 1),
        final LSTM state. `pub` must be `public_part(obs)`."""
        out, hc = self.public(pub, hc)
        return self.q(out, obs), hc


def masked_greedy(q: torch.Tensor, mask) -> torch.Tensor:
    """Argmax of q (..., A) over the entries where mask (..., A) is true: int64 (...)."""
    mask = torch.as_tensor(mask, dtype=torch.bool, device=q.device)
    return q.masked_fill(~mask, NEG).argmax(dim=-1)


def epsilon_greedy(q: torch.Tensor, mask: np.ndarray, eps, rng: np.random.Generator) -> np.ndarray:
    """Greedy legal action per row of q (N, A), replaced with probability eps (a float or
    an (N,) array) by a uniformly random legal action. mask: bool (N, A). Returns int64 (N,)."""
    actions = masked_greedy(q, mask).cpu().numpy()
    eps = np.broadcast_to(np.asarray(eps, dtype=np.float64), actions.shape)
    explore = rng.random(actions.shape) < eps
    if explore.any():
        m = mask[explore].astype(np.float64)
        pick = (rng.random(m.shape) * m).argmax(axis=1)      # uniform over legal entries
        actions[explore] = pick
    return actions


# --- the Blueprint adapter ----------------------------------------------------------------


def _history_key(state: HanabiState) -> bytes:
    """The public history of a game as bytes: start player, then (move, revealed card,
    hinted slots) per move. Every prefix of the key (4 + 12 * t bytes) is the key of the
    game after t moves. It never contains a hidden card (drawn cards are left out)."""
    recs = state.move_records()
    arr = np.empty(1 + 3 * len(recs), dtype=np.int32)
    arr[0] = state.start_player
    for i, r in enumerate(recs):
        arr[1 + 3 * i: 4 + 3 * i] = (r["move"], r["card"], r["reveal"])
    return arr.tobytes()


class PublicLSTMBlueprint:
    """A `PublicLSTMNet` as a Blueprint: greedy, deterministic, no private memory, with a
    value estimate (current score + VDN sum of every seat's greedy Q).

    The LSTM state of a public history is computed once and cached (an LRU of
    `cache_size` histories, keyed on the move history with the revealed cards), so that
    every world a search samples from one real history reuses the root state; `rollout`
    carries a state per world with one batched forward per move over all running worlds.

    Args:
        net: a PublicLSTMNet sized for `config`, on the CPU (search is CPU-bound).
        config: the game variant (default: the standard 2-player game).
        epsilon: probability of a uniformly random legal move (0: greedy; > 0 makes the
            blueprint non-deterministic, for exploration only).
        cache_size: number of public histories whose LSTM state is kept.
        name: shown in tables.
        seed: seed of the random moves when epsilon > 0.
    """

    has_private_memory = False
    has_value = True

    def __init__(self, net: PublicLSTMNet, config: Optional[HanabiConfig] = None,
                 epsilon: float = 0.0, cache_size: int = 50_000, name: str = "public-lstm",
                 seed: int = 0):
        config = HanabiConfig() if config is None else config
        ref = PublicLSTMNet.for_config(config, hidden=net.hidden).arch()
        if net.arch() != ref:
            raise ValueError(f"the net {net.arch()} does not fit the game {config} "
                             f"(expected {ref})")
        if next(net.parameters()).device.type != "cpu":
            raise ValueError("PublicLSTMBlueprint needs a net on the CPU (use net.cpu(), or a copy)")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        if cache_size < 1:
            raise ValueError(f"cache_size must be >= 1, got {cache_size}")
        self.net = net.eval()
        self.config, self.epsilon, self.name = config, float(epsilon), name
        self.deterministic = self.epsilon == 0.0
        self.cache_size = cache_size
        self._cache: "collections.OrderedDict[bytes, Tuple[torch.Tensor, torch.Tensor]]" = \
            collections.OrderedDict()
        self._rng = np.random.default_rng(seed)
        self._k = private_size(config)

    # --- recurrent state of public histories ----------------------------------------------

    def _remember(self, key: bytes, hc) -> None:
        self._cache[key] = hc
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _public_of(self, state: HanabiState) -> np.ndarray:
        return state.encode(0)[self._k:]

    @torch.inference_mode()
    def public_state(self, state: HanabiState, key: Optional[bytes] = None):
        """LSTM state (h, c), each (H,), after the public features of every position of
        `state`'s history up to and including the current one."""
        if state.config != self.config:
            raise ValueError(f"state has config {state.config}, the blueprint plays {self.config}")
        key = _history_key(state) if key is None else key
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        prev = self._cache.get(key[:-12]) if len(key) > 4 else None
        if prev is not None:                       # one step from the previous position
            pub = torch.from_numpy(self._public_of(state))[None, None]
            _, (h, c) = self.net.public(pub, (prev[0][None, None], prev[1][None, None]))
            hc = (h[0, 0], c[0, 0])
            self._remember(key, hc)
            return hc
        # Replay the public history from the start. Public features depend on the public
        # history only, so replaying the game's own dealing order shows nothing hidden.
        replay = HanabiState(self.config, deck=state.deck, start_player=state.start_player,
                             seed=0)
        pubs = [self._public_of(replay)]
        for move in state.move_history:
            replay.apply(move)
            pubs.append(self._public_of(replay))
        # Step by step (nn.LSTM returns c of the last step only) to cache every prefix.
        hc = None
        x = self.net.pub_in(torch.from_numpy(np.stack(pubs)))
        for t in range(len(pubs)):
            _, hc = self.net.lstm(x[t][None, None], hc)
            self._remember(key[:4 + 12 * t], (hc[0][0, 0], hc[1][0, 0]))
        return self._cache[key]

    def _states_hc(self, worlds: Sequence[HanabiState]):
        """(h, c) of every world, each (1, N, H): one computation per distinct history."""
        keys = [_history_key(w) for w in worlds]
        distinct: Dict[bytes, Tuple[torch.Tensor, torch.Tensor]] = {}
        for w, k in zip(worlds, keys):
            if k not in distinct:
                distinct[k] = self.public_state(w, k)
        h = torch.stack([distinct[k][0] for k in keys])[None]
        c = torch.stack([distinct[k][1] for k in keys])[None]
        return h, c

    # --- acting ----------------------------------------------------------------------------

    def _features(self, batch: HanabiBatch):
        """public (N, Dpub) and every seat's observation (N, P, E), as tensors."""
        enc = encode_batch(batch)
        pub = public_part(enc, self.config)
        return torch.from_numpy(np.ascontiguousarray(pub)), torch.from_numpy(enc)

    def _choose(self, q: torch.Tensor, batch: HanabiBatch, current: np.ndarray) -> np.ndarray:
        """Move of the player to move from Q of all seats (N, P, M + 1)."""
        rows = np.arange(len(current))
        q_cur = q[rows, current, : self.config.num_moves]
        legal = batch.legal_masks().astype(bool)
        if self.epsilon > 0:
            return epsilon_greedy(q_cur, legal, self.epsilon, self._rng)
        return masked_greedy(q_cur, legal).numpy()

    @torch.inference_mode()
    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """Greedy legal move of `seat` (default: the player to move); -1 if the game is over."""
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        if state.is_terminal:
            return -1
        return int(self.act_batch([state])[0])

    @torch.inference_mode()
    def act_batch(self, states: States) -> np.ndarray:
        """Move of each world's player to move: int64 (N,), -1 where the game is over."""
        worlds = _as_states(states)
        out = np.full(len(worlds), -1, dtype=np.int64)
        live = [i for i, w in enumerate(worlds) if not w.is_terminal]
        if not live:
            return out
        sub = [worlds[i] for i in live]
        h, _ = self._states_hc(sub)
        batch = HanabiBatch.from_states(sub)
        _, obs = self._features(batch)
        q = self.net.q(h[0], obs)
        out[live] = self._choose(q, batch, batch.current_players())
        return out

    @torch.inference_mode()
    def rollout(self, states: States, max_moves: int = -1) -> np.ndarray:
        """Self-play every world in place with this blueprint in every seat, at most
        `max_moves` moves (to the end if negative). One batched forward per move over all
        running worlds; every world starts from its history's cached LSTM state. Returns
        moves made per world, int32 (N,)."""
        is_batch = isinstance(states, HanabiBatch)
        worlds = _as_states(states)
        n = len(worlds)
        made = np.zeros(n, dtype=np.int32)
        if n == 0 or max_moves == 0:
            return made
        h, c = self._states_hc(worlds)
        batch = states if is_batch else HanabiBatch.from_states(worlds)
        moves: List[np.ndarray] = []
        actions = np.full(n, -1, dtype=np.int64)
        while max_moves < 0 or len(moves) < max_moves:
            running = ~batch.terminals()
            if not running.any():
                break
            idx = np.flatnonzero(running)
            _, obs = self._features(batch)
            q = self.net.q(h[0, idx], obs[idx])
            current = batch.current_players()[idx]
            rows = np.arange(len(idx))
            legal = batch.legal_masks()[idx].astype(bool)
            q_cur = q[rows, current, : self.config.num_moves]
            if self.epsilon > 0:
                chosen = epsilon_greedy(q_cur, legal, self.epsilon, self._rng)
            else:
                chosen = masked_greedy(q_cur, legal).numpy()
            actions.fill(-1)
            actions[idx] = chosen
            batch.step(actions)
            moves.append(actions.copy())
            made[idx] += 1
            still = np.flatnonzero(~batch.terminals())
            if still.size:
                pub, _ = self._features(batch)
                _, (h2, c2) = self.net.public(pub[still][:, None], (h[:, still], c[:, still]))
                h, c = h.clone(), c.clone()
                h[:, still], c[:, still] = h2, c2
        if not is_batch:           # replay the moves on the caller's state objects
            for step in moves:
                for i in np.flatnonzero(step >= 0):
                    worlds[i].apply(int(step[i]))
        # Remember where every unfinished world stopped: a `value` call on the same worlds
        # (a search bootstrapping depth-k rollouts) then needs no replay.
        for i in np.flatnonzero((made > 0) & ~batch.terminals()):
            world = worlds[i] if not is_batch else batch.get_state(int(i))
            self._remember(_history_key(world), (h[0, i].clone(), c[0, i].clone()))
        return made

    @torch.inference_mode()
    def q_values(self, states: States) -> np.ndarray:
        """Q-values of every seat of every world: float32 (N, P, M + 1) (last: no-op)."""
        worlds = _as_states(states)
        h, _ = self._states_hc(worlds)
        batch = HanabiBatch.from_states(worlds)
        _, obs = self._features(batch)
        return self.net.q(h[0], obs).numpy()

    @torch.inference_mode()
    def value(self, states: States) -> np.ndarray:
        """Expected final score of each world: score + sum over seats of the greedy legal
        Q (VDN; the seats not to move contribute their no-op's Q). The score of a
        finished world. float32 (N,)."""
        worlds = _as_states(states)
        out = np.array([w.score for w in worlds], dtype=np.float32)
        live = [i for i, w in enumerate(worlds) if not w.is_terminal]
        if not live:
            return out
        sub = [worlds[i] for i in live]
        q = torch.from_numpy(self.q_values(sub))
        batch = HanabiBatch.from_states(sub)
        mask = seat_masks(batch.legal_masks(), batch.current_players(), self.config.players)
        best = q.masked_fill(~torch.from_numpy(mask), NEG).max(dim=-1).values.sum(dim=-1)
        out[live] += best.numpy()
        return out

    # --- evaluation --------------------------------------------------------------------------

    def selfplay(self, num_games: int, seed: int = 0, first_game: int = 0,
                 chunk: int = 1000) -> np.ndarray:
        """Scores (int32 (num_games,)) of greedy self-play on the deals `lbs-pz eval` and
        `RuleBot.selfplay` use (`HanabiBatch(config, n, seeds=seed)`), batched."""
        from lbs_pz.engine import game_seeds

        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        scores = []
        for start in range(0, num_games, chunk):
            n = min(chunk, num_games - start)
            seeds = game_seeds(seed, first_game + start, n)
            batch = HanabiBatch(self.config, n, seeds=[int(s) for s in seeds])
            self.rollout(batch)
            scores.append(batch.scores().copy())
        return np.concatenate(scores)

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        return f"<PublicLSTMBlueprint {self.name!r} hidden={self.net.hidden}>"


def _as_states(states: States) -> List[HanabiState]:
    if isinstance(states, HanabiBatch):
        return [states.get_state(i) for i in range(len(states))]
    return list(states)
