"""Regenerate RESULTS.md: run every figure's command and record what printed it.

    python benchmarks/run_all.py --quick            # every section, small sizes (minutes)
    python benchmarks/run_all.py --full             # the sizes RESULTS.md quotes (hours)
    python benchmarks/run_all.py --full --only search-strong,paper-scale
    python benchmarks/run_all.py --write-only       # rewrite RESULTS.md, run nothing

The sections are data: benchmarks/sections.toml holds each one's title, what it shows and
its quick and full commands, and which sections RESULTS.md shows; this script only runs,
stores and writes. Each section is one shell command run from the repository root; its
output is stored verbatim with the command, the machine, the load average before and after,
the revision and the date, in benchmarks/results.json. RESULTS.md is then written from that
file, so a section run alone (`--only`) replaces its own entry and keeps the others (each
entry says when and on which revision it was measured). RESULTS.md shows the sections
sections.toml lists under [[results]] only, each in a few lines; the others stay in
benchmarks/results.json.
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
import tomllib

from lbs_pz import host

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORE = os.path.join(ROOT, "benchmarks", "results.json")
RESULTS = os.path.join(ROOT, "RESULTS.md")
REGISTRY = os.path.join(ROOT, "benchmarks", "sections.toml")
SECTION_KEYS = {"title", "what", "quick", "full", "each"}


def _fill(text: str, known: dict, where: str) -> str:
    """`text` with each {NAME} replaced by known[NAME]; an unknown name is an error."""
    def value(match):
        if match.group(1) not in known:
            raise ValueError(f"{where}: unknown {match.group(0)}")
        return str(known[match.group(1)])
    return re.sub(r"\{(\w+)\}", value, text)


def load_registry(path: str = REGISTRY) -> tuple:
    """The sections of benchmarks/sections.toml: ({name: (title, what, quick command, full
    command)} in the file's order, each family expanded; {name: regular expression or None},
    the sections RESULTS.md shows in its order)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    variables = data.get("vars", {})
    sections = {}
    for name, entry in data["sections"].items():
        unknown = set(entry) - SECTION_KEYS
        if unknown or not {"title", "what", "quick", "full"} <= set(entry):
            raise ValueError(f"{path}, section {name}: needs title, what, quick and full"
                             + (f"; unknown keys {sorted(unknown)}" if unknown else ""))
        family = entry.get("each", {})       # {key: values}, the lists taken in step
        if len({len(values) for values in family.values()}) > 1:
            raise ValueError(f"{path}, section {name}: `each` lists values of different "
                             f"lengths")
        for row in ([dict(zip(family, values)) for values in zip(*family.values())]
                    if family else [{}]):
            known = dict(variables, **row)
            commands = [entry[mode] if isinstance(entry[mode], str) else " && ".join(entry[mode])
                        for mode in ("quick", "full")]
            section = _fill(name, known, f"{path}, section {name}")
            if section in sections:
                raise ValueError(f"{path}: section {section} is defined twice")
            sections[section] = tuple(_fill(text, known, f"{path}, section {section}") for text in
                                      (entry["title"], entry["what"], *commands))
    headline = {shown["section"]: shown.get("lines") for shown in data["results"]}
    unknown = set(headline) - set(sections)
    if unknown:
        raise ValueError(f"{path}: RESULTS.md shows sections it does not define: "
                         f"{sorted(unknown)}")
    return sections, headline


# name -> (title, what it shows, quick command, full command); the sections RESULTS.md
# shows, in its order -> the regular expression that picks the lines of output it prints
SECTIONS, HEADLINE = load_registry()


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
