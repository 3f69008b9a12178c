"""lbs_pz/models/manifest.json: what ships (and only that), read without loading weights;
the recommended search settings; the retired models' commands; `lbs-pz models`."""

import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents.public_lstm import PublicLSTMNet
from lbs_pz.cli import build_parser
from lbs_pz.cli.options import dataclass_from
from lbs_pz.engine import HanabiConfig
from lbs_pz.models import (MODELS_DIR, CheckpointError, ManifestError, find_model,
                           load_checkpoint, recommended_settings, retired_models,
                           shipped_models, shipped_names)
from lbs_pz.models.manifest import MANIFEST_NAME, read_manifest, validate
from lbs_pz.train.common import command_line, net_options
from lbs_pz.train.configs import (ARCH_FIELDS, BLUEPRINT_ARCH, DISTILL_ARCH,
                                  BlueprintTrainConfig, DistillConfig)

SHIPPED = {"conventions_expert_value_2p", "belief_conventions_expert_value_2p",
           "public_lstm_2p"} | {f"{kind}_strong_{game}" for kind in ("belief", "value")
                                for game in ("2p", "3p", "4p", "5p", "6card", "7card_4tokens")}
SHIPPED |= {f"{kind}_{bot}_2p" for kind in ("belief", "value") for bot in ("weak", "medium")}
RETIRED = {"distilled_strong_2p", "finetuned_strong_2p", "conventions_strong_2p",
           "conventions_maxq_2p", "conventions_expert_2p", "conventions_maxq_value_2p"}
RETIRED |= {f"belief_{name}" for name in RETIRED}
MANIFEST = os.path.join(MODELS_DIR, MANIFEST_NAME)


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _entry(name):
    return next(m for m in shipped_models() if m["name"] == name)


def _models_dir(tmp_path, names, edit=None):
    """A models folder in tmp_path: copies of the shipped files `names` and a manifest
    listing them (after `edit(data)`, if given)."""
    data = json.load(open(MANIFEST))
    data["models"] = [m for m in data["models"] if m["name"] in names]
    data["retired"] = []
    for m in data["models"]:
        m["needs"] = []
        shutil.copy(os.path.join(MODELS_DIR, m["name"] + ".pt"), tmp_path)
    if edit is not None:
        edit(data)
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data))
    return str(tmp_path)


def test_every_listed_file_ships_with_its_sha256_and_size_and_nothing_else_does():
    listed = {m["name"]: m for m in shipped_models()}
    assert set(listed) == SHIPPED == set(shipped_names())
    on_disk = {f[:-3] for f in os.listdir(MODELS_DIR) if f.endswith(".pt")}
    assert on_disk == set(listed), "a .pt file ships without a manifest entry (or vice versa)"
    total = 0
    for name, entry in listed.items():
        path = os.path.join(MODELS_DIR, name + ".pt")
        assert os.path.getsize(path) == entry["size"]
        assert _sha256(path) == entry["sha256"], name
        total += entry["size"]
    assert total < 30e6


NET_COMMANDS = {"train-blueprint": (BlueprintTrainConfig, BLUEPRINT_ARCH),
                "distill": (DistillConfig, DISTILL_ARCH)}


def _same_run_in_todays_options(entry, ckpt):
    """A public-LSTM net whose checkpoint recorded its command with options of the net
    that the commands no longer take (a preset, --arch, sets them): the manifest's
    `command` is the same run in today's options. It parses, is the line that run
    records today (`command_line`), sets every hyper-parameter the checkpoint recorded
    as the checkpoint did, and names (--arch, --hidden) the checkpoint's architecture."""
    assert entry["kind"] == "public_lstm", entry["name"]
    argv = shlex.split(entry["command"])[1:]
    config_class, default_arch = NET_COMMANDS[argv[0]]
    config = dataclass_from(config_class, build_parser().parse_args(argv))
    assert command_line(argv[0], config) == entry["command"]
    recorded = ckpt["info"]["train_config"]
    for field in dataclasses.fields(config):
        if field.name in recorded and field.name not in ARCH_FIELDS:
            assert getattr(config, field.name) == recorded[field.name], field.name
    net = PublicLSTMNet(**ckpt["architecture"])
    assert net.options() == net_options(config, default_arch), entry["name"]


def test_manifest_entries_say_what_the_checkpoints_say():
    for entry in shipped_models():
        ckpt = load_checkpoint(entry["name"])          # also verifies the sha256
        assert ckpt["kind"] == entry["kind"]
        assert ckpt["trained_for"] == entry["trained_for"]
        assert ckpt["game"] == entry["game"]
        if ckpt["info"]["command"] != entry["command"]:
            _same_run_in_todays_options(entry, ckpt)
        assert entry["purpose"] and entry["remake"]
    # a belief's blueprint is a shipped net: its fingerprint is that file's sha256
    belief = _entry("belief_conventions_expert_value_2p")
    assert belief["trained_for"] == {"spec": "lstm:conventions_expert_value_2p",
                                     "fingerprint": _entry("conventions_expert_value_2p")["sha256"]}


