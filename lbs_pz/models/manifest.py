"""The manifest of the shipped models: `manifest.json` beside the weights, read as JSON
(never by loading weights, so no torch is needed to look a model up) and validated once
per file version.

    {"format": "lbs_pz.models.manifest", "version": 1,
     "models":     [MODEL, ...],       every .pt file that ships, and nothing else
     "blueprints": [BLUEPRINT, ...],   search settings for blueprints without a file (rule bots)
     "retired":    [RETIRED, ...]}     models that no longer ship, with the commands to remake them

MODEL: name (the file without .pt), kind ("belief" | "value" | "public_lstm"),
trained_for ({"spec", "fingerprint"} exactly as in the checkpoint, or null for a
blueprint's own weights), game (the checkpoint's game dict), sha256, size (bytes),
recommended, chosen_by, purpose (which default or documented command uses it), command
(the checkpoint's `info["command"]`), remake (the commands, in order, that make the file
again) and needs (the names of the models, shipped or retired, that those commands read).

BLUEPRINT: spec, fingerprint (as `lbs_pz.agents.blueprint_identity` gives them), game,
recommended, chosen_by, purpose.

RETIRED: name, kind, sha256, size, trained_for, game, purpose, command, remake, needs.

`recommended` maps a method ("lbs" for every depth, "lbs-1", "lbs-16", "lbs-inf",
"sparta") to search settings by their SearchConfig names (delta, confidence, verify,
pruning, precision, rollouts), e.g. {"lbs-1": {"delta": 0.75}}; `chosen_by` says on which
deals and by which rule they were chosen. Only a blueprint (a public_lstm model or a
BLUEPRINT entry) carries recommendations; a belief or value has {}.
"""

from __future__ import annotations

import copy
import json
import os
import re
from typing import Any, Dict, Tuple

from lbs_pz.checks import as_choice, as_int, is_int, is_real
from lbs_pz.engine import HanabiConfig

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "lbs_pz.models.manifest"
MANIFEST_VERSION = 1
KINDS = ("belief", "value", "public_lstm")
METHOD_KEY = re.compile(r"^(lbs|lbs-inf|lbs-[1-9][0-9]*|sparta)$")
PRUNING = ("means", "paired", "threshold", "off")
PRECISIONS = ("float32", "bfloat16")
SETTINGS = ("delta", "confidence", "verify", "pruning", "precision", "rollouts")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")

MODEL_FIELDS = ("name", "kind", "trained_for", "game", "sha256", "size", "recommended",
                "chosen_by", "purpose", "command", "remake", "needs")
BLUEPRINT_FIELDS = ("spec", "fingerprint", "game", "recommended", "chosen_by", "purpose")
RETIRED_FIELDS = ("name", "kind", "sha256", "size", "trained_for", "game", "purpose",
                  "command", "remake", "needs")


class ManifestError(ValueError):
    """A manifest.json that is missing or does not follow the layout above."""


_CACHE: Dict[str, Tuple[tuple, dict]] = {}


def manifest_path(directory: str) -> str:
    return os.path.join(directory, MANIFEST_NAME)


def read_manifest(directory: str, copy_it: bool = True) -> dict:
    """The validated manifest of the models folder `directory` (parsed and validated once
    per version of the file; a deep copy unless `copy_it` is False, for read-only use).
    ManifestError if missing or malformed."""
    path = manifest_path(directory)
    try:
        st = os.stat(path)
    except OSError:
        raise ManifestError(f"{path!r}: no model manifest there (every folder of shipped "
                            f"models lists its files in {MANIFEST_NAME})") from None
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(path)
    if cached is None or cached[0] != stamp:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ManifestError(f"{path!r} is not readable JSON: {err}") from None
        validate(data, path)
        _CACHE[path] = cached = (stamp, data)
    return copy.deepcopy(cached[1]) if copy_it else cached[1]


# --- validation -----------------------------------------------------------------------------

def _fail(where: str, what: str):
    raise ManifestError(f"{where}: {what}")


def _fields(entry, fields, where: str) -> None:
    if not isinstance(entry, dict):
        _fail(where, f"an entry is a JSON object, got {type(entry).__name__}")
    missing = [k for k in fields if k not in entry]
    extra = sorted(set(entry) - set(fields))
    if missing or extra:
        _fail(where, f"fields must be exactly {', '.join(fields)}"
              + (f"; missing {', '.join(missing)}" if missing else "")
              + (f"; unknown {', '.join(extra)}" if extra else ""))


def _text(value, where: str, what: str) -> None:
    if not isinstance(value, str) or not value.strip():
        _fail(where, f"{what} must be a non-empty string, got {value!r}")


def _identity(value, where: str, what: str = "trained_for", optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, dict) or set(value) != {"spec", "fingerprint"}:
        _fail(where, f"{what} must be {{'spec', 'fingerprint'}}"
              + (" or null" if optional else "") + f", got {value!r}")
    _text(value["spec"], where, f"{what}.spec")
    fp = value["fingerprint"]
    if fp is not None and not (isinstance(fp, str) and SHA256.match(fp)):
        _fail(where, f"{what}.fingerprint must be a hex sha256 or null, got {fp!r}")


def _game(value, where: str) -> None:
    try:
        HanabiConfig(**value)
    except (TypeError, ValueError) as err:
        _fail(where, f"bad game variant {value!r}: {err}")


