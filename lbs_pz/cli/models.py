"""`lbs-pz models`: what ships in lbs_pz/models, as its manifest lists it: each model's
name, kind, the blueprint it was trained for, game, size, purpose and the search settings
recommended with it; `--retired` lists the models that no longer ship and the commands
that make them again. Reads manifest.json and the files' sizes (no weights, no torch): a
listed model whose file is missing (or not of its listed size) is marked, and the command
then ends with one line saying how to restore it (exit status 2).

    lbs-pz models
    lbs-pz models --json
    lbs-pz models --retired
"""

from __future__ import annotations

import argparse
import json

from lbs_pz.models import MODELS_DIR
from lbs_pz.models.checkpoint import describe_game, shipped_file
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


def file_problems(data: dict, models_dir: str = MODELS_DIR) -> dict:
    """{name: what is wrong with its file} of each listed model of `data` (a manifest)
    whose file in `models_dir` is missing or not of its listed size (`shipped_file`)."""
    return {m["name"]: problem for m in data["models"]
            if (problem := shipped_file(m, models_dir)) is not None}


def shipped_text(data: dict, models_dir: str = MODELS_DIR) -> str:
    models = data["models"]
    problems = file_problems(data, models_dir)
    lines = [f"{len(models)} models ship in {models_dir} ({_size(sum(m['size'] for m in models))}"
             f"; manifest.json):", ""]
    for m in models:
        mark = f"  ** file {problems[m['name']]} **" if m["name"] in problems else ""
        lines += [f"{m['name']}  [{m['kind']}, {describe_game(m['game'])}, {_size(m['size'])}]"
                  + mark,
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


def not_installed(problems: dict, models_dir: str = MODELS_DIR) -> str:
    """The one line that ends a listing with models whose files are missing or damaged."""
    return (f"{len(problems)} listed model(s) are not installed as listed in {models_dir}: "
            + ", ".join(f"{name} ({problem})" for name, problem in problems.items())
            + "; reinstall lbs_pz to restore them, or remake each with the commands its "
              "manifest entry lists (`lbs-pz models --json`, \"remake\")")


def listing(data: dict, as_json: bool, retired: bool, models_dir: str = MODELS_DIR) -> str:
    """What `lbs-pz models` prints for the manifest `data` of the folder `models_dir`; with
    --json and shipped models, "problems" maps each model whose file is missing or damaged
    to what is wrong (`file_problems`)."""
    if as_json:
        out = ({"retired": data["retired"]} if retired else
               {"models_dir": models_dir, "models": data["models"],
                "blueprints": data["blueprints"],
                "problems": file_problems(data, models_dir)})
        return json.dumps(out, indent=1)
    return retired_text(data) if retired else shipped_text(data, models_dir)


def run(args) -> int:
    data = read_manifest(MODELS_DIR)
    print(listing(data, args.json, args.retired))
    problems = {} if args.retired else file_problems(data)
    if problems:
        raise ValueError(not_installed(problems))
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
