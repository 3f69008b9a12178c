"""Regenerate RESULTS.md: run every figure's command and record what printed it.

    python benchmarks/run_all.py --quick            # every section, small sizes (minutes)
    python benchmarks/run_all.py --full             # the sizes RESULTS.md quotes (hours)
    python benchmarks/run_all.py --full --only search-strong,paper-scale

Each section is one shell command run from the repository root; its output is stored
verbatim with the command, the machine, the load average before and after, the revision
and the date, in benchmarks/results.json. RESULTS.md is then written from that file, so a
section run alone (`--only`) replaces its own entry and keeps the others (each entry
says when and on which revision it was measured).
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORE = os.path.join(ROOT, "benchmarks", "results.json")
RESULTS = os.path.join(ROOT, "RESULTS.md")
PY = "python"

# name -> (title, what it shows, quick command, full command)
COMPARE = "OMP_NUM_THREADS=1 lbs-pz compare --backend inline --no-progress"   # one core
WALKTHROUGH_BP = "py:examples/my_blueprint.py:HintPlayDiscard"
FAST = "--pruning threshold --search-precision bfloat16"    # the fast search settings


def speed_section(net: str, adjective: str) -> tuple:
    """LBS-16 at 256 worlds per decision on a shipped neural blueprint: seconds per game
    with the search's defaults, then with threshold pruning and bfloat16 rollouts."""
    spec = f"{COMPARE} --blueprint lstm:{net} --belief learned"
    return (
        f"LBS-16 at 256 worlds on the {adjective} blueprint: seconds per game",
        f"{net} with 256 sampled worlds per decision and its learned belief alone, on the "
        "same evaluation deals, twice: with the search's defaults (pruning by means, the "
        "blueprint's rollouts in float32), then with --pruning threshold (a move is dropped "
        "once its world-by-world difference with the best move is 2 s.e. below 0, or its "
        "world-by-world gain over the blueprint's move 2 s.e. below delta, so that it can "
        "no longer be played) and "
        "--search-precision bfloat16 (the net's rollouts in bf16; the blueprint's own moves, "
        "the reference of every gain, stay float32). One process, one core.",
        f"{spec} --methods blueprint,lbs-16 --rollouts 256 --games 1 && "
        f"{spec} --methods lbs-16 --rollouts 256 --games 1 {FAST}",
        f"{spec} --methods blueprint,lbs-16 --rollouts 256 --games 4 && "
        f"{spec} --methods lbs-16 --rollouts 256 --games 4 {FAST}")


def fast_lbs16(net: str, belief: str, worlds: int, games: int, extra: str = "",
               methods: str = "blueprint,lbs-16") -> str:
    """One compare command: LBS-16 (with `methods`) on lstm:NET in the FAST settings, then
    the `extra` options (e.g. " --delta 0.5")."""
    return (f"{COMPARE} --blueprint lstm:{net} --belief {belief} --methods {methods} "
            f"--rollouts {worlds} --games {games} {FAST}{extra}")


def value_stream_searches(net: str, method: str = "lbs-1", delta: str = "0.75",
                          deep_belief: str = "learned", deep_extra: str = "") -> tuple:
    """(quick, full) commands of a value-stream net's search figures: METHOD at --delta
    DELTA with the learned belief alone and with learned+cf, then LBS-16 with
    `deep_belief` in the fast settings (and `deep_extra`); 2 deals at 16 worlds, or 300
    at 32."""
    return tuple(" && ".join([
        f"{COMPARE} --blueprint lstm:{net} --belief {belief} --methods blueprint,{method} "
        f"--rollouts {worlds} --games {games} --delta {delta}"
        for belief in ("learned", "learned+cf")] + [
        fast_lbs16(net, deep_belief, worlds, games, deep_extra)])
        for worlds, games in ((16, 2), (32, 300)))


def deviation_checks(runs, games: int) -> tuple:
    """(quick, full) commands of a section that chains benchmarks/deviation_check.py runs,
    one per string of options in `runs`: one tiny game each, or `games` games each."""
    return tuple(" && ".join(f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py {run} "
                             f"{size}" for run in runs)
                 for size in ("--rollouts 16 --games 1 --check-worlds 16", f"--games {games}"))


def lbs_sections(key: str, net: str, adjective: str, what: str) -> dict:
    """The four search sections (search-KEY[-inf][-cf]) of a shipped neural blueprint
    `net` ("the ADJECTIVE neural blueprint" in the titles) with its own learned
    belief: LBS-1/4/16, then LBS-inf, with the belief alone (the paper's setting) and
    filtered through the blueprint (learned+cf); 300 evaluation deals, 32 worlds."""
    spec = f"{COMPARE} --blueprint lstm:{net}"
    depths = ("--methods blueprint,lbs-1,lbs-16 --rollouts 16 --games 2",
              "--methods blueprint,lbs-1,lbs-4,lbs-16 --rollouts 32 --games 300")
    to_end = ("--methods blueprint,lbs-inf --rollouts 16 --games 2",
              "--methods blueprint,lbs-inf --rollouts 32 --games 300")
    cf = ("the learned belief's samples filtered counterfactually through the blueprint (a "
          "sampled hand is kept only if the blueprint, holding it, would have made the "
          "partner-visible moves that were made)")
    return {
        f"search-{key}": (
            f"LBS on the {adjective} neural blueprint with the learned belief alone",
            what, *(f"{spec} --belief learned {m}" for m in depths)),
        f"search-{key}-inf": (
            f"LBS-inf on the {adjective} neural blueprint with the learned belief alone",
            f"As search-{key}, rollouts to the end of the game: no value is used, so this row "
            "does not depend on the net's value head.",
            *(f"{spec} --belief learned {m}" for m in to_end)),
        f"search-{key}-cf": (
            f"LBS on the {adjective} neural blueprint with learned+cf",
            f"As search-{key}, with {cf}; the same evaluation deals.",
            *(f"{spec} --belief learned+cf {m}" for m in depths)),
        f"search-{key}-inf-cf": (
            f"LBS-inf on the {adjective} neural blueprint with learned+cf",
            f"As search-{key}-inf, with {cf}.",
            *(f"{spec} --belief learned+cf {m}" for m in to_end)),
    }


