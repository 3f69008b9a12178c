"""Game sessions of the local web page: a timeline of states, the agent of every seat, the
search records, snapshots (what one view may see), replays and export; and the limits
every route applies (the module-level constants below, defined here once).

A `Game` keeps every position of its game (`states[k]` is the position after k moves;
each move clones the last one), so stepping back is free. Agents move only at the end of
the timeline, a request's moves stop once `move_seconds` have passed (the client asks
again), and a search move has `SearchConfig.time_budget` = `move_seconds`. Each search
decision stores its `SearchResult` and the searching seat's belief over its own hand at
that decision as a DECISION dict (`Game.decision(k)`), with "max_score", the most the
position can still score (`HanabiState.max_score`: an estimate above it is flagged on the
page). It also holds the search's deviation test as the search ran it (`SearchResult`:
its rollouts' "depth", "delta", "margin", its world cap "margin_worlds" and the worlds it counted
"tested_worlds", the "bar", the tested move and gain; per candidate its "margin" and
whether it "clears") and "why", that test in one line (`lbs_pz.web.decisions`). Moves and
candidates carry "text": seats named absolutely, as the history names them, and a clue's
touched slots; a history entry where a search deviated names the blueprint's move
("blueprint_text"). Texts name the engine's slots (slot 0 the oldest card); a history
entry also carries its "slot" and "hand_sizes" (every hand's length when it was made), so
a page that shows hanab.live's order (the newest card on the left as slot 1) renames them.

`GameStore.continued` starts a watch game from a position of another (a replay, a
finished game): that game's deal with its first moves replayed on it, other seats on.

Hidden information is filtered in ONE place, `Game.snapshot`: a view of seat s shows the
other seats' cards and only the hints about s's own cards; in play mode, until the game
is over, every snapshot is the human seat's view. No response holds the deck order. A
deal is game N of the evaluation stream when a request chose N ("deal": "chosen"); a
watch game without one gets a random N drawn with `secrets` ("deal": "random"). A play
game without one gets a private deal ("deal": "random"): `private_deal` of a
`PRIVATE_SEED_BITS`-bit seed from the OS, a space no one can enumerate (a scan of the
evaluation stream's 2**32 deals finds the one that fits a partner's hand and the public
moves). Its seed stays on the server ("seed": null in every snapshot) until the game is
over, then is shown as "0x" and 32 hex digits, from which `private_deal` deals it again.
A search's duration depends on
rollouts through the human's hand, so in play mode a searching seat's move ends on a
whole number of `PLAY_PAD_SECONDS` (shorter searches all look alike; longer ones show
their length to that resolution).

Specs a request may name: rule bots and shipped models by name (`lstm:public_lstm_2p`);
a file (sb3:PATH, lstm:PATH, rllib:DIR, a checkpoint path) only with `allow_files`, Python
code (py:...) only with `allow_code`, either when it is the server's own blueprint. A spec
that cannot be loaded is reported without the loader's words (they may quote a file):
those go to the "lbs_pz.web" logger.

Replays: a hanab.live record replays its recorded moves; a `compare --jsonl` line holds
only (spec, variant, run seed, game, result), so its game is re-dealt from the evaluation
stream and its method re-run, deterministic given the spec as long as no search move
reaches `move_seconds` (the logged score is kept in the snapshot's "record" to compare).

Errors are `ApiError(status, message)`: the app turns them into {"error": message}.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import math
import os
import secrets
import threading
import time
import warnings
from typing import Any, Dict, List, Optional, Union, cast

import numpy as np

from lbs_pz.agents import BLUEPRINT_KINDS, BlueprintError
from lbs_pz.checks import as_int, is_int
from lbs_pz.engine import HanabiConfig, HanabiState, decode_move, move_name
from lbs_pz.engine.config import COLOR_CHARS
from lbs_pz.engine.records import from_hanablive, to_hanablive
from lbs_pz.engine.seeds import EVAL, MAX_GAMES, MAX_SEED, deal_seeds
from lbs_pz.models import CheckpointError, shipped_names
from lbs_pz.search.build import build_agent
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.methods import MethodSpec, parse_method
from lbs_pz.web import decisions as explain

SEARCHES = ("blueprint", "lbs-1", "lbs-16", "lbs-inf", "sparta")
BLUEPRINT_EXAMPLES = ("strong", "medium", "weak", "simple", "random", "lstm:public_lstm_2p")
VARIANT_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                  "max_life_tokens")
BELIEF_SAMPLES = 256        # hands drawn from the belief for a DECISION's heat map
RUN_SEED = 0                # deal i of a game is game i of `lbs-pz eval --seed 0`

# --- the limits: every route applies these (the app and `lbs-pz serve` read them here) ---
MAX_GAMES_KEPT = 64         # watch games and replays in memory (`GameStore.add` evicts)
MAX_PLAY_GAMES = 64         # play games in memory, a budget of their own
PLAY_IDLE_SECONDS = 1800.0  # an unfinished play game without a request this long may go
GONE_KEPT = 4096            # evicted ids remembered, to say what became of them
MAX_CONNECTIONS = 100       # open connections; at the cap a new one closes the longest idle
READ_SECONDS = 15.0         # a request (head and body) arrives whole within this, or is closed
IDLE_SECONDS = 5            # a connection between requests stays open this long (keep-alive)
MAX_HEAD_BYTES = 16 * 1024  # a request's line and headers
PRIVATE_SEED_BITS = 128     # the seed of a play game's random deal, from the OS
MAX_BODY_BYTES = 4 * 2**20  # a request body; longer: 413 before it is read whole
MAX_TEXT = 1000             # characters of a spec, a player name, a method name
# The search settings a request (a seat, a compare --jsonl key) may ask for, at most.
SEARCH_CAPS = {"rollouts": 10_000, "verify": 2_000, "batch_size": 512,
               "margin_worlds": 10_000, "budget": 10_000_000}
MOVE_SECONDS = 10.0         # a search move's time budget; a request starts no move after it
REQUEST_SECONDS = 30.0      # a request still working after this answers 503
WORKERS = 8                 # requests doing work (moves, loading a net) at a time
QUEUE = 16                  # requests waiting for a worker; more: 503 at once
PLAY_PAD_SECONDS = 0.25     # play mode: a search move ends on a multiple of this
# A game's id: 17 characters of an alphabet without look-alikes (no 0/O/o, 1/I/l), 98 bits.
ID_ALPHABET = "23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
ID_LENGTH = 17
MAX_IDS_ASKED = 64          # ids one GET /api/games?ids= may name

log = logging.getLogger("lbs_pz.web")


class ApiError(Exception):
    """An error the API reports as {"error": message} with HTTP `status`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def _int(value, name: str, lo: int, hi: int) -> int:
    """`value` as an int in [lo, hi]; a 400 ApiError naming it otherwise."""
    return as_int(value, name, lo, hi, what=f"an integer in [{lo}, {hi}]", error=_bad)


