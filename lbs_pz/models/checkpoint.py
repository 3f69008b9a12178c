"""One checkpoint layout for every lbs_pz model (learned belief, value, public-LSTM).

A checkpoint is a plain dict of tensors, numbers, strings, lists and dicts, written
atomically and read with `torch.load(weights_only=True)`, so a file can never run code:

    format        "lbs_pz"
    version       1
    kind          "belief" | "value" | "public_lstm"
    game          the HanabiConfig's fields as a dict (`game_to_dict`)
    architecture  the network's constructor arguments (a dict)
    weights       the network's state_dict (float32, or float16 to halve the file)
    trained_for   {"spec": str, "fingerprint": str | None} of the blueprint whose
                  self-play made the training data, or None (a blueprint's own weights)
    info          dict: the training command, steps, games, deals, losses ...
    resume        optional dict (training checkpoints only): optimizer and target
                  network states that let a run continue; never read by the loaders

    >>> from lbs_pz.models import load_checkpoint
    >>> ckpt = load_checkpoint("belief_strong_2p", kind="belief")   # a shipped model
    >>> ckpt["trained_for"]["spec"], ckpt["game"]["players"]
    ('strong', 2)

`load_checkpoint(path_or_name, kind)` reads a file path or the name of a model shipped in
this folder ("belief_strong_2p" or "belief_strong_2p.pt"), and raises `CheckpointError` (a
ValueError) for a missing, corrupt, foreign, code-carrying or old-layout file, for a
shipped file whose sha256 is not the one its manifest entry records, for a weight holding
NaN or infinite values (`check_finite`, which the SB3 loader uses too), and for an
architecture above the caps of ARCHITECTURE_CAPS (`check_architecture`: every int
field, nested dicts included, before any network is built). The loaders then build their
network with `build_network`, which first builds it on torch's "meta" device (no memory)
to compare its parameter shapes with the file's tensors and count its parameters
(at most MAX_PARAMETERS), so that a header that does not fit its weights is refused
before anything is allocated. A belief or value
checkpoint used for a blueprint or game variant other than the one it was trained for
raises `CheckpointMismatchError` (`check_trained_for`).

What ships is what `manifest.json` in this folder lists (`lbs_pz.models.manifest`); the
look-ups read it, never the weights, so they need no torch:

    shipped_models()                      one dict per listed model (its manifest entry)
    find_model(kind, trained_for, game)   the listed model made for a blueprint and variant
    recommended_settings(trained_for, game)
                                          the search settings recorded for a blueprint

A .pt file in this folder that the manifest does not list is never picked by a default,
nor loaded by its name.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, TypeVar

from lbs_pz.checks import as_choice, as_path, is_int
from lbs_pz.engine import HanabiConfig
from lbs_pz.models.manifest import KINDS, ManifestError, read_manifest
from lbs_pz.optional import require_torch

if TYPE_CHECKING:           # torch's module type for the checker (torch stays optional)
    import torch

# the network a checkpoint's build function makes
Net = TypeVar("Net", bound="torch.nn.Module")

FORMAT = "lbs_pz"
VERSION = 1
MODELS_DIR = os.path.dirname(os.path.abspath(__file__))
# Formats of the three layouts this one replaces (read only to say so).
LEGACY_FORMATS = {"lbs_pz.belief": "belief", "lbs_pz.value": "value",
                  "lbs_pz.public_lstm": "public_lstm"}
# Game fields that must agree between a checkpoint and the game it is used in. Who
# starts (random_start_player) changes neither the observations nor the blueprint.
GAME_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
               "max_life_tokens", "observation_type")
# Caps on the sizes a checkpoint's architecture may claim, far above any model lbs_pz
# trains (the shipped ones are 128 to 658 wide), checked before a network is built.
MAX_WIDTH = 4096                    # hidden, embed, decoder, value_hidden, value_lstm
MAX_INPUTS = 1 << 16                # input vector sizes (and any int field not named here)
MAX_LAYERS = 16                     # stacked LSTM layers
MAX_PARAMETERS = 1 << 26            # parameters of the built network (256 MiB of float32)
MAX_ABS_WEIGHT = 1e6                # |weight| (trained networks stay within a few tens)
ARCHITECTURE_CAPS = {
    "hidden": MAX_WIDTH, "embed": MAX_WIDTH, "decoder": MAX_WIDTH,
    "value_hidden": MAX_WIDTH, "value_lstm": MAX_WIDTH, "layers": MAX_LAYERS,
    "inputs": MAX_INPUTS, "encoding_size": MAX_INPUTS, "pub_dim": MAX_INPUTS,
    "obs_dim": MAX_INPUTS, "conventions": MAX_INPUTS,
    "players": 16, "hand_size": 64, "colors": 64, "ranks": 64, "card_types": 4096,
    "num_moves": 4096, "deck_size": 4096,
}
FIX = ("train one with `lbs-pz train-{kind} --blueprint SPEC`, or pass "
       "allow_mismatch=True / --allow-mismatch")


class CheckpointError(ValueError):
    """A file that is not a readable lbs_pz checkpoint of the expected kind."""


class CheckpointMismatchError(ValueError):
    """A checkpoint trained for another blueprint or game variant than the one at hand."""


# --- games ----------------------------------------------------------------------------------

def game_to_dict(config: HanabiConfig) -> Dict[str, Any]:
    """Every field of a HanabiConfig as a plain dict (what checkpoints store)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def game_from_dict(game: Dict[str, Any], where: str = "checkpoint") -> HanabiConfig:
    """The HanabiConfig a checkpoint's "game" dict describes; CheckpointError if it is not one."""
    try:
        return HanabiConfig(**game)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: bad game variant {game!r}: {err}") from None


