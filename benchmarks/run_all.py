"""Regenerate RESULTS.md: run every figure's command and record what printed it.

    python benchmarks/run_all.py --quick            # every section, small sizes (minutes)
    python benchmarks/run_all.py --full             # the sizes RESULTS.md quotes (hours)
    python benchmarks/run_all.py --full --only search-strong,paper-scale
    python benchmarks/run_all.py --write-only       # rewrite RESULTS.md, run nothing

Each section is one shell command run from the repository root; its output is stored
verbatim with the command, the machine, the load average before and after, the revision
and the date, in benchmarks/results.json. RESULTS.md is then written from that file, so a
section run alone (`--only`) replaces its own entry and keeps the others (each entry
says when and on which revision it was measured). RESULTS.md shows the HEADLINE sections
only, each in a few lines; the others stay in benchmarks/results.json.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import time

from lbs_pz import host

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORE = os.path.join(ROOT, "benchmarks", "results.json")
RESULTS = os.path.join(ROOT, "RESULTS.md")
PY = "python"

# name -> (title, what it shows, quick command, full command)
COMPARE = "OMP_NUM_THREADS=1 lbs-pz compare --backend inline --no-progress"   # one core
WALKTHROUGH_BP = "py:examples/my_blueprint.py:HintPlayDiscard"
FAST = "--pruning threshold --search-precision bfloat16"    # the fast search settings
BF16 = f"OMP_NUM_THREADS=1 {PY} benchmarks/bf16_products.py"  # float32 and bf16 products
COMPARE_2 = COMPARE.replace("--backend inline", "--backend process --workers 2")  # two cores


def multiplayer_runs(players: int, games: int, sparta: int) -> str:
    """The strong bot's searches at `players` players, logged to one file and paired on the
    same deals (multiplayer_section); compare's own tables go to a .txt beside the log."""
    log = f"results/multiplayer_{players}p{'' if games > 2 else '_quick'}"
    c = f"{COMPARE_2} --blueprint strong --players {players} --jsonl {log}.jsonl"
    runs = (f"--methods blueprint,lbs-16 --games {games}",
            f"--methods lbs-inf --belief grounded+cf --games {games}",
            f"--methods lbs-16 --belief learned --games {games}",
            f"--methods sparta --games {sparta}",
            f"--methods lbs-16 --search-seats all --games {sparta}")
    return " && ".join([f"{c} {run} >> {log}.txt" for run in runs]
                       + [f"{PY} benchmarks/paired_log.py {log}.jsonl --table"])


def multiplayer_section(players: int) -> tuple:
    """LBS at `players` players: the new default (learned belief and value shipped for
    that game), the grounded fall-back, the paper's LBS (learned belief alone), SPARTA and
    the default on every seat, paired on the same deals."""
    return (
        f"LBS at {players} players: learned belief and value against the grounded fall-back "
        f"and SPARTA",
        f"The strong bot at {players} players (the engine's default hand size), run seed 0's "
        "evaluation deals, seat 0 searching unless said, 256 worlds, every other setting "
        "resolved: blueprint and LBS-16 with no flags (the learned belief and the value "
        "shipped for that game, learned+cf); LBS-inf with the grounded+cf belief (the "
        "fall-back before they shipped: grounded belief, rollouts to the end); LBS-16 with "
        "the learned belief alone (the paper's LBS); SPARTA (its exact belief) and LBS-16 on "
        "every seat at once on the first 100 deals. Then each against the blueprint and "
        "against the default on their shared deals (benchmarks/paired_log.py --table; "
        f"compare's own tables and notes go to results/multiplayer_{players}p.txt). Two "
        "worker processes: s/game is per worker, one core each.",
        multiplayer_runs(players, 2, 1), multiplayer_runs(players, 300, 100))