def neural_net_sections(key: str, net: str, adjective: str, what: str) -> dict:
    """Every section of a shipped neural blueprint `net` after the distilled one's:
    KEY (self-play and its own value; `what` says what the net is), the four search
    sections (`lbs_sections`), deviation-KEY, search-KEY-speed and belief-KEY."""
    value_check = f"OMP_NUM_THREADS=1 {PY} benchmarks/value_check.py --blueprint lstm:{net}"
    deviations = f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --blueprint lstm:{net}"
    ranking = f"OMP_NUM_THREADS=1 {PY} benchmarks/value_ranking.py --blueprint lstm:{net}"

    def quality(games: int) -> str:
        return (f"OMP_NUM_THREADS=1 lbs-pz belief-quality --blueprint lstm:{net} --beliefs "
                f"grounded,learned --games {games} --no-progress --plot results/belief_{key}.png")

    return {
        key: (
            f"The {adjective} neural blueprint: self-play and its own value", what,
            f"OMP_NUM_THREADS=1 lbs-pz eval --blueprint lstm:{net} --games 100 --no-progress "
            f"&& {value_check} --games 100 --moves 0,20",
            f"OMP_NUM_THREADS=1 lbs-pz eval --blueprint lstm:{net} --games 1000 --no-progress "
            f"&& {value_check} --games 1000"),
        **lbs_sections(
            key, net, adjective,
            f"The paper's setting as in search-distilled, on {net}: its own learned belief "
            f"(belief_{net}) alone, no separate value (LBS-k bootstraps with the net's Q), "
            "seat 0 searching, 32 worlds per decision, the same evaluation deals."),
        f"deviation-{key}": (
            f"Where LBS-k's deviations on the {adjective} blueprint go wrong: value or belief",
            f"benchmarks/deviation_check.py as in deviation-check, on {net} with its own "
            "learned belief: LBS-1 on 12 games, then LBS-16 on 8.",
            f"{deviations} --depth 1 --games 1 --check-worlds 32",
            f"{deviations} --depth 1 --games 12 && {deviations} --depth 16 --games 8"),
        f"value-ranking-{key}": (
            f"How the {adjective} blueprint's own value ranks every candidate move",
            f"benchmarks/value_ranking.py on {net} with its own learned belief: at each of "
            "seat 0's decisions in the blueprint's games, every legal move scored as LBS-k "
            "scores it and by rollouts to the end in the same 32 worlds (same hands, same "
            "decks), for LBS-1 then LBS-16 on 8 evaluation deals: the value's error per "
            "candidate move, its spread net of the worlds' noise, and what the largest "
            "claimed gain is really worth (the winner's curse).",
            f"{ranking} --depth 1 --games 1 --worlds 8",
            f"{ranking} --depth 1 --games 8 && {ranking} --depth 16 --games 8"),
        f"search-{key}-speed": speed_section(net, adjective),
        f"pruning-{key}": (
            f"What each pruning rule saves on the {adjective} blueprint, and whether it "
            "changes the move",
            f"benchmarks/pruning_check.py on {net} with its own learned belief, LBS-16 at 256 "
            "worlds in bfloat16 as in search-KEY-speed: at each of seat 0's decisions in the "
            "blueprint's games on 4 evaluation deals, one search per rule on the same worlds "
            "(same hands, same decks), off (every move in every world) and each rule in a "
            "rotating order: rollouts and seconds per decision, and the decisions whose move "
            "differs from off's; then off and threshold again without refilled batches "
            "(--no-refill).".replace("KEY", key),
            f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint lstm:{net} "
            "--depth 16 --worlds 64 --games 1 --search-precision bfloat16",
            f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint lstm:{net} "
            "--depth 16 --worlds 256 --games 4 --search-precision bfloat16 && "
            f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint lstm:{net} "
            "--depth 16 --worlds 256 --games 4 --search-precision bfloat16 --rules threshold "
            "--no-refill"),
        f"belief-{key}": (
            f"The learned belief of the {adjective} blueprint against the grounded one",
            f"`lbs-pz belief-quality` as in belief-distilled, over {net}'s self-play games on "
            "evaluation deals (the exact belief left out for the same reason).",
            quality(20), quality(500)),
    }