def describe_game(game) -> str:
    """'2p 5-card 5x5' style summary of a HanabiConfig or game dict."""
    g = game if isinstance(game, dict) else game_to_dict(game)
    extra = [f"{k}={g.get(k)!r}" for k in ("max_information_tokens", "max_life_tokens",
                                            "observation_type")
             if g.get(k) != getattr(HanabiConfig(), k)]
    return (f"{g.get('players')}p {g.get('hand_size')}-card {g.get('colors')}x{g.get('ranks')}"
            + (f" ({', '.join(extra)})" if extra else ""))


def same_game(a, b) -> bool:
    """True when two HanabiConfigs / game dicts agree on every GAME_FIELDS entry."""
    a = a if isinstance(a, dict) else game_to_dict(a)
    b = b if isinstance(b, dict) else game_to_dict(b)
    return all(a.get(k) == b.get(k) for k in GAME_FIELDS)


# --- what a model was trained for -----------------------------------------------------------

def trained_for_dict(identity) -> Optional[Dict[str, Optional[str]]]:
    """{"spec", "fingerprint"} from a blueprint identity dict (or None for none).
    ValueError when it is neither."""
    if identity is None:
        return None
    if not isinstance(identity, dict) or not isinstance(identity.get("spec"), str):
        raise ValueError(f"trained_for must be None or a dict with a 'spec' string (and a "
                         f"'fingerprint'), got {identity!r}")
    fp = identity.get("fingerprint")
    if fp is not None and not isinstance(fp, str):
        raise ValueError(f"trained_for fingerprint must be a string or None, got {fp!r}")
    return {"spec": identity["spec"], "fingerprint": fp}


def same_blueprint(a: Optional[dict], b: Optional[dict]) -> bool:
    """Whether two blueprint identities name the same blueprint: equal fingerprints when
    both have one (a file's hash does not depend on where it lies), else equal specs."""
    if a is None or b is None:
        return False
    if a.get("fingerprint") and b.get("fingerprint"):
        return a["fingerprint"] == b["fingerprint"]
    return a.get("spec") == b.get("spec")