def test_every_retired_model_stays_reproducible():
    retired = {m["name"]: m for m in retired_models()}
    assert set(retired) == RETIRED
    known = SHIPPED | RETIRED
    for name, entry in retired.items():
        assert not os.path.exists(os.path.join(MODELS_DIR, name + ".pt"))
        assert len(entry["sha256"]) == 64 and entry["size"] > 0
        assert entry["remake"] and all(c.strip() for c in entry["remake"])
        assert any(c.startswith(("lbs-pz ", "python ")) for c in entry["remake"])
        assert set(entry["needs"]) <= known
        assert (entry["kind"] == "public_lstm") == (entry["trained_for"] is None)
    # a retired belief names its blueprint by the retired file's sha256
    for name, entry in retired.items():
        if entry["kind"] == "belief":
            net = retired[name[len("belief_"):]]
            assert entry["trained_for"]["fingerprint"] == net["sha256"], name
    # the expert's recipe reads the retired nets it started from
    expert = _entry("conventions_expert_value_2p")
    assert set(expert["needs"]) == {"conventions_expert_2p", "belief_conventions_expert_2p"}


def test_lookups_read_the_manifest_only_and_need_no_torch():
    fp = _entry("conventions_expert_value_2p")["sha256"]
    script = textwrap.dedent(f'''
        import builtins, io, os, sys
        sys.modules["torch"] = None          # import torch now raises ImportError
        from lbs_pz.agents import RuleBot, blueprint_identity
        from lbs_pz.models import find_model, recommended_settings, shipped_models
        strong = blueprint_identity(RuleBot("strong"))
        opened, real_open = [], builtins.open
        def watched(file, *args, **kwargs):
            opened.append(os.path.basename(str(file)))
            return real_open(file, *args, **kwargs)
        builtins.open = io.open = watched
        for _ in range(100):
            assert find_model("belief", strong) == "belief_strong_2p"
        builtins.open = io.open = real_open
        from lbs_pz.engine import HanabiConfig
        assert find_model("value", strong, HanabiConfig()) == "value_strong_2p"
        assert find_model("value", strong, HanabiConfig(players=3)) == "value_strong_3p"
        assert find_model("value", strong, HanabiConfig(players=3, hand_size=4)) is None
        assert find_model("belief", strong, HanabiConfig(hand_size=6)) == "belief_strong_6card"
        seven = HanabiConfig(hand_size=7, max_information_tokens=4)
        assert find_model("value", strong, seven) == "value_strong_7card_4tokens"
        assert find_model("belief", strong, HanabiConfig(hand_size=7)) is None   # 8 tokens
        net = {{"spec": "lstm:conventions_expert_value_2p", "fingerprint": "{fp}"}}
        assert find_model("belief", net) == "belief_conventions_expert_value_2p"
        assert recommended_settings(net) == {{"lbs-1": {{"delta": 0.75}}}}
        assert len(shipped_models()) == 19
        try:
            import torch
        except ImportError:
            pass
        else:
            raise AssertionError("torch was importable")
        print("ok", ",".join(sorted(set(opened))) or "-")
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    word, opened = proc.stdout.split()
    assert word == "ok" and opened in ("-", MANIFEST_NAME), opened   # not a checkpoint


def test_an_unlisted_file_is_never_picked_nor_loaded_by_name(tmp_path):
    strong = {"spec": "strong", "fingerprint": _entry("belief_strong_2p")["trained_for"]
              ["fingerprint"]}
    folder = _models_dir(tmp_path, {"value_strong_2p"})
    shutil.copy(os.path.join(MODELS_DIR, "belief_strong_2p.pt"), folder)   # not listed
    assert os.path.isfile(os.path.join(folder, "belief_strong_2p.pt"))
    assert find_model("value", strong, models_dir=folder) == "value_strong_2p"
    assert find_model("belief", strong, models_dir=folder) is None
    assert find_model("belief", strong) == "belief_strong_2p"          # the package's own
    assert shipped_names(folder) == ["value_strong_2p"]
    with pytest.raises(CheckpointError, match="neither a file nor a shipped model: "
                                              "value_strong_2p"):
        load_checkpoint("belief_strong_2p", models_dir=folder)
    assert load_checkpoint("value_strong_2p", "value", models_dir=folder)["path"] \
        == os.path.join(folder, "value_strong_2p.pt")
    # by its path it is an ordinary checkpoint file
    assert load_checkpoint(os.path.join(folder, "belief_strong_2p.pt"), "belief")["kind"] \
        == "belief"


def test_a_changed_shipped_file_is_refused(tmp_path):
    folder = _models_dir(tmp_path, {"value_strong_2p"})
    path = os.path.join(folder, "value_strong_2p.pt")
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF                         # same size, other bytes
    open(path, "wb").write(bytes(data))
    with pytest.raises(CheckpointError, match="not the file its manifest lists as "
                                              "'value_strong_2p'.*remake it with: lbs-pz "
                                              "train-value"):
        load_checkpoint("value_strong_2p", models_dir=folder)
    with pytest.raises(CheckpointError, match="sha256"):
        load_checkpoint(path, models_dir=folder)          # by path, inside the folder
    open(path, "ab").write(b"x")
    with pytest.raises(CheckpointError, match=f"size {len(data) + 1} bytes, expected "
                                              f"{len(data)}"):
        load_checkpoint("value_strong_2p", models_dir=folder)


def _broken(data, key, value):
    """Set one field of the first model entry."""
    data["models"][0][key] = value


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="other"), "not a model manifest"),
    (lambda d: d["models"][0].pop("sha256"), "missing sha256"),
    (lambda d: _broken(d, "extra", 1), "unknown extra"),
    (lambda d: _broken(d, "kind", "policy"), "kind must be one of"),
    (lambda d: _broken(d, "sha256", "abc"), "64 lower-case hex"),
    (lambda d: _broken(d, "size", 0), "positive number of bytes"),
    (lambda d: _broken(d, "game", {"players": 9}), "bad game variant"),
    (lambda d: _broken(d, "trained_for", "strong"), "trained_for must be"),
    (lambda d: _broken(d, "remake", []), "at least one command"),
    (lambda d: _broken(d, "needs", ["no_such_model"]), "needs names no listed model"),
    (lambda d: _broken(d, "recommended", {"lbs-1": {"delta": 0.5}}),
     "only a blueprint carries"),
    (lambda d: d["models"].append(dict(d["models"][0])), "listed twice"),
    (lambda d: d["models"].append(dict(d["models"][0], name="value_copy")),
     "both a value for the same blueprint and game"),
])
def test_a_malformed_manifest_is_a_clear_error(tmp_path, edit, message):
    folder = _models_dir(tmp_path, {"value_strong_2p"}, edit)
    with pytest.raises(ManifestError, match=message):
        read_manifest(folder)
    with pytest.raises(CheckpointError, match="manifest is broken.*" + message):
        find_model("value", {"spec": "strong", "fingerprint": None}, models_dir=folder)


def test_recommended_settings_are_validated():
    data = json.load(open(MANIFEST))
    expert = next(m for m in data["models"] if m["name"] == "conventions_expert_value_2p")
    for bad, message in [({"lbs-0": {"delta": 1}}, "unknown method"),
                         ({"lbs-1": {"depth": 1}}, "unknown search setting 'depth'"),
                         ({"lbs-1": {"delta": -1}}, "bad value -1"),
                         ({"lbs": {"pruning": "never"}}, "bad value 'never'"),
                         ({"sparta": {"verify": 1}}, "bad value 1"),
                         ({"lbs-1": {}}, "non-empty object")]:
        expert["recommended"] = bad
        with pytest.raises(ManifestError, match=message):
            validate(data)
    expert["recommended"], expert["chosen_by"] = {"lbs": {"delta": 0.5}}, None
    with pytest.raises(ManifestError, match="chosen_by"):
        validate(data)


def test_a_blueprint_is_listed_once_per_game():
    data = json.load(open(MANIFEST))
    data["blueprints"].append(dict(data["blueprints"][0]))
    with pytest.raises(ManifestError, match="listed twice for the same game"):
        validate(data)


def test_a_rule_bots_recommended_delta_applies_to_its_depth_only():
    """The deltas chosen in docs/experiments/short_depth_delta.md reach the search of
    that bot and depth, and no other (`recommended_for`)."""
    from lbs_pz.agents import RuleBot
    from lbs_pz.search.config import SearchConfig
    from lbs_pz.search.resolve import recommended_for, settings_for

    def delta(bot, method, **config):
        return settings_for(RuleBot(bot), HanabiConfig(**config), SearchConfig(),
                            method).delta
    assert delta("strong", "lbs-1") == 0.25 and delta("strong", "lbs-2") == 0.5
    assert delta("strong", "lbs-4") == delta("strong", "lbs-16") == 0.05
    assert delta("strong", "sparta") == 0.05
    assert delta("strong", "lbs-1", hand_size=6) == 0.05        # chosen for 5 cards only
    assert [delta("medium", f"lbs-{k}") for k in (1, 2, 4, 8)] == [0.25, 0.25, 0.25, 0.05]
    assert delta("weak", "lbs-1") == 0.05
    assert settings_for(RuleBot("strong"), HanabiConfig(), SearchConfig(delta=0.1),
                        "lbs-1").delta == 0.1                   # a setting given wins
    every = {"lbs": {"pruning": "paired"}, "lbs-1": {"delta": 0.25}, "sparta": {"verify": 8}}
    assert recommended_for(every, "lbs-1") == {"lbs": {"pruning": "paired"},
                                               "lbs-1": {"delta": 0.25}}
    assert recommended_for(every, "lbs-16") == {"lbs": {"pruning": "paired"}}
    assert recommended_for(every, "sparta") == {"sparta": {"verify": 8}}
    assert recommended_for(recommended_for(every, "lbs-1"), "lbs-1") == \
        recommended_for(every, "lbs-1")


def test_recommended_settings_follow_the_blueprint_not_its_path(tmp_path):
    from lbs_pz.agents import RuleBot, blueprint_identity, load_blueprint

    expert = blueprint_identity(load_blueprint("lstm:conventions_expert_value_2p"))
    assert expert["fingerprint"] == _entry("conventions_expert_value_2p")["sha256"]
    assert recommended_settings(expert, HanabiConfig()) == {"lbs-1": {"delta": 0.75}}
    assert "run seed 1" in _entry("conventions_expert_value_2p")["chosen_by"]
    copy = tmp_path / "renamed.pt"
    shutil.copy(os.path.join(MODELS_DIR, "conventions_expert_value_2p.pt"), copy)
    renamed = blueprint_identity(load_blueprint(f"lstm:{copy}"))
    assert renamed["spec"] != expert["spec"]
    assert recommended_settings(renamed) == {"lbs-1": {"delta": 0.75}}
    assert recommended_settings(expert, HanabiConfig(hand_size=4)) == {}
    assert recommended_settings(blueprint_identity(load_blueprint("lstm:public_lstm_2p"))) == {}
    assert recommended_settings(blueprint_identity(RuleBot("strong"))) == \
        {"lbs-1": {"delta": 0.25}, "lbs-2": {"delta": 0.5}}
    assert recommended_settings(blueprint_identity(RuleBot("weak"))) == {}
    assert recommended_settings(None) == {}
    # a rule bot's settings come from a "blueprints" entry, matched by its identity
    medium = blueprint_identity(RuleBot("medium"))

    def add_medium(data):
        data["blueprints"] = [b for b in data["blueprints"] if b["spec"] != "medium"]
        data["blueprints"].append({
            "spec": "medium", "fingerprint": medium["fingerprint"],
            "game": data["blueprints"][0]["game"], "recommended": {"lbs": {"delta": 0.25}},
            "chosen_by": "a test's rule", "purpose": "a test"})
    (tmp_path / "m").mkdir()
    folder = _models_dir(tmp_path / "m", set(), add_medium)
    assert recommended_settings(medium, models_dir=folder) == {"lbs": {"delta": 0.25}}
    assert recommended_settings(blueprint_identity(RuleBot("weak")), models_dir=folder) == {}
    got = recommended_settings(medium, models_dir=folder)
    got["lbs"]["delta"] = 9.0                              # a copy: the manifest is unchanged
    assert recommended_settings(medium, models_dir=folder) == {"lbs": {"delta": 0.25}}


def test_models_command_lists_what_ships(capsys):
    from lbs_pz.cli import main

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in SHIPPED:
        assert f"\n{name}  [" in out
    assert "recommended: lbs-1: delta=0.75" in out
    assert "recommended: lbs-1: delta=0.25; lbs-2: delta=0.25; lbs-4: delta=0.25" in out
    assert "trained for: strong (fingerprint dbea8ff694df)" in out
    assert "2p 5-card 5x5" in out and "4.1 MB" in out
    assert not any(f"\n{name}  [" in out for name in RETIRED)

    assert main(["models", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["models"] == shipped_models()
    assert [b["spec"] for b in listed["blueprints"]] == ["strong", "medium"]

    assert main(["models", "--retired"]) == 0
    out = capsys.readouterr().out
    for entry in retired_models():
        assert f"{entry['name']}  [" in out
        for command in entry["remake"]:
            assert command in out
    assert main(["models", "--retired", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"retired": retired_models()}


def test_models_output_cut_short_by_its_reader_is_no_traceback():
    """`lbs-pz models --retired | head -1`: the pipe closing early ends the command quietly."""
    import subprocess
    import sys
    proc = subprocess.run(f"{sys.executable} -m lbs_pz.cli models --retired | head -1",
                          shell=True, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