SECTIONS = {
    "engine": (
        "Engine throughput against HLE",
        "Batched random play, single-state steps, clones and batched encoding, side by side "
        "with HLE's C++ core and rl_env in the same run (HLE's core is compiled from its PyPI "
        "sdist into ~/.cache on first use).",
        f"{PY} benchmarks/engine_throughput.py --quick",
        f"{PY} benchmarks/engine_throughput.py"),
    "env": (
        "Environments",
        "PettingZoo AEC play against PettingZoo's hanabi_v5 (with the [bench] extra), the "
        "SB3 VecEnv, MaskablePPO training throughput.",
        f"{PY} benchmarks/env_throughput.py --quick",
        f"{PY} benchmarks/env_throughput.py"),
    "bots": (
        "Rule-bot blueprints",
        "Self-play of every rule bot on evaluation deals (2-5 players, 6- and 7-card hands), "
        "and rollout speed.",
        f"{PY} benchmarks/bots.py --quick --no-progress",
        f"{PY} benchmarks/bots.py --no-progress"),
    "search-strong": (
        "LBS-16 on the strong bot: speed and gain",
        "Blueprint and LBS-16 (256 worlds per decision, the shipped learned belief filtered "
        "through the blueprint, the shipped value after 16 moves) on the same evaluation "
        "deals; seat 0 searches; one process, one core. s/game is wall-clock per game.",
        f"{COMPARE} --methods blueprint,lbs-16 --rollouts 256 --games 20",
        f"{COMPARE} --methods blueprint,lbs-16 --rollouts 256 --games 500"),
    "paper-scale": (
        "Paper scale: LBS-16 with 10,000 worlds per decision on the strong bot",
        "As above with 10,000 sampled worlds per decision (the paper's 10K rollouts; it "
        "reports 47 s per game on a GPU).",
        f"{COMPARE} --methods blueprint,lbs-16 --rollouts 10000 --games 1",
        f"{COMPARE} --methods blueprint,lbs-16 --rollouts 10000 --games 10"),
    "search-lstm": (
        "LBS-16 on the shipped public-LSTM blueprint",
        "256 worlds per decision; the network's own Q bootstraps after 16 moves; grounded+cf "
        "belief (no learned belief ships for this network).",
        f"{COMPARE} --blueprint lstm:public_lstm_2p --methods blueprint,lbs-16 --rollouts 256 "
        f"--games 2",
        f"{COMPARE} --blueprint lstm:public_lstm_2p --methods blueprint,lbs-16 --rollouts 256 "
        f"--games 30"),
    "sb3-train": (
        "A MaskablePPO blueprint for the SB3 figures",
        "Trains a MaskablePPO self-play policy on one core (examples/train_maskable_ppo.py) "
        "into results/maskable_ppo_2p/model.zip, which search-sb3 searches on top of.",
        f"{PY} examples/train_maskable_ppo.py --minutes 1 --threads 1 --eval-games 100 "
        f"--out results/maskable_ppo_2p",
        f"{PY} examples/train_maskable_ppo.py --minutes 10 --threads 1 --eval-games 500 "
        f"--out results/maskable_ppo_2p"),
    "search-sb3": (
        "LBS-16 on a MaskablePPO blueprint",
        "LBS-16 with 256 worlds per decision on top of the sb3-train policy; its critic "
        "bootstraps after 16 moves; grounded+cf belief (no learned belief ships for it).",
        f"{COMPARE} --blueprint sb3:results/maskable_ppo_2p/model.zip "
        f"--methods blueprint,lbs-16 --rollouts 256 --games 2",
        f"{COMPARE} --blueprint sb3:results/maskable_ppo_2p/model.zip "
        f"--methods blueprint,lbs-16 --rollouts 256 --games 30"),
    "walkthrough": (
        "Bring your own blueprint: walk-through",
        "The README's walk-through for examples/my_blueprint.py (a 20-line Python class), "
        "each step timed: its self-play score, a learned belief and a value trained for it "
        "(one core each), then blueprint vs LBS-16 with both on the same evaluation deals.",
        f"{PY} benchmarks/walkthrough.py --quick",
        f"{PY} benchmarks/walkthrough.py --belief-minutes 10 --value-minutes 5 --games 20 "
        f"--rollouts 64"),
    "lbs-defaults": (
        "LBSAgent(bp) with its defaults",
        "`LBSAgent(bp)` with no other argument, on seat 0, against the blueprint on the same "
        "evaluation deals: the strong bot (its shipped belief and value are found) and the "
        "walk-through's Python class (nothing ships for it: grounded+cf belief, rollouts to "
        "the end, 512 worlds).",
        f"{PY} benchmarks/lbs_defaults.py --blueprint strong --games 3 && "
        f"{PY} benchmarks/lbs_defaults.py --blueprint {WALKTHROUGH_BP} --games 1",
        f"{PY} benchmarks/lbs_defaults.py --blueprint strong --games 30 && "
        f"{PY} benchmarks/lbs_defaults.py --blueprint {WALKTHROUGH_BP} --games 8"),
    "hardening": (
        "Misuse and soak",
        "Every misuse case of benchmarks/misuse.py (read-only and wrong out arrays, None and "
        "wrong types, objects never initialised, corrupted pickles, threads sharing one "
        "object, malformed hanab.live records and SB3 zips, bad env actions and seeds), each "
        "in its own child process: a signal exit is a crash (goal 0). Then resident memory "
        "after warm-up over long runs (benchmarks/soak.py).",
        f"{PY} benchmarks/misuse.py && {PY} benchmarks/soak.py --quick",
        f"{PY} benchmarks/misuse.py && {PY} benchmarks/soak.py"),
    "distill": (
        "Distilling the strong bot into the public-LSTM net (one core)",
        "`lbs_pz.train.distill` on one core for a fixed wall-clock budget: held-out move "
        "agreement with the teacher and greedy self-play along the way (200 EVAL deals), "
        "then `lbs-pz eval` of the result on 1,000 evaluation deals. The shipped "
        "distilled_strong_2p starts from this run's checkpoint (see lbs_pz/models/README.md).",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --minutes 1 --eval-every 100 "
        f"--out results/distill/quick.pt && lbs-pz eval --blueprint lstm:results/distill/quick.pt "
        f"--games 100 --no-progress",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --minutes 30 --eval-every 1000 "
        f"--out results/distill/distill_strong.pt && OMP_NUM_THREADS=1 lbs-pz eval "
        f"--blueprint lstm:results/distill/distill_strong.pt --games 1000 --no-progress"),
    "distill-conventions": (
        "Distilling the strong bot with the conventions' reading as an input (one core)",
        "The distill section's run with `--conventions`: the net's private stream also "
        "reads `convention_features`, the strong bot's conventions' reading of the position "
        "seen by the seat (cards promised playable by earlier hints, queued plays, chops, "
        "the effect of each hint), a fold over the public history that the LSTM otherwise "
        "has to learn, and each hint move's advantage adds a weighing of that hint's "
        "features set by the context (the hint head: one rule for every hint, as the bot "
        "scores them). Same teacher, deals, budget and evaluation as the distill section.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --conventions --minutes 1 "
        f"--eval-every 100 --out results/distill/quick_conventions.pt && lbs-pz eval "
        f"--blueprint lstm:results/distill/quick_conventions.pt --games 100 --no-progress",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --conventions --minutes 30 "
        f"--eval-every 1000 --out results/distill/distill_conventions.pt && "
        f"OMP_NUM_THREADS=1 lbs-pz eval --blueprint lstm:results/distill/distill_conventions.pt "
        f"--games 1000 --no-progress"),
    "finetune": (
        "RL fine-tuning from the distilled start (one core)",
        "`lbs-pz train-blueprint --init` from the distill section's checkpoint with the "
        "fine-tuning preset (lr 5e-5, small exploration, a margin toward the start net's "
        "moves), greedy self-play on 500 evaluation deals every 400 updates; prints the "
        "start, the lowest and the last evaluation. The 60-minute run of the full command "
        "(curve in docs/finetune/, its printed output in docs/finetune/finetune60.txt) was "
        "run on its own, not through this script; the entry below is the quick mode (a "
        "1-minute distilled start, fine-tuned for 2 minutes).",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/finetune.py --quick --out-dir results/finetune_quick",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/finetune.py --init results/distill/distill_strong.pt "
        f"--out-dir results/finetune --name finetune60 --threads 1"),
    "value-distilled": (
        "How right the distilled blueprint's own value is where LBS-k uses it",
        "benchmarks/value_check.py on the shipped distilled blueprint (distilled_strong_2p): "
        "its value (score + the greedy Q of every seat) after a move at move number t, "
        "against the final score the blueprint then reaches, on evaluation deals. LBS-k "
        "bootstraps with this value (the search sections below).",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/value_check.py --games 100 --moves 0,20",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/value_check.py --games 1000"),
    **lbs_sections(
        "distilled", "distilled_strong_2p", "distilled",
        "The shipped distilled blueprint (distilled_strong_2p) with the learned belief trained "
        "on its own games (belief_distilled_strong_2p) used alone, as in the paper (no "
        "counterfactual filter), and NO separate value: LBS-k bootstraps with the net's own "
        "Q (score + the greedy Q of every seat; how right it is: value-distilled). Blueprint "
        "vs LBS-k on the same evaluation deals; seat 0 searches, 32 worlds per decision."),
    "deviation-check": (
        "Where LBS-k's deviations on the distilled blueprint go wrong: value or belief",
        "benchmarks/deviation_check.py: seat 0's decisions in the blueprint's own games on "
        "evaluation deals; wherever LBS-k (the learned belief alone, the net's own value, 32 "
        "worlds) would deviate, its move's gain over the blueprint's move as the search "
        "claimed it, re-measured by rollouts to the end in 256 worlds sampled from the same "
        "belief, and in 256 re-dealt decks with the seat's true hand. claimed - belief is the "
        "value's error; belief - true is the belief's. LBS-1 on 12 games, then LBS-16 on 8.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --depth 1 --games 1 "
        f"--check-worlds 32",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --depth 1 --games 12 && "
        f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --depth 16 --games 8"),
    "search-distilled-speed": speed_section("distilled_strong_2p", "distilled"),
    "belief-distilled": (
        "The learned belief of the distilled blueprint against the grounded one",
        "`lbs-pz belief-quality`: per-card cross-entropy of the true hand under each belief "
        "over the distilled blueprint's self-play games on evaluation deals, by move number. "
        "The exact belief (the true posterior given the blueprint's policy) is left out: for "
        "a neural blueprint it must run the net on every hand still possible (about 9M at "
        "the deal) at each of the partner's moves, and one game did not finish in 3 minutes "
        "on one core.",
        "OMP_NUM_THREADS=1 lbs-pz belief-quality --blueprint lstm:distilled_strong_2p "
        "--beliefs grounded,learned --games 20 --no-progress "
        "--plot results/belief_distilled.png",
        "OMP_NUM_THREADS=1 lbs-pz belief-quality --blueprint lstm:distilled_strong_2p "
        "--beliefs grounded,learned --games 500 --no-progress "
        "--plot results/belief_distilled.png"),
    **neural_net_sections(
        "finetuned", "finetuned_strong_2p", "fine-tuned",
        "finetuned_strong_2p is the finetune section's 60-minute run (Q-learning from the "
        "distilled start), shipped as is: `lbs-pz eval` of it on 1,000 evaluation deals, then "
        "benchmarks/value_check.py as for the distilled net (value-distilled). Its Q was "
        "trained by TD, not only fitted to the blueprint's own returns."),
    "search-finetuned-delta": (
        "LBS-1 on the fine-tuned neural blueprint with a larger deviation threshold",
        "As search-finetuned (the learned belief alone, the net's own Q, 32 worlds, the same "
        "300 evaluation deals), LBS-1 deviating only when its paired gain exceeds 1.0 point "
        "(--delta 1.0) instead of the paper's 0.05: a test of whether LBS-1 loses because "
        "its many deviations compound (each alone is worth about +0.07; "
        "deviation-finetuned). 1.0 was chosen on 150 evaluation deals of run seed 1, which "
        "no figure uses, among 0.05, 0.25, 0.5 and 1.0 (docs/finetune/delta_seed1.md).",
        f"{COMPARE} --blueprint lstm:finetuned_strong_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 16 --games 2 --delta 1.0",
        f"{COMPARE} --blueprint lstm:finetuned_strong_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 32 --games 300 --delta 1.0"),
    "search-finetuned-delta-deeper": (
        "LBS-4 and LBS-16 on the fine-tuned neural blueprint with the same threshold",
        "As search-finetuned-delta (--delta 1.0, chosen for LBS-1), LBS-4 and LBS-16 on the "
        "same 300 deals, against their figures with the paper's 0.05 in search-finetuned.",
        f"{COMPARE} --blueprint lstm:finetuned_strong_2p --belief learned "
        f"--methods blueprint,lbs-4 --rollouts 16 --games 2 --delta 1.0",
        f"{COMPARE} --blueprint lstm:finetuned_strong_2p --belief learned "
        f"--methods blueprint,lbs-4,lbs-16 --rollouts 32 --games 300 --delta 1.0"),
    **neural_net_sections(
        "conventions", "conventions_strong_2p", "convention-feature",
        "conventions_strong_2p is the distill-conventions section's 30-minute net (the strong "
        "bot imitated with the conventions' reading as an input and the hint head), its value "
        "head then refitted on its own games with every move unchanged, as for "
        "distilled_strong_2p: `lbs-pz eval` of it on 1,000 evaluation deals, then "
        "benchmarks/value_check.py as for the other nets."),
    "search-conventions-delta": (
        "LBS-1 on the convention-feature neural blueprint with the larger deviation threshold",
        "As search-conventions, LBS-1 with --delta 1.0, the threshold chosen for the "
        "fine-tuned net (search-finetuned-delta), not tuned on this net.",
        f"{COMPARE} --blueprint lstm:conventions_strong_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 16 --games 2 --delta 1.0",
        f"{COMPARE} --blueprint lstm:conventions_strong_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 32 --games 300 --delta 1.0"),
    **neural_net_sections(
        "conventions-maxq", "conventions_maxq_2p", "max-centred convention-feature",
        "conventions_maxq_2p is conventions_strong_2p with every weight of its moves unchanged "
        "and its Q re-centred on the best legal move (PublicLSTMNet dueling=\"max\": Q = V + A "
        "- max over legal A, so the net's value is score + the seats' V, without the logit "
        "margin max A - mean A that the mean-centred value carries), its value head refitted "
        "on its own games (lbs_pz/models/README.md): `lbs-pz eval` of it on 1,000 evaluation "
        "deals, then benchmarks/value_check.py as for the other nets."),
    "search-conventions-maxq-delta": (
        "LBS-1 on the max-centred convention-feature blueprint with the larger threshold",
        "As search-conventions-maxq, LBS-1 with --delta 1.0, chosen on 150 evaluation deals of "
        "run seed 1, which no figure uses, among 0.5, 1.0 and 2.0 "
        "(docs/finetune/delta_maxq_seed1.md).",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 16 --games 2 --delta 1.0",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 32 --games 300 --delta 1.0"),
    "deviation-conventions-follow": (
        "LBS-16's deviations in its own games, with either value of the convention-feature net",
        "benchmarks/deviation_check.py --follow search: as deviation-conventions (LBS-16, the "
        "learned belief alone, 32 worlds, 8 evaluation deals), but seat 0 plays the search's "
        "move, so the positions are those of the search's own games, where earlier deviations "
        "have left the blueprint's path; each deviation still measured against the "
        "blueprint's move by rollouts to the end. First conventions_strong_2p (mean-centred "
        "value), then conventions_maxq_2p (max-centred).",
        *deviation_checks([f"--blueprint lstm:{net} --depth 16 --follow search"
                           for net in ("conventions_strong_2p", "conventions_maxq_2p")], 8),
    ),
    "deviation-conventions-maxq-delta": (
        "What LBS-1's deviations at --delta 1.0 on the max-centred convention-feature "
        "blueprint are worth",
        "benchmarks/deviation_check.py with LBS-1 as search-conventions-maxq-delta runs it "
        "(the learned belief alone, 32 worlds, --delta 1.0) on conventions_maxq_2p, 40 "
        "evaluation deals: first in the blueprint's own games, then in the search's own "
        "games (--follow search); each deviation's claimed gain against rollouts to the end "
        "with the belief's hands and with the true hand.",
        *deviation_checks([f"--blueprint lstm:conventions_maxq_2p --depth 1 --delta 1.0 "
                           f"--follow {follow}" for follow in ("blueprint", "search")], 40),
    ),
    "conventions-expert": (
        "A neural blueprint that learned LBS-16's moves: self-play against its start and the "
        "strong bot",
        "conventions_expert_2p is conventions_maxq_2p after 600 updates of `lbs-pz distill "
        "--search-games` on 1,475 of LBS-16's own games on training deals (learned+cf, 32 "
        "worlds, at seat game % 2; the search's moves weighted 30 where it left the "
        "blueprint's), chosen on run seed 1's evaluation deals (docs/finetune/"
        "search_distill.md; lbs_pz/models/README.md). Greedy self-play of the start net, the "
        "new net and the strong rule bot on the same evaluation deals of run seed 0, paired "
        "with the start net, then the new net paired with the strong bot.",
        *(f"OMP_NUM_THREADS=1 {PY} benchmarks/self_play_pair.py --blueprints "
          f"lstm:conventions_maxq_2p,lstm:conventions_expert_2p,strong --games {n} && "
          f"OMP_NUM_THREADS=1 {PY} benchmarks/self_play_pair.py --blueprints "
          f"strong,lstm:conventions_expert_2p --games {n}" for n in (200, 5000))),
    "search-conventions-expert": (
        "LBS-16 on the blueprint that learned LBS-16's moves",
        "LBS-16 on conventions_expert_2p with its own belief (belief_conventions_expert_2p), "
        "32 worlds, --pruning threshold --search-precision bfloat16, on the 300 evaluation "
        "deals of the search figures: first with learned+cf (LBSAgent's default), then with "
        "the learned belief alone (the paper's setting). Its value head was fitted to its "
        "start net's returns, not its own.",
        *(" && ".join(fast_lbs16("conventions_expert_2p", belief, worlds, games)
                      for belief in ("learned+cf", "learned"))
          for worlds, games in ((16, 2), (32, 300))),
    ),
    "search-conventions-expert-value": (
        "LBS-1 and LBS-16 on the expert blueprint with a value of its own",
        "conventions_expert_value_2p is conventions_expert_2p with every move unchanged and "
        "a value that reads a public LSTM of its own (PublicLSTMNet value_lstm), fitted on "
        "its own games (docs/finetune/value_stream.md; lbs_pz/models/README.md), with the "
        "expert's belief carried over. On the 300 evaluation deals of the search figures: "
        "LBS-1 with the learned belief alone at --delta 0.75 (chosen on run seed 1's deals), "
        "then with learned+cf; then LBS-16 with the learned belief alone in "
        "search-conventions-expert's settings (32 worlds, --pruning threshold "
        "--search-precision bfloat16).",
        *value_stream_searches("conventions_expert_value_2p"),
    ),
    "search-conventions-expert-value-speed": speed_section(
        "conventions_expert_value_2p", "value-stream expert"),
    "search-conventions-expert-value-900": (
        "LBS-1 on the expert blueprint with a value of its own, over 900 deals",
        "search-conventions-expert-value's first run (LBS-1, the learned belief alone, "
        "--delta 0.75, 32 worlds) on evaluation deals 0-899 of run seed 0, the first 300 "
        "being that section's: its +0.26 +- 0.15 there was positive at 1.75 s.e., and this "
        "run, made after it, has three times the deals.",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 16 --games 2 --delta 0.75",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --belief learned "
        f"--methods blueprint,lbs-1 --rollouts 32 --games 900 --delta 0.75"),
    "search-conventions-expert-value-lbs16-600": (
        "LBS-16 on the expert blueprint with a value of its own, over 600 deals",
        "search-conventions-expert-value's LBS-16 (the learned belief alone, 32 worlds, "
        "--pruning threshold --search-precision bfloat16) on evaluation deals 0-599 of run "
        "seed 0, the first 300 being that section's (+0.30 +- 0.15 there, 2.0 s.e.); run "
        "after it, with twice the deals.",
        fast_lbs16("conventions_expert_value_2p", "learned", 16, 2),
        fast_lbs16("conventions_expert_value_2p", "learned", 32, 600)),
    "search-conventions-maxq-value": (
        "LBS-1 and LBS-16 on the max-centred convention-feature blueprint with a value of "
        "its own",
        "conventions_maxq_value_2p is conventions_maxq_2p with every move unchanged and a "
        "value that reads a public LSTM of its own, fitted on its own games as for "
        "conventions_expert_value_2p (lbs_pz/models/README.md), with conventions_maxq_2p's "
        "belief carried over. On the 300 evaluation deals of the search figures: LBS-1 with "
        "the learned belief alone at --delta 0.75 (chosen on run seed 1's deals), then with "
        "learned+cf; then LBS-16 with the learned belief alone in "
        "search-conventions-expert-value's settings (32 worlds, --pruning threshold "
        "--search-precision bfloat16).",
        *value_stream_searches("conventions_maxq_value_2p"),
    ),
    "search-conventions-maxq-value-lbs16-900": (
        "LBS-16 on the max-centred convention-feature blueprint with a value of its own, "
        "over 900 deals",
        "search-conventions-maxq-value's LBS-16 (the learned belief alone, 32 worlds, "
        "--pruning threshold --search-precision bfloat16) on evaluation deals 0-899 of run "
        "seed 0, the first 300 being that section's (+0.31 +- 0.11 there, 2.8 s.e.); run "
        "after it, with three times the deals.",
        fast_lbs16("conventions_maxq_value_2p", "learned", 16, 2),
        fast_lbs16("conventions_maxq_value_2p", "learned", 32, 900)),
    "search-conventions-maxq-value-lbs16-delta": (
        "LBS-16 on the max-centred convention-feature blueprint with a value of its own, at "
        "the deviation threshold chosen on run seed 1",
        "search-conventions-maxq-value's LBS-16 (the learned belief alone, 32 worlds, "
        "--pruning threshold --search-precision bfloat16) with --delta 0.5 instead of 0.05, "
        "on the same 300 evaluation deals. 0.5 had the largest gain of 0.05, 0.25, 0.5 and "
        "1.0 on run seed 1's first 150 deals (docs/finetune/value_stream.md), chosen by "
        "that rule before this run.",
        fast_lbs16("conventions_maxq_value_2p", "learned", 16, 2, " --delta 0.5"),
        fast_lbs16("conventions_maxq_value_2p", "learned", 32, 300, " --delta 0.5")),
    "search-conventions-maxq-value-depths": (
        "LBS-4, and LBS-16 with learned+cf, on the max-centred convention-feature blueprint "
        "with a value of its own",
        "What completes search-conventions-maxq-value and -lbs16-delta on the same 300 "
        "evaluation deals and 32 worlds: LBS-4 with the learned belief alone at --delta 0.5 "
        "(the largest gain of 0.25, 0.5, 0.75 and 1.0 on run seed 1's first 150 deals, "
        "docs/finetune/value_stream.md, chosen before this run), then LBS-4 and LBS-16 "
        "(--pruning threshold --search-precision bfloat16) with learned+cf at the same "
        "--delta 0.5.",
        *value_stream_searches("conventions_maxq_value_2p", "lbs-4", "0.5", "learned+cf",
                               " --delta 0.5"),
    ),
    "search-conventions-maxq-value-speed": speed_section(
        "conventions_maxq_value_2p", "value-stream max-centred convention-feature"),
    "search-conventions-maxq-value-speed-delta": (
        "LBS-16 at 256 worlds on the max-centred convention-feature blueprint with a value "
        "of its own, at --delta 0.5: seconds per game",
        "search-conventions-maxq-value-speed's fast run (256 worlds, --pruning threshold "
        "--search-precision bfloat16, the same 4 deals), with the default --delta 0.05 and "
        "then with search-conventions-maxq-value-lbs16-delta's --delta 0.5: the threshold "
        "rule drops a move once its gain over the blueprint's move is 2 s.e. below delta, "
        "so a larger delta stops rolling out more moves sooner. One process, one core.",
        *(" && ".join(fast_lbs16("conventions_maxq_value_2p", "learned", 256, games, delta,
                                 methods="lbs-16") for delta in ("", " --delta 0.5"))
          for games in (1, 4)),
    ),
    "search-conventions-256": (
        "LBS-16 at 256 worlds on the convention-feature blueprint",
        "What search-conventions-speed times, played on 100 evaluation deals against the "
        "blueprint (paired, the same deals), with the learned belief alone: first at 32 "
        "worlds with the defaults (float32, pruning by means: the setting of "
        "search-conventions, whose first 100 deals these are), then at 256 worlds with "
        "--pruning threshold and --search-precision bfloat16 (the timed fast settings), then "
        "at 256 worlds with --pruning threshold in float32 (which separates the bf16 "
        "rollouts from the number of worlds).",
        *(" && ".join(
            f"{COMPARE} --blueprint lstm:conventions_strong_2p --belief learned --methods "
            f"{methods} --games {games} {options}"
            for methods, options in (
                ("blueprint,lbs-16", f"--rollouts {few}"),
                ("lbs-16", f"--rollouts {many} --pruning threshold --search-precision bfloat16"),
                ("lbs-16", f"--rollouts {many} --pruning threshold")))
          for few, many, games in ((16, 64, 2), (32, 256, 100))),
    ),
    "pruning-strong": (
        "What each pruning rule saves on the strong bot, and whether it changes the move",
        "benchmarks/pruning_check.py as in pruning-conventions, on the strong bot with the "
        "grounded belief and its shipped value after 16 moves, 256 worlds, 4 of its games: "
        "a rule bot's rollouts cost the same per world in any batch, so its batches are "
        "not refilled.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint strong --belief "
        "grounded --depth 16 --worlds 64 --games 1",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint strong --belief "
        "grounded --depth 16 --worlds 256 --games 4"),
    "search-conventions-256-cf": (
        "LBS-16 at 256 worlds on the convention-feature blueprint with learned+cf",
        "As search-conventions-256's fast row (256 worlds, --pruning threshold, "
        "--search-precision bfloat16, the same 100 deals), with the learned belief's samples "
        "filtered counterfactually through the blueprint.",
        f"{COMPARE} --blueprint lstm:conventions_strong_2p --belief learned+cf --methods "
        f"blueprint,lbs-16 --games 2 --rollouts 64 --pruning threshold "
        f"--search-precision bfloat16",
        f"{COMPARE} --blueprint lstm:conventions_strong_2p --belief learned+cf --methods "
        f"blueprint,lbs-16 --games 100 --rollouts 256 --pruning threshold "
        f"--search-precision bfloat16"),
    "search-conventions-maxq-delta-cf": (
        "LBS-1 on the max-centred convention-feature blueprint with the larger threshold and "
        "learned+cf",
        "As search-conventions-maxq-delta (--delta 1.0, chosen on run seed 1's deals for the "
        "learned belief alone; on those deals with learned+cf: +0.21 +- 0.08, "
        "docs/finetune/delta_maxq_seed1.md), with the learned belief's samples filtered "
        "counterfactually through the blueprint, on the same 300 evaluation deals.",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned+cf "
        f"--methods blueprint,lbs-1 --rollouts 16 --games 2 --delta 1.0",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned+cf "
        f"--methods blueprint,lbs-1 --rollouts 32 --games 300 --delta 1.0"),
    "search-conventions-maxq-256-cf": (
        "LBS-16 at 256 worlds on the max-centred convention-feature blueprint with learned+cf",
        "As search-conventions-256-cf (256 worlds, --pruning threshold, --search-precision "
        "bfloat16, learned+cf, the same first 100 evaluation deals), on conventions_maxq_2p.",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned+cf --methods "
        f"blueprint,lbs-16 --games 2 --rollouts 64 --pruning threshold "
        f"--search-precision bfloat16",
        f"{COMPARE} --blueprint lstm:conventions_maxq_2p --belief learned+cf --methods "
        f"blueprint,lbs-16 --games 100 --rollouts 256 --pruning threshold "
        f"--search-precision bfloat16"),
    "deviation-conventions-256": (
        "What LBS-16's deviations on the convention-feature blueprint are worth at 256 worlds",
        "benchmarks/deviation_check.py as in deviation-conventions (LBS-16, 8 games), with "
        "256 worlds per decision instead of 32: how many deviations pass the test, what "
        "the search claims for them and what rollouts to the end measure.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --blueprint "
        f"lstm:conventions_strong_2p --depth 16 --rollouts 64 --games 1 --check-worlds 32",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/deviation_check.py --blueprint "
        f"lstm:conventions_strong_2p --depth 16 --rollouts 256 --games 8"),
    "gpu": (
        "The GPU path: benchmarks/gpu_check.sh",
        "On a CUDA machine: the engine built there and its throughput on one core; then, each "
        "with `--device cuda`: the distill section's 30-minute CPU checkpoint distilled further "
        "(what ships as distilled_strong_2p), Q-learning started from that net, and a learned "
        "belief for it (the first belief_distilled_strong_2p, since replaced by one trained "
        "50 minutes on one CPU core: the GPU run was bound by playing the blueprint's games "
        "on the CPU); the nets evaluated on evaluation deals. CI never runs it; the entry "
        "below ran on a lent GPU machine and was merged with --merge.",
        "DEVICE=cpu DISTILL_MIN=0.3 TRAIN_MIN=0.3 BELIEF_MIN=0.3 EVAL_GAMES=50 CPU_THREADS=1 "
        "bash benchmarks/gpu_check.sh",
        "DISTILL_RESUME=results/distill/distill_strong.pt DISTILL_LR=5e-4 DISTILL_MIN=2.5 "
        "TRAIN_MIN=0.5 BELIEF_MIN=3 EVAL_GAMES=200 bash benchmarks/gpu_check.sh"),
    "web": (
        "The local web page: response times",
        "`lbs-pz serve` started in a child process (one core); page load (GET / and its "
        "static files) and each move's response in play mode, the human's move plus the "
        "partner's reply, with the strong bot and with strong + LBS-16 at 256 worlds.",
        f"{PY} benchmarks/web_latency.py --quick",
        f"{PY} benchmarks/web_latency.py --moves 120"),
}


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


def revision() -> str:
    if os.environ.get("LBS_PZ_REVISION"):      # a copy of the tree without .git
        return os.environ["LBS_PZ_REVISION"]
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                             capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(      # this script's own outputs do not count
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
             ":!RESULTS.md", ":!benchmarks/results.json"],
            cwd=ROOT, text=True, capture_output=True).stdout.strip()
        return rev + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_section(name: str, full: bool, workers: int = 0) -> dict:
    title, what, quick_cmd, full_cmd = SECTIONS[name]
    command = full_cmd if full else quick_cmd
    if workers:
        command = command.replace("--backend inline", f"--backend process --workers {workers}")
    print(f"== {name}: {command}", flush=True)
    load_before, rev = os.getloadavg(), revision()     # the code as it was when it ran
    start = time.perf_counter()
    env = dict(os.environ, TQDM_DISABLE="1")     # no progress bars in the record
    proc = subprocess.run(command, shell=True, cwd=ROOT, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=env)
    seconds = time.perf_counter() - start
    print(proc.stdout, flush=True)
    return {
        "title": title, "what": what, "command": command, "mode": "full" if full else "quick",
        "exit_code": proc.returncode, "output": proc.stdout.rstrip(),
        "seconds": round(seconds, 1), "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "revision": rev, "machine": machine(),
    }