def _shown(value) -> str:
    """A request's value as an error message quotes it: repr, cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def loads(text: Union[str, bytes]) -> Any:
    """json.loads without the NaN / Infinity / -Infinity that Python's json accepts and no
    response can hold (ValueError, as for any text that is not JSON)."""
    return json.loads(text, parse_constant=_no_constant)


def _first_line(err: Exception) -> str:
    """An exception's first line, at most 200 characters (its class name if it has none)."""
    lines = str(err).splitlines()
    return lines[0][:200] if lines and lines[0].strip() else type(err).__name__


def _text(value, name: str) -> str:
    """A non-empty string of at most MAX_TEXT characters (a spec, a name)."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(f"{name} must be a non-empty string, got {_shown(value)}")
    if len(value) > MAX_TEXT:
        raise _bad(f"{name} is longer than {MAX_TEXT} characters")
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
    """A seat's method in its one spelling, as the CLI names it (`parse_method`):
    'blueprint' (no search; None and 'none', the name older replays use, read as it),
    'sparta', 'lbs-K' or 'lbs-inf'; ApiError otherwise."""
    if search is None or search == "none":
        return "blueprint"
    try:
        return parse_method(search)
    except ValueError:
        raise _bad(f"unknown search {search!r}; expected blueprint (no search), sparta, "
                   f"lbs-K (e.g. lbs-1, lbs-16) or lbs-inf") from None


@dataclasses.dataclass
class Seat:
    """One seat: a human, a blueprint, or a blueprint with a searcher."""

    name: str
    human: bool = False
    blueprint: Any = None
    searcher: Any = None
    search: str = "blueprint"
    spec: Optional[str] = None
    rollouts: Optional[int] = None
    notes: tuple = ()       # what the search's defaults chose, and why (`resolve`)

    def describe(self) -> dict:
        return {"name": self.name, "human": self.human, "blueprint": self.spec,
                "search": self.search, "rollouts": self.rollouts, "notes": list(self.notes)}


def _build(spec: MethodSpec, config: HanabiConfig, where: str):
    """`build_agent(spec, config)` for a request: a blueprint or checkpoint that cannot be
    loaded is a 400 that says only that (the loader's words may quote a file or say
    whether a path exists: they go to the log); a search setting that does not fit the
    blueprint is a 400 with its message."""
    try:
        with warnings.catch_warnings():         # LBS's defaults are said in the seat name
            warnings.simplefilter("ignore")
            return build_agent(spec, config)
    except Exception as err:   # noqa: BLE001 - a loader may raise anything; none is shown
        if isinstance(err, ValueError) and not isinstance(err, (BlueprintError,
                                                                CheckpointError)):
            raise _bad(f"{where}: {err}") from None
        log.warning("%s: %s could not be loaded: %s: %s", where, _shown(spec.blueprint),
                    type(err).__name__, err)
        what = (f"the blueprint {_shown(spec.blueprint)}" if isinstance(err, BlueprintError)
                or not isinstance(err, ValueError)
                else f"a checkpoint of the search for {_shown(spec.blueprint)}")
        raise _bad(f"{where}: {what} could not be loaded (the server's log says why); the "
                   f"page offers {', '.join(BLUEPRINT_EXAMPLES)}") from None


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


COLOR_WORDS = {"R": "reds", "Y": "yellows", "G": "greens", "W": "whites", "B": "blues"}


def _history_fields(config: HanabiConfig, rec: dict) -> dict:
    """A past move as the log shows it, seats absolute: {"text", "target" (a clue's
    receiver), "touched" (the slots a clue touched)}, e.g. "seat 1 -> seat 0: 3s, slots
    3 and 4", "seat 0 plays R1 from slot 2", "seat 1 discards Y4 from slot 0 (misplay)"."""
    move = decode_move(config, rec["move"])
    seat = int(rec["player"])
    if move.kind in ("play", "discard"):
        card = _card(config, rec["card"])
        verb = "plays" if move.kind == "play" else "discards"
        miss = " (misplay)" if move.kind == "play" and not rec["scored"] else ""
        return {"text": f"seat {seat} {verb} {card} from slot {move.card_index}{miss}"}
    # decode_move sets the fields of the move's kind
    target = (seat + cast(int, move.target_offset)) % config.players
    touched = [i for i in range(config.hand_size) if (rec["reveal"] >> i) & 1]
    return {"text": f"seat {seat} -> seat {target}: {_clue_words(move, touched)}",
            "target": target, "touched": touched}


def _clue_words(move, touched: List[int]) -> str:
    """A clue's colour or rank and the slots it touches: "reds, slots 0 and 3"."""
    # decode_move sets the fields of the move's kind
    what = (COLOR_WORDS[COLOR_CHARS[cast(int, move.color)]] if move.kind == "reveal_color"
            else f"{cast(int, move.rank) + 1}s")
    slots = f"slot {touched[0]}" if len(touched) == 1 else \
        f"slots {', '.join(map(str, touched[:-1]))} and {touched[-1]}"
    return f"{what}, {slots}"