def _name(identity: dict) -> str:
    fp = identity.get("fingerprint")
    return f"{identity.get('spec')!r}" + (f" (fingerprint {fp[:12]})" if fp else "")


def check_trained_for(ckpt: dict, blueprint=None, game=None, allow_mismatch: bool = False,
                      where: str = "checkpoint") -> List[str]:
    """Check a belief/value checkpoint against the blueprint identity (`blueprint`, a dict
    {"spec", "fingerprint"}; None: not checked) and the game (HanabiConfig or dict; None:
    not checked) it is about to be used with. Returns the mismatches found (empty if
    none); raises CheckpointMismatchError naming both sides and the fix unless
    `allow_mismatch`."""
    kind = ckpt.get("kind", "belief")
    problems = []
    trained_for = ckpt.get("trained_for")
    if blueprint is not None:
        if trained_for is None:
            problems.append(f"it does not record the blueprint it was trained for, so it "
                            f"cannot be checked against {_name(blueprint)}")
        elif not same_blueprint(trained_for, blueprint):
            problems.append(f"it was trained for blueprint {_name(trained_for)}, "
                            f"not for {_name(blueprint)}")
    if game is not None and not same_game(ckpt["game"], game):
        problems.append(f"it was trained for the game {describe_game(ckpt['game'])}, not "
                        f"{describe_game(game)}")
    if problems and not allow_mismatch:
        raise CheckpointMismatchError(f"{kind} {where}: {'; '.join(problems)}. Fix: "
                                      + FIX.format(kind=kind))
    return problems


# --- what a file may hold -------------------------------------------------------------------

def check_finite(weights: dict, where: str) -> None:
    """CheckpointError naming `where` (the file) and the tensor if a floating-point tensor
    of `weights` (a state dict) holds a NaN or an infinity, or a value larger in magnitude
    than MAX_ABS_WEIGHT: such a network returns NaN or absurd outputs, which a search would
    silently treat as estimates, and no trained network comes near the bound."""
    torch = require_torch("checking weights")
    for key, value in weights.items():
        if not (isinstance(value, torch.Tensor) and (value.is_floating_point()
                                                     or value.is_complex())):
            continue
        if not bool(torch.isfinite(value).all()):
            bad = int((~torch.isfinite(value)).sum())
            raise CheckpointError(f"{where}: weight {key!r} holds {bad} NaN or infinite "
                                  f"value(s); refusing a broken network")
        largest = float(value.abs().max()) if value.numel() else 0.0
        if largest > MAX_ABS_WEIGHT:
            raise CheckpointError(f"{where}: weight {key!r} holds a value of magnitude "
                                  f"{largest:.3g}, above the bound of {MAX_ABS_WEIGHT:g} that "
                                  f"no trained network reaches (MAX_ABS_WEIGHT); refusing a "
                                  f"corrupted or forged file")


def check_architecture(architecture: dict, where: str, prefix: str = "") -> None:
    """CheckpointError naming `where`, the field, its value and the cap if an int field of
    `architecture` (nested dicts included) is above its cap in ARCHITECTURE_CAPS (a field
    not named there: MAX_INPUTS). Checked before a network is built: an absurd size would
    otherwise allocate gigabytes before the weights are found not to fit."""
    for key, value in architecture.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            check_architecture(value, where, f"{name}.")
        elif is_int(value):
            cap = ARCHITECTURE_CAPS.get(key, MAX_INPUTS)
            if value > cap:
                raise CheckpointError(f"{where}: architecture field {name!r} = {value:,} is "
                                      f"above the loader's cap of {cap:,} "
                                      f"(lbs_pz.models.checkpoint.ARCHITECTURE_CAPS)")