def load_store() -> dict:
    if not os.path.exists(STORE):
        return {}
    with open(STORE) as f:
        return json.load(f)


def save_entry(name: str, entry: dict) -> dict:
    """Merge one section into the store under a lock: two runs with different --only
    sections may share the machine's cores and finish in any order."""
    with open(STORE + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        store = load_store()
        store[name] = entry
        with open(STORE + ".tmp", "w") as f:
            json.dump(store, f, indent=1)
        os.replace(STORE + ".tmp", STORE)
    return store


def write_results(store: dict) -> None:
    lines = [
        "# lbs_pz: measured figures",
        "",
        "Generated by `python benchmarks/run_all.py` from `benchmarks/results.json`; do not "
        "edit by hand. Each section gives the command that printed it, the machine, the load "
        "average (1, 5, 15 min) before and after, the revision and the date. Timings are "
        "wall-clock on the machine named; a load above the number of processes the section "
        "runs means other work shared the cores.",
        "",
    ]
    for name in SECTIONS:
        entry = store.get(name)
        if entry is None:
            continue
        # titles and descriptions are the current ones; numbers only come from the store
        entry = dict(entry, title=SECTIONS[name][0], what=SECTIONS[name][1])
        m = entry["machine"]
        lines += [
            f"## {entry['title']}",
            "",
            entry["what"],
            "",
            f"- command: `{entry['command']}` ({entry['mode']} mode, {entry['seconds']} s, "
            f"exit code {entry['exit_code']})",
            f"- machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['system']}",
            f"- load average before / after: {entry['load_before']} / {entry['load_after']}",
            f"- revision {entry['revision']}, {entry['date']}",
            "",
            "```",
            entry["output"],
            "```",
            "",
        ]
    with open(RESULTS, "w") as f:
        f.write("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="sections: " + ", ".join(SECTIONS))
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small sizes: minutes in all")
    mode.add_argument("--full", action="store_true", help="the sizes RESULTS.md quotes")
    parser.add_argument("--only", default="", help="comma-separated sections to run (default all)")
    parser.add_argument("--write-only", action="store_true",
                        help="rewrite RESULTS.md from benchmarks/results.json without running")
    parser.add_argument("--workers", type=int, default=0,
                        help="run every section's `lbs-pz compare` on a pool of this many "
                             "processes instead of one core (a many-core machine; the "
                             "recorded command says so, and s/game is then per worker)")
    parser.add_argument("--merge", metavar="JSON", default="",
                        help="take the --only sections' entries from another results.json "
                             "(one written by a run on another machine, e.g. a GPU one) "
                             "instead of running them")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    failed = []
    if args.merge:
        with open(args.merge) as f:
            other = json.load(f)
        missing = [n for n in names if n not in other]
        if missing or not args.only:
            parser.error(f"--merge needs --only with sections present in {args.merge}"
                         + (f" (missing: {', '.join(missing)})" if missing else ""))
        for name in names:
            save_entry(name, other[name])
    elif not args.write_only:
        for name in names:
            entry = run_section(name, args.full, args.workers)
            failed += [name] if entry["exit_code"] != 0 else []
            save_entry(name, entry)              # after every section: a crash keeps the rest
    write_results(load_store())
    print(f"wrote {RESULTS}" + (f"; failed sections: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
