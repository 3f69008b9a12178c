"""train-blueprint and distill name their net by a preset (`--arch`) and its width
(`--hidden`), nothing else: the defaults make the "paper" and "card_features" nets, every
recorded command parses and makes the architecture of the checkpoint it made, no other
option of the net is a command-line option, and a start (--init) sets the architecture
but for the value head that distill's --arch may change."""

import dataclasses
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest
import torch

from tests.helpers.paths import ROOT
from lbs_pz.agents.public_lstm import ARCHITECTURES, PublicLSTMNet
from lbs_pz.cli import build_parser
from lbs_pz.cli.options import dataclass_from
from lbs_pz.engine import HanabiConfig
from lbs_pz.models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from lbs_pz.train.blueprint import init_checkpoint, scratch_net
from lbs_pz.train.common import game_config, named_options, net_options
from lbs_pz.train.configs import (ARCH_FIELDS, ARCH_PRESETS, BLUEPRINT_ARCH, DISTILL_ARCH,
                                  MAX_CENTRED, BlueprintTrainConfig, DistillConfig)
from lbs_pz.train.distill import VALUE_HEAD, start_net

MODELS = os.path.join(ROOT, "lbs_pz", "models")
OLD_MODELS = "/tmp/old_models"          # the retired models' files, where a machine has them
CONFIGS = {"train-blueprint": BlueprintTrainConfig, "distill": DistillConfig}
SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)


def _parse(line: str):
    """The config dataclass a recorded `lbs-pz train-blueprint|distill ...` line makes."""
    argv = shlex.split(line, comments=True)[1:]
    args = build_parser().parse_args(argv)
    return dataclass_from(CONFIGS[argv[0]], args)


def _model_file(name_or_path: str):
    """The file of a model named by a recorded command (NAME, NAME.pt or a path ending in
    one): shipped, or retired and kept in OLD_MODELS; None when not on this machine."""
    stem = os.path.basename(name_or_path)
    stem = stem[:-3] if stem.endswith(".pt") else stem
    for folder in (MODELS, OLD_MODELS):
        path = os.path.join(folder, stem + ".pt")
        if os.path.isfile(path):
            return path
    return None


def _recorded_lines():
    """(model name, command line) of every train-blueprint / distill line the manifest
    records (`command` and `remake` of every entry and every retired entry)."""
    with open(os.path.join(MODELS, "manifest.json")) as f:
        manifest = json.load(f)
    out = []
    for entry in manifest["models"] + manifest["retired"]:
        for line in [entry.get("command", "")] + list(entry.get("remake", [])):
            if re.match(r"lbs-pz (train-blueprint|distill) ", line):
                out.append((entry["name"], line))
    return out


RECORDED = _recorded_lines()
# the lines whose checkpoint is on this machine: their nets can be held against it
RECORDED_HERE = [(name, line) for name, line in RECORDED if _model_file(name) is not None]


REMOVED = ("fusion", "card_features", "public_features", "value_hidden", "conventions",
           "hint_head", "dueling", "value_lstm")
"""The net's options that the commands do not take (the presets set them)."""


def test_the_presets_here_are_the_nets_presets():
    assert list(ARCH_PRESETS) == list(ARCHITECTURES)
    assert ARCH_FIELDS == ("arch", "hidden")
    assert set(REMOVED) | {"hidden"} == set(ARCHITECTURES["paper"])
    assert set(MAX_CENTRED) == {n for n, o in ARCHITECTURES.items() if o["dueling"] != "mean"}
    assert set(VALUE_HEAD) < set(ARCHITECTURES["paper"])
    for config_class in CONFIGS.values():
        fields = {f.name: f.default for f in dataclasses.fields(config_class)}
        assert all(fields[name] is None for name in ARCH_FIELDS)
        assert not set(REMOVED) & set(fields), config_class


def test_the_defaults_and_presets_make_their_nets():
    # train-blueprint: the paper's net, 256 wide; distill: card features
    assert net_options(BlueprintTrainConfig(), BLUEPRINT_ARCH) == ARCHITECTURES["paper"]
    assert net_options(DistillConfig(), DISTILL_ARCH) == ARCHITECTURES["card_features"]
    for name, options in ARCHITECTURES.items():
        assert net_options(DistillConfig(arch=name), DISTILL_ARCH) == options
        # --hidden sets the width of the LSTM and the MLP; a value stream keeps its own
        assert net_options(DistillConfig(arch=name, hidden=16), DISTILL_ARCH) == dict(
            options, hidden=16)
    wide = net_options(BlueprintTrainConfig(arch="conventions_value", hidden=16), "")
    assert (wide["hidden"], wide["value_hidden"], wide["value_lstm"]) == (16, 256, 256)
    # what a run names itself, to hold against a start: the preset but its width
    assert named_options(DistillConfig()) == {}
    assert named_options(DistillConfig(hidden=16)) == {"hidden": 16}
    assert named_options(DistillConfig(arch="conventions")) == {
        k: v for k, v in ARCHITECTURES["conventions"].items() if k != "hidden"}