def build_network(ckpt: dict, build: Callable[[], Net], what: str) -> Net:
    """The network `build()` makes, with the checkpoint's weights loaded (as float32). It
    is first built on torch's "meta" device, which allocates nothing, and its parameter
    names and shapes compared with the file's tensors and its size with MAX_PARAMETERS:
    CheckpointError naming the file and the first tensor that does not fit, before
    anything is allocated. `what` names the network in messages ("value network")."""
    torch = require_torch("building a network")
    where = repr(ckpt.get("path", "checkpoint"))
    weights = ckpt["weights"]
    try:
        with torch.device("meta"):
            shapes = {k: tuple(v.shape) for k, v in build().state_dict().items()}
    except (TypeError, ValueError, RuntimeError, AttributeError, NotImplementedError) as err:
        raise CheckpointError(f"{where}: the architecture {ckpt['architecture']!r} does not "
                              f"make a {what}: {type(err).__name__}: "
                              f"{str(err).splitlines()[0][:200] if str(err) else ''}") from None
    count = sum(int(torch.Size(s).numel()) for s in shapes.values())
    if count > MAX_PARAMETERS:
        raise CheckpointError(f"{where}: its architecture describes a {what} of {count:,} "
                              f"parameters, above the loader's cap of {MAX_PARAMETERS:,} "
                              f"(lbs_pz.models.checkpoint.MAX_PARAMETERS)")
    missing = sorted(set(shapes) - set(weights))
    extra = sorted(set(weights) - set(shapes))
    if missing or extra:
        raise CheckpointError(f"{where}: the weights do not fit a {what} of its architecture: "
                              + "; ".join(p for p in (
                                  f"missing {', '.join(missing[:5])}" if missing else "",
                                  f"unexpected {', '.join(extra[:5])}" if extra else "") if p))
    for key, shape in shapes.items():
        tensor = weights[key]
        if not isinstance(tensor, torch.Tensor) or tuple(tensor.shape) != shape:
            got = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) \
                else type(tensor).__name__
            raise CheckpointError(f"{where}: weight {key!r} has shape {got}, but the "
                                  f"architecture makes it {shape}: the header does not fit "
                                  f"the weights")
    try:
        net = build()
        net.load_state_dict({k: v.float() if v.is_floating_point() else v
                             for k, v in weights.items()})
    except (TypeError, ValueError, RuntimeError, AttributeError) as err:
        raise CheckpointError(f"{where}: the weights do not fit a {what}: "
                              f"{type(err).__name__}: "
                              f"{str(err).splitlines()[0][:200] if str(err) else ''}") from None
    return net


# --- files ----------------------------------------------------------------------------------

def resolve(path_or_name: str, models_dir: Optional[str] = None) -> str:
    """A file path, or the path of the shipped model `name` / `name.pt` (one the manifest
    of `models_dir`, default this folder, lists). CheckpointError naming the shipped models
    if it is neither, or saying how to restore it if it names a listed model whose file is
    missing (`missing_text`)."""
    path = as_path(path_or_name, "a checkpoint", what="a path or a shipped model's name")
    if os.path.isfile(path):
        return path
    names = shipped_names(models_dir)
    folder = models_dir or MODELS_DIR
    if os.sep not in path and "/" not in path:
        name = path[:-3] if path.endswith(".pt") else path
        shipped = os.path.join(folder, name + ".pt")
        if name in names and os.path.isfile(shipped):
            return shipped
    elif os.path.realpath(os.path.dirname(os.path.abspath(path))) == \
            os.path.realpath(folder) and path.endswith(".pt"):
        name = os.path.basename(path)[:-3]      # a shipped model named by its path
    else:
        name = None
    if name in names:
        entry = next(m for m in shipped_models(models_dir) if m["name"] == name)
        raise CheckpointError(missing_text(entry, models_dir))
    raise CheckpointError(f"checkpoint {path!r} does not exist (neither a file nor a "
                          f"shipped model: {', '.join(names) or 'none'})")