def _setting(name: str, value, where: str) -> None:
    number = is_real(value, finite=True)
    ok = {"delta": number and value >= 0,
          "confidence": number and value >= 0,
          "verify": is_int(value) and (value == 0 or value >= 2),
          "rollouts": is_int(value) and value >= 1,
          "pruning": value in PRUNING,
          "precision": value in PRECISIONS}.get(name)
    if ok is None:
        _fail(where, f"unknown search setting {name!r}; settings are {', '.join(SETTINGS)}")
    if not ok:
        _fail(where, f"bad value {value!r} for the search setting {name!r}")


def _recommended(entry: dict, where: str, blueprint: bool) -> None:
    rec = entry["recommended"]
    if not isinstance(rec, dict):
        _fail(where, f"recommended must be an object, got {rec!r}")
    if rec and not blueprint:
        _fail(where, "only a blueprint carries recommended search settings (a belief or "
                     "value has {})")
    for method, settings in rec.items():
        if not METHOD_KEY.match(method):
            _fail(where, f"recommended: unknown method {method!r} (lbs, lbs-K, lbs-inf, "
                         f"sparta)")
        if not isinstance(settings, dict) or not settings:
            _fail(where, f"recommended[{method!r}] must be a non-empty object of settings")
        for name, value in settings.items():
            _setting(name, value, f"{where} recommended[{method!r}]")
    chosen = entry["chosen_by"]
    if rec:
        _text(chosen, where, "chosen_by (the deals and the rule the settings were chosen by)")
    elif chosen is not None and not isinstance(chosen, str):
        _fail(where, f"chosen_by must be a string or null, got {chosen!r}")


def _file_entry(entry: dict, where: str) -> None:
    def failure(message: str) -> ManifestError:
        return ManifestError(f"{where}: {message}")
    name = entry["name"]
    if not isinstance(name, str) or not NAME.match(name) or name.endswith(".pt"):
        _fail(where, f"name must be a file name without .pt, got {name!r}")
    as_choice(entry["kind"], "kind", KINDS, error=failure)
    _identity(entry["trained_for"], where)
    if (entry["kind"] == "public_lstm") != (entry["trained_for"] is None):
        _fail(where, "trained_for is null exactly for a blueprint's own weights (public_lstm)")
    _game(entry["game"], where)
    if not isinstance(entry["sha256"], str) or not SHA256.match(entry["sha256"]):
        _fail(where, f"sha256 must be 64 lower-case hex digits, got {entry['sha256']!r}")
    as_int(entry["size"], "size", lo=1, what="a positive number of bytes", error=failure)
    for key in ("purpose", "command"):
        _text(entry[key], where, key)
    for key in ("remake", "needs"):
        items = entry[key]
        if not isinstance(items, list) or not all(isinstance(s, str) and s.strip()
                                                  for s in items):
            _fail(where, f"{key} must be a list of non-empty strings, got {items!r}")
    if not entry["remake"]:
        _fail(where, "remake must list at least one command")


def validate(data: Any, where: str = MANIFEST_NAME) -> None:
    """ManifestError naming the first problem unless `data` follows the layout above."""
    if not isinstance(data, dict):
        _fail(where, f"a manifest is a JSON object, got {type(data).__name__}")
    if data.get("format") != MANIFEST_FORMAT or data.get("version") != MANIFEST_VERSION:
        _fail(where, f"not a model manifest of format {MANIFEST_FORMAT!r} version "
                     f"{MANIFEST_VERSION} (got {data.get('format')!r}, {data.get('version')!r})")
    _fields(data, ("format", "version", "models", "blueprints", "retired"), where)
    for key in ("models", "blueprints", "retired"):
        if not isinstance(data[key], list):
            _fail(where, f"{key} must be a list")
    names: Dict[str, str] = {}
    for section, fields in (("models", MODEL_FIELDS), ("retired", RETIRED_FIELDS)):
        for i, entry in enumerate(data[section]):
            at = f"{where} {section}[{i}]"
            _fields(entry, fields, at)
            _file_entry(entry, at)
            if entry["name"] in names:
                _fail(at, f"{entry['name']!r} is listed twice (also in {names[entry['name']]})")
            names[entry["name"]] = section
            if section == "models":
                _recommended(entry, at, blueprint=entry["kind"] == "public_lstm")
    listed: Dict[str, str] = {}
    for i, entry in enumerate(data["blueprints"]):
        at = f"{where} blueprints[{i}]"
        _fields(entry, BLUEPRINT_FIELDS, at)
        _identity({"spec": entry["spec"], "fingerprint": entry["fingerprint"]}, at,
                  "the blueprint", optional=False)
        _game(entry["game"], at)
        _text(entry["purpose"], at, "purpose")
        _recommended(entry, at, blueprint=True)
        # one entry per blueprint and game: a second would never be read
        key = json.dumps([entry["fingerprint"], entry["game"]], sort_keys=True)
        if key in listed:
            _fail(at, f"blueprint {entry['spec']!r} is listed twice for the same game "
                      f"(also {listed[key]})")
        listed[key] = at
    for section in ("models", "retired"):
        for i, entry in enumerate(data[section]):
            unknown = [n for n in entry["needs"] if n not in names]
            if unknown:
                _fail(f"{where} {section}[{i}]", f"needs names no listed model: "
                      f"{', '.join(unknown)}")
    seen: Dict[Tuple[str, str, str], str] = {}     # (kind, trained for, game) -> model
    for entry in data["models"]:
        if entry["kind"] == "public_lstm":
            continue
        use = (entry["kind"], json.dumps(entry["trained_for"], sort_keys=True),
               json.dumps(entry["game"], sort_keys=True))
        if use in seen:
            _fail(where, f"{seen[use]!r} and {entry['name']!r} are both a {entry['kind']} "
                         f"for the same blueprint and game: a default must be one model")
        seen[use] = entry["name"]

