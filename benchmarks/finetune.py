#!/usr/bin/env python
"""RL fine-tuning of a distilled public-LSTM blueprint (`lbs-pz train-blueprint --init`)
with the measured fine-tuning preset (`lbs_pz.train.blueprint.FINETUNE`): prints the
start, the minimum and the end of greedy self-play (EVAL deals, mean +- s.e.m.), whether
the run stayed within 0.5 of its start, and the paths of the checkpoint and the learning
curve (CSV + PNG).

    python benchmarks/finetune.py --quick                       # 2 minutes, a 1-minute start
    python benchmarks/finetune.py --init /work/ckpt/distill_strong.pt --out-dir /work/ckpt/finetune
    python benchmarks/finetune.py --init start.pt --minutes 10 --set lr=1e-4 --set anchor_weight=0

Without --init it distils the strong bot first (`--init distill:strong`, --init-minutes).
Full mode: 60 minutes on one thread (what the issue's goal is stated for).
"""

import argparse
import dataclasses
import os
import sys
import time


def parse_set(items, config_class):
    """["key=value", ...] -> {field: value typed like the field's default / annotation}."""
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if key not in fields:
            raise SystemExit(f"--set {item}: no option {key!r} in BlueprintTrainConfig")
        default = fields[key].default
        annotation = str(fields[key].type)
        kind = type(default) if default is not None else next(
            (t for name, t in (("bool", bool), ("int", int), ("float", float))
             if name in annotation), str)
        if kind is bool:
            out[key] = value.lower() in ("1", "true", "yes", "on")
        else:
            out[key] = kind(value)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default="", help="the start (PATH | lstm:PATH | "
                        "distill:SPEC); default distill:strong")
    parser.add_argument("--init-minutes", type=float, default=None,
                        help="with distill:SPEC (default 6, --quick 1)")
    parser.add_argument("--minutes", type=float, default=None, help="default 60, --quick 2")
    parser.add_argument("--quick", action="store_true", help="a 2-minute run (a 1-minute start)")
    parser.add_argument("--out-dir", default="results/finetune")
    parser.add_argument("--name", default="finetune", help="file stem under --out-dir")
    parser.add_argument("--eval-every", type=int, default=None,
                        help="updates between evaluations (default 400, --quick 100)")
    parser.add_argument("--eval-games", type=int, default=None, help="default 500, --quick 200")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="any other BlueprintTrainConfig field (repeatable)")
    args = parser.parse_args(argv)

    from lbs_pz.train import blueprint as tb

    minutes = args.minutes if args.minutes is not None else (2.0 if args.quick else 60.0)
    init = args.init or "distill:strong"
    init_minutes = args.init_minutes if args.init_minutes is not None else (
        1.0 if args.quick else 6.0)
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.join(args.out_dir, f"{args.name}.pt")
    curve = os.path.join(args.out_dir, f"{args.name}.curve.csv")
    cfg = dict(init=init, minutes=minutes, out=out, curve=curve,
               eval_every=args.eval_every or (100 if args.quick else 400),
               eval_games=args.eval_games or (200 if args.quick else 500),
               save_every=500, threads=args.threads, seed=args.seed, device=args.device)
    if init.startswith("distill:"):
        cfg["init_minutes"] = init_minutes
    cfg.update(parse_set(args.set, tb.BlueprintTrainConfig))
    tc = tb.BlueprintTrainConfig(**cfg)
    tc.check()
    log_path = os.path.join(args.out_dir, f"{args.name}.log")
    with open(log_path, "a") as log_file:
        def log(line):
            stamp = time.strftime("%H:%M:%S", time.gmtime())
            print(line, flush=True)
            log_file.write(f"{stamp} {line}\n")
            log_file.flush()
        log(f"fine-tuning: {tb.command_line('train-blueprint', tc)}")
        log("preset (resolved): " + ", ".join(f"{k}={getattr(tc.resolved(), k)}"
                                               for k in tb.FINETUNE))
        progress = tb.train_blueprint(tc, log=log, progress_bar=False)
        curve_rows = progress["curve"]
        start = curve_rows[0]
        low = min(curve_rows, key=lambda r: r[4])
        end = curve_rows[-1]
        best = max(curve_rows, key=lambda r: r[4])
        within = all(r[4] >= start[4] - 0.5 for r in curve_rows)
        log(f"start {start[4]:.2f} +- {start[5]:.2f}; min {low[4]:.2f} +- {low[5]:.2f} "
            f"(at {low[0]:.1f} min, update {low[1]}); end {end[4]:.2f} +- {end[5]:.2f} "
            f"(at {end[0]:.1f} min, update {end[1]}); best {best[4]:.2f} (update {best[1]}); "
            f"{tc.eval_games} EVAL games each")
        log(f"stayed within 0.5 of the start at every evaluation: {'yes' if within else 'no'}; "
            f"end - start {end[4] - start[4]:+.2f}")
        stem = curve[:-4]
        log(f"checkpoint {out}; curve {curve} and {stem}.png; log {log_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