def shipped_file(entry: dict, models_dir: Optional[str] = None) -> Optional[str]:
    """What is wrong with the file of the manifest entry `entry` (a shipped model) in the
    models folder `models_dir` (default: this folder): "missing", or its size when it is
    not the one listed; None when it is there at its listed size (its sha256 is checked
    when it is loaded, `verify_shipped`). Reads no weights."""
    try:
        st = os.stat(os.path.join(models_dir or MODELS_DIR, entry["name"] + ".pt"))
    except FileNotFoundError:
        return "missing"
    except OSError as err:
        return f"unreadable ({err.strerror})"
    if st.st_size != entry["size"]:
        return f"{st.st_size} bytes, not the {entry['size']} listed"
    return None


def missing_text(entry: dict, models_dir: Optional[str] = None) -> str:
    """The one line that says the shipped model `entry` (a manifest entry) has no file in
    `models_dir` (default: this folder), and how to restore it."""
    folder = models_dir or MODELS_DIR
    return (f"shipped model {entry['name']!r} is missing: its manifest lists it, but there "
            f"is no file {os.path.join(folder, entry['name'] + '.pt')}; reinstall lbs_pz "
            f"to restore it, or remake it with the commands its manifest entry lists "
            f"(`lbs-pz models --json`, \"remake\")")


def shipped_names(models_dir: Optional[str] = None) -> List[str]:
    """Names of the models the manifest of `models_dir` (default: this folder) lists
    (file names without .pt)."""
    return sorted(m["name"] for m in shipped_models(models_dir))


def make_checkpoint(kind: str, game, architecture: dict, weights: dict,
                    trained_for: Optional[dict] = None, info: Optional[dict] = None,
                    resume: Optional[dict] = None, half: bool = False) -> dict:
    """The checkpoint dict of the layout above. `game` a HanabiConfig (or its dict),
    `weights` a state_dict (copied to CPU; floating tensors to float16 if `half`)."""
    as_choice(kind, "kind", KINDS)
    if not isinstance(architecture, dict):
        raise TypeError(f"architecture must be a dict, got {type(architecture).__name__}")
    game = game_to_dict(game) if isinstance(game, HanabiConfig) else dict(game)
    game_from_dict(game, "make_checkpoint")
    state = {k: (v.half() if half and v.is_floating_point() else v).detach().cpu().clone()
             for k, v in weights.items()}
    ckpt = {"format": FORMAT, "version": VERSION, "kind": kind, "game": game,
            "architecture": dict(architecture), "weights": state,
            "trained_for": trained_for_dict(trained_for), "info": dict(info or {})}
    if resume is not None:
        ckpt["resume"] = dict(resume)
    return ckpt


def save_checkpoint(path: str, kind: str, game, architecture: dict, weights: dict,
                    trained_for: Optional[dict] = None, info: Optional[dict] = None,
                    resume: Optional[dict] = None, half: bool = False) -> dict:
    """Write a checkpoint (see `make_checkpoint`) atomically (a temporary file renamed
    over `path`, so a reader never sees half a file). Returns the dict written."""
    ckpt = make_checkpoint(kind, game, architecture, weights, trained_for, info, resume, half)
    write(path, ckpt)
    return ckpt