def speed_section(net: str, adjective: str) -> tuple:
    """LBS-16 at 256 worlds per decision on a shipped neural blueprint: seconds per game
    with pruning by means and float32 rollouts, then with threshold pruning and bfloat16
    rollouts."""
    spec = f"{COMPARE} --blueprint lstm:{net} --belief learned"
    return (
        f"LBS-16 at 256 worlds on the {adjective} blueprint: seconds per game",
        f"{net} with 256 sampled worlds per decision and its learned belief alone, on the "
        "same evaluation deals, twice: with --pruning means (the general default) and the "
        "blueprint's rollouts in float32, then with --pruning threshold (a move is dropped "
        "once its world-by-world difference with the best move is 2 s.e. below 0, or its "
        "world-by-world gain over the blueprint's move 2 s.e. below delta, so that it can "
        "no longer be played) and "
        "--search-precision bfloat16 (the net's rollouts in bf16; the blueprint's own moves, "
        "the reference of every gain, stay float32). One process, one core.",
        *(f"{spec} --methods blueprint,lbs-16 --rollouts 256 --games {n} --pruning means "
          f"--search-precision float32 && "
          f"{spec} --methods lbs-16 --rollouts 256 --games {n} {FAST}" for n in (1, 4)))


def precision_section(net: str) -> tuple:
    """LBS-16 with no flags on a neural blueprint, float32 and then bfloat16 rollouts, on
    the same tuning deals: does bf16 pay on this machine's CPU?"""
    spec = (f"{COMPARE} --blueprint lstm:{net} --methods lbs-16 --seed 1 "
            f"--jsonl results/precision.jsonl")
    return (
        "LBS-16's rollouts in float32 and in bfloat16: seconds per game on this CPU",
        f"LBS-16 with no flags on {net} (256 worlds, the learned belief filtered through it, "
        "threshold pruning), with --search-precision float32 (the default) and then "
        "bfloat16 (the net's rollouts in bf16; its own moves stay float32), on the same "
        "deals of run seed 1 (tuning deals, not the evaluation stream), one process on "
        "one core, nothing else running. Then one step of the net's widest products in "
        "each precision (benchmarks/bf16_products.py), on this CPU and on it limited to "
        "AVX2, as most laptops and desktops are. The machine line names AMX or AVX-512 BF16 "
        "when the CPU has them: bf16 products pay only on CPUs with fast bf16 units (AMX).",
        *(f"rm -f results/precision.jsonl && {spec} --games {n} --search-precision float32 "
          f"&& {spec} --games {n} --search-precision bfloat16 && "
          f"{PY} benchmarks/paired_log.py results/precision.jsonl --table && {BF16} && "
          f"ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 {BF16}" for n in (1, 4)))


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
    "train-sources": (
        "Training games from Ray workers",
        "train-belief on the strong bot, then on the best neural blueprint, with its games "
        "played in the learner's process and on 1 and 2 workers of a local Ray (`--backend "
        "ray`), the same run otherwise: games per second over each run's clock (Ray's start "
        "included), and whether the final weights equal the in-process run's. The learner "
        "holds one of the 2 cores.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/train_sources.py --steps 4 --games-per-step 8",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/train_sources.py --steps 60 && "
        f"OMP_NUM_THREADS=1 {PY} benchmarks/train_sources.py --steps 40 "
        f"--blueprint lstm:conventions_expert_value_2p"),
    "improve-teacher": (
        "The teacher's games of lbs-pz improve, in-process and on workers",
        "improve's default teacher, LBS-16 at 32 worlds over the best shipped network (one "
        "seat, every other setting resolved), records the same training games in this "
        "process, on 2 worker processes and on 2 workers of a local Ray: games per second "
        "over each run's wall clock (the workers' start included) and whether each "
        "recorded the in-process "
        "run's games.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/train_sources.py --teacher-games 1",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/train_sources.py --teacher-games 8"),
    "rllib-throughput": (
        "RLlib PPO sampling against MaskablePPO rollouts",
        "benchmarks/rllib_throughput.py: env steps per second of RLlib 2.60 multi-agent "
        "PPO's sampling phase (examples/rllib_ppo.py's config on the standard 2-player game: "
        "synchronous_parallel_sample of a 4,000-step train batch over 1 and then 2 env "
        "runners, one env and one CPU each, episodes back in the driver, no update), then "
        "sb3_contrib MaskablePPO's collect_rollouts on the native SB3 VecEnv with 1 and 2 "
        "games in one process (no update, torch on one thread); each timed after a warm-up, "
        "with the 1-minute load before and after it.",
        f"{PY} benchmarks/rllib_throughput.py --seconds 5",
        f"{PY} benchmarks/rllib_throughput.py --seconds 60"),
    "rllib-30min": (
        "RLlib multi-agent PPO: 30 minutes of training, and its score matched with RLlib's",
        "examples/rllib_ppo.py for 30 minutes of wall time on the standard 2-player game (one "
        "shared masked policy, one env runner, the learner in the driver on one thread), "
        "then its greedy self-play score on 300 evaluation deals of run seed 0 through "
        "`lbs-pz eval`'s evaluator (rllib:results/rllib_ppo_2p), next to RLlib's own play of "
        "the saved module on the same deals (RLModule.from_checkpoint, the training's "
        "PettingZooEnv reset with each deal's seed, greedy forward_inference): both means, "
        "the paired per-deal difference and whether every deal's score is equal "
        "(benchmarks/rllib_eval_match.py).",
        f"OMP_NUM_THREADS=1 {PY} examples/rllib_ppo.py --iterations 0 --minutes 1 "
        f"--env-runners 1 --eval-games 20 --out results/rllib_ppo_2p_quick && "
        f"{PY} benchmarks/rllib_eval_match.py results/rllib_ppo_2p_quick --games 20",
        f"OMP_NUM_THREADS=1 {PY} examples/rllib_ppo.py --iterations 0 --minutes 30 "
        f"--env-runners 1 --eval-games 300 --out results/rllib_ppo_2p && "
        f"{PY} benchmarks/rllib_eval_match.py results/rllib_ppo_2p --games 300"),
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
        "LBS-16 with no flags but --blueprint on top of the MaskablePPO self-play policy "
        "that `python examples/train_maskable_ppo.py --minutes 10 --threads 1 --out "
        "results/maskable_ppo_2p` trains on one core (section sb3-train of "
        "benchmarks/results.json): 256 worlds "
        "per decision, its critic bootstraps after 16 moves, grounded+cf belief (no learned "
        "belief ships for it); 300 evaluation deals on two worker processes (s/game is per "
        "worker, one core each).",
        f"{COMPARE} --blueprint sb3:results/maskable_ppo_2p/model.zip "
        f"--methods blueprint,lbs-16 --games 2",
        f"{COMPARE_2} --blueprint sb3:results/maskable_ppo_2p/model.zip --methods blueprint,lbs-16 "
        f"--games 300"),
    "pruning-python": (
        "Threshold pruning on a user's Python class: what it saves, whether it changes the move",
        "benchmarks/pruning_check.py on examples/my_blueprint.py (a per-position Python "
        "class: grounded+cf belief, no value so rollouts to the end, 256 worlds, margin of "
        "32 worlds) over 3 of its games on run seed 1's deals (tuning deals, which no figure "
        "uses): each of seat 0's decisions searched once per pruning rule on the same worlds "
        "(docs/experiments/python_blueprints.md).",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint {WALKTHROUGH_BP} "
        "--belief grounded+cf --depth 16 --worlds 32 --games 1 --seed 1 --rules means,threshold",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint {WALKTHROUGH_BP} "
        "--belief grounded+cf --depth 16 --worlds 256 --games 3 --seed 1 "
        "--rules means,threshold"),
    "default-search-python": (
        "LBS-16 with no flags on a user's Python class",
        "`lbs-pz compare --methods blueprint,lbs-16` with nothing but --blueprint "
        "py:examples/my_blueprint.py:HintPlayDiscard (the README's 20-line class): nothing "
        "ships for it, so the grounded+cf belief and rollouts to the end; threshold pruning, "
        "resolved for a blueprint whose moves are per-position Python calls; 256 worlds, seat "
        "0 searches, 300 evaluation deals of run seed 0 paired with the blueprint. Two "
        "worker processes: s/game is per worker, one core each.",
        f"{COMPARE} --blueprint {WALKTHROUGH_BP} --methods blueprint,lbs-16 --games 1",
        f"{COMPARE_2} --blueprint {WALKTHROUGH_BP} --methods blueprint,lbs-16 --games 300 "
        f"--jsonl results/default_search_python.jsonl"),
    **{f"search-{n}p": multiplayer_section(n) for n in (3, 4, 5)},
    "belief-quality-players": (
        "Belief quality at 3, 4 and 5 players: learned against grounded and exact",
        "`lbs-pz belief-quality` over the strong bot's self-play at 3, 4 and 5 players (the "
        "engine's default hand sizes), run seed 0's evaluation deals: per-card cross-entropy "
        "of the player to move's true hand under the exact belief (SPARTA's), the grounded "
        "one and the learned one shipped for that game, by move number. One core.",
        " && ".join(f"OMP_NUM_THREADS=1 lbs-pz belief-quality --players {n} --games 1 "
                    f"--plot '' --no-progress" for n in (3, 4, 5)),
        " && ".join(f"OMP_NUM_THREADS=1 lbs-pz belief-quality --players {n} --games 50 "
                    f"--plot '' --no-progress" for n in (3, 4, 5))),
    "paper": (
        "The paper's tables: `lbs-pz paper --full`, as far as its log has run",
        "Table 1 of `lbs-pz paper --full --workers 2 --out results/paper_full` (the strong "
        "bot on 5-card, 6-card and 7-card hands with at most 4 information tokens; 256 worlds; "
        "evaluation deals of run seed 0, paired) and each figure the run is judged by "
        "against its target, from the games its log holds: a full run takes many hours and "
        "plays in passes, so each cell says its deals ([n]) and a figure over fewer deals "
        "than asked says \"so far\". Two worker processes: s/game is per worker, one core "
        "each. The command also writes Tables 2 and 3, paper.json and the figures "
        "(score against time, belief cross-entropy by move) to results/paper_full/ on the "
        "machine that runs it. The log, results/paper_full/games.jsonl, is in the "
        "repository: the command below rebuilds these tables on any clone, and `lbs-pz "
        "paper --full --workers 2` there continues the run.",
        "lbs-pz paper --tiny --workers 2 --no-progress --out results/paper_tiny",
        "lbs-pz paper --full --report-only --no-progress --out results/paper_full"),
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
        "object, malformed hanab.live records and SB3 zips, bad env actions and seeds; user "
        "blueprints that change their caller's state, reset the batch or never return; "
        "checkpoints with NaN or absurd weights or oversized architectures, RLlib pickles "
        "whose memo index asks for gigabytes; outputs that are devices or FIFOs, endless or "
        "impossible logs, huge game counts, a log in use, a log or checkpoint cut by a "
        "file-size limit, a cut last line of recorded search games, recorded games of "
        "another variant, two trainers on one --out, an unreachable Ray address, the "
        "paper's cut caches, stale artefacts and deleted models; web requests over the caps, "
        "cross-site, with bad fields, huge bodies, idle or trickling sockets past the cap, "
        "watch games flooding a play game, or a partner that never returns), each in its "
        "own child process: a signal exit is a crash, a case that "
        "runs to its end where it should be refused is silently accepted (goal 0 of "
        "each). Then resident memory "
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
        "The distill section's run with `--arch conventions`: the net's private stream also "
        "reads `convention_features`, the strong bot's conventions' reading of the position "
        "seen by the seat (cards promised playable by earlier hints, queued plays, chops, "
        "the effect of each hint), a fold over the public history that the LSTM otherwise "
        "has to learn, and each hint move's advantage adds a weighing of that hint's "
        "features set by the context (the hint head: one rule for every hint, as the bot "
        "scores them). Same teacher, deals, budget and evaluation as the distill section.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --arch conventions --minutes 1 "
        f"--eval-every 100 --out results/distill/quick_conventions.pt && lbs-pz eval "
        f"--blueprint lstm:results/distill/quick_conventions.pt --games 100 --no-progress",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/distill.py --arch conventions --minutes 30 "
        f"--eval-every 1000 --out results/distill/distill_conventions.pt && "
        f"OMP_NUM_THREADS=1 lbs-pz eval --blueprint lstm:results/distill/distill_conventions.pt "
        f"--games 1000 --no-progress"),
    "finetune": (
        "RL fine-tuning from the distilled start (one core)",
        "`lbs-pz train-blueprint --init` from the distill section's checkpoint with the "
        "fine-tuning preset (lr 5e-5, small exploration, a margin toward the start net's "
        "moves), greedy self-play on 500 evaluation deals every 400 updates; prints the "
        "start, the lowest and the last evaluation. The 60-minute run of the full command "
        "(docs/experiments/finetuning.md) was run on its own, not through this script; the "
        "entry below is the quick mode (a 1-minute distilled start, fine-tuned for 2 "
        "minutes).",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/finetune.py --quick --out-dir results/finetune_quick",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/finetune.py --init results/distill/distill_strong.pt "
        f"--out-dir results/finetune --name finetune60 --threads 1"),
    "conventions-expert": (
        "The best neural blueprint's moves in self-play, against the strong bot",
        "conventions_expert_value_2p (the expert-iteration net: conventions_maxq_2p after "
        "600 updates of `lbs-pz distill --search-games` on 1,475 of LBS-16's own games on "
        "training deals, with a value of its own; docs/experiments/expert_iteration.md) "
        "and the strong rule bot it was first distilled from, greedy self-play on the same "
        "evaluation deals of run seed 0, paired.",
        *(f"OMP_NUM_THREADS=1 {PY} benchmarks/self_play_pair.py --blueprints "
          f"strong,lstm:conventions_expert_value_2p --games {n}" for n in (200, 5000))),
    "search-conventions-expert-value": (
        "LBS-1 and LBS-16 on the expert blueprint with a value of its own",
        "conventions_expert_value_2p is conventions_expert_2p with every move unchanged and "
        "a value that reads a public LSTM of its own (PublicLSTMNet value_lstm), fitted on "
        "its own games (docs/experiments/value_stream.md; lbs_pz/models/README.md), with the "
        "expert's belief carried over. On the 300 evaluation deals of the search figures: "
        "LBS-1 with the learned belief alone at --delta 0.75 (chosen on run seed 1's deals), "
        "then with learned+cf; then LBS-16 with the learned belief alone in "
        "the fast settings (32 worlds, --pruning threshold "
        "--search-precision bfloat16).",
        *value_stream_searches("conventions_expert_value_2p"),
    ),
    "search-conventions-expert-value-speed": speed_section(
        "conventions_expert_value_2p", "value-stream expert"),
    "search-precision": precision_section("conventions_expert_value_2p"),
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
    "default-search": (
        "LBS-16 with no flags on the rule bots",
        "`lbs-pz compare --methods blueprint,lbs-16` with nothing but --blueprint: the "
        "search resolves its belief, value and every setting for the blueprint (the notes "
        "above each table say what it chose). 256 worlds per decision, seat 0 searches, "
        "300 evaluation deals of run seed 0, paired with the blueprint on the same deals; "
        "one core. No value ships for the medium bot, so its rollouts go to the end.",
        f"{COMPARE} --blueprint strong --methods blueprint,lbs-16 --games 2 && "
        f"{COMPARE} --blueprint medium --methods blueprint,lbs-16 --games 2",
        f"{COMPARE} --blueprint strong --methods blueprint,lbs-16 --games 300 && "
        f"{COMPARE} --blueprint medium --methods blueprint,lbs-16 --games 300"),
    "default-search-net-speed": (
        "LBS-16 with no flags on the best neural blueprint: seconds per game, quiet machine",
        "default-search-net's command on its first 30 deals, run alone on the machine (no "
        "other job: the load below says so), for the time per game on one core; the "
        "scores are those deals' share of default-search-net's.",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --methods blueprint,lbs-16 "
        f"--games 2",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --methods blueprint,lbs-16 "
        f"--games 30"),
    "default-search-net": (
        "LBS-16 with no flags on the best neural blueprint",
        "As default-search, on lstm:conventions_expert_value_2p: its shipped learned belief "
        "filtered through it (learned+cf), its own value after 16 moves, and the settings "
        "resolved for a blueprint whose rollouts are batched neural forwards.",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --methods blueprint,lbs-16 "
        f"--games 2",
        f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --methods blueprint,lbs-16 "
        f"--games 300"),
    "margin-strong": (
        "The strong bot's LBS-16 with the capped margin and without it",
        "default-search's strong-bot search with --margin-worlds 0 (the deviation test "
        "with the standard error of all 256 worlds, the default before margin_worlds) on "
        "the same 300 evaluation deals of run seed 0, for the paired difference with the "
        "default (docs/experiments/margin_worlds.md).",
        f"{COMPARE} --blueprint strong --methods blueprint,lbs-16 --games 2 --margin-worlds 0",
        f"{COMPARE} --blueprint strong --methods blueprint,lbs-16 --games 300 "
        f"--margin-worlds 0 --jsonl results/margin_strong.jsonl && "
        f"{COMPARE} --blueprint strong --methods blueprint,lbs-16 --games 300 "
        f"--jsonl results/margin_strong.jsonl && "
        f"{PY} benchmarks/paired_log.py results/margin_strong.jsonl"),
    "compute": (
        "Search that turns compute into points: LBS-16's gain against worlds per decision, "
        "as far as its logs have run",
        "LBS-16 with no flags (the shipped learned belief and value, threshold pruning) at "
        "256, 1,024, 4,096 and 10,000 sampled worlds per decision, paired on run seed 0's "
        "evaluation deals: the strong bot with seat 0 searching (300 deals; 10,000 worlds: "
        "200), SPARTA at 256 and 1,024 worlds on the same deals, every seat searching (200), "
        "the best neural blueprint at 32, 256 and 1,024 worlds (200), and LBS-inf at 1,024 "
        "and 4,096 (200; its default there: importance-weighted worlds, no margin cap), "
        "from the games the logs hold "
        "(results/compute_strong.jsonl and compute_net.jsonl, in the repository): `python "
        "benchmarks/worlds.py play` plays them on 2 worker processes (hours; it continues "
        "where it stopped), s/game is per worker. Each step is paired with the world count "
        "before it. Then seconds per decision, microseconds per world used and peak memory "
        "against worlds, one core, a quiet machine (benchmarks/worlds.py cost).",
        f"{PY} benchmarks/worlds.py play --quick && "
        f"{PY} benchmarks/worlds.py curve results/compute_strong_quick.jsonl && "
        f"{PY} benchmarks/worlds.py cost --games 1 --worlds 256 1024",
        f"{PY} benchmarks/worlds.py curve results/compute_strong.jsonl && "
        f"{PY} benchmarks/worlds.py curve results/compute_net.jsonl && "
        f"{PY} benchmarks/worlds.py cost --games 3"),
    "improve": (
        "A blueprint improved by its own search: lbs-pz improve's rounds",
        "`lbs-pz improve` on the best shipped network, lstm:conventions_expert_value_2p: "
        "each round distils a search's games into it, keeps the round if its greedy "
        "self-play gains on 1,000 tuning deals (run seed 1), then retrains its belief; "
        "scores and paired gains on 1,000 evaluation deals of run seed 0, core-hours of the "
        "whole round (the teacher's games on 2 worker processes). The run so far had LBS-16 "
        "on every seat of the strong bot as the teacher (1,500 games a round); "
        "docs/experiments/improve.md says why that round did not gain and why the default "
        "teacher now searches over the student. The run's record, "
        "results/improve_strong/improve.json, is in the repository.",
        "OMP_NUM_THREADS=1 lbs-pz improve --out results/improve_quick --rounds 1 "
        "--games-per-round 4 --rollouts 8 --updates 20 --belief-steps 2 --eval-games 50 "
        "--workers 2 --no-progress && lbs-pz improve --out results/improve_quick --report-only",
        "lbs-pz improve --out results/improve_strong --report-only"),
    "lbs-worlds-net": (
        "More worlds, no worse: the paper's LBS at 32 and 256 worlds on the best neural blueprint",
        "LBS-16 with the learned belief alone (the paper's LBS: no counterfactual filter) "
        "on lstm:conventions_expert_value_2p, every other setting resolved, at 32 and then "
        "256 sampled worlds per decision on the same 300 evaluation deals of run seed 0 "
        "(docs/experiments/margin_worlds.md).",
        *(f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --belief learned "
          f"--methods blueprint,lbs-16 --rollouts 32 --games {n} --jsonl {log} && "
          f"{COMPARE} --blueprint lstm:conventions_expert_value_2p --belief learned "
          f"--methods lbs-16 --rollouts 256 --games {n} --jsonl {log} && "
          f"{PY} benchmarks/paired_log.py {log}"
          for n, log in ((2, "results/worlds_net_quick.jsonl"),
                         (300, "results/worlds_net.jsonl")))),
    "pruning-strong": (
        "What each pruning rule saves on the strong bot, and whether it changes the move",
        "benchmarks/pruning_check.py on the strong bot with the grounded belief and its "
        "shipped value after 16 moves, 256 worlds, 4 of its games: at each of seat 0's "
        "decisions, one search per pruning rule on the same worlds (rollouts, seconds and "
        "the decisions whose move differs from no pruning's); "
        "a rule bot's rollouts cost the same per world in any batch, so its batches are "
        "not refilled.",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint strong --belief "
        "grounded --depth 16 --worlds 64 --games 1",
        f"OMP_NUM_THREADS=1 {PY} benchmarks/pruning_check.py --blueprint strong --belief "
        "grounded --depth 16 --worlds 256 --games 4"),
    "gpu": (
        "The GPU path: benchmarks/gpu_check.sh",
        "On a CUDA machine: the engine built there and its throughput on one core; then, each "
        "with `--device cuda`: the distill section's 30-minute CPU checkpoint distilled "
        "further, Q-learning started from that net, and a learned belief for it (the GPU run was "
        "bound by playing the blueprint's games on the CPU); the nets evaluated on "
        "evaluation deals. CI never runs it; the entry "
        "below ran on a lent GPU machine and was merged with --merge.",
        "DEVICE=cpu DISTILL_MIN=0.3 TRAIN_MIN=0.3 BELIEF_MIN=0.3 EVAL_GAMES=50 CPU_THREADS=1 "
        "bash benchmarks/gpu_check.sh",
        "DISTILL_RESUME=results/distill/distill_strong.pt DISTILL_LR=5e-4 DISTILL_MIN=2.5 "
        "TRAIN_MIN=0.5 BELIEF_MIN=3 EVAL_GAMES=200 bash benchmarks/gpu_check.sh"),
    "web": (
        "The local web page: response times",
        "`lbs-pz serve` started in a child process (one core); page load (GET / and its "
        "static files) and each move's response in play mode, the human's move plus the "
        "partner's reply, with the strong bot and with strong + LBS-16 at 256 worlds (a "
        "search move's reply is padded to a multiple of 0.25 s, so that its time says "
        "nothing of the hidden cards).",
        f"{PY} benchmarks/web_latency.py --quick",
        f"{PY} benchmarks/web_latency.py --moves 120"),
}


