"""`lbs-pz models`: what ships in lbs_pz/models, as its manifest lists it: each model's
name, kind, the blueprint it was trained for, game, size, purpose and the search settings
recommended with it; `--retired` lists the models that no longer ship and the commands
that make them again. Reads manifest.json only (no weights, no torch).

    lbs-pz models
    lbs-pz models --json
    lbs-pz models --retired
"""

from __future__ import annotations

import argparse
import json

from lbs_pz.models import MODELS_DIR
from lbs_pz.models.checkpoint import describe_game
from lbs_pz.models.manifest import read_manifest


def _trained_for(entry: dict) -> str:
    tf = entry["trained_for"]
    if tf is None:
        return f"its own weights (blueprint lstm:{entry['name']})"
    fp = tf["fingerprint"]
    return tf["spec"] + (f" (fingerprint {fp[:12]})" if fp else "")


def _recommended(entry: dict) -> str:
    rec = entry["recommended"]
    if not rec:
        return "none recorded (the general defaults apply)"
    return "; ".join(f"{method}: " + ", ".join(f"{k}={v!r}" for k, v in settings.items())
                     for method, settings in rec.items())


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def shipped_text(data: dict) -> str:
    models = data["models"]
    lines = [f"{len(models)} models ship in {MODELS_DIR} ({_size(sum(m['size'] for m in models))}"
             f"; manifest.json):", ""]
    for m in models:
        lines += [f"{m['name']}  [{m['kind']}, {describe_game(m['game'])}, {_size(m['size'])}]",
                  f"    trained for: {_trained_for(m)}",
                  f"    purpose:     {m['purpose']}"]
        if m["kind"] == "public_lstm":
            lines.append(f"    recommended: {_recommended(m)}")
            if m["recommended"]:
                lines.append(f"    chosen by:   {m['chosen_by']}")
        lines.append("")
    if data["blueprints"]:
        lines.append("Blueprints without a file:")
        lines.append("")
        for b in data["blueprints"]:
            fp = b["fingerprint"]
            lines += [f"{b['spec']}" + (f" (fingerprint {fp[:12]})" if fp else "")
                      + f"  [{describe_game(b['game'])}]",
                      f"    purpose:     {b['purpose']}",
                      f"    recommended: {_recommended(b)}"]
            if b["recommended"]:
                lines.append(f"    chosen by:   {b['chosen_by']}")
            lines.append("")
    lines.append("`lbs-pz models --retired`: the models that no longer ship and how to remake "
                 "them.")
    return "\n".join(lines)


def retired_text(data: dict) -> str:
    lines = [f"{len(data['retired'])} retired models (no longer shipped; each remade by the "
             f"commands below, run in order, from the files it needs):", ""]
    for m in data["retired"]:
        lines += [f"{m['name']}  [{m['kind']}, {describe_game(m['game'])}, {_size(m['size'])}, "
                  f"sha256 {m['sha256'][:12]}]",
                  f"    trained for: {_trained_for(m)}",
                  f"    purpose:     {m['purpose']}",
                  f"    needs:       {', '.join(m['needs']) or 'nothing'}",
                  "    remake:"]
        lines += [f"      {command}" for command in m["remake"]]
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def run(args) -> int:
    data = read_manifest(MODELS_DIR)
    if args.json:
        out = ({"retired": data["retired"]} if args.retired else
               {"models_dir": MODELS_DIR, "models": data["models"],
                "blueprints": data["blueprints"]})
        print(json.dumps(out, indent=1))
    else:
        print(retired_text(data) if args.retired else shipped_text(data))
    return 0


def add_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "models", help="list the shipped models (manifest.json) and their recommended settings",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="machine-readable output (the manifest's "
                                                       "entries)")
    p.add_argument("--retired", action="store_true",
                   help="list the models that no longer ship and the commands that remake them")
    p.set_defaults(func=run)
    return p