def write(path: str, ckpt: dict) -> None:
    """torch.save `ckpt` to `path` atomically."""
    torch = require_torch("writing a checkpoint")
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(ckpt, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read(path: str, what: str = "lbs_pz", map_location: Any = "cpu") -> Any:
    """torch.load(weights_only=True) of `path`; CheckpointError for a file that is missing,
    corrupt or carries code (nothing in it is ever run)."""
    torch = require_torch("reading a checkpoint")
    if not os.path.isfile(path):
        raise CheckpointError(f"{what} checkpoint {path!r} does not exist")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # pickle errors, zip errors, unsupported globals ...
        text = str(err)
        if "WeightsUnpickler error:" in text:     # skip torch's advice to load unsafely
            text = text.split("WeightsUnpickler error:", 1)[1].split("Check the doc", 1)[0]
        reason = " ".join(text.split())[:160]
        raise CheckpointError(f"{path!r} is not a readable {what} checkpoint: "
                              f"{type(err).__name__} {reason!r} (loaded with "
                              f"weights_only=True, which never runs code from a file)") from None


def load_checkpoint(path_or_name: str, kind: Optional[str] = None, map_location="cpu",
                    models_dir: Optional[str] = None) -> dict:
    """Read and check a checkpoint (a path or a shipped model's name) of `kind` (None:
    any). Returns the dict, with "path" added (where it was read from). Raises
    CheckpointError for a missing, corrupt, foreign, old-layout or wrong-kind file, and for
    a file of the models folder `models_dir` (default: this folder) that its manifest lists
    with another sha256 or size (`verify_shipped`)."""
    if kind is not None:
        as_choice(kind, "kind", KINDS, what=f"one of {', '.join(KINDS)} or None")
    what = f"lbs_pz {kind}" if kind else "lbs_pz"
    path = resolve(path_or_name, models_dir)
    verify_shipped(path, models_dir)
    ckpt = read(path, what, map_location)
    # Header entries are compared only when they have the expected type: a tensor or a
    # list where a string belongs must be refused, not compared.
    fmt = ckpt.get("format") if isinstance(ckpt, dict) else None
    if isinstance(fmt, str) and fmt in LEGACY_FORMATS:
        raise CheckpointError(
            f"{path!r} is a {LEGACY_FORMATS[fmt]} checkpoint in the old {fmt!r} layout, "
            f"which this lbs_pz no longer reads; convert it once with "
            f"lbs_pz.models.checkpoint.upgrade_legacy(path, out, trained_for) or train it "
            f"again")
    if not (isinstance(fmt, str) and fmt == FORMAT):
        raise CheckpointError(f"{path!r} is not an {what} checkpoint (no format={FORMAT!r} "
                              f"entry)")
    version = ckpt.get("version")
    if not (type(version) is int and version == VERSION):
        raise CheckpointError(f"{path!r} has checkpoint version {version!r:.40}; "
                              f"this lbs_pz reads version {VERSION}")
    found = ckpt.get("kind")
    if not (isinstance(found, str) and found in KINDS):
        raise CheckpointError(f"{path!r} holds no known kind of model ({found!r:.40})")
    if kind is not None and found != kind:
        raise CheckpointError(f"{path!r} holds a {found!r} model, not a {kind!r} one")
    for key, types in (("game", dict), ("architecture", dict), ("weights", dict),
                       ("info", dict), ("trained_for", (dict, type(None)))):
        if not isinstance(ckpt.get(key), types):
            raise CheckpointError(f"{path!r}: {what} checkpoint without a valid {key!r} entry")
    game_from_dict(ckpt["game"], repr(path))
    check_architecture(ckpt["architecture"], repr(path))
    check_finite(ckpt["weights"], repr(path))
    ckpt["path"] = path
    return ckpt


def game_of(ckpt: dict) -> HanabiConfig:
    """The HanabiConfig a loaded checkpoint was made for."""
    return game_from_dict(ckpt["game"], repr(ckpt.get("path", "checkpoint")))


# --- shipped models -------------------------------------------------------------------------

_VERIFIED: Dict[str, tuple] = {}


def _manifest(models_dir: Optional[str], copy_it: bool = True) -> dict:
    try:
        return read_manifest(models_dir or MODELS_DIR, copy_it)
    except ManifestError as err:
        raise CheckpointError(f"the shipped models' manifest is broken: {err}") from None


def shipped_models(models_dir: Optional[str] = None) -> List[dict]:
    """The manifest entry of each model that ships in `models_dir` (default: this folder):
    name, kind, trained_for, game, sha256, size, recommended, chosen_by, purpose, command,
    remake, needs (`lbs_pz.models.manifest`). Reads manifest.json only (no weights, no
    torch); CheckpointError if it is missing or malformed."""
    return _manifest(models_dir)["models"]


def retired_models(models_dir: Optional[str] = None) -> List[dict]:
    """The manifest entries of the models that no longer ship, each with the commands that
    make it again (`remake`) and the models those commands read (`needs`)."""
    return _manifest(models_dir)["retired"]


def verify_shipped(path: str, models_dir: Optional[str] = None) -> None:
    """CheckpointError if `path` is a file of the models folder `models_dir` (default: this
    folder) that its manifest lists with another size or sha256 (a changed or damaged
    file). Files elsewhere, or not listed, are not checked. Hashed once per file version."""
    folder = os.path.realpath(models_dir or MODELS_DIR)
    real = os.path.realpath(path)
    if os.path.dirname(real) != folder or not real.endswith(".pt"):
        return
    entry = next((m for m in _manifest(models_dir, copy_it=False)["models"]
                  if m["name"] == os.path.basename(real)[:-3]), None)
    if entry is None:
        return
    st = os.stat(real)
    stamp = (st.st_mtime_ns, st.st_size, entry["sha256"])
    if _VERIFIED.get(real) == stamp:
        return
    digest = hashlib.sha256()
    if st.st_size == entry["size"]:
        with open(real, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    if st.st_size != entry["size"] or digest.hexdigest() != entry["sha256"]:
        raise CheckpointError(
            f"{path!r} is not the file its manifest lists as {entry['name']!r} (size "
            f"{st.st_size} bytes, expected {entry['size']}; sha256 expected "
            f"{entry['sha256'][:12]}...): the file was changed or damaged; reinstall "
            f"lbs_pz, or remake it with: {entry['remake'][0]}")
    _VERIFIED[real] = stamp


def find_model(kind: str, trained_for: Optional[dict], game=None,
               models_dir: Optional[str] = None) -> Optional[str]:
    """Name of the shipped `kind` model trained for the blueprint `trained_for`
    ({"spec", "fingerprint"}, e.g. `lbs_pz.agents.blueprint_identity(bp)`) and the game
    (HanabiConfig or dict; None: any variant), or None if the manifest of `models_dir`
    (default: this folder) lists none. Reads the manifest only (no torch)."""
    as_choice(kind, "kind", KINDS)
    if trained_for is None:
        return None
    for model in _manifest(models_dir, copy_it=False)["models"]:
        if model["kind"] == kind and same_blueprint(model["trained_for"], trained_for) \
                and (game is None or same_game(model["game"], game)):
            return model["name"]
    return None


def recommended_settings(trained_for: Optional[dict], game=None,
                         models_dir: Optional[str] = None) -> Dict[str, Dict[str, Any]]:
    """The search settings the manifest recommends for the blueprint `trained_for`
    ({"spec", "fingerprint"}, as `lbs_pz.agents.blueprint_identity` gives it) in `game`
    (HanabiConfig or dict; None: any variant): {method: {setting: value}}, methods "lbs"
    (every depth), "lbs-K", "lbs-inf", "sparta", settings by their SearchConfig names;
    {} when none is recorded. A shipped `lstm:` net matches by its file's sha256 (its
    fingerprint), a rule bot by a "blueprints" entry. Reads the manifest only (no torch)."""
    if trained_for is None:
        return {}
    data = _manifest(models_dir, copy_it=False)
    entries = [({"spec": f"lstm:{m['name']}", "fingerprint": m["sha256"]}, m)
               for m in data["models"] if m["kind"] == "public_lstm"]
    entries += [({"spec": b["spec"], "fingerprint": b["fingerprint"]}, b)
                for b in data["blueprints"]]
    for identity, entry in entries:
        if same_blueprint(identity, trained_for) \
                and (game is None or same_game(entry["game"], game)):
            return copy.deepcopy(entry["recommended"])
    return {}


def manifest_entry(path: str, purpose: str, remake: List[str], needs: Sequence[str] = (),
                   recommended: Optional[dict] = None, chosen_by: Optional[str] = None) -> dict:
    """The "models" entry of manifest.json for the checkpoint file `path` (its header read
    with torch; sha256 and size of its bytes): what to add when a model ships."""
    ckpt = load_checkpoint(path)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    name = os.path.basename(path)
    return {"name": name[:-3] if name.endswith(".pt") else name, "kind": ckpt["kind"],
            "trained_for": ckpt["trained_for"], "game": ckpt["game"],
            "sha256": digest.hexdigest(), "size": os.path.getsize(path),
            "recommended": dict(recommended or {}), "chosen_by": chosen_by,
            "purpose": purpose, "command": ckpt["info"].get("command", remake[0]),
            "remake": list(remake), "needs": list(needs)}


def model_for(kind: str, checkpoint: Optional[str], trained_for: Optional[dict],
              default: str, allow_mismatch: bool = False) -> str:
    """The `kind` checkpoint to load for a blueprint: `checkpoint` when given; else the
    shipped model trained for `trained_for` (a blueprint identity), and if none ships a
    CheckpointMismatchError naming the training command (or `default` with
    allow_mismatch); without a blueprint, `default`."""
    if checkpoint is not None:
        return checkpoint
    if trained_for is None:
        return default
    found = find_model(kind, trained_for)
    if found is None and not allow_mismatch:
        what, flag, instead = {
            "belief": ("learned belief", "--belief-checkpoint",
                       'use a grounded belief ("grounded+cf")'),
            "value": ("value", "--value-checkpoint", "roll out to the end (depth=-1)"),
        }.get(kind, (kind, "", "pass allow_mismatch=True"))
        raise CheckpointMismatchError(
            f"no shipped {what} was trained for blueprint {_name(trained_for)}: train one "
            f"with `lbs-pz train-{kind} --blueprint SPEC` and pass it as checkpoint=PATH / "
            f"{flag} PATH, or {instead}")
    return found or default


# --- the old layouts ------------------------------------------------------------------------

def upgrade_legacy(path: str, out: str, trained_for: Optional[dict] = None,
                   info: Optional[dict] = None) -> dict:
    """Convert a checkpoint of the old per-kind layouts ("lbs_pz.belief" v1, "lbs_pz.value"
    v1, "lbs_pz.public_lstm" v1) to this one, with the same weights; `trained_for` the
    blueprint identity the old file only named (belief/value). Returns the new dict."""
    old = read(path, "old lbs_pz")
    if not isinstance(old, dict) or old.get("format") not in LEGACY_FORMATS \
            or old.get("version") != 1:
        raise CheckpointError(f"{path!r} is not a checkpoint of an old lbs_pz layout")
    kind = LEGACY_FORMATS[old["format"]]
    new_info = dict(old.get("info", {}))
    if kind == "public_lstm":
        game, arch, weights = old["game"], old["arch"], old["model"]
        new_info.update({k: old[k] for k in ("train_config", "progress") if k in old})
        resume = {k: old[k] for k in ("target", "optimizer") if k in old} or None
    else:
        game, arch, weights = old["game_config"], old["net_config"], old["state_dict"]
        resume = None
        if trained_for is None:
            trained_for = {"spec": old["blueprint"], "fingerprint": None}
    new_info.update(info or {})
    ckpt = make_checkpoint(kind, game, arch, weights, trained_for, new_info, resume)
    # keep the stored dtypes (make_checkpoint only copies)
    write(out, ckpt)
    return ckpt


def slim_copy(path_or_name: str, out: str, half: bool = True) -> dict:
    """Write a copy of a checkpoint for shipping: the same kind, game, architecture,
    trained_for and info, without the "resume" state (optimizer, target network), with
    floating weights as float16 if `half`. Returns the dict written.

        python -c "from lbs_pz.models.checkpoint import slim_copy; slim_copy('run.pt', 'ship.pt')"
    """
    ckpt = load_checkpoint(path_or_name)
    info = dict(ckpt["info"], slimmed_from=os.path.basename(resolve(path_or_name)))
    return save_checkpoint(out, ckpt["kind"], ckpt["game"], ckpt["architecture"],
                           ckpt["weights"], ckpt["trained_for"], info, half=half)