def machine() -> dict:
    return {"cpu": host.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(),
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


# The sections RESULTS.md shows, in this order, each with a regular expression that picks
# the lines of its output to print (None: every line). The other sections, and the lines
# left out (progress, per-case logs), stay in benchmarks/results.json.
HEADLINE = {
    "engine": r"^(\||Median|- )",
    "env": r"^(\||Median)",
    "bots": r"^(\||Self-play|Speed)",
    "default-search": None,
    "default-search-net": None,
    "default-search-net-speed": None,
    "default-search-python": None,
    "search-3p": r"^(\||strong, )",
    "search-4p": r"^(\||strong, )",
    "search-5p": r"^(\||strong, )",
    "paper": r"^(Table 1|\||figure: )",
    "train-sources": r"^(\||\S+, \d+ steps)",
    "improve-teacher": r"^(\||improve's teacher)",
    "rllib-throughput": r"^(\||Standard 2-player)",
    "rllib-30min": r"^(rllib:|trained |greedy self-play|lbs-pz eval's evaluator|RLlib \(|paired "
                   r"difference|every deal|checks:)",
    "lbs-worlds-net": None,
    "improve": r"^(\||Command:|Score:|stopped)",
    "compute": None,
    "search-sb3": None,
    "walkthrough": r"^(###|\$ |\||  mean score|done|value:)",
    "hardening": r"^(?!ok |$)",
    "web": None,
}
assert set(HEADLINE) <= set(SECTIONS), set(HEADLINE) - set(SECTIONS)


def shown_output(name: str, output: str) -> list:
    """The lines of a section's stored output that RESULTS.md prints, and a note on the
    ones it leaves out."""
    lines = output.split("\n")
    if HEADLINE[name] is None:
        return lines
    kept = []
    for line in lines:          # a summary that repeats a kept line is not printed twice
        if re.search(HEADLINE[name], line) and line not in kept:
            kept.append(line)
    left = len(lines) - len(kept)
    return kept + ([f"({left} more lines of output in benchmarks/results.json)"] if left else [])


def write_results(store: dict) -> None:
    lines = [
        "# lbs_pz: headline figures",
        "",
        "Generated by `python benchmarks/run_all.py --write-only` from "
        "`benchmarks/results.json`; do not edit by hand. `python benchmarks/run_all.py "
        "--full --only SECTION` measures one section again (`--quick`: small sizes) and "
        "rewrites this file. Under each title: the command that printed the figures; its "
        "mode, wall-clock time and exit code; the machine; the load average (1, 5, 15 min) "
        "before -> after (a load above the number of processes the section runs means other "
        "work shared the cores); the revision and date. The experiments behind the neural "
        "blueprints and the search settings are in [docs/experiments/](docs/experiments/).",
        "",
    ]
    for name in HEADLINE:
        entry = store.get(name)
        if entry is None:
            continue
        # titles and descriptions are the current ones; numbers only come from the store
        title, what = SECTIONS[name][:2]
        m = entry["machine"]
        load = " -> ".join("/".join(f"{x:g}" for x in entry[key])
                           for key in ("load_before", "load_after"))
        lines += [
            f"## {title}",
            "",
            what,
            "",
            f"`{entry['command']}`\\",          # a hard line break: the run's facts below it
            f"{entry['mode']} mode, {entry['seconds']} s, exit code {entry['exit_code']}; "
            f"{m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['system']}; "
            f"load {load}; revision {entry['revision']}, {entry['date']} (`{name}`)",
            "",
            "```",
            *shown_output(name, entry["output"]),
            "```",
            "",
        ]
    with open(RESULTS, "w") as f:
        f.write("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="sections: " + ", ".join(SECTIONS))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes: minutes in all")
    mode.add_argument("--full", action="store_true", help="the sizes RESULTS.md quotes")
    parser.add_argument("--only", default="", help="comma-separated sections to run (default all)")
    parser.add_argument("--write-only", action="store_true",
                        help="rewrite RESULTS.md from benchmarks/results.json without running "
                             "anything (no --quick or --full needed)")
    parser.add_argument("--workers", type=int, default=0,
                        help="run every section's `lbs-pz compare` on a pool of this many "
                             "processes instead of one core (a many-core machine; the "
                             "recorded command says so, and s/game is then per worker)")
    parser.add_argument("--merge", metavar="JSON", default="",
                        help="take the --only sections' entries from another results.json "
                             "(one written by a run on another machine, e.g. a GPU one) "
                             "instead of running them")
    args = parser.parse_args(argv)
    if not (args.quick or args.full or args.write_only or args.merge):
        parser.error("one of --quick, --full, --write-only or --merge is required")
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