@pytest.mark.parametrize("name,line", RECORDED)
def test_every_recorded_command_parses_with_todays_parser(name, line):
    """Every train-blueprint / distill line of the manifest, shipped or retired, still
    parses into its run's config (a retired net's file need not be here for that)."""
    config = _parse(line)
    assert isinstance(config, CONFIGS[shlex.split(line)[1]]) and config.out, (name, line)


@pytest.mark.parametrize("name,line", RECORDED_HERE)
def test_every_recorded_command_makes_its_checkpoints_architecture(name, line):
    """Where the checkpoint a line made is here, the net the line resolves to has that
    checkpoint's architecture. A start (--init) that is not here is stood in for by the
    made checkpoint: every such run keeps its start's policy (the value head and the
    centring are what it may change)."""
    config = _parse(line)
    made = _model_file(name)
    want = load_checkpoint(made, "public_lstm")["architecture"]
    game = game_config(config)
    if config.init:
        spec = config.init[len("lstm:"):] if config.init.startswith("lstm:") else config.init
        assert not spec.startswith("distill:")
        config = dataclasses.replace(config, init=_model_file(spec) or made, resume="")
    quiet = lambda *a: None                             # noqa: E731
    if isinstance(config, DistillConfig):
        net, _ = start_net(config, game, log=quiet)
    elif config.init:
        net = init_checkpoint(config.resolved(), game, log=quiet)["net"]
    else:
        net = scratch_net(config, game)
    assert net.arch() == want, line


def _documented_lines():
    """Every `lbs-pz train-blueprint|distill ...` command written in the README, the
    experiments (and their scripts) and the benchmarks (their scripts and sections.toml;
    continuation lines joined)."""
    files = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "experiments", "*.md"))
        + glob.glob(os.path.join(ROOT, "docs", "experiments", "*.py"))
        + glob.glob(os.path.join(ROOT, "benchmarks", "*.py"))
        + glob.glob(os.path.join(ROOT, "benchmarks", "*.sh"))
        + glob.glob(os.path.join(ROOT, "benchmarks", "*.toml")))
    out = []
    for path in files:
        text = open(path).read().replace("\\\n", " ")
        for match in re.finditer(r"lbs-pz (?:train-blueprint|distill)(?: [^`\n\"'()]*)?",
                                 text):
            line = match.group(0).split("  #")[0].strip()
            if "$" in line or "{" in line or "..." in line:
                continue                     # a shell or format template, not a command
            out.append((os.path.relpath(path, ROOT), line))
    return out


def test_documented_commands_parse():
    lines = _documented_lines()
    assert len(lines) > 5
    for where, line in lines:
        # prose may name an option and leave its value out ("`--init` (PATH)"): a value
        # put after the last option must then make it parse
        for tried in (line, line + " X"):
            try:
                _parse(tried)
                break
            except SystemExit:
                pass
        else:
            pytest.fail(f"{where}: {line!r} does not parse")


def test_help_lists_the_presets_and_no_removed_option():
    for command in CONFIGS:
        out = subprocess.run([sys.executable, "-m", "lbs_pz.cli", command, "--help"],
                             capture_output=True, text=True, check=True).stdout
        group = out[out.index("\narchitecture:"):]
        assert "--arch {paper,card_features," in group and "--hidden N" in group
        for name in ARCH_PRESETS:
            assert f"\n    {name} " in group, (command, name)
        for name in REMOVED:
            flag = name.replace("_", "-")
            assert f"--{flag}" not in out and f"--no-{flag}" not in out, (command, name)


def test_arch_options_parse_and_the_removed_ones_do_not():
    config = _parse("lbs-pz distill --arch conventions_maxq --hidden 128")
    assert config.arch == "conventions_maxq" and config.hidden == 128
    assert net_options(config, DISTILL_ARCH) == dict(ARCHITECTURES["conventions_maxq"],
                                                     hidden=128)
    assert _parse("lbs-pz train-blueprint").arch is None
    assert _parse("lbs-pz distill").arch is None
    parser = build_parser()
    for command in CONFIGS:
        for bad in (["--arch", "nope"], ["--hidden", "0"], ["--fusion", "concat"],
                    ["--card-features"], ["--no-card-features"], ["--public-features"],
                    ["--value-hidden", "256"], ["--value-lstm", "256"], ["--conventions"],
                    ["--hint-head"], ["--no-hint-head"], ["--dueling", "max"]):
            with pytest.raises(SystemExit):
                parser.parse_args([command, *bad])
    for bad in (dict(arch="nope"), dict(hidden=0), dict(hidden=2.5)):
        with pytest.raises(ValueError):
            DistillConfig(**bad).check()
        with pytest.raises(ValueError):
            BlueprintTrainConfig(**bad).check()
    for name in REMOVED:
        with pytest.raises(TypeError):
            DistillConfig(**{name: None})
        with pytest.raises(TypeError):
            BlueprintTrainConfig(**{name: None})