def _move_text(config: HanabiConfig, state: HanabiState, move_id: int) -> str:
    """A move of the seat to move in `state` in words, seats absolute as the history
    names them and a clue's touched slots listed, e.g. "Reveal seat 2: 1s, slots 0 and 3",
    "Play 1". Only for a view that sees the receiver's hand (never the receiver's own)."""
    move = decode_move(config, move_id)
    if move.kind in ("play", "discard"):
        return move_name(config, move_id).strip("()")
    target = (state.current_player + cast(int, move.target_offset)) % config.players
    if move.kind == "reveal_color":
        touched = [i for i, card in enumerate(state.hand(target))
                   if card // config.ranks == move.color]
    else:
        touched = [i for i, card in enumerate(state.hand(target))
                   if card % config.ranks == move.rank]
    return f"Reveal seat {target}: {_clue_words(move, touched)}"


def _test_fields(config: HanabiConfig, state: HanabiState, result) -> dict:
    """A DECISION's account of the search's deviation test, from its `SearchResult`:
    the rollouts' depth (-1: to the end), delta, confidence, margin_worlds, the tested
    move, its gain, the margin, the bar and the effective worlds behind the gain
    (`tested_worlds`), and the moves in words."""
    tested = int(result.tested_move)
    return {
        "depth": int(result.depth),
        "delta": _finite(result.delta), "confidence": _finite(result.confidence),
        "margin_worlds": int(result.margin_worlds),
        "tested_move": tested if tested >= 0 else None,
        "tested_move_text": _move_text(config, state, tested) if tested >= 0 else None,
        "tested_gain": _finite(result.tested_gain), "margin": _finite(result.margin),
        "bar": _finite(result.bar),
        "tested_worlds": _finite(result.ess) if tested >= 0 else None,
        "move_text": _move_text(config, state, int(result.move)),
        "blueprint_move_text": _move_text(config, state, int(result.blueprint_move))}


def _knowledge_text(config: HanabiConfig, colors, ranks) -> str:
    c = "".join(COLOR_CHARS[i] for i in colors) if len(colors) < config.colors else "?"
    r = "".join(str(i + 1) for i in ranks) if len(ranks) < config.ranks else "?"
    return c + r


class Game:
    """One game session (module docstring). `lock` serialises the moves of the agents.
    `deal`: "chosen" (the request named deal `seed`), "random" (drawn here) or "record"
    (a replay); `private`: `seed` is a `private_deal` seed, not a deal number.
    `pad_seconds`: a search move ends on a multiple of it (0: off). `seen`: the
    `time.monotonic()` of the last request that named it (`GameStore.get`)."""

    def __init__(self, game_id: str, mode: str, state: HanabiState, seats: List[Seat],
                 seed: Optional[int], script: Optional[List[int]] = None,
                 record: Optional[dict] = None, deal: str = "chosen",
                 pad_seconds: float = 0.0, private: bool = False,
                 continued_from: Optional[dict] = None):
        self.id, self.mode, self.seats, self.seed = game_id, mode, seats, seed
        self.continued_from = continued_from    # {"id", "at"}: the game it went on from
        self.deal_known = True      # states[0] holds the whole deal (deck order included)
        self.deal, self.pad_seconds, self.private = deal, pad_seconds, private
        self.seen = time.monotonic()
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

    def recorded_moves(self) -> List[int]:
        """The game's moves from its deal: a replay's whole record, else those played."""
        if self.script is not None:
            return list(self.script)
        return [int(rec["move"]) for rec in self.latest.move_records()]

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
            self._apply(self._blueprint_move(seat, state, seat_index, k))
            return
        start = time.perf_counter()
        try:
            result = seat.searcher.search(state.clone(), seat_index)
        except (RuntimeError, ValueError) as err:
            # A search that raised (e.g. a user's blueprint failing on a re-dealt world):
            # play the blueprint's move and say why.
            move = self._blueprint_move(seat, state, seat_index, k)
            name = move_name(self.config, move).strip("()")
            text = _move_text(self.config, state, move)
            self.decisions[k] = {
                "k": k, "seat": seat_index, "search": seat.search, "move": move,
                "move_name": name, "blueprint_move": move, "blueprint_move_name": name,
                "move_text": text, "blueprint_move_text": text,
                "deviated": False, "fallback": True, "worlds": 0, "rollouts": 0,
                "seconds": time.perf_counter() - start, "candidates": [],
                "max_score": int(state.max_score),
                "belief": self._belief_table(seat.searcher, k, len(state.hand(seat_index))),
                "fallback_reason": f"the search failed ({_first_line(err)})",
                "error": f"the search failed ({_first_line(err)}); the blueprint's move "
                         f"was played"}
            self.decisions[k]["why"] = explain.why(self.decisions[k])
            self._pad(start)
            self._apply(move, searched=True)
            return
        self.results[k] = result
        self.decisions[k] = self._decision_record(k, seat_index, seat, result, state)
        self._pad(start)
        self._apply(result.move, searched=True)

    def _blueprint_move(self, seat: Seat, state: HanabiState, seat_index: int, k: int) -> int:
        """The seat's blueprint's move; a blueprint that raises is a 500 that names the seat
        and the move (its words go to the log)."""
        try:
            return int(seat.blueprint.act(state.clone(), seat_index))
        except Exception as err:   # noqa: BLE001 - a user's blueprint may raise anything
            log.warning("game %s: seat %d's blueprint %s failed on move %d: %s: %s", self.id,
                        seat_index, _shown(seat.spec), k, type(err).__name__, err)
            raise ApiError(500, f"seat {seat_index}'s blueprint failed on move {k} (the "
                                f"server's log says why)") from None

    def _pad(self, start: float) -> None:
        """Wait until a whole number of `pad_seconds` has passed since `start` (play mode:
        how long a search took depends on rollouts through the human's hand)."""
        if self.pad_seconds > 0:
            spent = time.perf_counter() - start
            time.sleep(math.ceil(max(spent, 1e-9) / self.pad_seconds) * self.pad_seconds
                       - spent)

    def _decision_record(self, k: int, seat_index: int, seat: Seat, result, state) -> dict:
        config = self.config
        counts = np.asarray(result.counts)
        top = counts.max() if len(counts) else 0
        candidates = []
        for i, m in enumerate(np.asarray(result.moves).tolist()):
            candidates.append({
                "id": int(m), "name": move_name(config, int(m)).strip("()"),
                "text": _move_text(config, state, int(m)),
                "mean": _finite(result.means[i]), "sem": _finite(result.sems[i]),
                "count": int(counts[i]), "gain": _finite(result.gains[i]),
                "gain_sem": _finite(result.gain_sems[i]), "pruned": bool(counts[i] < top),
                "margin": _finite(result.margins[i]), "clears": bool(result.clears[i])})
        record = {
            "k": k, "seat": seat_index, "search": seat.search, "move": int(result.move),
            "move_name": move_name(config, int(result.move)).strip("()"),
            "blueprint_move": int(result.blueprint_move),
            "blueprint_move_name": move_name(config, int(result.blueprint_move)).strip("()"),
            "deviated": bool(result.deviated), "fallback": bool(result.fallback),
            "fallback_reason": result.fallback_reason or None,
            "worlds": int(result.worlds), "rollouts": int(result.rollouts),
            "seconds": float(result.seconds), "candidates": candidates,
            "verify_gain": _finite(result.verify_gain), "verify_sem": _finite(result.verify_sem),
            "max_score": int(state.max_score),
            "belief": self._belief_table(seat.searcher, k, len(state.hand(seat_index))),
            **_test_fields(config, state, result)}
        record["why"] = explain.why(record)
        return record

    def _belief_table(self, searcher, k: int, hand_len: int) -> dict:
        """Per slot a colour x rank table of the searcher's belief (synced by its search),
        from BELIEF_SAMPLES sampled hands; uniform zeros when it gives none."""
        config = self.config
        C, R = config.colors, config.ranks
        table = np.zeros((hand_len, C * R))
        try:
            hands = np.asarray(searcher.belief.sample(BELIEF_SAMPLES, np.random.default_rng(k)))
        except (RuntimeError, ValueError):
            hands = np.zeros((0, hand_len), np.int64)
        if len(hands):
            for i in range(min(hand_len, hands.shape[1])):
                table[i] = np.bincount(hands[:, i], minlength=C * R)[:C * R] / len(hands)
        return {"colors": list(COLOR_CHARS[:C]), "ranks": list(range(1, R + 1)),
                "samples": int(len(hands)),
                "slots": [[[round(float(p), 4) for p in table[i, c * R:(c + 1) * R]]
                           for c in range(C)] for i in range(hand_len)]}

    def advance(self, n: int, seconds: Optional[float] = None) -> None:
        """The agents play up to n moves (all if n < 0), stopping at a human's turn, at
        the end of the game (or of the record), or, with `seconds`, at the first move
        that would start after that many seconds (the client asks again). Call with
        `lock` held."""
        done = 0
        start = time.monotonic()
        while (n < 0 or done < n) and not self.over:
            if self.human is not None and self.latest.current_player == self.human:
                break
            if seconds is not None and done and time.monotonic() - start >= seconds:
                break
            self._agent_move()
            done += 1

    def human_move(self, move, turn, seconds: Optional[float] = None,
                   reply: bool = True) -> None:
        """The human's move at `turn` moves played; then (`reply`) the agents move until
        the human's next turn (or for `seconds`, as `advance`). Call with `lock` held."""
        if self.mode != "play":
            raise _bad("moves are sent in play mode only; a watch game advances")
        turn = as_int(turn, "turn", what="the number of moves played the client saw",
                      error=_bad)
        move = as_int(move, "move", what="a move id (integer)", error=_bad)
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
        if reply:
            self.advance(-1, seconds)

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
        history = self._history(secret)
        mover = state.current_player
        snap = {
            "id": self.id, "mode": self.mode, "at": k, "moves_played": self.moves_played,
            "variant": variant_dict(config), "deal": self.deal,
            "seed": self._seed_shown(secret),
            "view": "spectator" if viewer is None else viewer,
            "current_player": mover, "terminal": bool(state.is_terminal),
            "over": bool(self.over), "score": state.score,
            "information_tokens": state.information_tokens, "life_tokens": state.life_tokens,
            "deck_size": state.deck_size, "colors": list(COLOR_CHARS[:config.colors]),
            "fireworks": list(state.fireworks),
            "discards": [_card(config, c) for c in state.discard_pile],
            "seats": seats, "human_seat": self.human,
            "legal_moves": [dict(_move_entry(config, m), text=_move_text(config, state, m))
                            for m in self._legal(state, k, viewer)],
            "history": history, "last_move": history[k - 1] if k else None,
            "decisions": sorted(self.decisions.copy()),   # a copy: a move may be adding
        }
        if self.record is not None:
            snap["record"] = self.record
        if self.script is not None:         # a replay: the record's length, known up front
            snap["record_moves"] = len(self.script)
        if self.continued_from is not None:
            snap["continued_from"] = self.continued_from
        return snap

    def _history(self, secret: bool) -> List[dict]:
        """The whole game so far as the snapshot lists it (also when it shows an earlier
        position); `secret`: whether a search's deviation is still hidden."""
        config = self.config
        history = []
        for i, rec in enumerate(self.states[self.moves_played].move_records()):
            entry = _move_entry(config, rec["move"])
            before = self.states[i]
            decision = None if secret else self.decisions.get(i)
            if decision is not None and decision["deviated"]:
                # what the blueprint would have played instead, named as the moves are
                entry["blueprint_text"] = decision["blueprint_move_text"]
            history.append({
                "k": i, "seat": int(rec["player"]), "move": int(rec["move"]),
                "name": entry["name"], "kind": entry["kind"],
                "blueprint_text": entry.get("blueprint_text"),
                "card": _card(config, rec["card"]) if rec["card"] >= 0 else None,
                "scored": bool(rec["scored"]),
                "slot": entry.get("slot"),
                "hand_sizes": [len(before.hand(p)) for p in range(config.players)],
                **_history_fields(config, rec),
                "searched": bool(self.searched.get(i, False)),
                "deviated": None if secret else (bool(self.decisions[i]["deviated"])
                                                 if i in self.decisions else False)})
        return history

    def _legal(self, state: HanabiState, k: int, viewer: Optional[int]) -> List[int]:
        """The moves a snapshot of position `k` seen by `viewer` offers: none once the game
        (or its record) is over; in play mode the human's, at the latest position only;
        and only to the spectator or the seat to move (a clue's legality and its touched
        slots tell its receiver about its own cards)."""
        mover = state.current_player
        if state.is_terminal or (self.script is not None and k >= len(self.script)) \
                or (self.mode == "play" and self.over):     # a finished game is reviewed
            return []
        if self.mode == "play" and (mover != self.human or k != self.moves_played):
            return []
        if viewer is not None and viewer != mover:
            return []
        return state.legal_moves()

    def _seed_shown(self, secret: bool):
        """The snapshot's "seed": a deal number, a private seed as "0x" and 32 hex digits
        (no JSON reader loses a digit of a string), or None while a random deal is secret."""
        if secret and self.deal == "random":
            return None
        if self.private:
            return f"0x{self.seed:0{PRIVATE_SEED_BITS // 4}x}"
        return self.seed

    def decision(self, k: int) -> dict:
        self._check_records_shown()
        if k not in self.decisions:
            raise ApiError(404, f"move {k} was not a search decision")
        decision = self.decisions[k]
        if self.over:       # the searching seat's true hand then, for the belief's heat map
            hand = self.states[k].hand(decision["seat"])
            decision = dict(decision, true_hand=[_card(self.config, c) for c in hand])
        return decision

    def _check_records_shown(self) -> None:
        if self.mode == "play" and not self.over:
            raise ApiError(403, "search records are shown when the game is over")

    def search_summary(self) -> dict:
        """The game's search decisions so far in short (`decisions.summary`)."""
        self._check_records_shown()
        return explain.summary(self.decisions.copy())

    def conventions(self) -> dict:
        """{"seats": per seat its blueprint and a rule bot's conventions}: public."""
        return {"seats": explain.conventions(self.seats)}

    def export(self) -> dict:
        if self.mode == "play" and not self.over:
            raise ApiError(403, "a game in play mode is exported when it is over")
        return to_hanablive(self.latest, [s.name for s in self.seats])


def deal(config: HanabiConfig, seed, run_seed: int = RUN_SEED,
         name: str = "seed (deal index)") -> HanabiState:
    """Deal `seed` of the evaluation stream (game `seed` of `lbs-pz eval --seed run_seed`)."""
    seed = _int(seed, name, 0, MAX_GAMES - 1)
    return HanabiState(config, seed=int(deal_seeds(EVAL, run_seed, seed, 1)[0]))


def private_deal(config: HanabiConfig, seed: int) -> HanabiState:
    """The deal of private seed `seed` (an integer in [0, 2**PRIVATE_SEED_BITS)): numpy's
    PCG64 from `SeedSequence(seed)` gives one raw 64-bit word per card (a stream numpy
    keeps the same on every machine and version): word i > 0 swaps card i with card
    (word mod i + 1) (Fisher-Yates, from the end), word 0 is the state's engine seed. The
    deal depends on every bit of `seed`: a search for it runs over 2**128 seeds."""
    seed = as_int(seed, "a private seed", 0, below=2**PRIVATE_SEED_BITS, error=ValueError,
                  what=f"an integer in [0, 2**{PRIVATE_SEED_BITS})")
    deck = [card for card in range(config.num_card_types)
            for _ in range(config.card_count(card))]
    words = np.random.PCG64(np.random.SeedSequence(seed)).random_raw(len(deck)).tolist()
    for i in range(len(deck) - 1, 0, -1):
        j = words[i] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return HanabiState(config, deck=deck, seed=words[0])


def new_game_id() -> str:
    """A fresh game id: ID_LENGTH characters of ID_ALPHABET from `secrets` (an id read off
    a screen and typed again comes out the same). Ids issued before, in another alphabet,
    are looked up as they are."""
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def check_strings(value, where: str = "body") -> None:
    """400 naming the field for a string (or object key) of a decoded JSON body that holds
    a lone surrogate (JSON's "\\ud800" escape decodes to one; no response could hold it)."""
    stack = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            strings = [item]
        elif isinstance(item, dict):
            strings = list(item)
            stack.extend((v, f"{path}.{k}") for k, v in item.items() if isinstance(k, str))
        elif isinstance(item, list):
            strings = []
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
        else:
            continue
        for text in strings:
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise _bad(f"{path} holds a lone surrogate (not a character); send "
                               f"text as UTF-8") from None


def _summary(game: Game) -> dict:
    """A game as the recent games list it (`GameStore.recent`)."""
    return {"id": game.id, "mode": game.mode, "players": game.config.players,
            "seats": [seat.name for seat in game.seats],
            "moves_played": game.moves_played, "over": bool(game.over),
            "score": game.latest.score, "created": game.created}


class GameStore:
    """The games of one server, in memory, ids from `new_game_id`. `create` and
    `replay` build a game from a request's body without storing it; `add` stores it once
    its response is ready, so a request that fails stores nothing.

    Two budgets: at most `cap` watch games and replays, at most `play_cap` play games, so
    that no number of watch games evicts a game a person is playing. A full budget makes
    room by evicting its oldest finished game, else (watch games) its oldest game, else
    (play games) the unfinished one with no request for longest, once that is over
    `play_idle_seconds`; while every play game is in progress and recent, a new play game
    is refused (503). A request for an evicted game is a 404 that says why it went (the
    last `GONE_KEPT` evicted ids are remembered).

    `own_specs`: blueprint specs every request may name (the server's own, even code or a
    file); `allow_code`: any py: spec (Python code run here; implies `allow_files`);
    `allow_files`: any sb3:PATH / lstm:PATH / rllib:DIR spec and checkpoint path; otherwise
    rule bots and shipped models by name only. `move_seconds`: the time budget of a search move
    (and the time after which a request starts no further move)."""

    def __init__(self, default_rollouts: int = SearchConfig.rollouts, cap: int = MAX_GAMES_KEPT,
                 own_specs: tuple = (), allow_code: bool = False, allow_files: bool = False,
                 move_seconds: float = MOVE_SECONDS, play_cap: int = MAX_PLAY_GAMES,
                 play_idle_seconds: float = PLAY_IDLE_SECONDS):
        self.games: "collections.OrderedDict[str, Game]" = collections.OrderedDict()
        self.gone: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self.default_rollouts, self.cap, self.play_cap = default_rollouts, cap, play_cap
        self.play_idle_seconds = play_idle_seconds
        self.own_specs = tuple(s.strip() for s in own_specs)
        self.allow_code, self.allow_files = allow_code, allow_files or allow_code
        self.move_seconds = move_seconds
        self._lock = threading.Lock()

    def _budget(self, mode: str) -> tuple:
        """(cap, words) of the budget a game of `mode` counts against."""
        if mode == "play":
            return self.play_cap, "play games"
        return self.cap, "watch games and replays"

    def _victim(self, mode: str, now: float) -> Optional[tuple]:
        """(game, why) to evict before a game of `mode` is added, None if there is room;
        ApiError(503) when the play budget holds only games in progress (lock held)."""
        cap, words = self._budget(mode)
        members = [g for g in self.games.values() if (g.mode == "play") == (mode == "play")]
        if len(members) < cap:
            return None
        for game in members:                    # oldest first
            if game.over:
                return game, (f"it was over, the oldest finished of the {cap} {words} the "
                              f"server keeps, and a new one needed its place")
        if mode != "play":
            return members[0], (f"it was the oldest of the {cap} {words} the server keeps, "
                                f"and a new one needed its place")
        idle = min(members, key=lambda g: g.seen)
        if now - idle.seen > self.play_idle_seconds:
            return idle, (f"no request named it for {(now - idle.seen) / 60:.0f} minutes, "
                          f"and a new play game needed its place (the server keeps {cap})")
        raise ApiError(503, f"the server already holds {cap} play games in progress (none "
                            f"idle for {self.play_idle_seconds / 60:g} minutes); try again "
                            f"once one is over")

    def check_room(self, mode) -> None:
        """ApiError(503) now if a new game of `mode` could not be added (`add` checks
        again): a request finds out before its game is built."""
        with self._lock:
            self._victim(mode, time.monotonic())

    def add(self, game: Game) -> Game:
        with self._lock:
            victim = self._victim(game.mode, time.monotonic())
            if victim is not None:
                old, why = victim
                del self.games[old.id]
                self.gone[old.id] = why
                while len(self.gone) > GONE_KEPT:
                    self.gone.popitem(last=False)
            self.games[game.id] = game
        return game

    def recent(self, limit: int = 20) -> List[dict]:
        """The newest `limit` games, newest first, each as {"id", "mode", "players",
        "seats" (names), "moves_played", "over", "score", "created"}. A play game is
        listed only once it is over: its id is the address that lets one move for its
        person, known only to the tab that created it until then."""
        with self._lock:
            games = list(self.games.values())
        out = []
        for game in reversed(games):
            if game.mode == "play" and not game.over:
                continue
            out.append(_summary(game))
            if len(out) >= limit:
                break
        return out

    def named(self, ids: List[str]) -> dict:
        """{"games": those of `ids` this server holds, as `recent` lists them, a play game
        in progress included (who names its id knows its address); "gone": {id: why} for
        those it evicted}. Ids it never held are left out."""
        with self._lock:
            games = [self.games.get(i) for i in ids]
            gone = {i: self.gone[i] for i in ids if i in self.gone}
        return {"games": [_summary(game) for game in games if game is not None], "gone": gone}

    def get(self, game_id: str) -> Game:
        """The game `game_id` (its `seen` set to now); 404 saying why if it was evicted."""
        with self._lock:
            game = self.games.get(game_id)
            why = self.gone.get(game_id) if game is None else None
        if game is None:
            if why is not None:
                raise ApiError(404, f"game {_shown(game_id)} is gone from the server: {why}")
            raise ApiError(404, f"no game {_shown(game_id)} (unknown to this server: its games "
                                f"live in memory and end when it stops)")
        game.seen = time.monotonic()
        return game

    # --- what a request may name -------------------------------------------------------

    def check_spec(self, spec, where: str) -> str:
        """The blueprint spec `spec` (stripped) if a request may name it: a kind that runs
        code (`BlueprintKind.runs_code`, py:) only with `allow_code`, one that reads a file
        only with `allow_files` (or a shipped model's name), either when it is one of
        `own_specs`; 403 otherwise, without a word on whether a file exists."""
        spec = _text(spec, where).strip()
        if spec in self.own_specs:
            return spec
        prefix, sep, rest = spec.partition(":")
        kind = BLUEPRINT_KINDS.get(prefix.strip().lower()) if sep else None
        if kind is not None and kind.runs_code and not self.allow_code:
            raise ApiError(403, f"{where}: {_shown(spec)} runs code on the server; start it "
                                f"with --allow-code (or --blueprint SPEC) to allow it")
        if kind is not None and kind.reads_file:
            self.check_file(rest, where)
        return spec

    def check_file(self, path, where: str) -> None:
        """A checkpoint a request names: a shipped model by name, or a file with
        `allow_files`; 403 otherwise."""
        if self.allow_files:
            return
        path = _text(path, where).strip()
        name = path[:-3] if path.endswith(".pt") else path
        names = shipped_names()
        if name in names and "/" not in path and os.sep not in path \
                and not os.path.isfile(path):
            return
        raise ApiError(403, f"{where}: the page loads models by name ({', '.join(names)}), "
                            f"not files; start the server with --allow-files (or "
                            f"--blueprint SPEC) to name a file")

    def limited(self, search: SearchConfig, where: str) -> SearchConfig:
        """`search` within SEARCH_CAPS (400 naming the setting otherwise), its checkpoints
        checked as `check_file`, its time budget at most `move_seconds`."""
        for name, cap in SEARCH_CAPS.items():
            value = getattr(search, name)
            if value is not None and value > cap:
                raise _bad(f"{where}.{name} must be at most {cap}, got {value}")
        for name in ("belief_checkpoint", "value_checkpoint"):
            if getattr(search, name) is not None:
                self.check_file(getattr(search, name), f"{where}.{name}")
        budget = search.time_budget
        return search.replace(time_budget=self.move_seconds if budget is None
                              else min(budget, self.move_seconds))

    # --- new games -----------------------------------------------------------------------

    def seat(self, entry, config: HanabiConfig, index: int) -> Seat:
        """A Seat from one entry of a request's "seats" list."""
        where = f"seats[{index}]"
        if not isinstance(entry, dict):
            raise _bad(f"{where} must be an object: {{\"blueprint\": SPEC, \"search\": ...}} "
                       f"or {{\"human\": true}}")
        unknown = sorted(set(entry) - {"human", "blueprint", "search", "rollouts"})
        if unknown:
            raise _bad(f"{where}: unknown field(s) {', '.join(map(_shown, unknown))}; expected "
                       f"blueprint, search, rollouts or human")
        if entry.get("human") is True:
            return Seat(name="you", human=True)
        if "blueprint" not in entry:
            raise _bad(f"{where}.blueprint must be a blueprint spec string (e.g. \"strong\")")
        spec = self.check_spec(entry["blueprint"], f"{where}.blueprint")
        try:
            search = parse_search(entry.get("search", "blueprint"))
        except ApiError as err:
            raise _bad(f"{where}.search: {err.message}") from None
        rollouts = _int(entry.get("rollouts", self.default_rollouts), f"{where}.rollouts", 1,
                        SEARCH_CAPS["rollouts"])
        method = MethodSpec(method=search,
                            blueprint=spec,
                            search=self.limited(SearchConfig(rollouts=rollouts), where))
        blueprint, searcher = _build(method, config, where)
        name = getattr(blueprint, "spec", None) or spec
        notes = []
        if searcher is not None:
            name = f"{name} + {searcher.name}"
            if searcher.name != search:     # e.g. lbs-16 with no value: rollouts to the end
                notes.append(f"{search} runs as {searcher.name}: no value for {spec} in this "
                             f"game, so its rollouts go to the end")
            notes += list(searcher.defaults)
        return Seat(name=name, blueprint=blueprint, searcher=searcher,
                    search=search if searcher is None else searcher.name, spec=spec,
                    rollouts=rollouts if searcher is not None else None, notes=tuple(notes))

    def create(self, body) -> Game:
        """A new game from a POST /api/games body: not advanced, not stored yet."""
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object")
        unknown = sorted(set(body) - {"mode", "variant", "seed", "seats"})
        if unknown:
            raise _bad(f"unknown field(s) {', '.join(map(_shown, unknown))}; a new game is "
                       f"{{mode, variant, seed, seats}}")
        mode = body.get("mode", "watch")
        if mode not in ("watch", "play"):
            raise _bad(f"mode must be 'watch' or 'play', got {_shown(mode)}")
        config = parse_variant(body.get("variant"))
        seed = body.get("seed")
        kind = "chosen" if seed is not None else "random"
        private = seed is None and mode == "play"       # the deal a person must not know
        if private:
            seed = secrets.randbits(PRIVATE_SEED_BITS)
            state = private_deal(config, seed)
        else:
            if seed is None:
                seed = secrets.randbelow(MAX_GAMES)
            state = deal(config, seed)
        entries = body.get("seats")
        if not isinstance(entries, list) or len(entries) != config.players:
            got = len(entries) if isinstance(entries, list) else _shown(entries)
            raise _bad(f"seats must list one entry per player ({config.players}), got {got}")
        humans = sum(1 for e in entries if isinstance(e, dict) and e.get("human") is True)
        if mode == "play" and humans != 1:
            raise _bad(f"play mode needs exactly one human seat, got {humans}")
        if mode == "watch" and humans:
            raise _bad("watch mode has no human seat (use mode 'play')")
        for i, e in enumerate(entries):        # every spec checked before any is loaded
            if isinstance(e, dict) and e.get("human") is not True and "blueprint" in e:
                self.check_spec(e["blueprint"], f"seats[{i}].blueprint")
        seats = [self.seat(e, config, i) for i, e in enumerate(entries)]
        return Game(new_game_id(), mode, state, seats, seed, deal=kind,
                    pad_seconds=PLAY_PAD_SECONDS if mode == "play" else 0.0,
                    private=private)

    def continued(self, source: Game, body) -> Game:
        """A new watch game from position "at" of `source` (POST /api/games/{id}/continue
        body {"at", "seats"}), not stored yet: `source`'s deal with its first "at" recorded
        moves replayed on it, then the seats (agents, as a new game's) play on. 403 while
        `source` is a play game in progress (its deal is its person's secret); 409 when its
        record holds no deal."""
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object")
        unknown = sorted(set(body) - {"at", "seats"})
        if unknown:
            raise _bad(f"unknown field(s) {', '.join(map(_shown, unknown))}; a continued "
                       f"game is {{at, seats}}")
        if source.mode == "play" and not source.over:
            raise ApiError(403, "a play game goes on with bots once it is over (its deal is "
                                "its person's secret until then)")
        if not source.deal_known:
            raise ApiError(409, "this game's record holds no deal (no deck order): its "
                                "position cannot be rebuilt to go on from")
        moves = source.recorded_moves()
        at = _int(body.get("at", source.moves_played), "at", 0, len(moves))
        config = source.config
        entries = body.get("seats")
        if not isinstance(entries, list) or len(entries) != config.players:
            got = len(entries) if isinstance(entries, list) else _shown(entries)
            raise _bad(f"seats must list one entry per player ({config.players}), got {got}")
        if any(isinstance(e, dict) and e.get("human") is True for e in entries):
            raise _bad("a continued game is watched: every seat is a blueprint")
        for i, e in enumerate(entries):        # every spec checked before any is loaded
            if isinstance(e, dict) and "blueprint" in e:
                self.check_spec(e["blueprint"], f"seats[{i}].blueprint")
        seats = [self.seat(e, config, i) for i, e in enumerate(entries)]
        game = Game(new_game_id(), "watch", source.states[0].clone(), seats, source.seed,
                    deal=source.deal, private=source.private,
                    continued_from={"id": source.id, "at": at})
        for move in moves[:at]:
            game._apply(move)
        return game

    # --- replays ---------------------------------------------------------------------------

    def replay(self, body) -> Game:
        """A watch game that replays a record (POST /api/replays body), not stored yet."""
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object")
        if "hanablive" in body:
            return self._hanablive(body["hanablive"])
        if "jsonl_line" in body:
            return self._jsonl(body["jsonl_line"], "jsonl_line")
        if "jsonl_text" in body:
            text = body["jsonl_text"]
            if not isinstance(text, str):
                raise _bad("jsonl_text must be the text of a compare --jsonl log")
            lines = [line for line in text.splitlines() if line.strip()]
            if not lines:
                raise _bad("jsonl_text holds no game")
            index = _int(body.get("index", 0), "index", 0, len(lines) - 1)
            where = f"jsonl_text (line {index + 1})"
            try:
                line = loads(lines[index])
            except (ValueError, RecursionError) as err:
                raise _bad(f"{where} is not JSON: {err}") from None
            return self._jsonl(line, where)
        raise _bad("a replay body holds 'hanablive', 'jsonl_line' or 'jsonl_text'")

    def _hanablive(self, record) -> Game:
        try:
            final = from_hanablive(record)
        except (ValueError, TypeError, RecursionError) as err:
            raise _bad(f"hanablive: {err}") from None
        start = HanabiState(final.config, deck=final.deck, start_player=final.start_player,
                            seed=0)
        names = record.get("players") if isinstance(record, dict) else None
        if isinstance(names, list) and len(names) == final.config.players:
            names = [_text(n, f"hanablive.players[{i}]") for i, n in enumerate(names)]
        else:
            names = [f"player_{i}" for i in range(final.config.players)]
        seats = [Seat(name=n) for n in names]
        return Game(new_game_id(), "replay", start, seats, None,
                    script=final.move_history, deal="record",
                    record={"kind": "hanablive", "moves": final.num_moves_played,
                            "score": final.score})

    def _jsonl(self, line, where: str) -> Game:
        """Re-deal the logged game from the evaluation stream and re-run its method: the
        log holds no moves, and every method is deterministic given its spec (and its
        search moves within `move_seconds`)."""
        if not isinstance(line, dict):
            raise _bad(f"{where} must be one line of a compare --jsonl log (an object with "
                       f"'key', 'game' and 'result')")
        key = line.get("key")
        if not isinstance(key, str):
            raise _bad(f"{where}.key must be the key string of a compare --jsonl line")
        try:
            fields = loads(key)
        except (ValueError, RecursionError) as err:
            raise _bad(f"{where}.key is not JSON: {err}") from None
        if not (isinstance(fields, list) and len(fields) == 3 and isinstance(fields[0], dict)
                and isinstance(fields[1], dict)):
            raise _bad(f"{where}.key must be [method spec, variant, run seed] (a compare "
                       f"--jsonl key)")
        spec_fields, config_kwargs, run_seed = fields
        run_seed = _int(run_seed, f"{where}.key[2] (run seed)", 0, MAX_SEED - 1)
        try:
            config = HanabiConfig(**config_kwargs)
        except (ValueError, TypeError) as err:
            raise _bad(f"{where}.key[1] (variant): {err}") from None
        spec_where = f"{where}.key[0]"
        self.check_spec(spec_fields.get("blueprint", "strong"), f"{spec_where}.blueprint")
        seats = spec_fields.get("search_seats", [0])
        if not isinstance(seats, list) or not (seats == ["all"] or all(
                is_int(p) and 0 <= p < config.players
                for p in seats)):
            raise _bad(f"{spec_where}.search_seats must be [\"all\"] or a list of seats in "
                       f"[0, {config.players}), got {_shown(seats)}")
        try:
            spec = MethodSpec.from_dict(dict(spec_fields, search_seats=tuple(seats)))
        except (ValueError, TypeError) as err:
            raise _bad(f"{spec_where}: {err}") from None
        spec = MethodSpec(spec.method, blueprint=spec.blueprint, search_seats=spec.search_seats,
                          search=self.limited(spec.search, spec_where))
        game_index = _int(line.get("game"), f"{where}.game", 0, MAX_GAMES - 1)
        result = line.get("result", {})
        if not isinstance(result, dict):
            raise _bad(f"{where}.result must be an object")
        score, moves = result.get("score"), result.get("moves")
        for name, value in (("score", score), ("moves", moves)):
            if value is not None:
                _int(value, f"{where}.result.{name}", 0, 10**6)
        method = line.get("method", spec.method)
        method = _text(method, f"{where}.method")
        state = deal(config, game_index, run_seed=run_seed, name=f"{where}.game")
        searching = () if spec.method == "blueprint" else (
            range(config.players) if spec.search_seats == ("all",) else spec.search_seats)
        blueprint, _ = _build(MethodSpec(method="blueprint", blueprint=spec.blueprint), config,
                              spec_where)
        seats = []
        for p in range(config.players):
            if p in searching:
                _, searcher = _build(spec, config, spec_where)
                seats.append(Seat(name=f"{blueprint.spec} + {searcher.name}",
                                  blueprint=blueprint, searcher=searcher,
                                  search=searcher.name, spec=spec.blueprint,
                                  rollouts=spec.rollouts))
            else:
                seats.append(Seat(name=str(blueprint.spec), blueprint=blueprint,
                                  spec=spec.blueprint))
        return Game(new_game_id(), "replay", state, seats, game_index,
                    deal="record",
                    record={"kind": "jsonl", "method": method, "run_seed": run_seed,
                            "game": game_index, "score": score, "moves": moves,
                            "replayed_by": "re-running the method on the re-dealt game"})
