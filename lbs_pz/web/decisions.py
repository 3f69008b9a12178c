"""What a search decided and why, in words, from its DECISION record (`Game.decision`):
the one line of why (`why`), a game's search summary (`summary`), and the conventions
of the seats' rule-bot blueprints (`conventions`).

Nothing here re-applies the search's rule: the record holds the test as the search ran it
(`lbs_pz.search.rollout_search.SearchResult`: the tested move and gain, `delta`, the
margin and the bar max(delta, margin)); these functions only put it into words.
"""

from __future__ import annotations

from typing import List, Optional

from lbs_pz.agents.rule_bots import RuleBot


def _num(x: Optional[float], sign: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x:+.3f}" if sign else f"{x:.3f}"


def bar_text(d: dict) -> str:
    """The bar of a decision's test: "0.212 (the larger of delta 0.050 and the margin
    0.212)"."""
    return (f"{_num(d.get('bar'))} (the larger of delta {_num(d.get('delta'))} and the "
            f"margin {_num(d.get('margin'))})")


def why(d: dict) -> str:
    """One line: deviated (the move, its gain, the bar it cleared), kept the blueprint's
    move (the best gain and the bar it missed) or fell back (the record's reason)."""
    blueprint = d.get("blueprint_move_text") or d.get("blueprint_move_name")
    if d.get("fallback"):
        reason = d.get("fallback_reason") or d.get("error") or "no reason recorded"
        return f"Fell back to the blueprint's move {blueprint}: {reason}."
    tested = d.get("tested_move_text")
    if tested is None:
        return f"Kept the blueprint's move {blueprint}: the only legal move, nothing to test."
    verified = " (re-measured to the end on fresh worlds)" if d.get("verify_gain") is not None \
        else ""
    gain = f"{_num(d.get('tested_gain'), sign=True)}{verified}"
    if d.get("deviated"):
        return (f"Deviated to {tested}: its gain {gain} over the blueprint's move "
                f"{blueprint} cleared the bar {bar_text(d)}.")
    if d.get("tested_move") == d.get("blueprint_move"):
        return (f"Kept the blueprint's move {blueprint}: no move's estimate beat it (the "
                f"bar {bar_text(d)}).")
    return (f"Kept the blueprint's move {blueprint}: the best other move, {tested}, gained "
            f"{gain}, which missed the bar {bar_text(d)}.")


def summary(decisions: dict) -> dict:
    """A game's search decisions {k: DECISION} in short: how many, the deviations (with
    their gains) and the fallbacks (with their reasons), in move order."""
    deviations, fallbacks = [], []
    for k in sorted(decisions):
        d = decisions[k]
        if d.get("fallback"):
            fallbacks.append({"k": k, "seat": d["seat"],
                              "reason": d.get("fallback_reason") or d.get("error") or ""})
        elif d.get("deviated"):
            deviations.append({"k": k, "seat": d["seat"], "move": d.get("move_text"),
                               "blueprint_move": d.get("blueprint_move_text"),
                               "gain": d.get("tested_gain"), "bar": d.get("bar")})
    return {"decisions": len(decisions), "deviations": deviations, "fallbacks": fallbacks}


def conventions(seats: list) -> List[dict]:
    """Per seat its blueprint's spec and, for a rule bot, its documented conventions
    (`RuleBot.conventions`; None for any other blueprint and for a person)."""
    out = []
    for p, seat in enumerate(seats):
        bot = seat.blueprint if isinstance(seat.blueprint, RuleBot) else None
        out.append({"seat": p, "blueprint": seat.spec,
                    "conventions": RuleBot.conventions(bot.name) if bot else None})
    return out