def test_q_learning_builds_the_preset_and_refuses_a_max_centred_one():
    game = HanabiConfig(**SMALL)
    net = scratch_net(BlueprintTrainConfig(arch="conventions", hidden=16), game)
    assert net.options() == dict(ARCHITECTURES["conventions"], hidden=16)
    for name in MAX_CENTRED:
        with pytest.raises(ValueError, match="mean-centred"):
            scratch_net(BlueprintTrainConfig(arch=name), game)
        with pytest.raises(ValueError, match="mean-centred"):
            BlueprintTrainConfig(arch=name).check()


def _start(tmp_path, name="conventions", hidden=16):
    game = HanabiConfig(**SMALL)
    torch.manual_seed(0)
    net = PublicLSTMNet.from_preset(name, game, hidden=hidden)
    path = str(tmp_path / f"{name}.pt")
    save_checkpoint(path, "public_lstm", game, net.arch(), net.state_dict(),
                    trained_for=None, info={})
    return game, net, path


def _policy_weights(net):
    return {k: v for k, v in net.state_dict().items() if not k.startswith("v_")}


def test_a_start_sets_the_architecture_of_train_blueprint(tmp_path):
    game, net, path = _start(tmp_path)
    quiet = lambda *a: None                             # noqa: E731
    # the start's net whatever --arch and --hidden, as long as they are the start's
    for ok in (dict(), dict(hidden=16), dict(arch="conventions"),
               dict(arch="conventions", hidden=16)):
        tc = BlueprintTrainConfig(init=path, **SMALL, **ok).resolved()
        assert init_checkpoint(tc, game, log=quiet)["net"].arch() == net.arch()
    for bad, named in ((dict(hidden=32), r"hidden 16.*hidden 32.*--hidden 32"),
                       (dict(arch="card_features"),
                        r"conventions True, hint_head True.*conventions False, "
                        r"hint_head False.*--arch card_features"),
                       (dict(arch="paper", hidden=32), r"hidden 16, card_features True")):
        with pytest.raises(CheckpointError, match=named):
            init_checkpoint(BlueprintTrainConfig(init=path, **SMALL, **bad).resolved(), game,
                            log=quiet)
        with pytest.raises(CheckpointError, match="the start sets the architecture"):
            init_checkpoint(BlueprintTrainConfig(init=path, **SMALL, **bad).resolved(), game,
                            log=quiet)


def test_a_start_sets_the_architecture_of_distill_but_for_the_value_head(tmp_path):
    game, net, path = _start(tmp_path)
    quiet = lambda *a: None                             # noqa: E731
    for same in (dict(), dict(hidden=16), dict(arch="conventions"), dict(value_only=True)):
        got, _ = start_net(DistillConfig(init=path, **SMALL, **same), game, log=quiet)
        assert got.arch() == net.arch()
    # --arch conventions_maxq re-centres Q on the best legal move: the same weights
    got, _ = start_net(DistillConfig(init=path, arch="conventions_maxq", value_only=True,
                                     **SMALL), game, log=quiet)
    assert got.arch() == dict(net.arch(), dueling="max")
    assert all(torch.equal(w, net.state_dict()[k]) for k, w in got.state_dict().items())
    # --arch conventions_value: a value MLP on a public LSTM of its own, both 256 wide
    # whatever the policy's width; every policy weight the start's
    got, _ = start_net(DistillConfig(init=path, arch="conventions_value", value_only=True,
                                     **SMALL), game, log=quiet)
    assert got.arch() == dict(net.arch(), dueling="max", value_hidden=256, value_lstm=256)
    assert got.hidden == 16
    policy = _policy_weights(net)
    assert _policy_weights(got).keys() == policy.keys()
    assert all(torch.equal(w, policy[k]) for k, w in _policy_weights(got).items())
    # anything else that differs is an error naming it
    for bad, named in ((dict(arch="card_features"),
                        r"conventions True, hint_head True.*conventions False, hint_head "
                        r"False \(--arch card_features\).*only in dueling, value_hidden, "
                        r"value_lstm"),
                       (dict(hidden=32), r"hidden 16.*hidden 32 \(--hidden 32\)"),
                       (dict(arch="conventions_value", hidden=8), r"hidden 16.*hidden 8")):
        with pytest.raises(ValueError, match=named):
            start_net(DistillConfig(init=path, **SMALL, **bad), game, log=quiet)
        with pytest.raises(ValueError, match="the start sets the architecture"):
            start_net(DistillConfig(init=path, **SMALL, **bad), game, log=quiet)
