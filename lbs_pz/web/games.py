"""Game sessions of the local web page: a timeline of states, the agent of every seat, the
search records, snapshots (what one view may see), replays and export.

A `Game` keeps every position of its game (`states[k]` is the position after k moves;
each move clones the last one), so stepping back is free. Agents move only at the end of
the timeline. Each search decision stores its `SearchResult` and the searching seat's
belief over its own hand at that decision as a DECISION dict (`Game.decision(k)`).

Hidden information is filtered in ONE place, `Game.snapshot`: a view of seat s shows the
other seats' cards and only the hints about s's own cards; in play mode, until the game
is over, every snapshot is the human seat's view. No response holds the deck order.

Replays: a hanab.live record replays its recorded moves; a `compare --jsonl` line holds
only (spec, variant, run seed, game, result), so its game is re-dealt from the evaluation
stream and its method re-run, deterministic given the spec (the logged score is kept in
the snapshot's "record" to compare).

Errors are `ApiError(status, message)`: the app turns them into {"error": message}.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import secrets
import threading
import time
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig, HanabiState, decode_move, move_name
from lbs_pz.engine.config import COLOR_CHARS
from lbs_pz.engine.records import from_hanablive, to_hanablive
from lbs_pz.engine.seeds import EVAL, MAX_GAMES, deal_seeds
from lbs_pz.search.config import SearchConfig, parse_method
from lbs_pz.search.methods import MethodSpec, build_agent

SEARCHES = ("none", "lbs-1", "lbs-16", "lbs-inf", "sparta")
BLUEPRINT_EXAMPLES = ("strong", "medium", "weak", "simple", "random", "lstm:public_lstm_2p")
VARIANT_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                  "max_life_tokens")
MAX_GAMES_KEPT = 64
MAX_ROLLOUTS = 10_000
BELIEF_SAMPLES = 256        # hands drawn from the belief for a DECISION's heat map
RUN_SEED = 0                # deal i of a game is game i of `lbs-pz eval --seed 0`


class ApiError(Exception):
    """An error the API reports as {"error": message} with HTTP `status`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def _int(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _bad(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _finite(x) -> Optional[float]:
    x = float(x)
    return x if math.isfinite(x) else None


def parse_variant(variant) -> HanabiConfig:
    """The HanabiConfig of a request's "variant" object (missing fields: defaults)."""
    if variant is None:
        variant = {}
    if not isinstance(variant, dict):
        raise _bad(f"variant must be an object with fields among {', '.join(VARIANT_FIELDS)}")
    unknown = sorted(set(variant) - set(VARIANT_FIELDS))
    if unknown:
        raise _bad(f"unknown variant field(s) {', '.join(map(repr, unknown))}; expected "
                   f"{', '.join(VARIANT_FIELDS)}")
    try:
        return HanabiConfig(**variant)
    except (ValueError, TypeError) as err:
        raise _bad(f"variant: {err}") from None


def variant_dict(config: HanabiConfig) -> dict:
    return {name: getattr(config, name) for name in VARIANT_FIELDS}


def parse_search(search) -> str:
    """'none', 'sparta', 'lbs-K' or 'lbs-inf' (one spelling); ApiError otherwise."""
    if search is None or search == "none":
        return "none"
    try:
        method = parse_method(search)
    except ValueError:
        method = None
    if method in (None, "blueprint"):
        raise _bad(f"unknown search {search!r}; expected none, sparta, lbs-K (e.g. lbs-1, "
                   f"lbs-16) or lbs-inf")
    return method


@dataclasses.dataclass
class Seat:
    """One seat: a human, a blueprint, or a blueprint with a searcher."""

    name: str
    human: bool = False
    blueprint: Any = None
    searcher: Any = None
    search: str = "none"
    spec: Optional[str] = None
    rollouts: Optional[int] = None

    def describe(self) -> dict:
        return {"name": self.name, "human": self.human, "blueprint": self.spec,
                "search": self.search, "rollouts": self.rollouts}


def make_seat(entry, config: HanabiConfig, default_rollouts: int, index: int) -> Seat:
    """A Seat from one entry of a request's "seats" list."""
    where = f"seats[{index}]"
    if not isinstance(entry, dict):
        raise _bad(f"{where} must be an object: {{\"blueprint\": SPEC, \"search\": ...}} or "
                   f"{{\"human\": true}}")
    if entry.get("human") is True:
        return Seat(name="you", human=True)
    spec = entry.get("blueprint")
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(f"{where}.blueprint must be a blueprint spec string (e.g. \"strong\")")
    search = parse_search(entry.get("search", "none"))
    rollouts = entry.get("rollouts", default_rollouts)
    rollouts = _int(rollouts, f"{where}.rollouts", 1, MAX_ROLLOUTS)
    try:
        with warnings.catch_warnings():         # LBS's defaults are said in the seat name
            warnings.simplefilter("ignore")
            if search == "none":
                blueprint, searcher = load_blueprint(spec), None
            else:
                method = "sparta" if search == "sparta" else search
                blueprint, searcher = build_agent(
                    MethodSpec(method=method, blueprint=spec, rollouts=rollouts), config)
    except ValueError as err:
        raise _bad(f"{where}: {err}") from None
    name = getattr(blueprint, "spec", None) or spec
    if searcher is not None:
        name = f"{name} + {searcher.name}"
    return Seat(name=name, blueprint=blueprint, searcher=searcher,
                search=search if searcher is None else searcher.name, spec=spec,
                rollouts=rollouts if searcher is not None else None)


def _card(config: HanabiConfig, card) -> Optional[str]:
    return None if card is None else config.card_name(int(card))


def _move_entry(config: HanabiConfig, move_id: int) -> dict:
    """{"id", "name", "kind", ...}: a move id in words and fields (slots from 0, ranks from 1,
    target as an offset from the mover)."""
    move = decode_move(config, move_id)
    out = {"id": int(move_id), "name": move_name(config, move_id).strip("()"),
           "kind": move.kind}
    if move.card_index is not None:
        out["slot"] = move.card_index
    if move.target_offset is not None:
        out["target_offset"] = move.target_offset
    if move.color is not None:
        out["color"] = COLOR_CHARS[move.color]
    if move.rank is not None:
        out["rank"] = move.rank + 1
    return out


def _knowledge_text(config: HanabiConfig, colors, ranks) -> str:
    c = "".join(COLOR_CHARS[i] for i in colors) if len(colors) < config.colors else "?"
    r = "".join(str(i + 1) for i in ranks) if len(ranks) < config.ranks else "?"
    return c + r


class Game:
    """One game session (module docstring). `lock` serialises the moves of the agents."""

    def __init__(self, game_id: str, mode: str, state: HanabiState, seats: List[Seat],
                 seed: Optional[int], script: Optional[List[int]] = None,
                 record: Optional[dict] = None):
        self.id, self.mode, self.seats, self.seed = game_id, mode, seats, seed
        self.config: HanabiConfig = state.config
        self.states: List[HanabiState] = [state]
        self.searched: Dict[int, bool] = {}
        self.decisions: Dict[int, dict] = {}     # k -> DECISION (JSON-ready)
        self.results: Dict[int, Any] = {}        # k -> the search's SearchResult
        self.script = script            # replays: the recorded moves
        self.record = record            # replays: what the record says
        self.lock = threading.Lock()
        self.created = time.time()
        humans = [i for i, s in enumerate(seats) if s.human]
        self.human: Optional[int] = humans[0] if humans else None

    # --- the timeline ---------------------------------------------------------------

    @property
    def latest(self) -> HanabiState:
        return self.states[-1]

    @property
    def moves_played(self) -> int:
        return len(self.states) - 1

    @property
    def over(self) -> bool:
        state = self.latest
        return state.is_terminal or (self.script is not None
                                     and self.moves_played >= len(self.script))

    def _apply(self, move: int, searched: bool = False) -> None:
        nxt = self.latest.clone()
        nxt.apply(int(move))
        self.searched[len(self.states) - 1] = searched
        self.states.append(nxt)

    def _agent_move(self) -> None:
        """The seat to move (not a human) moves at the end of the timeline."""
        state = self.latest
        k, seat_index = self.moves_played, state.current_player
        if self.script is not None:
            self._apply(self.script[k])
            return
        seat = self.seats[seat_index]
        if seat.searcher is None:
            self._apply(seat.blueprint.act(state.clone(), seat_index))
            return
        start = time.perf_counter()
        try:
            result = seat.searcher.search(state.clone(), seat_index)
        except (RuntimeError, ValueError) as err:
            # E.g. SPARTA's exact belief is empty once a partner left the blueprint (a
            # human, another searcher): play the blueprint's move and say why.
            move = int(seat.blueprint.act(state.clone(), seat_index))
            name = move_name(self.config, move).strip("()")
            self.decisions[k] = {
                "k": k, "seat": seat_index, "search": seat.search, "move": move,
                "move_name": name, "blueprint_move": move, "blueprint_move_name": name,
                "deviated": False, "fallback": True, "worlds": 0, "rollouts": 0,
                "seconds": time.perf_counter() - start, "candidates": [],
                "belief": self._belief_table(seat.searcher, k, len(state.hand(seat_index))),
                "error": f"the search failed ({err}); the blueprint's move was played"}
            self._apply(move, searched=True)
            return
        self.results[k] = result
        self.decisions[k] = self._decision_record(k, seat_index, seat, result, state)
        self._apply(result.move, searched=True)

    def _decision_record(self, k: int, seat_index: int, seat: Seat, result, state) -> dict:
        config = self.config
        counts = np.asarray(result.counts)
        top = counts.max() if len(counts) else 0
        candidates = []
        for i, m in enumerate(np.asarray(result.moves).tolist()):
            candidates.append({
                "id": int(m), "name": move_name(config, int(m)).strip("()"),
                "mean": _finite(result.means[i]), "sem": _finite(result.sems[i]),
                "count": int(counts[i]), "gain": _finite(result.gains[i]),
                "gain_sem": _finite(result.gain_sems[i]), "pruned": bool(counts[i] < top)})
        return {
            "k": k, "seat": seat_index, "search": seat.search, "move": int(result.move),
            "move_name": move_name(config, int(result.move)).strip("()"),
            "blueprint_move": int(result.blueprint_move),
            "blueprint_move_name": move_name(config, int(result.blueprint_move)).strip("()"),
            "deviated": bool(result.deviated), "fallback": bool(result.fallback),
            "worlds": int(result.worlds), "rollouts": int(result.rollouts),
            "seconds": float(result.seconds), "candidates": candidates,
            "verify_gain": _finite(result.verify_gain), "verify_sem": _finite(result.verify_sem),
            "belief": self._belief_table(seat.searcher, k, len(state.hand(seat_index))),
        }

    def _belief_table(self, searcher, k: int, hand_len: int) -> dict:
        """Per slot a colour x rank table of the searcher's belief (synced by its search),
        from BELIEF_SAMPLES sampled hands; uniform zeros when it gives none."""
        config = self.config
        C, R = config.colors, config.ranks
        table = np.zeros((hand_len, C * R))
        try:
            hands = np.asarray(searcher.belief.sample(BELIEF_SAMPLES,
                                                      np.random.default_rng(k)))
        except (RuntimeError, ValueError):
            hands = np.zeros((0, hand_len), np.int64)
        if len(hands):
            for i in range(min(hand_len, hands.shape[1])):
                table[i] = np.bincount(hands[:, i], minlength=C * R)[:C * R] / len(hands)
        return {"colors": list(COLOR_CHARS[:C]), "ranks": list(range(1, R + 1)),
                "samples": int(len(hands)),
                "slots": [[[round(float(p), 4) for p in table[i, c * R:(c + 1) * R]]
                           for c in range(C)] for i in range(hand_len)]}

    def advance(self, n: int) -> None:
        """The agents play up to n moves (all if n < 0), stopping at a human's turn or at
        the end of the game (or of the record). Call with `lock` held."""
        done = 0
        while (n < 0 or done < n) and not self.over:
            if self.human is not None and self.latest.current_player == self.human:
                break
            self._agent_move()
            done += 1

    def human_move(self, move, turn) -> None:
        """The human's move at `turn` moves played; then the agents move until the human's
        next turn. Call with `lock` held."""
        if self.mode != "play":
            raise _bad("moves are sent in play mode only; a watch game advances")
        if isinstance(turn, bool) or not isinstance(turn, int):
            raise _bad(f"turn must be the number of moves played the client saw, got {turn!r}")
        if isinstance(move, bool) or not isinstance(move, int):
            raise _bad(f"move must be a move id (integer), got {move!r}")
        if turn != self.moves_played:
            raise ApiError(409, f"stale turn: {turn} moves played on the page, "
                                f"{self.moves_played} in the game; reload the game")
        state = self.latest
        if state.is_terminal:
            raise ApiError(409, "the game is over")
        if state.current_player != self.human:
            raise ApiError(409, f"it is seat {state.current_player}'s turn, not yours")
        legal = state.legal_moves()
        if move not in legal:
            names = ", ".join(f"{m} {move_name(self.config, m).strip('()')}" for m in legal)
            raise _bad(f"illegal move {move}; legal moves: {names}")
        self._apply(move)
        self.advance(-1)

    # --- what a view may see: the ONE place hidden information is filtered -------------

    def resolve_view(self, at, view) -> tuple:
        """(k, viewer or None for the spectator) for a request's at / view."""
        latest = self.moves_played
        if at is None or at == "":
            k = latest
        else:
            try:
                k = int(at)
            except (TypeError, ValueError):
                raise _bad(f"at must be a number of moves, got {at!r}") from None
            if not 0 <= k <= latest:
                raise _bad(f"at must be in [0, {latest}] (moves played), got {k}")
        if self.mode == "play" and not self.over:
            return k, self.human
        if view is None or view in ("", "spectator"):
            return k, None
        try:
            seat = int(view)
        except (TypeError, ValueError):
            raise _bad(f"view must be 'spectator' or a seat number, got {view!r}") from None
        if not 0 <= seat < self.config.players:
            raise _bad(f"view must be 'spectator' or a seat in [0, {self.config.players}), "
                       f"got {seat}")
        return k, seat

    def snapshot(self, at=None, view=None) -> dict:
        """SNAPSHOT of the position after `at` moves (default latest) seen by `view`."""
        k, viewer = self.resolve_view(at, view)
        if self.mode == "play" and not self.over and viewer != self.human:
            raise AssertionError("play-mode snapshots are the human seat's view")
        state = self.states[k]
        config = self.config
        seats = []
        for p, seat in enumerate(self.seats):
            hidden = viewer == p
            hand = []
            cards = state.hand(p)
            for card, (colors, ranks, hc, hr) in zip(cards, state.card_knowledge(p)):
                hand.append({
                    "card": None if hidden else _card(config, card),
                    "color_hint": None if hc < 0 else COLOR_CHARS[hc],
                    "rank_hint": None if hr < 0 else hr + 1,
                    "knowledge": _knowledge_text(config, colors, ranks),
                    "colors": [COLOR_CHARS[c] for c in colors],
                    "ranks": [r + 1 for r in ranks]})
            entry = seat.describe()
            entry["hand"] = hand
            entry["seat"] = p
            seats.append(entry)
        # In play mode a search's deviation depends on rollouts through the human's real
        # hand: it is shown, like the search records, once the game is over.
        secret = self.mode == "play" and not self.over
        history = []
        for i, rec in enumerate(state.move_records()):
            entry = _move_entry(config, rec["move"])
            history.append({
                "k": i, "seat": int(rec["player"]), "move": int(rec["move"]),
                "name": entry["name"], "kind": entry["kind"],
                "card": _card(config, rec["card"]) if rec["card"] >= 0 else None,
                "scored": bool(rec["scored"]),
                "searched": bool(self.searched.get(i, False)),
                "deviated": None if secret else (bool(self.decisions[i]["deviated"])
                                                 if i in self.decisions else False)})
        mover = state.current_player
        if state.is_terminal or (self.script is not None and k >= len(self.script)):
            legal = []
        elif self.mode == "play" and not self.over:
            legal = state.legal_moves() if (mover == self.human and k == self.moves_played) \
                else []
        else:
            legal = state.legal_moves()
        snap = {
            "id": self.id, "mode": self.mode, "at": k, "moves_played": self.moves_played,
            "variant": variant_dict(config), "seed": self.seed,
            "view": "spectator" if viewer is None else viewer,
            "current_player": mover, "terminal": bool(state.is_terminal),
            "over": bool(self.over), "score": state.score,
            "information_tokens": state.information_tokens, "life_tokens": state.life_tokens,
            "deck_size": state.deck_size, "colors": list(COLOR_CHARS[:config.colors]),
            "fireworks": list(state.fireworks),
            "discards": [_card(config, c) for c in state.discard_pile],
            "seats": seats, "human_seat": self.human,
            "legal_moves": [_move_entry(config, m) for m in legal],
            "history": history, "last_move": history[-1] if history else None,
            "decisions": sorted(list(self.decisions)),
        }
        if self.record is not None:
            snap["record"] = self.record
        return snap

    def decision(self, k: int) -> dict:
        if self.mode == "play" and not self.over:
            raise ApiError(403, "search records are shown when the game is over")
        if k not in self.decisions:
            raise ApiError(404, f"move {k} was not a search decision")
        return self.decisions[k]

    def export(self) -> dict:
        if self.mode == "play" and not self.over:
            raise ApiError(403, "a game in play mode is exported when it is over")
        return to_hanablive(self.latest, [s.name for s in self.seats])


def deal(config: HanabiConfig, seed, run_seed: int = RUN_SEED) -> HanabiState:
    """Deal `seed` of the evaluation stream (game `seed` of `lbs-pz eval --seed run_seed`)."""
    seed = _int(seed, "seed (deal index)", 0, MAX_GAMES - 1)
    return HanabiState(config, seed=int(deal_seeds(EVAL, run_seed, seed, 1)[0]))


class GameStore:
    """The games of one server, in memory: at most `cap` (the oldest evicted), ids from
    `secrets.token_urlsafe`."""

    def __init__(self, default_rollouts: int = SearchConfig.rollouts, cap: int = MAX_GAMES_KEPT,
                 allowed_code: tuple = (), allow_code: bool = False):
        self.games: "collections.OrderedDict[str, Game]" = collections.OrderedDict()
        self.default_rollouts, self.cap = default_rollouts, cap
        self.allowed_code, self.allow_code = tuple(allowed_code), allow_code
        self._lock = threading.Lock()

    def _add(self, game: Game) -> Game:
        with self._lock:
            self.games[game.id] = game
            while len(self.games) > self.cap:
                self.games.popitem(last=False)
        return game

    def check_spec(self, spec, where: str) -> None:
        """A request may name a py: blueprint (code run on this machine) only when the
        server allows code (`lbs-pz serve --allow-code`) or was started with that spec."""
        if isinstance(spec, str) and spec.strip().lower().startswith("py:") \
                and not self.allow_code and spec.strip() not in self.allowed_code:
            raise ApiError(403, f"{where}: {spec!r} runs Python code on the server; start it "
                                f"with --allow-code (or --blueprint {spec}) to allow it")

    def get(self, game_id: str) -> Game:
        game = self.games.get(game_id)
        if game is None:
            raise ApiError(404, f"no game {game_id!r} (unknown, or evicted: the server keeps "
                                f"the {self.cap} newest)")
        return game

    def create(self, body) -> Game:
        """A new game from a POST /api/games body (not advanced yet)."""
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object")
        mode = body.get("mode", "watch")
        if mode not in ("watch", "play"):
            raise _bad(f"mode must be 'watch' or 'play', got {mode!r}")
        config = parse_variant(body.get("variant"))
        seed = body.get("seed", 0)
        state = deal(config, seed)
        entries = body.get("seats")
        if not isinstance(entries, list) or len(entries) != config.players:
            got = len(entries) if isinstance(entries, list) else repr(entries)
            raise _bad(f"seats must list one entry per player ({config.players}), got {got}")
        humans = sum(1 for e in entries if isinstance(e, dict) and e.get("human") is True)
        if mode == "play" and humans != 1:
            raise _bad(f"play mode needs exactly one human seat, got {humans}")
        if mode == "watch" and humans:
            raise _bad("watch mode has no human seat (use mode 'play')")
        for i, e in enumerate(entries):
            if isinstance(e, dict):
                self.check_spec(e.get("blueprint"), f"seats[{i}].blueprint")
        seats = [make_seat(e, config, self.default_rollouts, i) for i, e in enumerate(entries)]
        return self._add(Game(secrets.token_urlsafe(12), mode, state, seats, seed))

    def replay(self, body) -> Game:
        """A watch game that replays a record (POST /api/replays body)."""
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object")
        if "hanablive" in body:
            return self._add(self._hanablive(body["hanablive"]))
        if "jsonl_line" in body:
            return self._add(self._jsonl(body["jsonl_line"]))
        if "jsonl_text" in body:
            text = body["jsonl_text"]
            if not isinstance(text, str):
                raise _bad("jsonl_text must be the text of a compare --jsonl log")
            lines = [line for line in text.splitlines() if line.strip()]
            index = _int(body.get("index", 0), "index", 0, max(len(lines) - 1, 0))
            if not lines:
                raise _bad("jsonl_text holds no game")
            try:
                line = json.loads(lines[index])
            except ValueError as err:
                raise _bad(f"line {index + 1} of jsonl_text is not JSON: {err}") from None
            return self._add(self._jsonl(line))
        raise _bad("a replay body holds 'hanablive', 'jsonl_line' or 'jsonl_text'")

    def _hanablive(self, record) -> Game:
        try:
            final = from_hanablive(record)
        except ValueError as err:
            raise _bad(f"hanablive: {err}") from None
        start = HanabiState(final.config, deck=final.deck, start_player=final.start_player,
                            seed=0)
        names = record.get("players") if isinstance(record, dict) else None
        if not (isinstance(names, list) and len(names) == final.config.players):
            names = [f"player_{i}" for i in range(final.config.players)]
        seats = [Seat(name=str(n)) for n in names]
        return Game(secrets.token_urlsafe(12), "replay", start, seats, None,
                    script=final.move_history,
                    record={"kind": "hanablive", "moves": final.num_moves_played,
                            "score": final.score})

    def _jsonl(self, line) -> Game:
        """Re-deal the logged game from the evaluation stream and re-run its method: the
        log holds no moves, and every method is deterministic given its spec."""
        if not isinstance(line, dict) or not isinstance(line.get("key"), str):
            raise _bad("jsonl_line must be one line of a compare --jsonl log (with 'key')")
        try:
            spec_fields, config_kwargs, run_seed = json.loads(line["key"])
            spec_fields = dict(spec_fields)
            spec_fields["search_seats"] = tuple(spec_fields.get("search_seats", (0,)))
            spec = MethodSpec.from_dict(spec_fields)
            config = HanabiConfig(**config_kwargs)
        except (ValueError, TypeError) as err:
            raise _bad(f"jsonl_line: a key that is not a compare spec ({err})") from None
        self.check_spec(spec.blueprint, "jsonl_line")
        game_index = line.get("game")
        state = deal(config, game_index, run_seed=_int(run_seed, "key seed", 0, 2**31 - 1))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                searching = () if spec.method == "blueprint" else (
                    range(config.players) if spec.search_seats == ("all",)
                    else spec.search_seats)
                blueprint, _ = build_agent(MethodSpec(method="blueprint",
                                                      blueprint=spec.blueprint), config)
                seats = []
                for p in range(config.players):
                    if p in searching:
                        _, searcher = build_agent(spec, config)
                        seats.append(Seat(name=f"{blueprint.spec} + {searcher.name}",
                                          blueprint=blueprint, searcher=searcher,
                                          search=searcher.name, spec=spec.blueprint,
                                          rollouts=spec.rollouts))
                    else:
                        seats.append(Seat(name=str(blueprint.spec), blueprint=blueprint,
                                          spec=spec.blueprint))
        except ValueError as err:
            raise _bad(f"jsonl_line: {err}") from None
        result = line.get("result") if isinstance(line.get("result"), dict) else {}
        return Game(secrets.token_urlsafe(12), "replay", state, seats, game_index,
                    record={"kind": "jsonl", "method": line.get("method", spec.method),
                            "run_seed": run_seed, "game": game_index,
                            "score": result.get("score"), "moves": result.get("moves"),
                            "replayed_by": "re-running the method on the re-dealt game"})
